"""The fifteen per-target metrics of INSPIRE.md §3 and their statistic forms (KINDS.md §4).

:func:`score_item` computes everything one target contributes for one unit;
each :class:`InspireMetric` turns that into the per-item pair (A, B) the
statistic ΣA/ΣB is built from: ``mean`` metrics give (value, 1), or (0, 0)
where the value is undefined (``hits3``/``hits5`` on a target with too few
labels); ``ratio`` metrics give (numerator, denominator). Failed units score
as an empty list (``missing = "zero"``): every unit counts. Each definition is
arithmetic on named fields, so :mod:`.columns` applies the very same one to
every target's arrays at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rapgen.kinds.inspire.scores.cleaned import CleanedList, slot_gains
from rapgen.kinds.inspire.scores.gains import dcg, ideal_dcg, phi


@dataclass(frozen=True)
class ItemScores:
    """One target's values for one unit under one gain map."""

    ndcg: float
    recall: float
    rr: float
    hits: int  # h_i: slots with gain > 0
    n_labels: int  # |Y_i| under the map
    exposed: float  # φ(E)
    selected: float  # φ(S̄ ∩ E)
    n_exposed_labels: int  # |E ∩ Y|
    n_calls: int
    idcg: float

    @property
    def zero_exposure(self) -> float:
        return 1.0 if self.n_exposed_labels == 0 else 0.0

    def hits_at_least(self, n: int) -> float | None:
        """1[h ≥ n], undefined (None) unless the target has at least n labels."""
        return None if self.n_labels < n else float(self.hits >= n)


def score_item(cleaned: CleanedList, labels: Mapping[str, float], exposed: frozenset[str], n_calls: int, K: int) -> ItemScores | None:
    """The target's scores, or None when IDCG is 0 under this map (the target is
    excluded from the map's rows). ``labels``: Y_i (gain > 0); ``exposed``: E_i."""
    idcg = ideal_dcg(labels, K)
    if idcg <= 0:
        return None
    gains = slot_gains(cleaned, labels, exposed)
    first = next((j for j, g in enumerate(gains, start=1) if g > 0), None)
    hits = sum(1 for g in gains if g > 0)
    return ItemScores(
        ndcg=dcg(gains, K) / idcg,
        recall=hits / len(labels),
        rr=1.0 / first if first else 0.0,
        hits=hits,
        n_labels=len(labels),
        exposed=phi(exposed, labels, K, idcg),
        selected=phi(cleaned.support & exposed, labels, K, idcg),
        n_exposed_labels=len(exposed & labels.keys()),
        n_calls=n_calls,
        idcg=idcg,
    )


Value = Callable[[Any], Any]  # ItemScores -> float, or ItemArrays -> array: arithmetic only, no branches


@dataclass(frozen=True)
class InspireMetric:
    """KINDS.md §3 ``MetricSpec`` fields. ``value`` (and, for a ratio, ``denominator``)
    are written with arithmetic alone, so the same definition scores one
    :class:`ItemScores` or, elementwise, every target's arrays at once;
    ``defined`` (a mean's eligibility) likewise. ``fn`` gives one item's (A, B)."""

    name: str
    label: str
    higher_is_better: bool | None  # None: unranked
    form: str  # mean | ratio
    missing: str  # zero: a failed unit scores as an empty list
    description: str
    value: Value
    denominator: Value | None = None  # ratio only
    defined: Value | None = None  # mean only; None: always defined

    def fn(self, s: ItemScores) -> tuple[float, float]:
        """The item's (A, B): (value, 1) or (0, 0) where undefined for a mean; (numerator, denominator) for a ratio."""
        if self.denominator is not None:
            return (self.value(s), self.denominator(s))
        if self.defined is not None and not self.defined(s):
            return (0.0, 0.0)
        return (float(self.value(s)), 1.0)


def _hits(n: int) -> Value:
    return lambda s: 1.0 * (s.hits >= n)


def _labels(n: int) -> Value:
    return lambda s: s.n_labels >= n


METRICS: tuple[InspireMetric, ...] = (
    InspireMetric("ndcg@10", "nDCG@10", True, "mean", "zero",
                  "Graded nDCG of the cleaned list: DCG of the slot gains over the ideal DCG of the target's labels.",
                  lambda s: s.ndcg),
    InspireMetric("recall@10", "Recall@10", True, "mean", "zero",
                  "Share of the target's labels recovered in the list.", lambda s: s.recall),
    InspireMetric("mrr@10", "MRR@10", True, "mean", "zero",
                  "One over the position of the first scoring slot, else 0.", lambda s: s.rr),
    InspireMetric("anyhit@10", "AnyHit@10", True, "mean", "zero",
                  "Whether the list recovers at least one label.", _hits(1)),
    InspireMetric("hits3", "≥3 hits", True, "mean", "zero",
                  "Whether the list recovers at least three labels, over targets with at least three.",
                  _hits(3), defined=_labels(3)),
    InspireMetric("hits5", "≥5 hits", True, "mean", "zero",
                  "Whether the list recovers at least five labels, over targets with at least five.",
                  _hits(5), defined=_labels(5)),
    InspireMetric("exposed_gain", "Exposed gain", True, "mean", "zero",
                  "Best nDCG@10 the papers the agent's searches returned could reach, ordered by their gains.",
                  lambda s: s.exposed),
    InspireMetric("selected_gain", "Selected gain", True, "mean", "zero",
                  "Best nDCG@10 of the submitted papers that were also exposed, reordered by their gains.",
                  lambda s: s.selected),
    InspireMetric("zero_exposure", "Zero exposure", False, "mean", "zero",
                  "Whether no label was ever returned by the agent's searches.", lambda s: 1.0 * (s.n_exposed_labels == 0)),
    InspireMetric("gain_kept", "Gain kept", True, "ratio", "zero",
                  "Total nDCG@10 over total exposed gain: how much of the exposed potential the final list keeps.",
                  lambda s: s.ndcg, denominator=lambda s: s.exposed),
    InspireMetric("rank_quality", "Rank quality", True, "ratio", "zero",
                  "Total nDCG@10 over total selected gain: how well the submitted papers are ordered.",
                  lambda s: s.ndcg, denominator=lambda s: s.selected),
    InspireMetric("exposure_loss", "Exposure loss", False, "mean", "zero",
                  "One minus the exposed gain.", lambda s: 1.0 - s.exposed),
    InspireMetric("selection_loss", "Selection loss", False, "mean", "zero",
                  "Exposed gain minus selected gain: exposed labels left out of the list.", lambda s: s.exposed - s.selected),
    InspireMetric("ranking_loss", "Ranking loss", False, "mean", "zero",
                  "Selected gain minus nDCG@10: what the submitted order loses.", lambda s: s.selected - s.ndcg),
    InspireMetric("total_calls", "Calls", None, "mean", "zero",
                  "Search calls the unit made, malformed calls included.", lambda s: 1.0 * s.n_calls),
)
PRIMARY = "ndcg@10"
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
REGISTRY: dict[str, InspireMetric] = {m.name: m for m in METRICS}
assert len(REGISTRY) == len(METRICS) == 15
