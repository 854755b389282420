"""Scoring — every leaderboard number recomputed from the verified archive (SCORING.md).

Public surface: :func:`compute_scores` (one release) -> :class:`ScoreResult`, :func:`write_scores`;
the interventions' hand-offs (:func:`model_records`, :func:`read_reruns`, :func:`parse_reruns`, :func:`counterfactual_file`,
:func:`write_folder`); the kind declarations it reads (:class:`TrackSpec`, :class:`AxisSpec`,
:class:`ClusterSpec`, with :class:`MetricSpec`);
the scores -> site contract (:mod:`rapgen.scores.schema`: file columns, metric
registry, tracks, policies, the headline choice, the diagnostics.json layout and
:func:`diagnostic_tables`); the pure metric, baseline, bootstrap and kernel functions.
"""

from rapgen.scores.baselines import BASELINES, compute_baselines
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts
from rapgen.scores.kernels import is_constant, mean_over, missing, pearson, ranks, spearman
from rapgen.scores.metrics import (
    JSD, PRED_RECENT, REGISTRY, SPEARMAN, STATE_RECENT, TV, TV_GAIN, MetricSpec, UnitInputs, get_metric, jsd, tv,
    unit_metric_values,
)
from rapgen.scores.interventions.compute import (
    CounterfactualInputs, counterfactual_file, counterfactual_plan, parse_reruns, read_reruns,
)
from rapgen.scores.interventions.exposure import effective_cutoff
from rapgen.scores.interventions.sources import model_records
from rapgen.scores.outputs import write_folder
from rapgen.scores.diagnostics.memo import DrawStore
from rapgen.scores.pipeline import DiagnosticsInputs, ScoreResult, compute_scores, write_scores
from rapgen.scores.spec import AxisSpec, ClusterSpec, Primary, TrackSpec
from rapgen.scores.statistics import (
    Clusters, Scored, ScoredSet, SplitDraws, Statistic, cluster_index, leaderboard_csv, pairs_csv, rows_csv, score_statistics,
    split_draws,
)
from rapgen.scores.schema import (
    ALL_ORIGIN_TRACK, BASELINE_CONDITION, CANONICAL_POLICY, CEILING_GAP_TABLE, FORECAST_STRICT_TRACK, LIVE_TRACK,
    OPTIONAL_SCORE_FILES, CONDITION_CONTRASTS, CONTRASTS, ORACLE_CONTRASTS, STATE_CONTRASTS, TRACK_TITLES,
    DIAGNOSTIC_SECTIONS, HISTORY_TRACKS, DIAGNOSTICS_META, METRIC_NAMES, METRICS, POLICIES, PRIMARY, SCHEMA_VERSION,
    SCORE_FILES, TRACKS, UNITS_TYPES, ColumnSpec, Interval, Section, SectionSpec, Table, TableSpec,
    diagnostic_tables, table_records,
)

__all__ = [
    "AxisSpec", "DrawStore", "ClusterSpec", "HISTORY_TRACKS", "TrackSpec", "ALL_ORIGIN_TRACK", "FORECAST_STRICT_TRACK", "CANONICAL_POLICY",
    "CEILING_GAP_TABLE", "LIVE_TRACK", "OPTIONAL_SCORE_FILES", "table_records",
    "BASELINE_CONDITION", "CONDITION_CONTRASTS", "CONTRASTS", "ORACLE_CONTRASTS", "STATE_CONTRASTS", "TRACK_TITLES",
    "BASELINES", "DIAGNOSTIC_SECTIONS", "DIAGNOSTICS_META", "METRICS", "METRIC_NAMES", "POLICIES", "PRIMARY", "REGISTRY",
    "SCHEMA_VERSION", "SCORE_FILES", "TRACKS", "UNITS_TYPES",
    "ColumnSpec", "DiagnosticsInputs", "Interval", "MetricSpec", "Primary", "ScoreResult", "Section", "SectionSpec", "Table",
    "TableSpec", "UnitInputs",
    "CounterfactualInputs", "counterfactual_file", "counterfactual_plan", "effective_cutoff", "model_records", "parse_reruns", "read_reruns", "write_folder",
    "bootstrap_intervals", "compute_baselines", "compute_scores", "diagnostic_tables", "draw_counts", "get_metric",
    "Clusters", "Scored", "ScoredSet", "SplitDraws", "Statistic", "cluster_index", "leaderboard_csv", "pairs_csv", "rows_csv",
    "score_statistics", "split_draws",
    "JSD", "PRED_RECENT", "SPEARMAN", "STATE_RECENT", "TV", "TV_GAIN",
    "is_constant", "jsd", "mean_over", "missing", "pearson", "ranks", "spearman", "tv", "unit_metric_values", "write_scores",
]
