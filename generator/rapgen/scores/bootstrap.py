"""Dependency-block bootstrap (SCORING.md §5), vectorised over replicates and statistics.

The protocol is fixed for reproducibility: per (split, unit kind) a fresh
``default_rng(seed)`` draws ``integers(0, K, size=(R, K))`` once; the count
matrix ``C[r, k]`` (how often unit k is drawn in replicate r) is shared by
every statistic of the split. A statistic with per-unit sums ``S_k`` and
counts ``N_k`` has replicates ``(C @ S) / (C @ N)``; the interval is the
percentile pair over replicates whose denominator is non-zero.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from rapgen.scores.kernels import mean_over
from rapgen.scores.selection import order_statistics

# Columns of statistics processed at once: bounds memory to R x CHUNK doubles per matrix.
CHUNK = 128


def draw_counts(n_units: int, resamples: int, seed: int) -> np.ndarray:
    """The (R, K) count matrix of SCORING.md §5 (float64 for the matrix products)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(resamples, n_units))
    # bincount over the flattened draws, each row offset into its own K-block.
    offsets = draws + (np.arange(resamples)[:, None] * n_units)
    counts = np.bincount(offsets.ravel(), minlength=resamples * n_units)
    return counts.reshape(resamples, n_units).astype(np.float64)


def percentiles(level: float) -> tuple[float, float]:
    """100*(1 - level)/2 and 100*(1 + level)/2."""
    return 100.0 * (1.0 - level) / 2.0, 100.0 * (1.0 + level) / 2.0


def unit_sums(values: np.ndarray, unit_of: np.ndarray, n_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit sum S and count N of the defined (non-NaN) values.

    ``values``: (n_stats, n_items) with NaN where undefined; ``unit_of``: the
    unit index of each item. Returns two (n_stats, K) arrays.
    """
    member = np.zeros((values.shape[1], n_units))
    member[np.arange(values.shape[1]), unit_of] = 1.0
    defined = ~np.isnan(values)
    S = np.where(defined, values, 0.0) @ member
    N = defined.astype(np.float64) @ member
    return S, N


@dataclass
class BootstrapResult:
    low: np.ndarray  # (n_stats,) NaN where no replicate has a non-zero denominator
    high: np.ndarray
    replicates: dict[int, np.ndarray]  # kept replicate columns, keyed by statistic index


def _order_statistics(stat: np.ndarray, ks: list[int]) -> dict[int, np.ndarray]:
    """The k-th smallest value of every row for each k in ``ks`` (sorted, distinct), the
    values successive single-kth partitions of the remaining right part give."""
    return dict(zip(ks, order_statistics(stat, ks)))


def _percentile_rows(stat: np.ndarray, q: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """numpy.percentile(..., method="linear") along the last axis for two q's,
    bit for bit, from four order statistics (``stat`` is not modified)."""
    n = stat.shape[-1]
    plan = []
    for qq in q:
        p = qq / 100.0 * (n - 1)
        below = int(np.floor(p))
        plan.append((below, min(below + 1, n - 1), p - below))
    values = _order_statistics(stat, sorted({k for b, a, _ in plan for k in (b, a)}))
    out = []
    for below, above, frac in plan:
        lo_v, hi_v = values[below], values[above]
        # numpy's "linear" rule via its _lerp: lo + (hi - lo) * t, or hi - (hi - lo) * (1 - t) when t >= 0.5.
        diff = hi_v - lo_v
        out.append(hi_v - diff * (1 - frac) if frac >= 0.5 else lo_v + diff * frac)
    return out[0], out[1]


def _distinct_statistics(S: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Statistics with the same (S, N) rows have the same replicates: the distinct
    rows (first-seen order) and, for every statistic, the index of its distinct row."""
    S_all, N_all = np.ascontiguousarray(S, dtype=np.float64), np.ascontiguousarray(N, dtype=np.float64)
    seen: dict[bytes, int] = {}
    rep_of = np.array([seen.setdefault(S_all[i].tobytes() + N_all[i].tobytes(), len(seen)) for i in range(S_all.shape[0])],
                      dtype=np.int64)
    first_of = np.unique(rep_of, return_index=True)[1]
    return S_all[first_of], N_all[first_of], rep_of


@dataclass
class _Reuse:
    """Intervals computed while :func:`reuse_intervals` is active, by count matrix, level and (S, N) row."""

    rows: dict[tuple[bytes, float, bytes], tuple[float, float]] = field(default_factory=dict)
    matrices: dict[int, tuple[np.ndarray, bytes]] = field(default_factory=dict)  # id(C) -> (C, digest of C)

    def matrix_key(self, C: np.ndarray) -> bytes:
        held = self.matrices.get(id(C))
        if held is None or held[0] is not C:
            held = self.matrices[id(C)] = (C, hashlib.sha256(np.ascontiguousarray(C).tobytes()).digest() + repr(C.shape).encode())
        return held[1]


_REUSE: list[_Reuse] = []  # the active store, if any (one per process: the keys name their inputs)


@contextmanager
def reuse_intervals() -> Iterator[None]:
    """Inside the block, a statistic bootstrapped again on an equal count matrix (same seed,
    same draws) at the same level, with the same per-unit sums S and counts N, takes the
    interval computed the first time: the same function of the same numbers. A scoring run
    meets many statistics twice (a release's rows are the leaderboard's, a release before an
    errata scores most rows of the latest again). Kept replicates are always recomputed."""
    if _REUSE:
        yield
        return
    _REUSE.append(_Reuse())
    try:
        yield
    finally:
        _REUSE.clear()


def bootstrap_intervals(C: np.ndarray, S: np.ndarray, N: np.ndarray, level: float, keep: np.ndarray | None = None) -> BootstrapResult:
    """Percentile intervals for every statistic (rows of S, N) from count matrix C.

    Replicates are laid out statistic-major, ``(n_stats, R)``, so that each
    statistic's replicates are one contiguous row. ``keep``: statistic
    indices whose full replicate vectors (NaN where the denominator is zero)
    are returned, e.g. for rank probabilities.
    """
    n_all = S.shape[0]
    low_all = np.full(n_all, np.nan)
    high_all = np.full(n_all, np.nan)
    kept: dict[int, np.ndarray] = {}
    if n_all == 0 or C.shape[0] == 0:
        return BootstrapResult(low_all, high_all, kept)
    S, N, rep_of = _distinct_statistics(S, N)
    n_stats = S.shape[0]
    keep_set = {int(rep_of[int(i)]) for i in keep} if keep is not None else set()
    reuse = _REUSE[0] if _REUSE and _by_products_only(N, n_stats) else None
    low, high = np.full(n_stats, np.nan), np.full(n_stats, np.nan)
    if reuse is None:
        todo = np.arange(n_stats)
    else:
        matrix = reuse.matrix_key(C)
        keys = [(matrix, float(level), S[i].tobytes() + N[i].tobytes()) for i in range(n_stats)]
        found = [None if i in keep_set else reuse.rows.get(k) for i, k in enumerate(keys)]
        todo = np.array([i for i, f in enumerate(found) if f is None], dtype=np.int64)
        for i, f in enumerate(found):
            if f is not None:
                low[i], high[i] = f
    kept_unique: dict[int, np.ndarray] = {}
    if todo.size:
        position = {int(i): j for j, i in enumerate(todo)}
        lo, hi, kept_todo = _unique_intervals(C, S[todo], N[todo], level, {position[i] for i in keep_set},
                                              products_only=reuse is not None)
        low[todo], high[todo] = lo, hi
        kept_unique = {int(todo[j]): column for j, column in kept_todo.items()}
        if reuse is not None:
            for j, i in enumerate(todo.tolist()):
                reuse.rows[keys[i]] = (float(lo[j]), float(hi[j]))
    low_all[:], high_all[:] = low[rep_of], high[rep_of]
    if keep is not None:
        kept = {int(i): kept_unique[int(rep_of[int(i)])] for i in keep}
    return BootstrapResult(low_all, high_all, kept)


def _by_products_only(N: np.ndarray, n_stats: int) -> bool:
    """Whether :func:`_unique_intervals` multiplies every row of these statistics as part of a
    matrix product of two rows or more. A row multiplied alone (a last chunk of one row, or a
    single distinct denominator) goes through BLAS's matrix-vector routine, which adds in
    another order: those calls are neither looked up nor kept by :func:`reuse_intervals`."""
    if n_stats % CHUNK == 1:
        return False
    first = N[0].tobytes()
    return any(row.tobytes() != first for row in N[1:])


def _product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None, *, products_only: bool = False) -> np.ndarray:
    """``a @ b``; with ``products_only`` a single row is multiplied as a row of a two-row
    product (BLAS's matrix-matrix routine gives every row the same value whatever rows
    it is multiplied with, its matrix-vector routine does not)."""
    if products_only and a.shape[0] == 1:
        twice = np.concatenate([a, a]) @ b
        if out is None:
            return twice[:1]
        out[:] = twice[:1]
        return out
    return np.matmul(a, b, out=out)


def _unique_intervals(C: np.ndarray, S: np.ndarray, N: np.ndarray, level: float, keep_set: set[int], *,
                      products_only: bool = False) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """:func:`bootstrap_intervals` of distinct statistics: (low, high, kept replicate columns).
    ``products_only``: see :func:`_product`."""
    from concurrent.futures import ThreadPoolExecutor

    q = percentiles(level)
    n_stats = S.shape[0]
    low = np.full(n_stats, np.nan)
    high = np.full(n_stats, np.nan)
    kept_unique: dict[int, np.ndarray] = {}
    R = C.shape[0]
    Ct = np.ascontiguousarray(C.T)  # (K, R)
    # Many statistics share their denominators (same fields defined): compute each
    # distinct N once, and visit the statistics grouped by denominator so that
    # each run of rows is divided by one broadcast row (no gather).
    first: dict[bytes, int] = {}
    n_inverse = np.array([first.setdefault(row.tobytes(), len(first)) for row in N], dtype=np.int64)
    N_unique = N[np.unique(n_inverse, return_index=True)[1]]
    den_all = _product(N_unique, Ct, products_only=products_only)  # (n_unique, R)
    zero_all = den_all == 0
    full_all = ~zero_all.any(axis=1)
    order = np.argsort(n_inverse, kind="stable")

    def finish(idx: np.ndarray, pattern: np.ndarray, stat: np.ndarray) -> None:
        # Runs in a worker thread (numpy's sort releases the GIL) while the next chunk multiplies.
        for j in np.flatnonzero(~full_all[pattern]):
            ok = ~zero_all[pattern[j]]
            if ok.any():
                low[idx[j]], high[idx[j]] = np.percentile(stat[j, ok], q)
        full = full_all[pattern]
        if full.all():
            low[idx], high[idx] = _percentile_rows(stat, q)
        elif full.any():
            low[idx[full]], high[idx[full]] = _percentile_rows(stat[full], q)

    # Two replicate buffers, alternately filled by the product and read by
    # `finish`: no fresh (CHUNK, R) allocation (and its page faults) per chunk.
    buffers = [np.empty((min(CHUNK, n_stats), R)) for _ in range(2)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = None
        for number, start in enumerate(range(0, n_stats, CHUNK)):
            idx = order[start:start + CHUNK]
            pattern = n_inverse[idx]
            stat = buffers[number % 2][: len(idx)]
            _product(S[idx], Ct, out=stat, products_only=products_only)  # numerators (chunk, R)
            runs = np.flatnonzero(np.diff(pattern)) + 1
            with np.errstate(invalid="ignore", divide="ignore"):
                for a, b in zip(np.r_[0, runs], np.r_[runs, len(idx)]):
                    stat[a:b] /= den_all[pattern[a]]
            for j, i in enumerate(idx.tolist()):
                if i in keep_set:
                    column = stat[j].copy()
                    column[zero_all[pattern[j]]] = np.nan
                    kept_unique[i] = column
            if pending is not None:
                pending.result()  # also frees the other buffer for the next chunk
            pending = pool.submit(finish, idx, pattern, stat)
        if pending is not None:
            pending.result()
    return low, high, kept_unique


def split_block_intervals(matrix: np.ndarray, field_split: np.ndarray, split: str, units_of: dict, draws: dict,
                          level: float) -> tuple[np.ndarray, np.ndarray, BootstrapResult]:
    """One split's field-macro estimates (with their field counts) and block-bootstrap
    intervals for every row of ``matrix`` (statistics × fields), on the split's draws."""
    Z = matrix[:, np.flatnonzero(field_split == split)]
    estimate, n_fields = mean_over(Z, axis=1)
    unit_ids, unit_of = units_of[(split, "block")]
    S, N = unit_sums(Z, unit_of, len(unit_ids))
    return estimate, n_fields, bootstrap_intervals(draws[(split, "block")][1], S, N, level)
