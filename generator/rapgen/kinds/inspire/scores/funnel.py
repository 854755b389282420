"""The funnel diagnostics of every target at once (INSPIRE.md §3, Diagnostics).

Vectorised twins of :func:`~rapgen.kinds.inspire.scores.diagnostics.diagnostic_sums`
and :func:`~rapgen.kinds.inspire.scores.diagnostics.progress_sums` on
:class:`~rapgen.kinds.inspire.scores.columns.UnitColumns`, with the same
values bit for bit: a label is among the first ``prefix`` exposed ids iff its
first-exposure rank is below ``prefix``, and in E(p) iff the first call that
returned it comes before call ⌊p·n_i⌋.
"""

from __future__ import annotations

import numpy as np

from rapgen.kinds.inspire.scores.columns import ItemArrays, LabelTable, UnitColumns, descending, sequential_dcg


def funnel_sums(cols: UnitColumns, labels: LabelTable, arrays: ItemArrays, gain_map: str, *, prefix: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B) of ``exposure_recall@50``, ``exposure_recall`` and ``retention``, shape (3, n)."""
    Y = labels.gains(gain_map) > 0
    n_labels = Y.sum(axis=1)
    ok = arrays.defined & (n_labels > 0)
    seen = Y & cols.exposed
    n_seen = seen.sum(axis=1)
    early = (Y & (cols.first_seen < prefix)).sum(axis=1)
    kept = (seen & cols.selected).sum(axis=1)
    A, B = np.zeros((3, len(ok))), np.zeros((3, len(ok)))
    with np.errstate(invalid="ignore", divide="ignore"):
        A[0], B[0] = np.where(ok, early / n_labels, 0.0), ok * 1.0
        A[1], B[1] = np.where(ok, n_seen / n_labels, 0.0), ok * 1.0
        retained = ok & (n_seen > 0)
        A[2], B[2] = np.where(retained, kept / n_seen, 0.0), retained * 1.0
    return A, B


def progress_arrays(cols: UnitColumns, labels: LabelTable, arrays: ItemArrays, gain_map: str, *, K: int,
                    steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B) of G(p), p = 0, 1/steps, …, 1: shape (steps + 1, n); the last row is ``exposed_gain``."""
    G = labels.gains(gain_map)
    ok = arrays.defined
    A, B = np.zeros((steps + 1, len(ok))), np.zeros((steps + 1, len(ok)))
    with np.errstate(invalid="ignore", divide="ignore"):
        for k in range(steps + 1):
            calls = (k * cols.n_calls) // steps
            reached = (G > 0) & (cols.first_call < calls[:, None])
            A[k] = np.where(ok, sequential_dcg(descending(np.where(reached, G, 0.0)), K) / arrays.idcg, 0.0)
            B[k] = ok * 1.0
    return A, B
