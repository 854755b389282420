"""Unit metrics (SCORING.md §2): the pure pairwise functions and the one registry.

The pairwise functions take two arrays of compositions with the eight slots
on the last axis and return one value per leading index; a missing
composition is a row of NaN and an undefined result is NaN. The registry
declares every per-unit score column of the leaderboard (name, label,
direction, description, and the function computing it from a unit's
prediction p, target y, recent window x and EWMA e). Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rapgen.errors import ScoringError
from rapgen.scores.kernels import missing, ranks, spearman
from rapgen.scores.spec import MetricSpec

__all__ = [
    "REGISTRY", "MetricSpec", "UnitInputs", "applies", "get_metric", "jsd", "register", "tv", "unit_metric_values",
    "METRIC_NAMES", "HIGHER_IS_BETTER", "contrast_difference",
    "SPEARMAN", "TV", "JSD", "PRED_RECENT", "STATE_RECENT", "TV_GAIN",
]

# RAP's metric names, the one place each is spelt: the registry below declares them and every
# other module reads these (a score file's ``metric`` column, the replay and oracle tables, the pages).
SPEARMAN = "spearman"
TV = "tv"
JSD = "jsd"
PRED_RECENT = "pred_recent"
STATE_RECENT = "state_recent"
TV_GAIN = "tv_gain"


def tv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Total variation distance: half the L1 distance (NaN if either side is missing)."""
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
    return np.where(missing(a) | missing(b), np.nan, value)


@dataclass(frozen=True)
class UnitInputs:
    """One batch of units: prediction ``p``, target ``y``, recent window ``x`` and
    EWMA ``e`` (broadcastable, slots last). Shared intermediate values are
    computed once, on first use."""

    p: np.ndarray
    y: np.ndarray
    x: np.ndarray
    e: np.ndarray

    @cached_property
    def no_y(self) -> np.ndarray:
        return missing(self.y)

    @cached_property
    def ranks_p(self) -> np.ndarray:
        return ranks(self.p)

    @cached_property
    def tv_py(self) -> np.ndarray:
        return np.where(missing(self.p) | self.no_y, np.nan, tv(self.p, self.y))

    @cached_property
    def recent(self) -> np.ndarray:
        """spearman against the recent window; undefined for an episode without y."""
        return np.where(self.no_y, np.nan, spearman(self.p, self.x, ranks_a=self.ranks_p))


# Which entries a metric applies to (MetricSpec.scope): every entry, forecasts only (models
# under A0/A1/A3 and baselines), or State answers only (A2, A4).
SCOPES = ("all", "forecast", "state")


def applies(spec: MetricSpec, is_state: bool) -> bool:
    """True if ``spec`` scores an entry that is (``is_state``) or is not a State answer."""
    return spec.scope == "all" or (spec.scope == "state") == is_state


REGISTRY: dict[str, MetricSpec] = {}


def register(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` to :data:`REGISTRY` (refuses a name already there)."""
    if spec.name in REGISTRY:
        raise ScoringError(f"metric {spec.name!r} is already registered")
    if spec.scope not in SCOPES:
        raise ScoringError(f"metric {spec.name!r}: scope must be one of {', '.join(SCOPES)}, found {spec.scope!r}")
    REGISTRY[spec.name] = spec
    return spec


def get_metric(name: str) -> MetricSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ScoringError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(REGISTRY))}") from None


# The leaderboard's metric column, in output order. pred_recent / state_recent measure
# agreement with the recent window: descriptive (SCORING.md names no better direction;
# a forecast that merely copies the present scores 1), so their direction is None.
def _rap_metric(name: str, label: str, higher_is_better: bool | None, description: str, fn, scope: str = "all") -> MetricSpec:
    """RAP's metrics are all field-macro means of per-unit values; an invalid unit is excluded (counted)."""
    return MetricSpec(name, label, higher_is_better, "mean", "exclude", description, fn, scope)


register(_rap_metric(SPEARMAN, "Spearman", True, "spearman(p, y): the primary score",
                     lambda u: spearman(u.p, u.y, ranks_a=u.ranks_p)))
register(_rap_metric(TV, "TV distance", False, "tv(p, y)", lambda u: u.tv_py))
register(_rap_metric(JSD, "JS divergence", False, "jsd(p, y)", lambda u: jsd(u.p, u.y)))
register(_rap_metric(PRED_RECENT, "Pred–recent", None, "spearman(p, x) for a forecast: agreement with the recent window",
                     lambda u: u.recent, scope="forecast"))
register(_rap_metric(STATE_RECENT, "State–recent", None, "spearman(s, x) for a State answer (A2, A4)",
                     lambda u: u.recent, scope="state"))
register(_rap_metric(TV_GAIN, "TV gain vs EWMA", True, "tv(e, y) - tv(p, y), e the EWMA composition",
                     lambda u: np.where(missing(u.e) | u.no_y, np.nan, tv(u.e, u.y)) - u.tv_py))

METRIC_NAMES: tuple[str, ...] = tuple(REGISTRY)
HIGHER_IS_BETTER: dict[str, bool | None] = {m.name: m.higher_is_better for m in REGISTRY.values()}


def unit_metric_values(p: np.ndarray, y: np.ndarray, x: np.ndarray, e: np.ndarray, *, is_state: bool = False) -> dict[str, np.ndarray]:
    """Every registered metric's values for predictions ``p`` against target
    ``y``, recent window ``x`` and EWMA ``e`` (broadcastable, slots last), for
    entries that are State answers (``is_state``) or not. Metrics that do not
    apply are left out."""
    units = UnitInputs(*(np.asarray(v, dtype=float) for v in (p, y, x, e)))
    return {name: spec.fn(units) for name, spec in REGISTRY.items() if applies(spec, is_state)}


def contrast_difference(metric: str, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """A paired contrast's per-unit value, oriented so that positive favours ``left``
    (SCORING.md §4, the paper's "reference minus candidate"): left − right for a
    higher-is-better or descriptive metric, right − left for a distance (``tv``, ``jsd``).

    Metrics outside the registry (the interventions' alignments, ``adapt_h``,
    ``calls_per_unit``) are higher-is-better or descriptive, hence left − right.
    Written as right − left rather than −(left − right), so equal sides give 0.0, not −0.0.
    """
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    spec = REGISTRY.get(metric)
    return right - left if spec is not None and spec.higher_is_better is False else left - right
