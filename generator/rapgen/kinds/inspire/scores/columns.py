"""Every target of one entry and condition scored at once, with numpy (INSPIRE.md §2–§3).

The same numbers as :func:`~rapgen.kinds.inspire.scores.units.score_units`
followed by ``item_sums``, ``diagnostic_sums`` and ``progress_sums``, bit for
bit, without a Python loop over targets or over returned ids:

* :func:`label_table` lays out every target's labels Y_i as padded (items × L)
  matrices; :func:`unit_columns` finds, for each label, whether the unit's
  searches returned it, at which call and in which first-exposure position,
  and which slot of the cleaned list holds it;
* :func:`item_arrays` turns that into the per-target values of one gain map,
  and :func:`metric_sums` into the (A, B) rows of the fifteen metrics.

Exactness: DCG is accumulated column by column, left to right, with the same
``math.log2(j + 2)`` divisors as :func:`~rapgen.kinds.inspire.scores.gains.dcg`
(zeros past a list's end add exactly nothing), and every other value is one
IEEE operation on the same operands, so nothing depends on summation order.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Mapping, Sequence

import numpy as np

from rapgen.kinds.inspire.archive import Call, CorpusPaper, Instance, Judgement, Prediction, canon
from rapgen.kinds.inspire.scores.cleaned import EMPTY, OUTCOMES, clean_ranking
from rapgen.kinds.inspire.scores.metrics import METRICS, InspireMetric

NEVER = np.iinfo(np.int64).max  # the first call / position of a label never returned


@dataclass(frozen=True)
class LabelTable:
    """Y_i of every item (instance-id order) as padded matrices, labels in judgement order."""

    items: tuple[str, ...]
    ids: tuple[tuple[str, ...], ...]
    declared: np.ndarray  # (n, L) declared gain, 0 where no label
    t1: np.ndarray  # (n, L) tier T1
    present: np.ndarray  # (n, L) a label sits here

    def gains(self, gain_map: str) -> np.ndarray:
        """(n, L) gains under ``declared``, ``binary`` or ``t2t3``; 0 where not a label of that map."""
        if gain_map == "declared":
            g = self.declared
        elif gain_map == "binary":
            g = self.present * 1.0
        elif gain_map == "t2t3":
            g = np.where(self.t1, 0.0, self.declared)
        else:
            raise ValueError(f"unknown gain map {gain_map!r}; choose from declared, binary, t2t3")
        return np.where(self.present & (g > 0), g, 0.0)


def label_table(instances: Sequence[Instance], judgements: Sequence[Judgement]) -> LabelTable:
    """Every instance's labels; a repeated (instance, paper) keeps its last judgement, as a dict would."""
    items = tuple(sorted(i.instance_id for i in instances))
    per: dict[str, dict[str, Judgement]] = {i: {} for i in items}
    for j in judgements:
        if j.instance_id in per:
            per[j.instance_id][j.arxiv_id] = j
    width = max([len(v) for v in per.values()] + [1])
    declared, t1, present = np.zeros((len(items), width)), np.zeros((len(items), width), bool), np.zeros((len(items), width), bool)
    for n, iid in enumerate(items):
        for l, j in enumerate(per[iid].values()):
            declared[n, l], t1[n, l], present[n, l] = float(j.gain), j.tier == "T1", True
    return LabelTable(items, tuple(tuple(per[i]) for i in items), declared, t1, present)


@dataclass(frozen=True)
class UnitColumns:
    """One entry's units of one condition, per item and per label (n items × L labels, K slots)."""

    entry: str
    condition: str
    failed: np.ndarray  # (n,) no submitted list (failed or absent)
    n_calls: np.ndarray  # (n,) trace lines of the unit
    exposed: np.ndarray  # (n, L) the label was returned by one of the unit's calls
    first_call: np.ndarray  # (n, L) position of the first call that returned it (NEVER if none)
    first_seen: np.ndarray  # (n, L) its rank among the unit's ids by first exposure (NEVER if none)
    selected: np.ndarray  # (n, L) the label is in the cleaned list's support
    slot_label: np.ndarray  # (n, K) the label a slot holds, -1 for none
    counts: dict[str, np.ndarray]  # the accounting of UnitScore.counts, per item


class Codes(dict):
    """Distinct ids numbered in first-seen order, with each raw returned string's code
    (-1 when it is no arXiv id) read once: share one across an archive's entries."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: dict[str, int] = {}

    def of(self, key: str) -> int:
        return self.setdefault(key, len(self))

    def of_raw(self, flat: list[str]) -> np.ndarray:
        """The code of every returned string (canonicalised: a version suffix dropped)."""
        raw = self.raw
        for s in dict.fromkeys(flat):
            if s not in raw:
                c = canon(s)
                raw[s] = self.of(c.key) if c.canonical else -1
        return np.fromiter(map(raw.__getitem__, flat), dtype=np.int64, count=len(flat))


def _exposure(items: Sequence[str], calls: Sequence[Call], condition: str, codes: Codes) -> tuple[np.ndarray, ...]:
    """The unit's returned canonical ids, flattened in (item, call position, rank) order:
    (item, call position, code) arrays, and the calls per item."""
    at = {iid: n for n, iid in enumerate(items)}
    mine = sorted((c for c in calls if c.condition == condition and c.instance_id in at),
                  key=lambda c: (at[c.instance_id], c.call_index))  # stable, as exposure_of's sort
    call_item = np.fromiter((at[c.instance_id] for c in mine), dtype=np.int64, count=len(mine))
    n_calls = np.bincount(call_item, minlength=len(items)).astype(np.int64)
    call_position = np.arange(len(mine)) - np.concatenate([[0], np.cumsum(n_calls)[:-1]])[call_item]
    code = codes.of_raw(list(chain.from_iterable(c.returned_ids for c in mine)))
    per_call = np.fromiter((len(c.returned_ids) for c in mine), dtype=np.int64, count=len(mine))
    keep = code >= 0
    return np.repeat(call_item, per_call)[keep], np.repeat(call_position, per_call)[keep], code[keep], n_calls


def _first_exposures(item: np.ndarray, position: np.ndarray, code: np.ndarray, n_items: int, n_codes: int):
    """Each (item, id) pair returned: its key item·n_codes + code (sorted), first call
    position and rank among the item's ids by first exposure."""
    key = item * n_codes + code
    pairs, first = np.unique(key, return_index=True)
    by_time = np.argsort(first, kind="stable")  # items are contiguous in the flat order
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_time] = np.arange(len(first))
    per_item = np.bincount(pairs // max(n_codes, 1), minlength=n_items) if len(pairs) else np.zeros(n_items, dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    return pairs, position[first], rank - before[pairs // max(n_codes, 1)]


def _lookup(pairs: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each key sits in the sorted ``pairs`` and whether it is there."""
    at = np.searchsorted(pairs, keys)
    inside = at < len(pairs)
    found = inside & (pairs[np.where(inside, at, 0)] == keys) if len(pairs) else np.zeros(keys.shape, bool)
    return np.where(found, at, 0), found


def _first(exposed: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``values[at]`` where exposed, else NEVER (also when no call of the unit returned anything)."""
    return np.where(exposed, values[at], NEVER) if len(values) else np.full(at.shape, NEVER, dtype=values.dtype)


def unit_columns(entry: str, condition: str, labels: LabelTable, predictions: Sequence[Prediction], calls: Sequence[Call],
                 corpus: Mapping[str, CorpusPaper], cutoffs: Mapping[str, object], *, K: int, codes: Codes | None = None) -> UnitColumns:
    """The columns of one entry and condition; a missing prediction line is a failed unit.
    ``cutoffs``: instance -> cutoff date (for the slot outcomes); ``codes``: shared id numbering."""
    items, n = labels.items, len(labels.items)
    codes = Codes() if codes is None else codes
    label_code = np.full(labels.present.shape, -1, dtype=np.int64)
    for i, ids in enumerate(labels.ids):
        label_code[i, :len(ids)] = [codes.of(a) for a in ids]
    item, position, code, n_calls = _exposure(items, calls, condition, codes)
    pred = {p.instance_id: p for p in predictions if p.condition == condition}
    cleaned = [clean_ranking(p.submitted_ids, K) if p is not None and not p.failed else EMPTY for p in map(pred.get, items)]
    slot_code = np.full((n, K), -1, dtype=np.int64)
    canonical = np.zeros((n, K), dtype=bool)
    for i, c in enumerate(cleaned):
        slot_code[i, :len(c.keys)] = [codes.of(k) for k in c.keys]
        canonical[i, :len(c.keys)] = c.canonical
    n_codes = max(len(codes), 1)
    pairs, first_call, first_rank = _first_exposures(item, position, code, n, n_codes)
    rows = np.arange(n)[:, None]
    at, exposed = _lookup(pairs, rows * n_codes + np.maximum(label_code, 0))
    exposed &= label_code >= 0
    match = canonical[:, :, None] & (slot_code[:, :, None] == label_code[:, None, :]) & (label_code[:, None, :] >= 0)
    slot_label = np.where(match.any(axis=2), match.argmax(axis=2), -1)
    _, slot_exposed = _lookup(pairs, rows * n_codes + np.maximum(slot_code, 0))
    counts = _counts(cleaned, pred, items, labels, slot_label, slot_exposed & (slot_code >= 0), corpus, cutoffs)
    return UnitColumns(
        entry, condition, np.array([p is None or p.failed for p in map(pred.get, items)]), n_calls,
        exposed, _first(exposed, first_call, at), _first(exposed, first_rank, at),
        match.any(axis=1), slot_label, counts,
    )


def _counts(cleaned, pred, items, labels: LabelTable, slot_label: np.ndarray, slot_exposed: np.ndarray,
            corpus: Mapping[str, CorpusPaper], cutoffs: Mapping[str, object]) -> dict[str, np.ndarray]:
    """UnitScore.counts per item: cleaning counts, slot outcomes (declared labels), empty, failed."""
    names = ("n_submitted", "n_versioned", "n_duplicate", "n_over_limit", "n_slots", *(f"n_{o}" for o in OUTCOMES), "n_empty", "n_failed")
    out = {k: np.zeros(len(items), dtype=np.int64) for k in names}
    declared = labels.gains("declared")
    for i, (iid, c) in enumerate(zip(items, cleaned)):
        p = pred.get(iid)
        outcomes: Counter = Counter()
        for k, (key, is_id) in enumerate(zip(c.keys, c.canonical)):
            paper = corpus.get(key) if is_id else None
            if not is_id:
                outcomes["malformed"] += 1
            elif paper is None:
                outcomes["unknown"] += 1
            elif paper.first_submitted >= cutoffs[iid]:
                outcomes["post_cutoff"] += 1
            elif not slot_exposed[i, k]:
                outcomes["unsurfaced"] += 1
            elif slot_label[i, k] < 0 or declared[i, slot_label[i, k]] <= 0:
                outcomes["unlabelled"] += 1
            else:
                outcomes["scored"] += 1
        values = (c.n_submitted, c.n_versioned, c.n_duplicate, c.n_over_limit, len(c.keys), *(outcomes[o] for o in OUTCOMES),
                  int(p is not None and p.status == "submitted" and c.n_submitted == 0), int(p is None or p.status != "submitted"))
        for name, v in zip(names, values):
            out[name][i] = v
    return out


# ---------------------------------------------------------------- values of one gain map
_LOG2 = [math.log2(j + 2) for j in range(64)]


def sequential_dcg(gains: np.ndarray, K: int) -> np.ndarray:
    """Row-wise Σ_{j<min(K, width)} x_j / log2(j + 2), added left to right as ``dcg`` does."""
    acc = np.zeros(gains.shape[0])
    for j in range(min(K, gains.shape[1])):
        acc = acc + gains[:, j] / (_LOG2[j] if j < len(_LOG2) else math.log2(j + 2))
    return acc


def descending(gains: np.ndarray) -> np.ndarray:
    """Each row sorted in decreasing order."""
    return -np.sort(-gains, axis=1)


@dataclass(frozen=True)
class ItemArrays:
    """:class:`~rapgen.kinds.inspire.scores.metrics.ItemScores` of every item, as arrays;
    ``defined`` is False where the map excludes the target (IDCG 0; its other values are meaningless)."""

    defined: np.ndarray
    ndcg: np.ndarray
    recall: np.ndarray
    rr: np.ndarray
    hits: np.ndarray
    n_labels: np.ndarray
    exposed: np.ndarray
    selected: np.ndarray
    n_exposed_labels: np.ndarray
    n_calls: np.ndarray
    idcg: np.ndarray


def item_arrays(cols: UnitColumns, labels: LabelTable, gain_map: str, K: int) -> ItemArrays:
    """Every target's values under ``gain_map`` (score_item, elementwise)."""
    G = labels.gains(gain_map)
    Y = G > 0
    n = G.shape[0]
    idcg = sequential_dcg(descending(G), K)
    defined = idcg > 0
    rows = np.arange(n)[:, None]
    slot_gain = np.where(cols.slot_label >= 0, G[rows, np.maximum(cols.slot_label, 0)], 0.0)
    slot_gain = np.where((cols.slot_label >= 0) & cols.exposed[rows, np.maximum(cols.slot_label, 0)], slot_gain, 0.0)
    scoring = slot_gain > 0
    hits = scoring.sum(axis=1)
    n_labels = Y.sum(axis=1)
    seen = Y & cols.exposed
    with np.errstate(invalid="ignore", divide="ignore"):
        first = np.where(scoring.any(axis=1), scoring.argmax(axis=1) + 1, 0)
        return ItemArrays(
            defined,
            sequential_dcg(slot_gain, K) / idcg,
            hits / n_labels,
            np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0),
            hits,
            n_labels,
            sequential_dcg(descending(np.where(seen, G, 0.0)), K) / idcg,
            sequential_dcg(descending(np.where(seen & cols.selected, G, 0.0)), K) / idcg,
            seen.sum(axis=1),
            cols.n_calls,
            idcg,
        )


def metric_sums(arrays: ItemArrays, metrics: Sequence[InspireMetric] = METRICS) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B) of every metric, (n_metrics, n_items): ``item_sums`` of the same targets."""
    A = np.zeros((len(metrics), len(arrays.defined)))
    B = np.zeros_like(A)
    ok = arrays.defined
    with np.errstate(invalid="ignore", divide="ignore"):
        for m, metric in enumerate(metrics):
            if metric.denominator is not None:
                A[m] = np.where(ok, metric.value(arrays), 0.0)
                B[m] = np.where(ok, metric.denominator(arrays), 0.0)
                continue
            use = ok if metric.defined is None else ok & metric.defined(arrays)
            A[m] = np.where(use, metric.value(arrays), 0.0)
            B[m] = use * 1.0
    return A, B


def item_values(metric: InspireMetric, arrays: ItemArrays) -> tuple[np.ndarray, np.ndarray | None]:
    """One metric's per-target inputs in the NaN convention of ``rapgen.scores.statistics``:
    a mean's values (NaN where undefined), a ratio's numerators and denominators (NaN where
    the gain map excludes the target)."""
    A, B = metric_sums(arrays, (metric,))
    if metric.denominator is not None:
        return np.where(arrays.defined, A[0], np.nan), np.where(arrays.defined, B[0], np.nan)
    return np.where(B[0] > 0, A[0], np.nan), None
