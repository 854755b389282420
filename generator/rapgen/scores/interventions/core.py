"""Shared machinery of the intervention analyses: field values, paired
differences, and interval rows on the split's common random numbers.

A *statistic* is one row of an output table before its split is chosen: its
key columns, a vector of field values over all of the archive's fields (NaN
where a field has none) and per-field counts. :func:`summarise` turns a list
of statistics into rows for every split: the field-macro estimate, the block
interval (``ci_*``), the field-clustered interval (``fc_*``) and ``n_fields``,
with the counts summed over the split's fields (INTERVENTIONS.md, "Interval row").

The count matrices are SCORING.md §5's: one fresh ``default_rng(seed)`` per
(split, unit kind), drawn by :func:`rapgen.scores.bootstrap.draw_counts`, and
shared by everything in the split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts, percentiles, unit_sums
from rapgen.scores.kernels import mean_over
from rapgen.scores.metrics import SPEARMAN, contrast_difference
from rapgen.scores.schema import INTERVAL_COLUMNS  # the contract's interval row

ALL_SPLITS = "all"  # §6: every field of the archive, its own fresh draws


@dataclass(frozen=True)
class SplitDraws:
    """One split's resampling units and count matrices (block: primary; field: the ``fc_*`` sensitivity)."""

    split: str
    columns: np.ndarray  # (F_s,) indices of the split's fields on the archive's field axis
    block_of: np.ndarray  # (F_s,) index of each field's block in the sorted block ids
    block_counts: np.ndarray  # (R, K_blocks)
    field_of: np.ndarray  # (F_s,) index of each field in the sorted field ids
    field_counts: np.ndarray  # (R, K_fields)
    level: float


def _byte_sorted(ids: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(set(ids), key=lambda s: s.encode("utf-8")))


def split_draws(
    field_ids: Sequence[str],
    field_split: Sequence[str],
    field_block: Sequence[str],
    resamples: int,
    seed: int,
    level: float,
    *,
    with_all: bool = False,
) -> dict[str, SplitDraws]:
    """The draws of every split (and of ``all`` when ``with_all``), as SCORING.md §5 makes them."""
    split_of = np.asarray(field_split, dtype=object)
    names = sorted({str(s) for s in split_of})
    out: dict[str, SplitDraws] = {}
    for name in names + ([ALL_SPLITS] if with_all else []):
        cols = np.arange(len(field_ids)) if name == ALL_SPLITS else np.flatnonzero(split_of == name)
        blocks = _byte_sorted([str(field_block[c]) for c in cols])
        fields = _byte_sorted([str(field_ids[c]) for c in cols])
        b_pos = {b: i for i, b in enumerate(blocks)}
        f_pos = {f: i for i, f in enumerate(fields)}
        out[name] = SplitDraws(
            name, cols,
            np.array([b_pos[str(field_block[c])] for c in cols], dtype=np.int64), draw_counts(len(blocks), resamples, seed),
            np.array([f_pos[str(field_ids[c])] for c in cols], dtype=np.int64), draw_counts(len(fields), resamples, seed),
            float(level),
        )
    return out


def draws_from_scorer(
    draws: Mapping[tuple[str, str], tuple[Sequence[str], np.ndarray]],
    field_ids: Sequence[str],
    field_split: Sequence[str],
    field_block: Sequence[str],
    level: float,
) -> dict[str, SplitDraws]:
    """The scorer's own count matrices (``{(split, "block" | "field"): (unit ids, C)}``),
    so that the intervention rows use exactly the leaderboard's draws."""
    split_of = np.asarray(field_split, dtype=object)
    out: dict[str, SplitDraws] = {}
    for name in sorted({split for split, _ in draws}):
        cols = np.flatnonzero(split_of == name)
        (block_ids, block_counts), (unit_ids, field_counts) = draws[(name, "block")], draws[(name, "field")]
        b_pos = {b: i for i, b in enumerate(block_ids)}
        f_pos = {f: i for i, f in enumerate(unit_ids)}
        out[name] = SplitDraws(
            name, cols,
            np.array([b_pos[str(field_block[c])] for c in cols], dtype=np.int64), np.asarray(block_counts, dtype=np.float64),
            np.array([f_pos[str(field_ids[c])] for c in cols], dtype=np.int64), np.asarray(field_counts, dtype=np.float64),
            float(level),
        )
    return out


def interval_arrays(Z: np.ndarray, draws: SplitDraws) -> dict[str, np.ndarray]:
    """The interval row of every statistic (rows of ``Z``, field values over all fields) on one split."""
    Z = np.asarray(Z, dtype=np.float64).reshape(-1, np.shape(Z)[-1])[:, draws.columns]
    estimate, n_fields = mean_over(Z, axis=1)
    out = {"estimate": estimate, "n_fields": n_fields.astype(np.int64)}
    for prefix, unit_of, C in (("ci", draws.block_of, draws.block_counts), ("fc", draws.field_of, draws.field_counts)):
        S, N = unit_sums(Z, unit_of, C.shape[1])
        result = bootstrap_intervals(C, S, N, draws.level)
        out[f"{prefix}_low"], out[f"{prefix}_high"] = result.low, result.high
    return out


def replicates(Z: np.ndarray, draws: SplitDraws, kind: str = "block") -> np.ndarray:
    """The (n_stats, R) bootstrap replicates ΣcS/ΣcN (NaN where the denominator is 0)."""
    Z = np.asarray(Z, dtype=np.float64).reshape(-1, np.shape(Z)[-1])[:, draws.columns]
    unit_of, C = (draws.block_of, draws.block_counts) if kind == "block" else (draws.field_of, draws.field_counts)
    S, N = unit_sums(Z, unit_of, C.shape[1])
    num, den = S @ C.T, N @ C.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_interval(reps: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``numpy.percentile`` over the defined replicates (NaN if none)."""
    q = percentiles(level)
    low, high = np.full(reps.shape[0], np.nan), np.full(reps.shape[0], np.nan)
    for i, row in enumerate(reps):
        ok = row[~np.isnan(row)]
        if ok.size:
            low[i], high[i] = np.percentile(ok, q)
    return low, high


@dataclass(frozen=True)
class Statistic:
    """One table row before its split: key columns, field values (F,), per-field counts (F,)
    (summed over the split's fields) and ``extra`` columns that do not depend on the split."""

    key: Mapping[str, str]
    values: np.ndarray
    counts: Mapping[str, np.ndarray] = field(default_factory=dict)
    extra: Mapping[str, int] = field(default_factory=dict)


def summarise(stats: Sequence[Statistic], draws: Mapping[str, SplitDraws], splits: Sequence[str] | None = None) -> list[dict]:
    """Rows ``{"split", **key, estimate…n_fields, **counts}`` for every statistic and split.

    ``splits``: the splits to report (default: every split of ``draws`` but ``all``).
    All statistics of a split share its draws (common random numbers).
    """
    names = [s for s in draws if s != ALL_SPLITS] if splits is None else list(splits)
    rows: list[dict] = []
    if not stats:
        return rows
    Z = np.stack([np.asarray(s.values, dtype=np.float64) for s in stats])
    for name in names:
        d = draws[name]
        arrays = interval_arrays(Z, d)
        for i, s in enumerate(stats):
            row = {"split": name, **s.key}
            row.update({c: _value(arrays[c][i]) for c in INTERVAL_COLUMNS})
            row.update({k: int(np.asarray(v)[d.columns].sum()) for k, v in s.counts.items()})
            row.update(s.extra)
            rows.append(row)
    return rows


def _value(v: float | int | np.number) -> float | int | None:
    if isinstance(v, (int, np.integer)):
        return int(v)
    return None if np.isnan(v) else float(v)


# ---------------------------------------------------------------- field values
def field_values(unit_values: np.ndarray, origin_mask: np.ndarray | None = None) -> np.ndarray:
    """Field value = mean of the defined unit values over the masked origins (last axis)."""
    values = np.asarray(unit_values, dtype=np.float64)
    if origin_mask is not None:
        values = np.where(np.broadcast_to(origin_mask, values.shape), values, np.nan)
    return mean_over(values, axis=-1)[0]


def paired_values(left: np.ndarray, right: np.ndarray, metric: str = SPEARMAN) -> np.ndarray:
    """Per-unit contrast, undefined unless both sides are (SCORING.md §4 pairing): left − right,
    or right − left for the distances ``tv`` and ``jsd``, so positive always favours ``left``."""
    return contrast_difference(metric, left, right)


def paired_field_values(left: np.ndarray, right: np.ndarray, origin_mask: np.ndarray | None = None,
                        metric: str = SPEARMAN) -> np.ndarray:
    """A contrast's field value: the mean over origins where both sides are defined of the paired values."""
    return field_values(paired_values(left, right, metric), origin_mask)
