"""The one statistic form of the new kinds (KINDS.md §4): cluster sums, intervals, ranks, pairs.

Every number a new kind reports is ``stat = ΣA / ΣB`` over the clusters of one
split, and every interval its replicates ``(C[r]·A) / (C[r]·B)`` on the split's
count matrix ``C`` (``draw_counts``), run through the engine's unchanged
``bootstrap_intervals``. The per-cluster sums come in two forms:

| form | A_k | B_k |
| --- | --- | --- |
| ``mean`` | sum of the defined item values in cluster k | number of defined items in k |
| ``ratio`` | sum of the item numerators in k | sum of the item denominators in k |

A track or a view is an *item mask*: items outside it are undefined, on the
same draw matrix, so every two statistics of a split are resampled together
(common random numbers) and a difference of two entries is paired.

Ranks are CI-aware within a declared rank group, ``1 + #{j: j's interval
lies wholly on the better side}``; ``p_first`` is the share of kept replicates
in which an entry is best (none for an entry without an interval). A metric
without a direction is not ranked.
``pairs`` gives a − b for every two members of a rank group: per item (a
paired difference on the items both define) for the ``mean`` form, per
replicate for the ``ratio`` form (a difference of ratios is no item value).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rapgen.scores.aggregate import probability_first, rank_by_intervals
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts, percentiles
from rapgen.scores.outputs import Table, csv_bytes

FORMS: tuple[str, ...] = ("mean", "ratio")
KEY_COLUMNS: tuple[str, ...] = ("track", "split")  # then the kind's axes, then ROW_COLUMNS
ROW_COLUMNS: tuple[str, ...] = ("entry", "kind", "condition", "metric")
LEADERBOARD_TAIL: tuple[str, ...] = ("estimate", "ci_low", "ci_high", "rank", "p_first", "n_items", "n_valid", "n_invalid")
PAIRS_TAIL: tuple[str, ...] = (
    "entry_a", "kind_a", "condition_a", "entry_b", "kind_b", "condition_b", "estimate", "ci_low", "ci_high", "n_items",
)


# ---------------------------------------------------------------- clusters and draws
@dataclass(frozen=True)
class Clusters:
    """The clusters of one split: ids in byte order and each item's cluster index."""

    ids: tuple[str, ...]
    of_item: np.ndarray  # (n_items,) int64

    @property
    def size(self) -> int:
        return len(self.ids)


def cluster_index(item_clusters: Sequence[str]) -> Clusters:
    """Clusters of items given each item's cluster id; ids sorted by their UTF-8 bytes."""
    ids = tuple(sorted(set(item_clusters), key=lambda s: s.encode("utf-8")))
    position = {c: k for k, c in enumerate(ids)}
    return Clusters(ids, np.array([position[c] for c in item_clusters], dtype=np.int64))


@dataclass(frozen=True)
class SplitDraws:
    """A split's clusters and its (R, K) count matrix, shared by all its statistics."""

    clusters: Clusters
    counts: np.ndarray


def split_draws(clusters: Clusters, resamples: int, seed: int) -> SplitDraws:
    """One ``default_rng(seed)`` per (split, cluster kind): SCORING.md §5's matrix."""
    return SplitDraws(clusters, draw_counts(clusters.size, resamples, seed))


# ---------------------------------------------------------------- the two forms
def _rows(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return arr[None, :] if arr.ndim == 1 else arr


def masked(values: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``values`` with the items outside ``mask`` undefined (NaN)."""
    arr = np.asarray(values, dtype=np.float64)
    return arr if mask is None else np.where(np.asarray(mask, dtype=bool), arr, np.nan)


def cluster_sums(values: np.ndarray, clusters: Clusters, *, denominators: np.ndarray | None = None,
                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (A, B), each (n_stats, K), of item values (n_items,) or (n_stats, n_items).

    Without ``denominators`` the ``mean`` form: A sums the defined values, B counts
    them. With them the ``ratio`` form: an item counts where both its numerator and
    denominator are defined; A sums numerators, B denominators. ``mask``: the
    track's or view's items (others are undefined).
    """
    num = _rows(masked(values, mask))
    if denominators is None:
        defined = ~np.isnan(num)
        den = defined.astype(np.float64)
    else:
        den = _rows(masked(denominators, mask))
        defined = ~np.isnan(num) & ~np.isnan(den)
        den = np.where(defined, den, 0.0)
    num = np.where(defined, num, 0.0)
    member = np.zeros((num.shape[1], clusters.size))
    member[np.arange(num.shape[1]), clusters.of_item] = 1.0
    return num @ member, den @ member


def estimate(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """ΣA / ΣB per row; NaN where ΣB = 0 (nothing defined)."""
    a, b = _rows(A).sum(axis=1), _rows(B).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def paired_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a − b per item, defined only where both sides are."""
    return np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)  # NaN propagates


def defined_items(values: np.ndarray, denominators: np.ndarray | None = None) -> int:
    """How many items a statistic uses (both sides defined for the ratio form)."""
    ok = ~np.isnan(np.asarray(values, dtype=np.float64))
    if denominators is not None:
        ok &= ~np.isnan(np.asarray(denominators, dtype=np.float64))
    return int(ok.sum())


# ---------------------------------------------------------------- statistics in, scored rows out
@dataclass(frozen=True)
class Statistic:
    """One leaderboard row before scoring: its labels and its item values.

    ``values`` are per item of the split (NaN = undefined, already masked to the
    track or view); ``denominators`` turn the row into the ``ratio`` form.
    ``higher_is_better`` None: descriptive, never ranked."""

    track: str
    split: str
    axes: tuple[str, ...]  # one value per axis the caller declares, in that order
    entry: str
    kind: str
    condition: str
    metric: str
    values: np.ndarray
    higher_is_better: bool | None
    n_valid: int = 0
    n_invalid: int = 0
    denominators: np.ndarray | None = None

    @property
    def form(self) -> str:
        return "mean" if self.denominators is None else "ratio"

    def label(self, column: str, axis_names: Sequence[str]) -> str:
        if column in axis_names:
            return self.axes[list(axis_names).index(column)]
        return getattr(self, column)


@dataclass(frozen=True)
class Scored:
    """A statistic with its estimate, interval, rank and ``p_first`` (None where undefined)."""

    stat: Statistic
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    rank: int | None = None
    p_first: float | None = None


@dataclass(frozen=True)
class RankGroup:
    key: tuple[str, ...]  # the values of the group_by columns
    members: tuple[int, ...]  # statistic indices, in input order


@dataclass(frozen=True)
class Pair:
    group: RankGroup
    a: int
    b: int
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int


@dataclass
class ScoredSet:
    """Everything the writers need: the scored rows, the rank groups and the pairs."""

    axes: tuple[str, ...]
    group_by: tuple[str, ...]
    rows: list[Scored]
    groups: list[RankGroup] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)


def _value(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def rank_groups(stats: Sequence[Statistic], group_by: Sequence[str], axes: Sequence[str]) -> list[RankGroup]:
    """The rank groups of ``stats``: ranked statistics sharing the ``group_by`` labels
    (in first-seen order); a group's metric must share one direction."""
    found: dict[tuple[str, ...], list[int]] = {}
    for i, s in enumerate(stats):
        if s.higher_is_better is not None:
            found.setdefault(tuple(s.label(c, axes) for c in group_by), []).append(i)
    groups = [RankGroup(k, tuple(v)) for k, v in found.items()]
    for g in groups:
        if len({stats[i].higher_is_better for i in g.members}) > 1:
            raise ValueError(f"rank group {g.key} mixes metric directions")
    return groups


def _draws_of(stats: Sequence[Statistic], draws: dict[str, SplitDraws]) -> dict[str, list[int]]:
    by_split: dict[str, list[int]] = {}
    for i, s in enumerate(stats):
        if s.split not in draws:
            raise ValueError(f"statistic {s.entry} {s.metric}: no draws for split {s.split!r}")
        by_split.setdefault(s.split, []).append(i)
    return by_split


def score_statistics(stats: Sequence[Statistic], draws: dict[str, SplitDraws], level: float, *,
                     axes: Sequence[str] = (), group_by: Sequence[str] | None = None, pairs: bool = True) -> ScoredSet:
    """Estimate, interval, CI-aware rank and ``p_first`` of every statistic, and the pairs.

    ``draws``: split -> its clusters and count matrix. ``group_by``: the columns
    (among track, split, the axes, entry, kind, condition, metric) whose values
    form a rank group; default track, split, every axis and metric.
    """
    axes = tuple(axes)
    group_by = tuple(group_by) if group_by is not None else ("track", "split", *axes, "metric")
    groups = rank_groups(stats, group_by, axes)
    ranked = {i for g in groups for i in g.members}
    est = np.full(len(stats), np.nan)
    low, high = np.full(len(stats), np.nan), np.full(len(stats), np.nan)
    kept: dict[int, np.ndarray] = {}
    for split, idx in _draws_of(stats, draws).items():
        d = draws[split]
        sums = [cluster_sums(stats[i].values, d.clusters, denominators=stats[i].denominators) for i in idx]
        A = np.vstack([a for a, _ in sums]) if sums else np.zeros((0, d.clusters.size))
        B = np.vstack([b for _, b in sums]) if sums else np.zeros((0, d.clusters.size))
        est[idx] = estimate(A, B)
        keep = np.array([j for j, i in enumerate(idx) if i in ranked], dtype=np.int64)
        result = bootstrap_intervals(d.counts, A, B, level, keep=keep)
        low[idx], high[idx] = result.low, result.high
        kept.update({idx[j]: reps for j, reps in result.replicates.items()})
    rank = np.full(len(stats), np.nan)
    p_first = np.full(len(stats), np.nan)
    for g in groups:
        m = np.array(g.members, dtype=np.int64)
        hib = bool(stats[g.members[0]].higher_is_better)
        rank[m] = rank_by_intervals(low[m], high[m], hib)
        share = probability_first(np.stack([kept[int(i)] for i in m], axis=1), hib)
        p_first[m] = np.where(np.isnan(low[m]), np.nan, share)  # no interval: no share either
    rows = [
        Scored(s, _value(est[i]), _value(low[i]), _value(high[i]), defined_items(s.values, s.denominators),
               None if np.isnan(rank[i]) else int(rank[i]), _value(p_first[i]))
        for i, s in enumerate(stats)
    ]
    out = ScoredSet(axes, group_by, rows, groups)
    if pairs:
        out.pairs = score_pairs(stats, groups, draws, level, kept)
    return out


def _pair_interval(diff: np.ndarray, level: float) -> tuple[float | None, float | None]:
    ok = ~np.isnan(diff)
    if not ok.any():
        return None, None
    lo, hi = np.percentile(diff[ok], percentiles(level))
    return float(lo), float(hi)


def score_pairs(stats: Sequence[Statistic], groups: Iterable[RankGroup], draws: dict[str, SplitDraws], level: float,
                kept: dict[int, np.ndarray]) -> list[Pair]:
    """a − b for every two members of each rank group (a before b in the group's order).

    ``mean`` form: the paired per-item difference, itself a ``mean`` statistic on
    the split's draws. ``ratio`` form: the difference of the two ratios, per
    replicate of the shared draws (``kept``: each member's replicates), over the
    replicates where both are defined."""
    plan: list[tuple[RankGroup, int, int]] = [(g, a, b) for g in groups for k, a in enumerate(g.members) for b in g.members[k + 1:]]
    out: dict[int, Pair] = {}
    by_split: dict[str, list[int]] = {}
    for n, (g, a, b) in enumerate(plan):
        sa, sb = stats[a], stats[b]
        if sa.split != sb.split:
            raise ValueError(f"rank group {g.key} spans splits")
        if sa.form == "ratio" or sb.form == "ratio":
            both = ~np.isnan(sa.values) & ~np.isnan(sb.values)
            if sa.denominators is not None:
                both &= ~np.isnan(sa.denominators)
            if sb.denominators is not None:
                both &= ~np.isnan(sb.denominators)
            lo, hi = _pair_interval(kept[a] - kept[b], level)
            ea = estimate(*cluster_sums(sa.values, draws[sa.split].clusters, denominators=sa.denominators))[0]
            eb = estimate(*cluster_sums(sb.values, draws[sb.split].clusters, denominators=sb.denominators))[0]
            out[n] = Pair(g, a, b, _value(ea - eb), lo, hi, int(both.sum()))
        else:
            by_split.setdefault(sa.split, []).append(n)
    for split, ns in by_split.items():
        d = draws[split]
        diffs = np.vstack([paired_difference(stats[plan[n][1]].values, stats[plan[n][2]].values) for n in ns])
        A, B = cluster_sums(diffs, d.clusters)
        est = estimate(A, B)
        result = bootstrap_intervals(d.counts, A, B, level)
        for j, n in enumerate(ns):
            g, a, b = plan[n]
            out[n] = Pair(g, a, b, _value(est[j]), _value(result.low[j]), _value(result.high[j]), defined_items(diffs[j]))
    return [out[n] for n in range(len(plan))]


# ---------------------------------------------------------------- the two files
def leaderboard_columns(axes: Sequence[str]) -> tuple[str, ...]:
    """KINDS.md §4: ``track,split,<axes…>,entry,kind,condition,metric,estimate,ci_low,ci_high,rank,p_first,n_items,n_valid,n_invalid``."""
    return (*KEY_COLUMNS, *axes, *ROW_COLUMNS, *LEADERBOARD_TAIL)


def pairs_columns(axes: Sequence[str], group_by: Sequence[str]) -> tuple[str, ...]:
    """``track,split,<axes…>,[the group's other columns],metric,entry_a,kind_a,condition_a,entry_b,kind_b,condition_b,estimate,ci_low,ci_high,n_items``."""
    extra = tuple(c for c in ROW_COLUMNS[:-1] if c in group_by)
    return (*KEY_COLUMNS, *axes, *extra, "metric", *PAIRS_TAIL)


def _table(columns: tuple[str, ...], rows: list[tuple]) -> Table:
    body = list(zip(*rows)) if rows else [() for _ in columns]
    return Table(columns, {c: list(v) for c, v in zip(columns, body)})


def leaderboard_table(scored: ScoredSet) -> Table:
    """leaderboard.csv rows, in the order the statistics were given."""
    axes = scored.axes
    rows = [
        (r.stat.track, r.stat.split, *r.stat.axes, r.stat.entry, r.stat.kind, r.stat.condition, r.stat.metric,
         r.estimate, r.ci_low, r.ci_high, r.rank, r.p_first, r.n_items, r.stat.n_valid, r.stat.n_invalid)
        for r in scored.rows
    ]
    return _table(leaderboard_columns(axes), rows)


def pairs_table(scored: ScoredSet) -> Table:
    """pairs.csv rows: rank groups in first-seen order, then a, then b."""
    columns = pairs_columns(scored.axes, scored.group_by)
    extra = [c for c in ROW_COLUMNS[:-1] if c in scored.group_by]
    rows = []
    for p in scored.pairs:
        a, b = scored.rows[p.a].stat, scored.rows[p.b].stat
        rows.append((a.track, a.split, *a.axes, *(a.label(c, scored.axes) for c in extra), a.metric,
                     a.entry, a.kind, a.condition, b.entry, b.kind, b.condition, p.estimate, p.ci_low, p.ci_high, p.n_items))
    return _table(columns, rows)


def rows_csv(columns: Sequence[str], rows: Sequence[tuple]) -> bytes:
    """CSV bytes of ``rows`` (tuples in ``columns``' order), written as the score files are."""
    return csv_bytes(_table(tuple(columns), list(rows)))


def leaderboard_csv(scored: ScoredSet) -> bytes:
    return csv_bytes(leaderboard_table(scored))


def pairs_csv(scored: ScoredSet) -> bytes:
    return csv_bytes(pairs_table(scored))
