"""Inspire's bootstrap as per-cluster sums (INSPIRE.md §4, KINDS.md §4).

Clusters are a split's targets (primary) or their topics, numbered in byte order
of their ids; one ``default_rng(seed)`` draw matrix per (split, cluster kind) is
shared by every statistic of the split, so views (item masks) and paired
differences are resampled together. A statistic's replicate r is
(C[r]·A)/(C[r]·B) with A_k, B_k the masked per-item A, B summed over cluster k;
the engine's :func:`rapgen.scores.bootstrap_intervals` does the rest, with B as
floats (a ratio metric's denominators are sums of gains).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rapgen.scores import Clusters, bootstrap_intervals, cluster_index, draw_counts


def clusters_of(item_clusters: Sequence[str]) -> Clusters:
    """Number the distinct cluster ids of the items in byte order of their UTF-8 bytes (the engine's
    :func:`rapgen.scores.cluster_index`)."""
    return cluster_index(item_clusters)


def cluster_sums(A: np.ndarray, B: np.ndarray, clusters: Clusters, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (A_k, B_k) of per-item (A, B) of shape (n_stats, n_items);
    items outside ``mask`` (a view, a split) contribute nothing."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    if mask is not None:
        A, B = A * mask, B * mask
    member = np.zeros((A.shape[1], clusters.size))
    member[np.arange(A.shape[1]), clusters.of_item] = 1.0
    return A @ member, B @ member


def estimate(A_k: np.ndarray, B_k: np.ndarray) -> np.ndarray:
    """ΣA/ΣB per statistic; NaN where ΣB = 0 (an undefined cell)."""
    num, den = np.atleast_2d(A_k).sum(axis=1), np.atleast_2d(B_k).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def draws(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """The (R, N) count matrix of one (split, cluster kind): SCORING.md §5's protocol."""
    return draw_counts(n_clusters, resamples, seed)


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    replicates: np.ndarray  # NaN where the replicate's denominator is 0


def intervals(C: np.ndarray, A_k: np.ndarray, B_k: np.ndarray, level: float) -> list[Interval]:
    """Estimate and percentile interval of every statistic (rows of A_k, B_k) on
    draw matrix C; replicates with C·B = 0 are left out of the percentiles."""
    A_k, B_k = np.atleast_2d(A_k), np.atleast_2d(B_k)
    result = bootstrap_intervals(C, A_k, B_k, level, keep=np.arange(A_k.shape[0]))
    est = estimate(A_k, B_k)
    return [Interval(float(est[i]), float(result.low[i]), float(result.high[i]), result.replicates[i]) for i in range(A_k.shape[0])]
