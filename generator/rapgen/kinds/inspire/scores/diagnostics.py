"""Unranked funnel diagnostics (INSPIRE.md §3, Diagnostics), per target and in the mean form.

* ``exposure_recall@50``: |first 50 exposed ∩ Y| / |Y|, the first 50 unique ids by first exposure;
* ``exposure_recall``: |E ∩ Y| / |Y|;
* ``retention``: |S̄ ∩ E ∩ Y| / |E ∩ Y|, defined where E ∩ Y ≠ ∅;
* the recovered-count histogram: targets by h_i (failed units in the 0 bin);
* G(p): mean φ(E(p)) with E(p) the ids the first ⌊p·n_i⌋ calls returned.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np

from rapgen.kinds.inspire.archive import Judgement
from rapgen.kinds.inspire.scores.gains import label_gains, phi
from rapgen.kinds.inspire.scores.units import UnitTable

DIAGNOSTICS: tuple[str, ...] = ("exposure_recall@50", "exposure_recall", "retention")


def _labels_of(judgements: Sequence[Judgement], gain_map: str) -> dict[str, dict[str, float]]:
    out: dict[str, list[Judgement]] = {}
    for j in judgements:
        out.setdefault(j.instance_id, []).append(j)
    return {iid: label_gains(js, gain_map) for iid, js in out.items()}


def diagnostic_sums(table: UnitTable, judgements: Sequence[Judgement], *, prefix: int, gain_map: str = "declared") -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B) of :data:`DIAGNOSTICS`, shape (3, n_items); (0, 0) where undefined."""
    labels = _labels_of(judgements, gain_map)
    A = np.zeros((len(DIAGNOSTICS), len(table.units)))
    B = np.zeros_like(A)
    for i, u in enumerate(table.units):
        Y: Mapping[str, float] = labels.get(u.instance_id, {})
        if u.scores.get(gain_map) is None or not Y:
            continue
        exposed = u.exposure.ids & Y.keys()
        A[0, i], B[0, i] = len(u.exposure.first(prefix) & Y.keys()) / len(Y), 1.0
        A[1, i], B[1, i] = len(exposed) / len(Y), 1.0
        if exposed:
            A[2, i], B[2, i] = len(u.cleaned.support & exposed) / len(exposed), 1.0
    return A, B


def recovered_histogram(table: UnitTable, K: int, gain_map: str = "declared", mask: np.ndarray | None = None) -> list[int]:
    """Targets per recovered count h = 0 … K (the map's excluded targets left out)."""
    counts: Counter = Counter()
    for i, u in enumerate(table.units):
        s = u.scores.get(gain_map)
        if s is not None and (mask is None or mask[i]):
            counts[s.hits] += 1
    return [counts.get(h, 0) for h in range(K + 1)]


def progress_sums(table: UnitTable, judgements: Sequence[Judgement], *, K: int, steps: int, gain_map: str = "declared") -> tuple[np.ndarray, np.ndarray]:
    """Per-item (A, B) of G(p) for p = 0, 1/steps, …, 1: shape (steps + 1, n_items);
    the last row equals ``exposed_gain``."""
    labels = _labels_of(judgements, gain_map)
    A = np.zeros((steps + 1, len(table.units)))
    B = np.zeros_like(A)
    for i, u in enumerate(table.units):
        s = u.scores.get(gain_map)
        if s is None:
            continue
        Y = labels.get(u.instance_id, {})
        for k, E in enumerate(u.exposure.progress(steps)):
            A[k, i], B[k, i] = phi(E, Y, K, s.idcg), 1.0
    return A, B
