"""The numeric kernel shared by scoring, the diagnostics and the Search evidence
statistics: missing and constant vectors, average ranks, Pearson, Spearman
(SCORING.md §2 rules) and NaN-aware means.

Every function works on rows of short vectors (the eight slots on the last
axis) and returns one value per row; NaN marks a missing input or an
undefined value. There is exactly one definition of each rule here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

# "Constant" means max - min <= 1e-12 (SCORING.md §2, edge rules).
CONSTANT_TOL = 1e-12
# Differences of compositions (p - e, y - e, p(T+h) - p(T)) are rounded to 12 decimals
# before ranking, for the reason SCORING.md §3 gives for the baselines: slots that are
# mathematically tied must not rank apart by a last-place rounding error.
TIE_DECIMALS = 12
# Rows ranked per block in the pairwise rank computation (bounds memory to ~ROW_CHUNK*k*k bytes).
ROW_CHUNK = 1 << 16
_BYTE_SUM = np.uint64(0x0101010101010101)
T = TypeVar("T")


def missing(a: np.ndarray) -> np.ndarray:
    """True where a row holds a NaN (a missing composition)."""
    return np.isnan(a).any(axis=-1)


def is_constant(a: np.ndarray) -> np.ndarray:
    """True where the row's range is at most 1e-12 (False for a missing row)."""
    with np.errstate(invalid="ignore"):
        return (np.max(a, axis=-1) - np.min(a, axis=-1)) <= CONSTANT_TOL


def rounded(a: np.ndarray) -> np.ndarray:
    """``numpy.round(a, 12)``: the tie-safe form of a difference of compositions."""
    return np.round(a, TIE_DECIMALS)


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


def ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share the mean rank) along the last axis, as
    ``scipy.stats.rankdata(a, method="average", axis=-1)``; NaN is ranked as 0
    (callers mask missing rows).

    By pairwise comparison: rank_i = (#{j: a_j < a_i} + #{j: a_j <= a_i} + 1) / 2,
    exact half-integers. Cheaper than sorting for the short rows used here.
    """
    a = np.nan_to_num(np.asarray(a, dtype=np.float64))
    shape = a.shape
    k = shape[-1] if shape else 0
    if a.size == 0:
        return np.zeros(shape)
    flat = np.ascontiguousarray(a.reshape(-1, k))
    out = np.empty(flat.shape, dtype=np.float64)
    for start in range(0, flat.shape[0], ROW_CHUNK):
        block = flat[start:start + ROW_CHUNK]
        if k == 8:
            lt, le = pairwise_counts8(block)
        else:
            lt = (block[:, None, :] < block[:, :, None]).sum(axis=-1)
            le = (block[:, None, :] <= block[:, :, None]).sum(axis=-1)
        out[start:start + ROW_CHUNK] = (lt + le + 1) / 2.0
    return out.reshape(shape)


def pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation; NaN where either side has zero variance."""
    da = a - a.mean(axis=-1, keepdims=True)
    db = b - b.mean(axis=-1, keepdims=True)
    den = (da * da).sum(axis=-1) * (db * db).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (da * db).sum(axis=-1) / np.sqrt(np.where(den > 0, den, 1.0)), np.nan)


def spearman(a: np.ndarray, b: np.ndarray, *, ranks_a: np.ndarray | None = None, ranks_b: np.ndarray | None = None) -> np.ndarray:
    """SCORING.md §2 ``spearman(a, b)`` per row: Pearson correlation of average ranks.

    Rules, in order: a or b missing -> undefined; a constant -> 0 (a uniform
    prediction carries no ordering); b constant -> undefined. The rule is not
    symmetric: ``spearman(b, a)`` of a constant ``a`` is undefined. ``ranks_a``
    / ``ranks_b`` pass precomputed :func:`ranks` of a side used repeatedly.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ra = ranks(a) if ranks_a is None else ranks_a
    rb = ranks(b) if ranks_b is None else ranks_b
    value = pearson(*np.broadcast_arrays(ra, rb))
    value = np.where(is_constant(a), 0.0, np.where(is_constant(b), np.nan, value))
    return np.where(missing(a) | missing(b), np.nan, value)


def mean_over(values: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the defined (non-NaN) values along ``axis`` and their count (NaN mean if none)."""
    defined = ~np.isnan(values)
    n = defined.sum(axis=axis)
    total = np.where(defined, values, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)
    return mean, n


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


# Threads that share one row-independent kernel's blocks (see :func:`each_block`).
BLOCK_THREADS = 2


def each_block(work: Callable[[T], None], blocks: Sequence[T], threads: int = BLOCK_THREADS) -> None:
    """``work(block)`` for every block, on up to ``threads`` threads taking blocks in turn.

    For kernels whose blocks are independent (each writes its own rows of the output) and
    whose numpy operations release the GIL: the diagnostics' relabelling blocks. Every block
    is computed exactly as a serial loop would compute it (same operands, same calls; a
    product on one BLAS thread, as :func:`single_threaded_blas` sets for the process), so
    the outputs are the same bits, whichever thread takes which block.
    """
    blocks = list(blocks)
    if threads <= 1 or len(blocks) <= 1:
        for block in blocks:
            work(block)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(threads, len(blocks))) as pool:
        for done in [pool.submit(work, block) for block in blocks]:
            done.result()  # re-raises a block's error
