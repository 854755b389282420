"""SCORING.md §6 diagnostics, computed with the scorer's kernel and bootstrap.

* :mod:`.core` — medians over kept entries (the permutation nulls);
* :mod:`.episodes` — split-half reliability, change-rich episodes, revision alignment;
* :mod:`.residual` — direct and partial EWMA-residual alignment;
* :mod:`.sections` — aggregation into the diagnostics.json sections;
* :mod:`.evidence` — the Search evidence statistics read from the recorded traces.
"""

from rapgen.scores.diagnostics.sections import (
    UNIT_COLUMNS,
    DiagnosticArrays,
    SplitAggregator,
    arrays_from_score_inputs,
    compute_diagnostics,
    compute_unit_diagnostics,
)

__all__ = [
    "UNIT_COLUMNS", "DiagnosticArrays", "SplitAggregator", "arrays_from_score_inputs", "compute_diagnostics",
    "compute_unit_diagnostics",
]
