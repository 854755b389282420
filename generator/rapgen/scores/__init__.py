"""Scoring — every leaderboard number recomputed from the verified archive (SCORING.md).

Public surface: :func:`compute_scores` -> :class:`ScoreResult`, :func:`write_scores`;
the scores -> site contract (:mod:`rapgen.scores.schema`: file columns, metric
registry, tracks, policies, the headline choice, the diagnostics.json layout and
:func:`diagnostic_tables`); the pure metric, baseline, bootstrap and kernel functions.
"""

from rapgen.scores.baselines import BASELINES, compute_baselines
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts
from rapgen.scores.kernels import is_constant, mean_over, missing, pearson, ranks, spearman
from rapgen.scores.metrics import REGISTRY, MetricSpec, UnitInputs, get_metric, jsd, tv, unit_metric_values
from rapgen.scores.pipeline import DiagnosticsInputs, ScoreResult, compute_scores, write_scores
from rapgen.scores.schema import (
    DIAGNOSTIC_SECTIONS,
    DIAGNOSTICS_META,
    METRIC_NAMES,
    METRICS,
    POLICIES,
    PRIMARY,
    SCHEMA_VERSION,
    SCORE_FILES,
    TRACKS,
    UNITS_TYPES,
    ColumnSpec,
    Interval,
    Primary,
    Section,
    SectionSpec,
    Table,
    TableSpec,
    diagnostic_tables,
)

__all__ = [
    "BASELINES", "DIAGNOSTIC_SECTIONS", "DIAGNOSTICS_META", "METRICS", "METRIC_NAMES", "POLICIES", "PRIMARY", "REGISTRY",
    "SCHEMA_VERSION", "SCORE_FILES", "TRACKS", "UNITS_TYPES",
    "ColumnSpec", "DiagnosticsInputs", "Interval", "MetricSpec", "Primary", "ScoreResult", "Section", "SectionSpec", "Table",
    "TableSpec", "UnitInputs",
    "bootstrap_intervals", "compute_baselines", "compute_scores", "diagnostic_tables", "draw_counts", "get_metric",
    "is_constant", "jsd", "mean_over", "missing", "pearson", "ranks", "spearman", "tv", "unit_metric_values", "write_scores",
]
