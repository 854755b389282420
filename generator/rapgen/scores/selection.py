"""Exact order statistics of long rows (the bootstrap's percentiles, the diagnostics' medians).

``order_statistics(values, ks)`` returns, for every row, the value ``numpy.partition`` would
put at each position k: the same number, bit for bit, NaN ordered last. numpy's partition
(introselect) costs about 10 ns an element and is run once per k. Here one strided sample of
each row (every ``STEP``-th value) brackets each run of nearby k's between two of the row's own
values; one comparison pass over the row counts what lies below the bracket and picks the few
values inside it (a few percent of the row), and those alone are partitioned. A row whose
bracket misses (the sample was unlucky), or whose answer is a zero, is handed to ``whole``, the
caller's own partition of whole rows: which of -0.0 and 0.0 (equal to a comparison) lands at k
depends on the sequence of partitions a row went through, so only the caller's sequence gives
the caller's bits. numpy partitions each row on its own, so a row's answer does not depend on
the rows beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# Rows shorter than this are partitioned whole: the sample would be too small to bracket.
MIN_LENGTH = 2048
# Every STEP-th value of a row is the sample.
STEP = 16
# The bracket reaches this many standard deviations of the sample's rank beyond the target.
SPREAD = 5.0
# Rows whose brackets would hold more than this share of their values are partitioned whole
# (a median of a short row: its bracket is wide, and the comparison passes cost more than they save).
MAX_SHARE = 0.25


Whole = Callable[[np.ndarray, list[int]], np.ndarray]


def successive_partitions(values: np.ndarray, ks: list[int]) -> np.ndarray:
    """``(len(ks), rows)`` from a copy of ``values``: partition at the smallest k, then the
    part right of it at the next k, and so on (the bootstrap's sequence)."""
    work = values.copy()
    out = np.empty((len(ks), work.shape[0]))
    done: dict[int, np.ndarray] = {}
    offset, view = 0, work
    for k in sorted(set(ks)):
        local = k - offset
        view.partition(local, axis=-1)
        done[k] = view[:, local].copy()
        offset, view = k + 1, view[:, local + 1:]
    for i, k in enumerate(ks):
        out[i] = done[k]
    return out


def one_partition(values: np.ndarray, ks: list[int]) -> np.ndarray:
    """``(len(ks), rows)`` from one numpy partition of a copy at every k at once (the
    diagnostics' medians' sequence)."""
    work = values.copy()
    work.partition(sorted(set(ks)), axis=-1)
    return work[:, ks].T


def order_statistics(values: np.ndarray, ks: list[int], whole: Whole = successive_partitions) -> np.ndarray:
    """``(len(ks), rows)``: row r's k-th smallest value (0-based) for each k, the value
    ``whole(values, ks)`` gives, bit for bit. ``values`` (2-D) is not modified."""
    values = np.asarray(values, dtype=np.float64)
    rows, n = values.shape
    out = np.empty((len(ks), rows))
    if rows == 0 or not ks:
        return out
    if n < MIN_LENGTH:
        return whole(values, ks)
    m = -(-n // STEP)  # the sample's length
    groups = _groups(sorted(set(ks)), n)
    ranks = [_sample_ranks(group[0], group[-1], n, m) for group in groups]
    if sum(min(hi, m) - max(lo, 0) for lo, hi in ranks) > MAX_SHARE * m:
        return whole(values, ks)  # the brackets would hold too much of the row to gain
    sample = np.ascontiguousarray(values[:, ::STEP])
    sample.partition(sorted({r for pair in ranks for r in pair if 0 <= r < m}), axis=1)
    redo = np.zeros(rows, dtype=bool)
    for group, (lo_rank, hi_rank) in zip(groups, ranks):
        found, missed = _bracketed(values, sample, group, lo_rank, hi_rank)
        for k, column in zip(group, found):
            out[ks.index(k)] = column
        redo |= missed
    for i, k in enumerate(ks):  # a repeated k takes the first one's column
        out[i] = out[ks.index(k)]
    redo |= (out == 0).any(axis=0)
    if redo.any():
        out[:, redo] = whole(values[redo], ks)
    return out


def _groups(ks: list[int], n: int) -> list[list[int]]:
    """Runs of k's close enough (within 2% of the row) to share one bracket."""
    groups: list[list[int]] = []
    for k in ks:
        if groups and k - groups[-1][-1] <= max(1, n // 50):
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def _sample_ranks(k_first: int, k_last: int, n: int, m: int) -> tuple[int, int]:
    """Sample ranks that bracket the row's k_first-th and k_last-th values: the expected
    rank of each in the sample, widened by SPREAD binomial standard deviations."""
    p_lo, p_hi = k_first / n, (k_last + 1) / n
    lo = math.floor(p_lo * m - SPREAD * math.sqrt(m * p_lo * (1 - p_lo)) - 2)
    hi = math.ceil(p_hi * m + SPREAD * math.sqrt(m * p_hi * (1 - p_hi)) + 2)
    return lo, hi


def _bracketed(values: np.ndarray, sample: np.ndarray, group: list[int], lo_rank: int,
               hi_rank: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The group's order statistics of every row from the values inside its bracket, and
    the rows whose bracket does not hold them. ``sample`` is partitioned at both ranks."""
    rows, n = values.shape
    m = sample.shape[1]
    k_first, k_last = group[0], group[-1]
    lower = sample[:, lo_rank] if lo_rank >= 0 else None
    upper = sample[:, hi_rank] if hi_rank < m else None
    if lower is None and upper is None:
        return [np.zeros(rows) for _ in group], np.ones(rows, dtype=bool)
    if upper is not None and lower is None:
        # Lower tail: the candidates are every value below `upper`; nothing lies under them.
        inside = values < upper[:, None]
        below = np.zeros(rows, dtype=np.int64)
    elif lower is not None and upper is None:
        # Upper tail: every value not at or below `lower` (NaN included: partition puts it last).
        inside = ~(values <= lower[:, None])
        below = n - inside.sum(axis=1)
    else:
        below = (values < lower[:, None]).sum(axis=1)
        inside = (values >= lower[:, None]) & (values <= upper[:, None])
    count = inside.sum(axis=1)
    missed = (below > k_first) | (below + count <= k_last)
    # The candidates of each row in one block, shifted right by what the row has below its
    # bracket beyond the fewest any row has (-inf fills the left, +inf the right): a k then
    # sits at one column in every row, k - min(below), and one partition at the group's k's
    # serves every row. (The upper tail comes out right-aligned.) NaN is never padding:
    # partition orders it last, as numpy does.
    pad = below - below.min()
    width = max(int((pad + count).max()), 1)
    picked = values[inside]
    start = np.cumsum(count) - count
    column = np.arange(picked.size) - np.repeat(start - pad, count)
    block = np.where(np.arange(width)[None, :] < pad[:, None], -np.inf, np.inf)
    block[np.repeat(np.arange(rows), count), column] = picked
    local = [min(max(k - int(below.min()), 0), width - 1) for k in group]
    block.partition(sorted(set(local)), axis=1)
    found = [block[:, at].copy() for at in local]
    return found, missed
