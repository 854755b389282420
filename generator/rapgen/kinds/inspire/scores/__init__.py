"""Inspire's scoring (INSPIRE.md §2–§4): the cleaned list, exposure, the fifteen
metrics with their (A, B) forms, gain maps, views, clusters and the bootstrap.

Public surface: :func:`clean_ranking`, :func:`slot_outcomes`, :func:`slot_gains`,
:class:`CleanedList`, :data:`OUTCOMES`; :func:`exposure_of`, :class:`Exposure`;
:func:`label_gains`, :func:`map_gain`, :func:`dcg`, :func:`ideal_dcg`, :func:`phi`;
:data:`METRICS`, :data:`REGISTRY`, :data:`PRIMARY`, :class:`InspireMetric`,
:class:`ItemScores`, :func:`score_item`; :func:`score_units` -> :class:`UnitTable`,
:func:`item_sums`, :func:`metric_values` (the NaN convention of ``scores.statistics``), :func:`n_excluded`, :func:`view_mask`, :func:`split_mask`,
:func:`cluster_of`; :func:`clusters_of`, :func:`cluster_sums`, :func:`estimate`,
:func:`draws`, :func:`intervals`; :data:`DIAGNOSTICS`, :func:`diagnostic_sums`,
:func:`recovered_histogram`, :func:`progress_sums`. Every target at once (the same numbers,
vectorised): :func:`label_table`, :func:`unit_columns` (with a shared :class:`Codes`),
:func:`item_arrays`, :func:`metric_sums`, :func:`funnel_sums`, :func:`progress_arrays`; the
whole archive: :func:`score_board` over :class:`Entry` records -> :class:`Board` (rows of
:data:`BOARD_COLUMNS`).
"""

from rapgen.kinds.inspire.scores.board import COLUMNS as BOARD_COLUMNS, Board, Entry, progress_names, score_board
from rapgen.kinds.inspire.scores.bootstrap import Clusters, Interval, cluster_sums, clusters_of, draws, estimate, intervals
from rapgen.kinds.inspire.scores.cleaned import EMPTY, OUTCOMES, CleanedList, clean_ranking, slot_gains, slot_outcomes
from rapgen.kinds.inspire.scores.columns import (
    Codes, ItemArrays, LabelTable, UnitColumns, descending, item_arrays, label_table, metric_sums, sequential_dcg, unit_columns,
)
from rapgen.kinds.inspire.scores.diagnostics import DIAGNOSTICS, diagnostic_sums, progress_sums, recovered_histogram
from rapgen.kinds.inspire.scores.exposure import NO_EXPOSURE, Exposure, exposure_of
from rapgen.kinds.inspire.scores.funnel import funnel_sums, progress_arrays
from rapgen.kinds.inspire.scores.gains import dcg, ideal_dcg, label_gains, map_gain, phi
from rapgen.kinds.inspire.scores.metrics import METRIC_NAMES, METRICS, PRIMARY, REGISTRY, InspireMetric, ItemScores, score_item
from rapgen.kinds.inspire.scores.units import (
    UnitScore, UnitTable, cluster_of, item_sums, metric_values, n_excluded, score_units, split_mask, view_mask,
)

__all__ = [
    "BOARD_COLUMNS", "Board", "Entry", "progress_names", "score_board",
    "Codes", "ItemArrays", "LabelTable", "UnitColumns", "descending", "item_arrays", "label_table", "metric_sums",
    "sequential_dcg", "unit_columns", "funnel_sums", "progress_arrays",
    "Clusters", "Interval", "cluster_sums", "clusters_of", "draws", "estimate", "intervals",
    "EMPTY", "OUTCOMES", "CleanedList", "clean_ranking", "slot_gains", "slot_outcomes",
    "DIAGNOSTICS", "diagnostic_sums", "progress_sums", "recovered_histogram",
    "NO_EXPOSURE", "Exposure", "exposure_of", "dcg", "ideal_dcg", "label_gains", "map_gain", "phi",
    "METRIC_NAMES", "METRICS", "PRIMARY", "REGISTRY", "InspireMetric", "ItemScores", "score_item",
    "UnitScore", "UnitTable", "cluster_of", "item_sums", "metric_values", "n_excluded", "score_units", "split_mask", "view_mask",
]
