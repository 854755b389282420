"""Gain maps and discounted cumulative gain (INSPIRE.md §3–§4).

DCG(x) = Σ_{j=1}^{min(K,|x|)} x_j / log2(j + 1), linear gains. Under a gain map
Y_i keeps only the labels whose gain is positive there; a target whose ideal DCG
is 0 under a map is excluded from that map's rows.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

from rapgen.kinds.inspire.archive import Judgement


def map_gain(judgement: Judgement, gain_map: str) -> float:
    """A label's gain under ``declared`` (the ledger's, as judged), ``binary`` (1) or
    ``t2t3`` (T1 -> 0, T2/T3 as declared)."""
    if gain_map == "declared":
        return float(judgement.gain)
    if gain_map == "binary":
        return 1.0
    if gain_map == "t2t3":
        return 0.0 if judgement.tier == "T1" else float(judgement.gain)
    raise ValueError(f"unknown gain map {gain_map!r}; choose from declared, binary, t2t3")


def label_gains(judgements: Iterable[Judgement], gain_map: str = "declared") -> dict[str, float]:
    """Y_i under a gain map: arXiv id -> gain, only the labels with gain > 0."""
    out = {}
    for j in judgements:
        g = map_gain(j, gain_map)
        if g > 0:
            out[j.arxiv_id] = g
    return out


def dcg(gains: Sequence[float], K: int) -> float:
    """Σ_{j=1}^{min(K,|x|)} x_j / log2(j+1), summed in slot order."""
    return sum(g / math.log2(j + 2) for j, g in enumerate(gains[:K]))


def ideal_dcg(labels: Mapping[str, float], K: int) -> float:
    """IDCG_i: DCG of Y_i's gains sorted in decreasing order."""
    return dcg(sorted(labels.values(), reverse=True), K)


def phi(ids: Iterable[str], labels: Mapping[str, float], K: int, idcg: float) -> float:
    """φ_i(A) = DCG(sort↓ g_i(A ∩ Y_i)) / IDCG_i: the best nDCG a list drawn from A could reach."""
    return dcg(sorted((labels[i] for i in set(ids) if i in labels), reverse=True), K) / idcg
