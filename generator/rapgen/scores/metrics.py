"""Unit metrics (SCORING.md §2) as pure, vectorised numpy functions.

Every function takes two arrays of compositions with the eight slots on the
last axis and returns one value per leading index. A composition that is
missing is a row of NaN; a result that is undefined is NaN. Nothing here does
I/O, so the functions are usable one unit at a time or for a whole archive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from rapgen.errors import ScoringError
from rapgen.scores.diag_core import pairwise_counts8

# "Constant" means max - min <= 1e-12 (SCORING.md §2, edge rules).
CONSTANT_TOL = 1e-12


def _missing(a: np.ndarray) -> np.ndarray:
    return np.isnan(a).any(axis=-1)


def is_constant(a: np.ndarray) -> np.ndarray:
    """True where the vector's range is at most 1e-12 (False for a missing vector)."""
    with np.errstate(invalid="ignore"):
        return (np.max(a, axis=-1) - np.min(a, axis=-1)) <= CONSTANT_TOL


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    da = a - a.mean(axis=-1, keepdims=True)
    db = b - b.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (da * db).sum(axis=-1) / np.sqrt((da * da).sum(axis=-1) * (db * db).sum(axis=-1))


def ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis, as ``scipy.stats.rankdata(method="average")``
    (missing rows are ranked as zeros; callers mask them).

    With eight slots a pairwise comparison is cheaper than sorting:
    rank_i = 1 + #{j: a_j < a_i} + (#{j: a_j == a_i} - 1) / 2, exact half-integers.
    """
    a = np.nan_to_num(np.asarray(a, dtype=float))
    if a.shape[-1] == 8 and a.size:
        # Eight slots: the comparison counts come from one uint64 per slot.
        flat = np.ascontiguousarray(a.reshape(-1, 8))
        lt, le = pairwise_counts8(flat)
        return ((lt + le + 1) / 2.0).reshape(a.shape)
    left = a[..., None, :]
    right = a[..., :, None]
    less = (left < right).sum(axis=-1)
    equal = (left == right).sum(axis=-1)
    return 1.0 + less + (equal - 1) / 2.0


def spearman(a: np.ndarray, b: np.ndarray, *, ranks_a: np.ndarray | None = None, ranks_b: np.ndarray | None = None) -> np.ndarray:
    """Pearson correlation of average ranks.

    Rules, in order: missing a or b -> undefined; a constant -> 0 (a uniform
    prediction carries no ordering); b constant -> undefined. ``ranks_a`` /
    ``ranks_b`` may pass precomputed :func:`ranks` of a side used repeatedly.
    """
    # Rank each side on its own shape before broadcasting (targets are shared by every entry).
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    missing = _missing(a)[..., None] | _missing(b)[..., None]
    a_const = is_constant(a)[..., None]
    b_const = is_constant(b)[..., None]
    ra = ranks(a) if ranks_a is None else ranks_a
    rb = ranks(b) if ranks_b is None else ranks_b
    value = _pearson(ra, rb)[..., None]
    value = np.where(a_const, 0.0, np.where(b_const, np.nan, value))
    return np.where(missing, np.nan, value)[..., 0]


def tv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Total variation distance: half the L1 distance."""
    return 0.5 * np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum(axis=-1)


def _kl_to_mid(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    # Sum only over slots with a_d > 0 (0 log 0 = 0); m_d >= a_d/2 > 0 there.
    positive = a > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(positive, a * np.log(np.where(positive, a, 1.0) / np.where(positive, m, 1.0)), 0.0)
    return terms.sum(axis=-1)


def jsd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence in nats, no smoothing."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    m = (a + b) / 2.0
    value = 0.5 * _kl_to_mid(a, m) + 0.5 * _kl_to_mid(b, m)
    return np.where(_missing(a) | _missing(b), np.nan, value)


def cosc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of the centred vectors; undefined if either is constant or missing."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    value = _pearson(a, b)
    bad = _missing(a) | _missing(b) | is_constant(a) | is_constant(b)
    return np.where(bad, np.nan, value)


@dataclass(frozen=True)
class MetricSpec:
    """A pairwise composition metric: ``fn(a, b)`` over the last axis."""

    name: str
    display_name: str
    higher_is_better: bool
    description: str
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray]


REGISTRY: dict[str, MetricSpec] = {}


def register(spec: MetricSpec) -> MetricSpec:
    if spec.name in REGISTRY:
        raise ScoringError(f"metric {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    return spec


def get_metric(name: str) -> MetricSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ScoringError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(REGISTRY))}") from None


register(MetricSpec("spearman", "Spearman", True, "Rank correlation (average ranks) of two compositions.", spearman))
register(MetricSpec("tv", "Total variation", False, "Half the L1 distance between two compositions.", tv))
register(MetricSpec("jsd", "Jensen-Shannon", False, "Jensen-Shannon divergence, natural log, no smoothing.", jsd))
register(MetricSpec("cosc", "Centred cosine", True, "Cosine of the mean-centred vectors.", cosc))


@dataclass(frozen=True)
class UnitMetric:
    """A per-unit score column of the leaderboard (SCORING.md §2, §7)."""

    name: str
    higher_is_better: bool
    description: str


# The leaderboard's metric column, in output order.
UNIT_METRICS: tuple[UnitMetric, ...] = (
    UnitMetric("spearman", True, "spearman(p, y): the primary score"),
    UnitMetric("tv", False, "tv(p, y)"),
    UnitMetric("jsd", False, "jsd(p, y)"),
    UnitMetric("pred_recent", True, "spearman(p, x) for a forecast: agreement with the recent window"),
    UnitMetric("state_recent", True, "spearman(s, x) for a State answer (A2, A4)"),
    UnitMetric("tv_gain", True, "tv(e, y) - tv(p, y), e the EWMA composition"),
)
UNIT_METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in UNIT_METRICS)
HIGHER_IS_BETTER: dict[str, bool] = {m.name: m.higher_is_better for m in UNIT_METRICS}


def unit_metric_values(p: np.ndarray, y: np.ndarray, x: np.ndarray, e: np.ndarray) -> dict[str, np.ndarray]:
    """Every §2 per-unit value for predictions ``p`` against target ``y``,
    recent window ``x`` and EWMA ``e`` (all broadcastable, slots last).

    The recent-window agreement is returned as ``recent``; the caller names
    it ``pred_recent`` or ``state_recent`` by condition. An episode without
    ``y`` is undefined for every value, ``recent`` included.
    """
    p, y, x, e = (np.asarray(v, dtype=float) for v in (p, y, x, e))
    no_y = _missing(y)
    tv_py = np.where(_missing(p) | no_y, np.nan, tv(p, y))
    tv_ey = np.where(_missing(e) | no_y, np.nan, tv(e, y))
    rp = ranks(p)  # used twice
    out = {
        "spearman": spearman(p, y, ranks_a=rp),
        "tv": tv_py,
        "jsd": jsd(p, y),
        "recent": np.where(no_y, np.nan, spearman(p, x, ranks_a=rp)),
        "tv_gain": tv_ey - tv_py,
    }
    return out
