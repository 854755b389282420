"""Every statistic of an Inspire archive, with intervals, ranks and P(first) (INSPIRE.md §3–§4).

:func:`score_board` scores every entry (model or reference agent) and every
condition it answered on every split, under every gain map, view and cluster
kind: the fifteen metrics, the three funnel diagnostics and G(p). The per-item
(A, B) come from :mod:`.columns` and :mod:`.funnel`; a view is an item mask;
each (split, cluster kind) has one draw matrix shared by all its statistics
(``draw_counts`` over the clusters in byte order, the ledger's resamples and
seed), and all of them go through the engine's ``bootstrap_intervals`` in one
batch. Ranks are CI-aware, ``1 + #{j: j's interval wholly better}``, and
P(first) comes from the kept replicates (a tie within 1e-12 shared), within
INSPIRE.md §4's rank groups (split, view, condition, metric) over the entries:
only the leaderboard's rows (declared gains, target clusters) are ranked; the other gain maps and the topic clusters are
sensitivities with intervals alone, as are the unranked rows (``total_calls``,
the diagnostics, G(p)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from rapgen.scores.aggregate import probability_first, rank_by_intervals
from rapgen.scores.bootstrap import bootstrap_intervals

from rapgen.kinds.inspire.archive import Call, CorpusPaper, Instance, Judgement, Ledger, Prediction, Target, layout
from rapgen.kinds.inspire.scores.bootstrap import cluster_sums, clusters_of, draws, estimate
from rapgen.kinds.inspire.scores.columns import Codes, label_table, item_arrays, metric_sums, unit_columns
from rapgen.kinds.inspire.scores.diagnostics import DIAGNOSTICS
from rapgen.kinds.inspire.scores.funnel import funnel_sums, progress_arrays
from rapgen.kinds.inspire.scores.metrics import METRICS
from rapgen.kinds.inspire.scores.units import cluster_of, view_mask

RATIO_ROWS = [m for m, metric in enumerate(METRICS) if metric.form == "ratio"]
COLUMNS: tuple[str, ...] = ("track", "split", "gains", "cluster", "entry", "kind", "condition", "metric", "estimate", "ci_low",
                            "ci_high", "rank", "p_first", "n_items", "n_valid", "n_invalid")


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
    """The scored rows (:data:`COLUMNS`) and each (entry, condition)'s accounting totals."""

    rows: list[tuple] = field(default_factory=list)
    totals: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)

    def column(self, name: str) -> list:
        at = COLUMNS.index(name)
        return [r[at] for r in self.rows]


@dataclass(frozen=True)
class _Block:
    """One (entry, condition, gain map): per-item (A, B) of every statistic row, and the failed units."""

    entry: Entry
    condition: str
    gain_map: str
    A: np.ndarray  # (n_stats, n_items)
    B: np.ndarray
    used: np.ndarray  # (n_stats, n_items) the item enters the statistic (a ratio's item may add 0 to B)
    failed: np.ndarray


def _blocks(entries: Sequence[Entry], instances: Sequence[Instance], judgements: Sequence[Judgement],
            corpus: Mapping[str, CorpusPaper], ledger: Ledger, gain_maps: Sequence[str], board: Board) -> list[_Block]:
    labels = label_table(instances, judgements)
    cutoffs = {i.instance_id: i.cutoff for i in instances}
    codes = Codes()
    out = []
    for entry in entries:
        for condition in [c for c in layout.CONDITIONS if any(p.condition == c for p in entry.predictions)]:
            cols = unit_columns(entry.entry_id, condition, labels, entry.predictions, entry.calls, corpus, cutoffs, K=ledger.K, codes=codes)
            board.totals[(entry.entry_id, condition)] = {k: int(v.sum()) for k, v in cols.counts.items()}
            for gain_map in gain_maps:
                arrays = item_arrays(cols, labels, gain_map, ledger.K)
                parts = (metric_sums(arrays), funnel_sums(cols, labels, arrays, gain_map, prefix=ledger.exposure_prefix),
                         progress_arrays(cols, labels, arrays, gain_map, K=ledger.K, steps=ledger.progress_steps))
                A, B = np.vstack([a for a, _ in parts]), np.vstack([b for _, b in parts])
                used = B > 0
                used[RATIO_ROWS] = arrays.defined
                out.append(_Block(entry, condition, gain_map, A, B, used, cols.failed))
    return out


def score_board(instances: Sequence[Instance], targets: Sequence[Target], judgements: Sequence[Judgement],
                corpus: Mapping[str, CorpusPaper], ledger: Ledger, entries: Sequence[Entry], *, resamples: int | None = None,
                gain_maps: Sequence[str] | None = None, clusters: Sequence[str] = layout.CLUSTERS) -> Board:
    """Every statistic of every entry; ``resamples`` overrides the ledger's (e.g. for a quick look)."""
    board = Board()
    blocks = _blocks(entries, instances, judgements, corpus, ledger, tuple(gain_maps or ledger.gain_maps), board)
    items = tuple(sorted(i.instance_id for i in instances))
    split_of = {i.instance_id: i.split for i in instances}
    for split in layout.SPLITS:
        in_split = np.array([split_of[i] == split for i in items], dtype=bool)
        claimed = [b for b in blocks if any(split_of[p.instance_id] == split and p.condition == b.condition for p in b.entry.predictions)]
        if claimed:
            ids = [i for i, inside in zip(items, in_split) if inside]
            for kind in clusters:
                board.rows += _split_rows(split, kind, ids, in_split, claimed, targets, ledger,
                                          ledger.resamples if resamples is None else resamples)
    return board


def _split_rows(split: str, kind: str, ids: list[str], in_split: np.ndarray, blocks: list[_Block], targets: Sequence[Target],
                ledger: Ledger, resamples: int) -> list[tuple]:
    """The rows of one split and cluster kind: every block × view × statistic, on one draw matrix."""
    names = (*(m.name for m in METRICS), *DIAGNOSTICS, *progress_names(ledger.progress_steps))
    direction = {m.name: m.higher_is_better for m in METRICS}
    views = {v: view_mask(ids, targets, v) for v in layout.VIEWS}
    groups = clusters_of(cluster_of(ids, targets, kind))
    plan = [(b, v, s) for b in blocks for v in layout.VIEWS for s in range(len(names))]
    A = np.vstack([b.A[:, in_split] for b in blocks for _ in layout.VIEWS])
    B = np.vstack([b.B[:, in_split] for b in blocks for _ in layout.VIEWS])
    mask = np.repeat(np.array([views[v] for _ in blocks for v in layout.VIEWS]), len(names), axis=0)
    A_k, B_k = cluster_sums(A, B, groups, mask)
    ranked = [k for k, (b, _, s) in enumerate(plan) if direction.get(names[s]) is not None
              and (b.gain_map, kind) == (layout.GAIN_MAPS[0], layout.CLUSTERS[0])]
    result = bootstrap_intervals(draws(groups.n, resamples, ledger.seed), A_k, B_k, ledger.level, keep=np.array(ranked, dtype=np.int64))
    est = estimate(A_k, B_k)
    rank, p_first = _ranks(plan, ranked, names, direction, result)
    n_items = (np.vstack([b.used[:, in_split] for b in blocks for _ in layout.VIEWS]) & mask).sum(axis=1)
    rows = []
    for k, (b, view, s) in enumerate(plan):
        failed = int((b.failed[in_split] & views[view]).sum())
        rows.append((view, split, b.gain_map, kind, b.entry.entry_id, b.entry.kind, b.condition, names[s], _num(est[k]),
                     _num(result.low[k]), _num(result.high[k]), rank[k], _num(p_first[k]), int(n_items[k]),
                     int(views[view].sum()) - failed, failed))
    return rows


def _num(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def _ranks(plan, ranked: Sequence[int], names, direction, result) -> tuple[list[int | None], np.ndarray]:
    """CI-aware ranks and P(first) within each rank group: the ``ranked`` rows of one
    (view, condition, metric), differing only in their entry."""
    rank: list[int | None] = [None] * len(plan)
    p_first = np.full(len(plan), np.nan)
    groups: dict[tuple, list[int]] = {}
    for k in ranked:
        b, view, s = plan[k]
        groups.setdefault((view, b.condition, s), []).append(k)
    for (_, _, s), members in groups.items():
        m = np.array(members)
        hib = bool(direction[names[s]])
        r = rank_by_intervals(result.low[m], result.high[m], hib)
        share = probability_first(np.stack([result.replicates[int(k)] for k in m], axis=1), hib)
        for k, rk, sh, lo in zip(members, r, share, result.low[m]):
            rank[k] = None if np.isnan(rk) else int(rk)
            p_first[k] = np.nan if np.isnan(lo) else sh
    return rank, p_first
