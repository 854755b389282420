"""Stage 2 — every leaderboard number recomputed from the verified archive (SCORING.md).

Public surface: :func:`compute_scores` -> :class:`ScoreResult`, :func:`write_scores`,
the metric registry and the pure metric/baseline/bootstrap functions.
"""

from rapgen.scores.aggregate import TRACKS
from rapgen.scores.baselines import BASELINES, compute_baselines
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts
from rapgen.scores.counts import POLICIES
from rapgen.scores.metrics import REGISTRY, UNIT_METRIC_NAMES, MetricSpec, cosc, get_metric, jsd, spearman, tv
from rapgen.scores.pipeline import DiagnosticsInputs, ScoreResult, compute_scores, write_scores

__all__ = [
    "BASELINES", "POLICIES", "REGISTRY", "TRACKS", "UNIT_METRIC_NAMES",
    "DiagnosticsInputs", "MetricSpec", "ScoreResult",
    "bootstrap_intervals", "compute_baselines", "compute_scores", "cosc", "draw_counts", "get_metric", "jsd", "spearman", "tv",
    "write_scores",
]
