"""CI-aware ranks per metric (ranks.csv) and the rank groups shared with releases.csv.

A *rank group* is one (track, policy, condition, metric): every participating
model that has the condition, together with the baselines, compared on that
metric in the direction the metric registry declares. Descriptive metrics
(no direction: ``pred_recent``, ``state_recent``) are not ranked. A baseline
takes part in a group only if the metric applies to it (``state_recent``
groups hold State models alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rapgen.scores import schema
from rapgen.scores.aggregate import probability_first, rank_by_intervals
from rapgen.scores.counts import POLICIES
from rapgen.scores.metrics import HIGHER_IS_BETTER, METRIC_NAMES
from rapgen.scores.outputs import Table
from rapgen.scores.units import BASELINE, MODEL, Entry

RANKED_METRICS: tuple[str, ...] = tuple(m for m in METRIC_NAMES if HIGHER_IS_BETTER[m] is not None)


@dataclass(frozen=True)
class RankGroup:
    track: int  # index into the tracks the keys use
    policy: int
    condition: str
    metric: int
    members: tuple[int, ...]  # entry indices: models by name, then baselines by name
    rows: np.ndarray  # the statistic index of each member


def _order(entries: list[Entry], members: list[int]) -> list[int]:
    return sorted(members, key=lambda e: (entries[e].kind != MODEL, entries[e].entry))


def rank_groups(entries: list[Entry], keys: list[tuple[int, int, int, int]]) -> list[RankGroup]:
    """Every rank group of the statistics ``keys`` ((track, entry, policy, metric) per row), in
    output order: track, policy, condition, metric."""
    by_key = {k: i for i, k in enumerate(keys)}
    ranked = {METRIC_NAMES.index(m) for m in RANKED_METRICS}
    found: dict[tuple[int, int, str, int], list[int]] = {}
    for t, e, p, m in keys:
        if m in ranked and entries[e].kind == MODEL:
            found.setdefault((t, p, entries[e].condition, m), []).append(e)
    baselines = [e for e, entry in enumerate(entries) if entry.kind == BASELINE]
    out = []
    for (t, p, condition, m) in sorted(found):
        members = _order(entries, found[(t, p, condition, m)]) + _order(entries, [b for b in baselines if (t, b, p, m) in by_key])
        rows = np.array([by_key[(t, e, p, m)] for e in members], dtype=np.int64)
        out.append(RankGroup(t, p, condition, m, tuple(members), rows))
    return out


def group_ranks(group: RankGroup, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """CI-aware ranks of a group's members (NaN where a member has no interval)."""
    return rank_by_intervals(low[group.rows], high[group.rows], bool(HIGHER_IS_BETTER[METRIC_NAMES[group.metric]]))


def _none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def ranks_table(entries: list[Entry], keys, splits, est, intervals, kept, tracks: tuple[str, ...] = schema.TRACKS) -> Table:
    """ranks.csv: per split, every rank group with each member's estimate, rank and p_first
    (``kept``: split -> statistic index -> its block-bootstrap replicates)."""
    groups = rank_groups(entries, keys)
    rows = []
    for split in splits:
        lo, hi = intervals[(split, "block")]
        for g in groups:
            ranks = group_ranks(g, lo, hi)
            reps = np.stack([kept[split][int(s)] for s in g.rows], axis=1)
            p_first = probability_first(reps, bool(HIGHER_IS_BETTER[METRIC_NAMES[g.metric]]))
            for k, e in enumerate(g.members):
                rows.append((
                    (g.track, split, g.policy, g.condition, g.metric, k),
                    (tracks[g.track], split, POLICIES[g.policy], g.condition, METRIC_NAMES[g.metric], entries[e].entry,
                     _none(est[split][g.rows[k]]), None if np.isnan(ranks[k]) else int(ranks[k]), _none(p_first[k])),
                ))
    rows.sort(key=lambda r: r[0])
    body = [r[1] for r in rows]
    columns = list(zip(*body)) if body else [() for _ in schema.RANKS_COLUMNS]
    return Table(schema.RANKS_COLUMNS, {c: list(v) for c, v in zip(schema.RANKS_COLUMNS, columns)})
