"""One entry's units scored per target: the per-item table the statistics are built from.

:func:`score_units` takes one entry (model or reference agent) and one
condition and returns a :class:`UnitTable`: for every target of the archive
its :class:`ItemScores` under each gain map (None where the map excludes it),
the cleaned list's accounting and the slot outcomes. :func:`item_sums` turns a
table into the per-item (A, B) matrices of every metric, :func:`view_mask` and
:func:`cluster_of` give the item masks and clusters.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from rapgen.kinds.inspire.archive import Call, CorpusPaper, Instance, Judgement, Prediction, Target, calls_by_unit
from rapgen.kinds.inspire.scores.cleaned import EMPTY, OUTCOMES, CleanedList, clean_ranking, slot_outcomes
from rapgen.kinds.inspire.scores.exposure import NO_EXPOSURE, Exposure, exposure_of
from rapgen.kinds.inspire.scores.gains import label_gains
from rapgen.kinds.inspire.scores.metrics import METRICS, InspireMetric, ItemScores, score_item


@dataclass(frozen=True)
class UnitScore:
    """One (target, condition) unit of one entry."""

    instance_id: str
    status: str  # submitted | failed | absent (no prediction line: scored as failed)
    cleaned: CleanedList
    exposure: Exposure
    outcomes: tuple[str, ...]  # per slot, under the declared labels
    scores: Mapping[str, ItemScores | None] = field(default_factory=dict)  # gain map -> scores

    @property
    def counts(self) -> dict[str, int]:
        """The unit's accounting: cleaning counts, one count per slot outcome, and flags."""
        c = Counter(self.outcomes)
        out = {
            "n_submitted": self.cleaned.n_submitted, "n_versioned": self.cleaned.n_versioned,
            "n_duplicate": self.cleaned.n_duplicate, "n_over_limit": self.cleaned.n_over_limit,
            "n_slots": len(self.cleaned.keys),
        }
        out.update({f"n_{o}": c.get(o, 0) for o in OUTCOMES})
        out["n_empty"] = int(self.status == "submitted" and self.cleaned.n_submitted == 0)
        out["n_failed"] = int(self.status != "submitted")
        return out


@dataclass(frozen=True)
class UnitTable:
    """Every target's unit for one entry and condition, targets in instance-id order."""

    entry: str
    condition: str
    units: tuple[UnitScore, ...]

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(u.instance_id for u in self.units)

    def totals(self) -> dict[str, int]:
        """The accounting summed over targets (the report's counts)."""
        out: Counter = Counter()
        for u in self.units:
            out.update(u.counts)
        return dict(out)


def score_units(entry: str, condition: str, instances: Sequence[Instance], judgements: Sequence[Judgement],
                predictions: Sequence[Prediction], calls: Sequence[Call], corpus: Mapping[str, CorpusPaper],
                *, K: int, gain_maps: Sequence[str] = ("declared",)) -> UnitTable:
    """Score one entry's units of ``condition`` on every instance (a missing line is a failed unit)."""
    Y: dict[str, list[Judgement]] = {}
    for j in judgements:
        Y.setdefault(j.instance_id, []).append(j)
    pred = {p.instance_id: p for p in predictions if p.condition == condition}
    traced = calls_by_unit(calls)

    def date_of(arxiv_id: str):
        paper = corpus.get(arxiv_id)
        return paper.first_submitted if paper else None

    units = []
    for inst in sorted(instances, key=lambda i: i.instance_id):
        p = pred.get(inst.instance_id)
        status = p.status if p else "absent"
        cleaned = clean_ranking(p.submitted_ids, K) if p and not p.failed else EMPTY
        unit_calls = traced.get((inst.instance_id, condition), [])
        exposure = exposure_of(unit_calls) if unit_calls else NO_EXPOSURE
        E = exposure.ids
        labels = {m: label_gains(Y.get(inst.instance_id, ()), m) for m in gain_maps}
        declared = labels.get("declared") or label_gains(Y.get(inst.instance_id, ()), "declared")
        outcomes = slot_outcomes(cleaned, declared, E, date_of, inst.cutoff)
        scores = {m: score_item(cleaned, labels[m], E, len(unit_calls), K) for m in gain_maps}
        units.append(UnitScore(inst.instance_id, status, cleaned, exposure, outcomes, scores))
    return UnitTable(entry, condition, tuple(units))


def item_sums(table: UnitTable, gain_map: str = "declared", metrics: Sequence[InspireMetric] = METRICS) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B), each of shape (n_metrics, n_items): a target excluded under
    the map contributes (0, 0) to every metric."""
    A = np.zeros((len(metrics), len(table.units)))
    B = np.zeros((len(metrics), len(table.units)))
    for i, unit in enumerate(table.units):
        s = unit.scores.get(gain_map)
        if s is None:
            continue
        for m, metric in enumerate(metrics):
            A[m, i], B[m, i] = metric.fn(s)
    return A, B


def metric_values(table: UnitTable, gain_map: str = "declared",
                  metrics: Sequence[InspireMetric] = METRICS) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """The same per-item inputs in the NaN convention of ``rapgen.scores.statistics``:
    metric -> (values, denominators). A ``mean`` metric gives its item values with NaN
    where undefined (an ineligible or excluded target) and no denominators; a ``ratio``
    metric gives numerators and denominators, NaN for an excluded target."""
    A, B = item_sums(table, gain_map, metrics)
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    excluded = np.array([u.scores.get(gain_map) is None for u in table.units], dtype=bool)
    for m, metric in enumerate(metrics):
        if metric.form == "mean":
            out[metric.name] = (np.where(B[m] > 0, A[m], np.nan), None)
        else:
            out[metric.name] = (np.where(excluded, np.nan, A[m]), np.where(excluded, np.nan, B[m]))
    return out


def n_excluded(table: UnitTable, gain_map: str) -> int:
    """Targets whose ideal DCG is 0 under ``gain_map`` (left out of its rows)."""
    return sum(1 for u in table.units if u.scores.get(gain_map) is None)


def view_mask(items: Sequence[str], targets: Sequence[Target], view: str) -> np.ndarray:
    """The item mask of a view: ``clean`` and ``flagged`` by the target's column, ``all`` every target."""
    if view == "all":
        return np.ones(len(items), dtype=bool)
    if view not in ("clean", "flagged"):
        raise ValueError(f"unknown view {view!r}; choose from clean, all, flagged")
    of = {t.instance_id: t.view for t in targets}
    return np.array([of.get(i) == view for i in items], dtype=bool)


def split_mask(items: Sequence[str], instances: Sequence[Instance], split: str) -> np.ndarray:
    """The items of one split."""
    of = {i.instance_id: i.split for i in instances}
    return np.array([of.get(i) == split for i in items], dtype=bool)


def cluster_of(items: Sequence[str], targets: Sequence[Target], kind: str) -> list[str]:
    """Each item's cluster id: ``target`` (the instance itself) or ``topic``."""
    if kind == "target":
        return list(items)
    if kind == "topic":
        of = {t.instance_id: t.topic for t in targets}
        return [of[i] for i in items]
    raise ValueError(f"unknown cluster kind {kind!r}; choose from target, topic")
