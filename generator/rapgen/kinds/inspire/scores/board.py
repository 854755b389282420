"""Every statistic of an Inspire archive, with intervals, ranks, P(first) and pairs (INSPIRE.md §3–§4).

:func:`score_board` scores every entry (model or reference agent) and every
condition it answered on every split, under every gain map, view and cluster
kind: the fifteen metrics, the three funnel diagnostics and G(p). The per-item
(A, B) come from :mod:`.columns` and :mod:`.funnel`; a view is an item mask.
Everything after that is the one statistic form of KINDS.md §4,
:mod:`rapgen.scores.statistics`: each (split, cluster kind) has one draw matrix
shared by all its statistics (``draw_counts`` over the clusters in byte order,
the ledger's resamples and seed), ranks are CI-aware, ``1 + #{j: j's interval
wholly better}``, P(first) comes from the kept replicates, and pairs are a − b
within a rank group. INSPIRE.md §4's rank groups are (split, view, condition,
metric) over the entries, on the leaderboard's rows alone (declared gains, target
clusters); the other gain maps and the topic clusters are sensitivities with
intervals alone, as are the unranked rows (``total_calls``, the diagnostics, G(p)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from rapgen.scores import ScoredSet, Statistic, cluster_index, score_statistics, split_draws

from rapgen.kinds.inspire.archive import Call, CorpusPaper, Instance, Judgement, Ledger, Prediction, Target, layout
from rapgen.kinds.inspire.scores.columns import Codes, ItemArrays, item_arrays, label_table, metric_sums, unit_columns
from rapgen.kinds.inspire.scores.diagnostics import DIAGNOSTICS
from rapgen.kinds.inspire.scores.funnel import funnel_sums, progress_arrays
from rapgen.kinds.inspire.scores.metrics import METRICS
from rapgen.kinds.inspire.scores.units import cluster_of, view_mask

RATIO_ROWS = [m for m, metric in enumerate(METRICS) if metric.form == "ratio"]
AXES: tuple[str, ...] = ("gains", "cluster")  # the score rows' keys after track (the view) and split
# KINDS.md §4's leaderboard.csv columns with Inspire's two axes (scores.statistics.leaderboard_columns)
COLUMNS: tuple[str, ...] = ("track", "split", *AXES, "entry", "kind", "condition", "metric", "estimate", "ci_low",
                            "ci_high", "rank", "p_first", "n_items", "n_valid", "n_invalid")
# INSPIRE.md §4's rank group: (split, view, condition, metric), on the leaderboard's gains and clusters
GROUP_BY: tuple[str, ...] = ("track", "split", *AXES, "condition", "metric")


@dataclass(frozen=True)
class Entry:
    """One model or reference agent: its parsed predictions and traces."""

    entry_id: str
    kind: str  # model | reference
    predictions: Sequence[Prediction]
    calls: Sequence[Call]


def progress_names(steps: int) -> tuple[str, ...]:
    """The G(p) rows: ``progress@0``, ``progress@0.1``, …, ``progress@1``."""
    return tuple(f"progress@{k / steps:g}" for k in range(steps + 1))


@dataclass
class Board:
    """The scored rows (:data:`COLUMNS`), each (entry, condition)'s accounting totals, and per
    cluster kind the :class:`~rapgen.scores.statistics.ScoredSet` they come from (its pairs:
    a − b within the rank groups, target clusters only)."""

    rows: list[tuple] = field(default_factory=list)
    totals: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    counts: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)  # the same, per target
    scored: dict[str, ScoredSet] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)  # the per-item inputs (units.parquet, histograms)

    def column(self, name: str) -> list:
        at = COLUMNS.index(name)
        return [r[at] for r in self.rows]


@dataclass(frozen=True)
class Block:
    """One (entry, condition, gain map): per-item (A, B) of every statistic row (:func:`statistic_names`
    order), the failed units and the item values they come from."""

    entry: Entry
    condition: str
    gain_map: str
    A: np.ndarray  # (n_stats, n_items)
    B: np.ndarray
    used: np.ndarray  # (n_stats, n_items) the item enters the statistic (a ratio's item may add 0 to B)
    failed: np.ndarray
    arrays: ItemArrays


def statistic_names(progress_steps: int) -> tuple[str, ...]:
    """The rows of a block: the fifteen metrics, the funnel diagnostics, G(p)."""
    return (*(m.name for m in METRICS), *DIAGNOSTICS, *progress_names(progress_steps))


def _blocks(entries: Sequence[Entry], instances: Sequence[Instance], judgements: Sequence[Judgement],
            corpus: Mapping[str, CorpusPaper], ledger: Ledger, gain_maps: Sequence[str], board: Board) -> list[Block]:
    labels = label_table(instances, judgements)
    cutoffs = {i.instance_id: i.cutoff for i in instances}
    codes = Codes()
    out = []
    for entry in entries:
        for condition in [c for c in layout.CONDITIONS if any(p.condition == c for p in entry.predictions)]:
            cols = unit_columns(entry.entry_id, condition, labels, entry.predictions, entry.calls, corpus, cutoffs, K=ledger.K, codes=codes)
            board.totals[(entry.entry_id, condition)] = {k: int(v.sum()) for k, v in cols.counts.items()}
            board.counts[(entry.entry_id, condition)] = cols.counts
            for gain_map in gain_maps:
                arrays = item_arrays(cols, labels, gain_map, ledger.K)
                parts = (metric_sums(arrays), funnel_sums(cols, labels, arrays, gain_map, prefix=ledger.exposure_prefix),
                         progress_arrays(cols, labels, arrays, gain_map, K=ledger.K, steps=ledger.progress_steps))
                A, B = np.vstack([a for a, _ in parts]), np.vstack([b for _, b in parts])
                used = B > 0
                used[RATIO_ROWS] = arrays.defined
                out.append(Block(entry, condition, gain_map, A, B, used, cols.failed, arrays))
    return out


def score_board(instances: Sequence[Instance], targets: Sequence[Target], judgements: Sequence[Judgement],
                corpus: Mapping[str, CorpusPaper], ledger: Ledger, entries: Sequence[Entry], *, resamples: int | None = None,
                gain_maps: Sequence[str] | None = None, clusters: Sequence[str] = layout.CLUSTERS) -> Board:
    """Every statistic of every entry; ``resamples`` overrides the ledger's (e.g. for a quick look).
    One :func:`~rapgen.scores.statistics.score_statistics` run per cluster kind, each split on its own draws."""
    board = Board()
    blocks = board.blocks = _blocks(entries, instances, judgements, corpus, ledger, tuple(gain_maps or ledger.gain_maps), board)
    items = tuple(sorted(i.instance_id for i in instances))
    split_of = {i.instance_id: i.split for i in instances}
    R = ledger.resamples if resamples is None else resamples
    for kind in clusters:
        stats, draws = [], {}
        for split in layout.SPLITS:
            in_split = np.array([split_of[i] == split for i in items], dtype=bool)
            claimed = [b for b in blocks if any(split_of[p.instance_id] == split and p.condition == b.condition for p in b.entry.predictions)]
            if claimed:
                ids = [i for i, inside in zip(items, in_split) if inside]
                stats += _statistics(split, kind, ids, in_split, claimed, targets, ledger)
                draws[split] = split_draws(cluster_index(cluster_of(ids, targets, kind)), R, ledger.seed)
        scored = score_statistics(stats, draws, ledger.level, axes=AXES, group_by=GROUP_BY)
        board.scored[kind] = scored
        board.rows += [_row(r) for r in scored.rows]
    return board


def _statistics(split: str, kind: str, ids: list[str], in_split: np.ndarray, blocks: list[Block], targets: Sequence[Target],
                ledger: Ledger) -> list[Statistic]:
    """Every block × view × statistic of one split and cluster kind, in the statistics' NaN convention:
    a mean's item value where B > 0, a ratio's numerator and denominator where the item enters it.
    Only the leaderboard's rows (declared gains, target clusters, a metric with a direction) are ranked."""
    names = statistic_names(ledger.progress_steps)
    direction = {m.name: m.higher_is_better for m in METRICS}
    ratio = set(RATIO_ROWS)
    views = {v: view_mask(ids, targets, v) for v in layout.VIEWS}
    out = []
    for b in blocks:
        A, B, used, failed = b.A[:, in_split], b.B[:, in_split], b.used[:, in_split], b.failed[in_split]
        ranked = (b.gain_map, kind) == (layout.GAIN_MAPS[0], layout.CLUSTERS[0])
        for view in layout.VIEWS:
            mask = views[view]
            n_failed = int((failed & mask).sum())
            for s, name in enumerate(names):
                inside = used[s] & mask
                values = np.where(inside, A[s], np.nan)
                denominators = np.where(inside, B[s], np.nan) if s in ratio else None
                out.append(Statistic(view, split, (b.gain_map, kind), b.entry.entry_id, b.entry.kind, b.condition, name,
                                     values, direction.get(name) if ranked else None, int(mask.sum()) - n_failed, n_failed,
                                     denominators))
    return out


def _row(r) -> tuple:
    s = r.stat
    return (s.track, s.split, *s.axes, s.entry, s.kind, s.condition, s.metric, r.estimate, r.ci_low, r.ci_high, r.rank,
            r.p_first, r.n_items, s.n_valid, s.n_invalid)
