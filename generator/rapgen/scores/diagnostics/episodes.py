"""Episode-level diagnostics (SCORING.md §6) that never read a model output:
split-half reliability and the change-rich subset.

Both take canonical direction counts per episode (rows of eight integers) and
one ``numpy.random.default_rng(seed)`` per run. Randomness is consumed in the
order of the rows passed in, which the caller keeps sorted by
(field_id in byte order, origin); a row that is undefined consumes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rapgen.scores.kernels import CONSTANT_TOL as TOL
from rapgen.scores.kernels import rounded
from rapgen.scores.kernels import spearman as spearman_rows
from rapgen.scores.metrics import jsd as jsd_rows  # the scorer's own §2 definition

K = 8
# Observed and null JSD are compared with this slack, so that a null draw equal to the
# observation up to floating-point summation order counts as ">= observed".
JSD_TIE = 1e-12
EPISODE_CHUNK = 32  # episodes whose draws are held at once (4 x 32 x draws x 8 int64)


def _as_counts(counts: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(counts, dtype=np.float64).reshape(-1, K)
    if np.isnan(a).any() or (a < 0).any() or not np.array_equal(a, np.round(a)):
        raise ValueError(f"{what} must be non-negative whole-number direction counts")
    return a.astype(np.int64)


# ----------------------------------------------------------------------------- reliability


@dataclass
class Reliability:
    """Per-episode split-half reliability; NaN where undefined."""

    n_papers: np.ndarray  # (E,) counted papers in the target window
    r_bar: np.ndarray  # mean split-half spearman over the defined splits
    n_defined: np.ndarray  # (E,) splits whose spearman is defined
    reliability: np.ndarray  # Spearman-Brown 2 r / (1 + r)


def split_half_reliability(target_counts: np.ndarray, splits: int, seed: int) -> Reliability:
    """Split-half Spearman-Brown reliability of each episode's target window.

    Protocol (one ``default_rng(seed)`` for the whole call, rows in order):
    the n counted papers are laid out as ``repeat(arange(8), counts)``; for a row
    with n >= 2, ``keys = rng.random((splits, n))``; in each split the first half
    is the ``n // 2`` papers with the smallest keys (a uniform shuffle cut after
    ``n // 2``), the second half the rest. The halves' direction counts are
    compared with §2 ``spearman(first, second)``; r̄ is the mean over the splits
    where it is defined and the reliability ``2 r̄ / (1 + r̄)`` (undefined at r̄ = -1).
    Rows with n < 2 are undefined and draw nothing.
    """
    counts = _as_counts(target_counts, "target counts")
    E = counts.shape[0]
    n = counts.sum(axis=1)
    r_bar = np.full(E, np.nan)
    n_def = np.zeros(E, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for ep in range(E):
        total = int(n[ep])
        if total < 2 or splits < 1:
            continue
        half = total // 2
        keys = rng.random((splits, total))
        # The half-th smallest key of each split; papers at or below it form the first half.
        cut = np.partition(keys, half - 1, axis=1)[:, half - 1:half]
        first_mask = keys <= cut
        present = np.flatnonzero(counts[ep] > 0)
        starts = np.concatenate([[0], np.cumsum(counts[ep][present])[:-1]])
        first = np.zeros((splits, K))
        first[:, present] = np.add.reduceat(first_mask, starts, axis=1, dtype=np.int64)
        second = counts[ep][None, :] - first
        rho = spearman_rows(first, second)
        defined = ~np.isnan(rho)
        n_def[ep] = int(defined.sum())
        if n_def[ep]:
            r_bar[ep] = float(rho[defined].mean())
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(np.abs(1.0 + r_bar) > TOL, 2.0 * r_bar / (1.0 + r_bar), np.nan)
    return Reliability(n_papers=n, r_bar=r_bar, n_defined=n_def, reliability=rel)


# ----------------------------------------------------------------------------- change-rich


@dataclass
class ChangeRich:
    """Per-episode change test and future-rank repeatability; NaN where undefined."""

    jsd: np.ndarray  # observed jsd(r / sum r, f / sum f)
    p_value: np.ndarray  # (1 + #{null >= observed}) / (1 + draws)
    repeatability: np.ndarray  # mean spearman between posterior-predictive replicates
    change_rich: np.ndarray  # bool: p <= p_max and repeatability >= repeatability_min


def change_rich_episodes(
    recent_counts: np.ndarray,
    target_counts: np.ndarray,
    *,
    p_max: float,
    repeatability_min: float,
    null_draws: int,
    seed: int,
) -> ChangeRich:
    """SCORING.md §6 change-rich test for each episode (rows of ``recent`` r and
    ``target`` f counts).

    Protocol (one ``default_rng(seed)`` for the whole call, rows in order; a row
    with sum r = 0 or sum f = 0 is undefined, not change-rich and draws nothing):
    with ``D = null_draws`` and ``pi = (r + f + 1/2) / (sum r + sum f + 4)``, draw
    ``rng.multinomial(sum r, pi, size=D)``, then ``rng.multinomial(sum f, pi, size=D)``
    (the stationary null), then ``theta = rng.dirichlet(f + 1/2, size=D)``, then two
    replicate sets ``rng.multinomial(sum f, theta)`` (A, then B). A pair whose §2
    spearman(A, B) is undefined (B constant) is left out of the mean; with none
    defined the repeatability is undefined and the episode is not change-rich.
    """
    r = _as_counts(recent_counts, "recent counts")
    f = _as_counts(target_counts, "target counts")
    E = r.shape[0]
    obs = np.full(E, np.nan)
    pval = np.full(E, np.nan)
    rep = np.full(E, np.nan)
    rng = np.random.default_rng(seed)
    D = int(null_draws)
    nr_all, nf_all = r.sum(axis=1), f.sum(axis=1)
    todo = np.flatnonzero((nr_all > 0) & (nf_all > 0)) if D >= 1 else np.zeros(0, dtype=np.int64)
    # Draws are made episode by episode (the RNG order); the statistics of a
    # block of episodes are then computed together.
    for start in range(0, todo.size, EPISODE_CHUNK):
        eps = todo[start:start + EPISODE_CHUNK]
        n = eps.size
        nr, nf = nr_all[eps].astype(np.float64), nf_all[eps].astype(np.float64)
        null_r = np.empty((n, D, K), dtype=np.int64)
        null_f = np.empty((n, D, K), dtype=np.int64)
        rep_a = np.empty((n, D, K), dtype=np.int64)
        rep_b = np.empty((n, D, K), dtype=np.int64)
        for k, ep in enumerate(eps):
            pi = (r[ep] + f[ep] + 0.5) / (nr_all[ep] + nf_all[ep] + 4.0)
            null_r[k] = rng.multinomial(nr_all[ep], pi, size=D)
            null_f[k] = rng.multinomial(nf_all[ep], pi, size=D)
            theta = rng.dirichlet(f[ep] + 0.5, size=D)
            rep_a[k] = rng.multinomial(nf_all[ep], theta)
            rep_b[k] = rng.multinomial(nf_all[ep], theta)
        # The observation goes through the same vectorised code as the null (column 0).
        a = np.concatenate([(r[eps] / nr[:, None])[:, None], null_r / nr[:, None, None]], axis=1)
        b = np.concatenate([(f[eps] / nf[:, None])[:, None], null_f / nf[:, None, None]], axis=1)
        j = jsd_rows(a, b)  # (n, 1 + D)
        obs[eps] = j[:, 0]
        pval[eps] = (1.0 + np.count_nonzero(j[:, 1:] >= j[:, :1] - JSD_TIE, axis=1)) / (1.0 + D)
        rho = spearman_rows(rep_a, rep_b)  # (n, D)
        defined = ~np.isnan(rho)
        n_def = defined.sum(axis=1)
        total = np.where(defined, rho, 0.0).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rep[eps] = np.where(n_def > 0, total / np.where(n_def > 0, n_def, 1), np.nan)
    with np.errstate(invalid="ignore"):
        rich = (pval <= p_max) & (rep >= repeatability_min)
    return ChangeRich(jsd=obs, p_value=pval, repeatability=rep, change_rich=rich)


# ----------------------------------------------------------------------------- revision


@dataclass
class Revision:
    """Pairs (T, T+h) of one horizon: index arrays into the caller's rows, and values."""

    first: np.ndarray  # row index of the (T) member
    second: np.ndarray  # row index of the (T+h) member
    adapt: np.ndarray  # spearman(p(T+h) - p(T), y(T+h) - y(T)), differences rounded to 12 decimals
    prediction_stability: np.ndarray  # spearman(p(T+h), p(T))
    truth_stability: np.ndarray  # spearman(y(T+h), y(T))


def revision_pairs(series: np.ndarray, month: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i, j) with the same ``series`` id and ``month[j] = month[i] + horizon``."""
    series = np.asarray(series, dtype=np.int64)
    month = np.asarray(month, dtype=np.int64)
    span = int(month.max() - month.min() + 1 + abs(horizon)) if month.size else 1
    key = series * (2 * span) + (month - (month.min() if month.size else 0))
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    target = key + horizon
    pos = np.searchsorted(sorted_key, target)
    pos_c = np.minimum(pos, max(len(sorted_key) - 1, 0))
    hit = (pos < len(sorted_key)) & (sorted_key[pos_c] == target) if len(sorted_key) else np.zeros(0, dtype=bool)
    first = np.flatnonzero(hit)
    return first, order[pos_c[hit]]


def revision_alignment(p: np.ndarray, y: np.ndarray, series: np.ndarray, month: np.ndarray, horizon: int) -> Revision:
    """Adapt_h and the stabilities for every (T, T+h) pair of rows in one series
    (an entry-condition's predictions for one field); rows of ``p``/``y`` may be NaN."""
    p = np.asarray(p, dtype=np.float64).reshape(-1, K)
    y = np.asarray(y, dtype=np.float64).reshape(-1, K)
    i, j = revision_pairs(series, month, horizon)
    adapt = spearman_rows(rounded(p[j] - p[i]), rounded(y[j] - y[i]))
    return Revision(
        first=i, second=j, adapt=adapt,
        prediction_stability=spearman_rows(p[j], p[i]),
        truth_stability=spearman_rows(y[j], y[i]),
    )
