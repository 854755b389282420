"""Retrieval, clustering and novelty on L2-normalised vectors (IDEAS.md §1, §4).

Vectors may be dense arrays or sparse (CSR) matrices; queries are dense.
Cosines are rounded to 12 decimals before ordering, so that papers whose
similarity is mathematically equal tie exactly (whatever the summation order
of the machine) and are broken by ``arxiv_id`` ascending, as the candidates
file requires.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DECIMALS = 12


def nearest(query: np.ndarray, vectors: np.ndarray, ids: Sequence[str], depth: int) -> list[tuple[str, float]]:
    """The ``depth`` papers most similar to ``query``: (arxiv_id, cosine), cosine ↓ then id ↑."""
    if len(ids) == 0:
        return []
    cos = np.round(np.asarray(vectors @ query).ravel(), DECIMALS) + 0.0
    order = sorted(range(len(ids)), key=lambda i: (-cos[i], ids[i].encode("utf-8")))
    return [(ids[i], float(cos[i])) for i in order[:depth]]


def nn_distance(query: np.ndarray, vectors: np.ndarray) -> float:
    """Cosine distance to the nearest row of ``vectors`` (1 without any)."""
    if vectors.shape[0] == 0:
        return 1.0
    return float(np.round(1.0 - float(np.max(np.asarray(vectors @ query).ravel())), DECIMALS)) + 0.0


def kmeans(vectors: np.ndarray, k: int, seed: int, iterations: int = 100) -> np.ndarray:
    """Cluster labels 0 … k−1: k-means++ seeding from ``default_rng(seed)``, then Lloyd's
    iterations until no label changes (ties go to the lower cluster). With at most k
    points each is its own cluster."""
    n = vectors.shape[0]
    if n <= k:
        return np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    xx = np.asarray(vectors.multiply(vectors).sum(axis=1) if hasattr(vectors, "multiply") else np.sum(vectors * vectors, axis=1)).ravel()

    def row(i: int) -> np.ndarray:
        return np.asarray(vectors[i].todense()).ravel() if hasattr(vectors, "todense") else vectors[i]

    def distances(C: np.ndarray) -> np.ndarray:  # (n, len(C)) squared distances, without an (n, k, dims) array
        return np.maximum(xx[:, None] - 2.0 * np.asarray(vectors @ C.T) + np.sum(C * C, axis=1)[None, :], 0.0)

    centres = [row(int(rng.integers(n)))]
    for _ in range(1, k):
        d2 = distances(np.array(centres)).min(axis=1)
        total = d2.sum()
        pick = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.integers(n))
        centres.append(row(pick))
    C = np.array(centres)
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(iterations):
        d2 = np.round(distances(C), DECIMALS)
        new = np.argmin(d2, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = np.flatnonzero(labels == j)
            if len(members):
                C[j] = np.asarray(vectors[members].mean(axis=0)).ravel()
    return labels
