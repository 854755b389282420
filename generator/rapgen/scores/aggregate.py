"""Field-macro aggregation, tracks, paired contrasts and ranks (SCORING.md §4, §5).

A *statistic* is a vector of field scores over all fields (NaN where a field
has no defined value). Its headline estimate for a split is the plain mean of
the split's defined field scores; its interval comes from the split's shared
bootstrap count matrix (common random numbers across every statistic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rapgen.scores.metrics import HIGHER_IS_BETTER, METRIC_NAMES, STATE_RECENT
from rapgen.scores.schema import BASELINE_CONDITION, CONDITION_CONTRASTS, EWMA_CONTRAST_CONDITIONS
from rapgen.scores.units import Entry


@dataclass(frozen=True)
class Contrast:
    entry: str  # model id
    name: str  # e.g. "A1-A0", "A3-ewma"
    left: int  # entry index
    right: int  # entry index
    metrics: tuple[str, ...]


def build_contrasts(entries: list[Entry]) -> list[Contrast]:
    """Every §4 contrast that exists: a model's condition pairs and Ak-ewma.

    Metrics: those both sides have under the same name; never state_recent;
    pred_recent only between two forecasts (which the name rule implies).
    """
    index = {(e.entry, e.kind, e.condition): i for i, e in enumerate(entries)}
    ewma = index.get(("ewma", "baseline", BASELINE_CONDITION))
    out: list[Contrast] = []
    models = sorted({e.entry for e in entries if e.kind == "model"})
    for model in models:
        def common(a: int, b: int) -> tuple[str, ...]:
            shared = set(entries[a].metrics()) & set(entries[b].metrics())
            return tuple(m for m in METRIC_NAMES if m in shared and m != STATE_RECENT)

        for left, right in CONDITION_CONTRASTS:
            a, b = index.get((model, "model", left)), index.get((model, "model", right))
            if a is not None and b is not None:
                out.append(Contrast(model, f"{left}-{right}", a, b, common(a, b)))
        if ewma is not None:
            for k in EWMA_CONTRAST_CONDITIONS:
                a = index.get((model, "model", k))
                if a is not None:
                    out.append(Contrast(model, f"{k}-ewma", a, ewma, common(a, ewma)))
    return out


def rank_by_intervals(low: np.ndarray, high: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """rank_i = 1 + #{j : j's interval lies entirely on the better side of i's}.

    Higher is better: j beats i when low_j > high_i; lower is better: when
    high_j < low_i. Entries without an interval get NaN and beat nobody.
    """
    lo = low[:, None]
    hi = high[:, None]
    with np.errstate(invalid="ignore"):
        if higher_is_better:
            beats = low[None, :] > hi  # [i, j]: j above i
        else:
            beats = high[None, :] < lo
    rank = 1.0 + beats.sum(axis=1)
    return np.where(np.isnan(low) | np.isnan(high), np.nan, rank)


# Replicate statistics that are mathematically equal can differ in the last bits
# (different summation orders); within this distance of the best they tie for first.
TIE_TOLERANCE = 1e-12


def probability_first(replicates: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Share of replicates in which each entry (column) is best.

    Undefined replicate values take no part; entries within ``TIE_TOLERANCE`` of
    the best tie for first and split the replicate equally; replicates with no
    defined entry are not counted. With no such replicate at all, every share is
    NaN (undefined), not zero.
    """
    R, n = replicates.shape
    if n == 0:
        return np.zeros(0)
    signed = replicates if higher_is_better else -replicates
    defined = ~np.isnan(signed)
    any_defined = defined.any(axis=1)
    total = any_defined.sum()
    if total == 0:
        return np.full(n, np.nan)
    filled = np.where(defined, signed, -np.inf)
    best = filled.max(axis=1, keepdims=True)
    winners = defined & (filled >= best - TIE_TOLERANCE)
    share = winners / np.maximum(winners.sum(axis=1, keepdims=True), 1)
    return share[any_defined].sum(axis=0) / total


def metric_higher_is_better(metric: str) -> bool:
    return HIGHER_IS_BETTER[metric]
