"""Helpers of the §6 diagnostics beyond the shared kernel (rapgen.scores.kernels):
row medians over kept entries and medians of small integer codes.
Nothing here does I/O.
"""

from __future__ import annotations

import numpy as np

from rapgen.scores.selection import one_partition, order_statistics


def median_rows(values: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """``numpy.median`` of each row over the entries where ``keep`` is True
    (all entries when ``keep`` is None); NaN for a row with nothing kept.

    Rows that keep everything take two order statistics each, no NaN scan
    (rapgen.scores.selection; ``values`` is not modified).
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
        return order_statistics(values, [hi], one_partition)[0]
    lower, upper = order_statistics(values, [hi - 1, hi], one_partition)
    return (lower + upper) / 2.0


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
