"""EWMA-residual alignment (SCORING.md §6): direct and partial-residual.

Both ask whether a prediction moved away from the EWMA baseline e in the
direction the truth y moved, and subtract what a relabelled prediction (the
same values put on other slots) scores, so that merely being "far from e" in
a generic way earns nothing.

Vectorisation (no Python loop over permutations):

* Direct: for the relabelling table ``perms`` (M, 8), ``p[perm] . v`` is a sum of
  eight entries of the per-unit table ``p_a v_i`` (64 values), gathered at the
  shared indices ``perm[i]*8 + i``; the cosine needs ``p[perm].(y-e)`` and
  ``p[perm].e`` (the norm of ``p[perm]-e`` follows from them). The spearman
  numerator is linear in pairwise comparisons: with ``c`` the centred ranks of
  ``y-e`` and ``s_ij`` the sign of ``(p[perm]-e)_i - (p[perm]-e)_j``,
  ``sum_i rank_i c_i = 1/2 sum_{i<j} s_ij (c_i - c_j)``; ``s_ij`` only depends on
  the slot pair ``(perm_i, perm_j)``, so a per-unit table of 28 x 64 small
  integers (4 x the term, exact) summed at 28 shared indices gives every
  numerator exactly. The same sum counts tied pairs (a marker of 512): no tie
  means a rank variance of 42, one or two tied pairs 41.5 / 41; the rare
  relabellings with three or more tied pairs are ranked explicitly. Without
  any tie the numerator alone orders the values, so the median is found by
  counting the 337 possible numerators instead of sorting.
* Partial: with ``q`` the average ranks, ``R = I - XX+`` for ``X = [1, q(e)]`` is
  ``I - 11'/8 - u u'`` (``u`` the unit-norm centred ``q(e)``; no ``u`` term when
  ``q(e)`` is constant). ``q(p[perm]) = q(p)[perm]``, ``|R q_perm|^2 = |q - 4.5|^2 -
  (u . q_perm)^2`` and ``R q_perm . R q(y) = q_perm . w`` with ``w = R q(y)``: two
  linear forms per permutation. The relabelling distribution therefore depends
  only on the episode (``u``, ``w``) and the multiset of ``q(p)``, so it is
  computed once per distinct (episode, rank multiset), over the multiset's
  distinct arrangements (each of the 8! relabellings hits every distinct
  arrangement equally often, so the median is the same), as one product of the
  stacked ``(u, w)`` rows with the arrangement table. A multiset symmetric under
  ``r -> 9 - r`` (every untied prediction) gives a distribution symmetric about 0
  (the relabelling ``r -> 9 - r`` negates both forms), so its median is 0 exactly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rapgen.scores.diagnostics.core import median_codes, median_rows
from rapgen.scores.kernels import CONSTANT_TOL as TOL
from rapgen.scores.kernels import missing as missing_rows
from rapgen.scores.kernels import ranks as average_ranks
from rapgen.scores.kernels import each_block, rounded, single_threaded_blas
from rapgen.scores.kernels import spearman as spearman_rows

K = 8
PAIRS: tuple[tuple[int, int], ...] = tuple(itertools.combinations(range(K), 2))  # 28 position pairs, i < j
TIE_CODE = 512  # tie marker in the int16 pair table: > 2 * 168 (the largest |4 x numerator|), 28 * 512 + 168 < 2**15
UNIT_CHUNK = 256  # units per block of the direct alignment (bounds memory to ~UNIT_CHUNK * M * 8 bytes * a few)
ARRANGEMENT_CHUNK = 1 << 20  # (groups x arrangements) values per block of the partial alignment


@lru_cache(maxsize=1)
def all_permutations() -> np.ndarray:
    """The 8! = 40,320 permutations of range(8), lexicographic order, (40320, 8) int64."""
    table = np.array(list(itertools.permutations(range(K))), dtype=np.int64)
    table.setflags(write=False)
    return table


def direct_permutations(n: int, seed: int) -> np.ndarray:
    """The pinned relabellings of the direct alignment (SCORING.md §6):
    ``default_rng(seed).permuted(tile(arange(8), (n, 1)), axis=1)``, drawn once."""
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(K), (n, 1)), axis=1)


# ----------------------------------------------------------------------------- direct


@dataclass
class DirectAlignment:
    """Per-unit direct EWMA-residual alignment; NaN where undefined."""

    cos: np.ndarray  # cos(p - e, y - e)
    cos_null: np.ndarray  # median over the relabellings
    cos_corrected: np.ndarray  # cos - cos_null
    spearman: np.ndarray  # spearman(p - e, y - e), differences rounded to 12 decimals
    spearman_null: np.ndarray
    spearman_corrected: np.ndarray


def _slot_index(perms: np.ndarray) -> np.ndarray:
    """(M, 8): flat index a*8 + i of slot a = perm[i] at position i."""
    return perms * K + np.arange(K)[None, :]


def _pair_index(perms: np.ndarray) -> np.ndarray:
    """(M, 28): flat index k*64 + perm[i_k]*8 + perm[j_k] of position pair k."""
    return np.stack([k * K * K + perms[:, i] * K + perms[:, j] for k, (i, j) in enumerate(PAIRS)], axis=1)


def _gather_sum(table_t: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``sum_k table_t[index[:, k]]``: (M, U) from a (rows, U) table; the
    inner loop runs over contiguous unit columns."""
    out = table_t[index[:, 0]]
    for k in range(1, index.shape[1]):
        out += table_t[index[:, k]]
    return out


def _centred_ranks(v: np.ndarray) -> np.ndarray:
    return average_ranks(v) - (K + 1) / 2.0


def direct_alignment(p: np.ndarray, e: np.ndarray, y: np.ndarray, perms: np.ndarray) -> DirectAlignment:
    """SCORING.md §6 direct alignment for every row of ``p``, ``e``, ``y`` (U, 8).

    Undefined (NaN) if any input row is missing or if ``p - e`` or ``y - e`` is
    zero (largest magnitude <= 1e-12). A relabelling with ``p[perm] - e`` zero is
    left out of the medians (the same rule as for the observed value).
    """
    p, e, y = (np.asarray(v, dtype=np.float64).reshape(-1, K) for v in (p, e, y))
    U = p.shape[0]
    perms = np.asarray(perms, dtype=np.int64)
    out = {name: np.full(U, np.nan) for name in ("cos", "cos_null", "sp", "sp_null")}
    dp, dy = p - e, y - e
    ok = ~(missing_rows(p) | missing_rows(e) | missing_rows(y))
    with np.errstate(invalid="ignore"):
        ok &= (np.abs(dp).max(axis=1) > TOL) & (np.abs(dy).max(axis=1) > TOL)
    rows = np.flatnonzero(ok)
    if rows.size and perms.shape[0]:
        with single_threaded_blas():
            _direct_rows(p, e, y, perms, rows, out)
    return DirectAlignment(
        cos=out["cos"], cos_null=out["cos_null"], cos_corrected=out["cos"] - out["cos_null"],
        spearman=out["sp"], spearman_null=out["sp_null"], spearman_corrected=out["sp"] - out["sp_null"],
    )


def _direct_rows(p: np.ndarray, e: np.ndarray, y: np.ndarray, perms: np.ndarray, rows: np.ndarray, out: dict) -> None:
    slot_index = _slot_index(perms)
    pair_index = _pair_index(perms)

    def block(r: np.ndarray) -> None:  # a unit's values read its own rows alone
        res = _direct_block(p[r], e[r], y[r], perms, slot_index, pair_index)
        for name, value in zip(("cos", "cos_null", "sp", "sp_null"), res):
            out[name][r] = value

    each_block(block, [rows[start:start + UNIT_CHUNK] for start in range(0, rows.size, UNIT_CHUNK)])


def _vanishing(p: np.ndarray, e: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """(U, M) True where max |p[perm] - e| <= 1e-12; only units whose sorted
    values match e's can have any, so only those are checked explicitly."""
    U, M = p.shape[0], perms.shape[0]
    out = np.zeros((U, M), dtype=bool)
    maybe = np.flatnonzero(np.abs(np.sort(p, axis=1) - np.sort(e, axis=1)).max(axis=1) <= TOL)
    for u in maybe:
        out[u] = np.abs(p[u][perms] - e[u]).max(axis=1) <= TOL
    return out


def _direct_block(
    p: np.ndarray, e: np.ndarray, y: np.ndarray, perms: np.ndarray, slot_index: np.ndarray, pair_index: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observed values and relabelling medians for one block of defined units."""
    U = p.shape[0]
    dp, dy = p - e, y - e
    dy2 = (dy * dy).sum(axis=1)
    cos = (dp * dy).sum(axis=1) / np.sqrt((dp * dp).sum(axis=1) * dy2)
    keep = ~_vanishing(p, e, perms)
    all_kept = keep.all(axis=1)
    # Cosine under relabelling: p[perm].dy and p[perm].e as sums of 8 gathered products.
    outer = np.concatenate([(p[:, :, None] * dy[:, None, :]), (p[:, :, None] * e[:, None, :])]).reshape(2 * U, K * K)
    lin = np.ascontiguousarray(_gather_sum(np.ascontiguousarray(outer.T), slot_index).T)  # (2U, M)
    num = lin[:U]
    num -= (e * dy).sum(axis=1)[:, None]
    norm2 = lin[U:]
    norm2 *= -2.0
    norm2 += ((p * p).sum(axis=1) + (e * e).sum(axis=1))[:, None]
    keep_cos = keep & (norm2 > 0)
    np.maximum(norm2, TOL, out=norm2)
    norm2 *= dy2[:, None]
    np.sqrt(norm2, out=norm2)
    num /= norm2
    cos_null = median_rows(num, None if keep_cos.all() else keep_cos)

    # Spearman on the rounded differences.
    a_obs, b_obs = rounded(dp), rounded(dy)
    sp = spearman_rows(a_obs, b_obs)
    cb = _centred_ranks(b_obs)  # (U, 8), multiples of 1/2
    db2 = (cb * cb).sum(axis=1)
    v = rounded(p[:, :, None] - e[:, None, :])  # v[u, a, i] = round(p_a - e_i, 12)
    # Integer table, scaled by 4: 2 s_ij (c_i - c_j) in [-14, 14], plus TIE_CODE per tied pair.
    table = np.empty((U, len(PAIRS), K, K), dtype=np.int16)
    for k, (i, j) in enumerate(PAIRS):
        s = np.sign(v[:, :, i][:, :, None] - v[:, :, j][:, None, :])  # (U, a, b)
        twice_delta = np.rint(2.0 * (cb[:, i] - cb[:, j])).astype(np.int16)
        table[:, k] = s.astype(np.int16) * twice_delta[:, None, None] + TIE_CODE * (s == 0)
    total = np.ascontiguousarray(_gather_sum(np.ascontiguousarray(table.reshape(U, -1).T), pair_index).T)  # (U, M)
    ties = (total + TIE_CODE // 2) // TIE_CODE
    codes4 = total - TIE_CODE * ties  # 4 x numerator, in [-168, 168]
    numerator = codes4 / 4.0
    untied = (ties == 0).all(axis=1) & all_kept
    sp_null = np.full(U, np.nan)
    if untied.any():
        # No tie anywhere: rho = N / sqrt(42 * db2), so the median comes from counting N.
        codes = codes4[untied].astype(np.int64) + 168
        lo, hi = median_codes(codes, 337)
        med_n = ((lo + hi) / 2.0 - 168) / 4.0
        sp_null[untied] = med_n / np.sqrt(42.0 * db2[untied])
    rest = np.flatnonzero(~untied)
    if rest.size:
        num_r = numerator[rest]
        ties_r = ties[rest].astype(np.int64)
        # Rank variance sum_i (rank_i - 4.5)^2: 42 without ties; 41.5 / 41 for one / two tied pairs.
        with np.errstate(invalid="ignore", divide="ignore"):
            sp_perm = num_r / np.sqrt((42.0 - 0.5 * ties_r) * db2[rest, None])
        hard_u, hard_m = np.nonzero(ties_r >= 3)
        if hard_u.size:
            uu = rest[hard_u]
            vals = rounded(p[uu[:, None], perms[hard_m]] - e[uu])
            ra = _centred_ranks(vals)
            den = (ra * ra).sum(axis=1) * db2[uu]
            with np.errstate(invalid="ignore", divide="ignore"):
                sp_perm[hard_u, hard_m] = (ra * cb[uu]).sum(axis=1) / np.sqrt(den)
        keep_r = keep[rest]
        sp_null[rest] = median_rows(sp_perm, None if keep_r.all() else keep_r)
    return cos, cos_null, sp, sp_null


# ----------------------------------------------------------------------------- partial


@dataclass
class PartialResidual:
    """Per-unit partial-residual alignment; NaN where undefined."""

    c: np.ndarray  # corr(R q(p), R q(y))
    null: np.ndarray  # median over the 8! relabellings of p (zero-variance ones left out)
    corrected: np.ndarray  # c - null


@lru_cache(maxsize=512)
def _arrangements(multiset: tuple[float, ...]) -> np.ndarray:
    """Distinct arrangements of a sorted rank multiset, centred (value - 4.5), (n_d, 8)."""
    values, codes = np.unique(np.asarray(multiset), return_inverse=True)
    # One base-8 integer per arrangement makes the de-duplication a 1-D unique.
    keys = np.unique(codes[all_permutations()] @ (K ** np.arange(K - 1, -1, -1)))
    digits = (keys[:, None] // (K ** np.arange(K - 1, -1, -1))[None, :]) % K
    table = values[digits] - (K + 1) / 2.0
    table.setflags(write=False)
    return table


def _residual_parts(p: np.ndarray, e: np.ndarray, y: np.ndarray):
    """u (unit centred q(e), or 0), w = R q(y), centred q(p), |R q(p)|^2 terms."""
    qe = _centred_ranks(e)
    ne2 = (qe * qe).sum(axis=1)
    u = np.where(ne2[:, None] > TOL, qe / np.sqrt(np.where(ne2 > TOL, ne2, 1.0))[:, None], 0.0)
    qy = _centred_ranks(y)
    w = qy - u * (u * qy).sum(axis=1)[:, None]
    qp = _centred_ranks(p)
    return u, w, qp


def partial_residual(p: np.ndarray, e: np.ndarray, y: np.ndarray) -> PartialResidual:
    """SCORING.md §6 partial-residual alignment for every row of ``p``, ``e``, ``y`` (U, 8).

    Undefined (NaN) if a row is missing or if ``R q(p)`` or ``R q(y)`` has zero
    variance (sum of squares <= 1e-12). Units that share ``e`` and ``y`` (all the
    units of one episode) and the rank multiset of ``p`` share one relabelling
    distribution, computed once.
    """
    p, e, y = (np.asarray(v, dtype=np.float64).reshape(-1, K) for v in (p, e, y))
    U = p.shape[0]
    c = np.full(U, np.nan)
    null = np.full(U, np.nan)
    ok = ~(missing_rows(p) | missing_rows(e) | missing_rows(y))
    rows = np.flatnonzero(ok)
    if rows.size == 0:
        return PartialResidual(c, null, c - null)
    u, w, qp = _residual_parts(p[rows], e[rows], y[rows])
    rp = qp - u * (u * qp).sum(axis=1)[:, None]
    sp = (rp * rp).sum(axis=1)  # |R q(p)|^2
    dy = (w * w).sum(axis=1)  # |R q(y)|^2
    defined = (sp > TOL) & (dy > TOL)
    with np.errstate(invalid="ignore", divide="ignore"):
        c_rows = np.where(defined, (rp * w).sum(axis=1) / np.sqrt(np.where(defined, sp * dy, 1.0)), np.nan)
    c[rows] = c_rows

    # One relabelling distribution per distinct (u, w, multiset of q(p)).
    multiset = np.sort(qp, axis=1) + (K + 1) / 2.0
    symmetric = np.all(multiset == (K + 1) - multiset[:, ::-1], axis=1)
    null_rows = np.full(rows.size, np.nan)
    null_rows[defined & symmetric] = 0.0
    todo = np.flatnonzero(defined & ~symmetric)
    if todo.size:
        with single_threaded_blas():
            null_rows[todo] = _partial_nulls(multiset[todo], u[todo], w[todo])
    null[rows] = null_rows
    return PartialResidual(c, null, c - null)


def _partial_nulls(multiset: np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Median relabelling correlation for each row (asymmetric multisets only)."""
    keys = np.concatenate([multiset, u, w], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    group_null = np.full(uniq.shape[0], np.nan)
    ms_uniq, ms_inverse = np.unique(uniq[:, :K], axis=0, return_inverse=True)
    ms_inverse = ms_inverse.reshape(-1)
    blocks = []  # (groups, their multiset's arrangements): the same blocks, whichever thread takes them
    for m_idx in range(ms_uniq.shape[0]):
        groups = np.flatnonzero(ms_inverse == m_idx)
        arr = _arrangements(tuple(ms_uniq[m_idx].tolist()))  # (n_d, 8) centred
        step = max(1, ARRANGEMENT_CHUNK // arr.shape[0])
        blocks += [(groups[start:start + step], arr) for start in range(0, groups.size, step)]

    def block(item: tuple[np.ndarray, np.ndarray]) -> None:
        g, arr = item
        s_p = float((arr[0] * arr[0]).sum())  # |q - 4.5|^2: the same for every arrangement
        gu, gw = uniq[g, K:2 * K], uniq[g, 2 * K:]
        l_w = gw @ arr.T  # R q_perm . R q(y)
        l_u = gu @ arr.T  # u . q_perm
        var = s_p - l_u * l_u  # |R q_perm|^2
        keep = var > TOL
        dyg = (gw * gw).sum(axis=1)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = l_w / np.sqrt(np.where(keep, var, 1.0) * dyg)
        group_null[g] = median_rows(corr, None if keep.all() else keep)

    each_block(block, blocks)
    return group_null[inverse]
