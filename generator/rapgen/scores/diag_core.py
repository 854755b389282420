"""Shared vectorised helpers of the §6 diagnostics (SCORING.md §2 rules).

Everything works on rows of short vectors (the eight slots on the last axis)
and returns one value per row; NaN marks a missing input or an undefined
value. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

# "Constant" / "zero" means a range (or largest magnitude) of at most 1e-12 (SCORING.md §2).
TOL = 1e-12
# Differences of compositions (p - e, y - e, p(T+h) - p(T)) are rounded to 12 decimals
# before ranking, for the reason SCORING.md §3 gives for the baselines: slots that are
# mathematically tied must not rank apart by a last-place rounding error.
TIE_DECIMALS = 12
# Rows ranked per block in the pairwise rank computation (bounds memory to ~ROW_CHUNK*k*k bytes).
ROW_CHUNK = 1 << 16


_CONTROLLER: list = []  # the process's threadpoolctl controller, created on first use


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the enclosed matrix products on one BLAS thread, then restore the limit.

    The diagnostics' products are many and small (inner dimension 8 or 64);
    a threaded BLAS spends more on waking threads than on arithmetic, and on a
    busy machine its spinning threads make them 10-50x slower. The scoring
    bootstrap uses it too, around its two job threads. Uses ``threadpoolctl``
    when it is installed (otherwise does nothing); the loaded libraries are
    inspected once per process, so entering the context costs microseconds.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - optional dependency
        yield
        return
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield


def missing_rows(a: np.ndarray) -> np.ndarray:
    """True where a row holds a NaN."""
    return np.isnan(a).any(axis=-1)


def constant_rows(a: np.ndarray) -> np.ndarray:
    """True where max - min <= 1e-12 (False for a missing row)."""
    with np.errstate(invalid="ignore"):
        return (np.max(a, axis=-1) - np.min(a, axis=-1)) <= TOL


_BYTE_SUM = np.uint64(0x0101010101010101)


def pairwise_counts8(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows of eight values: #{j: a_j < a_i} and #{j: a_j <= a_i} for every i.

    The eight comparison bytes of one i are adjacent in memory, so they are read
    as one uint64 and summed by a multiply (each byte is 0 or 1, the sum at most
    8, so it lands in the top byte without carries): no reduction over a short axis.
    """
    lt = a[:, None, :] < a[:, :, None]  # [r, i, j]: a_j < a_i
    le = a[:, None, :] <= a[:, :, None]
    shift = np.uint64(56)
    return (lt.view(np.uint64)[..., 0] * _BYTE_SUM) >> shift, (le.view(np.uint64)[..., 0] * _BYTE_SUM) >> shift


def average_ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share the mean rank) along the last axis.

    Same values as ``scipy.stats.rankdata(a, method="average", axis=-1)``,
    computed by pairwise comparison: rank_i = #{j: a_j < a_i} + (#{j: a_j = a_i} + 1) / 2
    = (#{a_j < a_i} + #{a_j <= a_i} + 1) / 2. Fast for the short rows used here (k = 8).
    """
    a = np.asarray(a, dtype=np.float64)
    shape = a.shape
    k = shape[-1]
    flat = np.ascontiguousarray(a.reshape(-1, k))
    out = np.empty(flat.shape, dtype=np.float64)
    for start in range(0, flat.shape[0], ROW_CHUNK):
        block = flat[start:start + ROW_CHUNK]
        if k == 8:
            lt, le = pairwise_counts8(block)
            out[start:start + ROW_CHUNK] = (lt + le + 1) / 2.0
            continue
        less = (block[:, None, :] < block[:, :, None]).sum(axis=-1)
        equal = (block[:, None, :] == block[:, :, None]).sum(axis=-1)
        out[start:start + ROW_CHUNK] = less + (equal + 1) / 2.0
    return out.reshape(shape)


def pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation; NaN where either side has zero variance."""
    da = a - a.mean(axis=-1, keepdims=True)
    db = b - b.mean(axis=-1, keepdims=True)
    den = (da * da).sum(axis=-1) * (db * db).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (da * db).sum(axis=-1) / np.sqrt(np.where(den > 0, den, 1.0)), np.nan)


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SCORING.md §2 ``spearman(a, b)`` per row: missing -> NaN; a constant -> 0;
    else b constant -> NaN; else Pearson of average ranks."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    missing = missing_rows(a) | missing_rows(b)
    value = pearson_rows(average_ranks(np.nan_to_num(a)), average_ranks(np.nan_to_num(b)))
    value = np.where(constant_rows(a), 0.0, np.where(constant_rows(b), np.nan, value))
    return np.where(missing, np.nan, value)


def rounded(a: np.ndarray) -> np.ndarray:
    """``numpy.round(a, 12)``: the tie-safe form of a difference of compositions."""
    return np.round(a, TIE_DECIMALS)


def median_rows(values: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """``numpy.median`` of each row over the entries where ``keep`` is True
    (all entries when ``keep`` is None); NaN for a row with nothing kept.

    Rows that keep everything are partitioned in place (``values`` is
    overwritten): two order statistics per row, no copy, no NaN scan.
    """
    values = np.asarray(values, dtype=np.float64)
    n, m = values.shape
    out = np.full(n, np.nan)
    if n == 0 or m == 0:
        return out
    full = np.ones(n, dtype=bool) if keep is None else keep.all(axis=1)
    if full.all():
        return _median_full(values)
    if full.any():
        out[full] = _median_full(values[full])
    for r in np.flatnonzero(~full):
        row = values[r, keep[r]]
        if row.size:
            out[r] = np.median(row)
    return out


def _median_full(values: np.ndarray) -> np.ndarray:
    m = values.shape[1]
    hi = m // 2
    if m % 2:
        values.partition(hi, axis=1)
        return values[:, hi].copy()
    values.partition([hi - 1, hi], axis=1)
    return (values[:, hi - 1] + values[:, hi]) / 2.0


def median_codes(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Row medians of small non-negative integer codes by counting (no sort):
    the two middle order statistics ``(lower, upper)`` of each row (equal for
    an odd row length); the median is their mean in the coded scale."""
    n, m = codes.shape
    offsets = codes + (np.arange(n) * n_codes)[:, None]
    cum = np.bincount(offsets.ravel(), minlength=n * n_codes).reshape(n, n_codes).cumsum(axis=1)
    lower = (cum < (m + 1) // 2).sum(axis=1)  # code of the ((m+1)//2)-th smallest (1-based)
    upper = (cum < m // 2 + 1).sum(axis=1)  # code of the (m//2 + 1)-th smallest
    return lower, upper
