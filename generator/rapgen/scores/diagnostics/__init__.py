"""SCORING.md §6 diagnostics, computed with the scorer's kernel and bootstrap.

* :mod:`.core` — medians over kept entries (the permutation nulls);
* :mod:`.episodes` — split-half reliability, change-rich episodes, revision alignment;
* :mod:`.memo` — the draws that read the counts alone, kept between runs;
* :mod:`.residual` — direct and partial EWMA-residual alignment;
* :mod:`.sections` — aggregation into the diagnostics.json sections;
* :mod:`.residual_views` — residual alignment on the change-rich subset and the latest origin, and the
  retrieval contrasts on the alignment endpoints;
* :mod:`.policy` — counting-policy sensitivity as the paper's Table 5 (largest change, ordering, signs);
* :mod:`.evidence` — the Search evidence statistics read from the recorded traces;
* :mod:`.provenance` — the per-unit provenance keys summarised per model and file.
"""

from rapgen.scores.diagnostics.episodes import ChangeRich
from rapgen.scores.diagnostics.memo import NOWHERE, DrawStore
from rapgen.scores.diagnostics.sections import (
    UNIT_COLUMNS,
    DiagnosticArrays,
    SplitAggregator,
    arrays_from_score_inputs,
    change_rich_draws,
    compute_diagnostics,
    compute_unit_diagnostics,
)

__all__ = [
    "ChangeRich", "DrawStore", "NOWHERE", "UNIT_COLUMNS", "DiagnosticArrays", "SplitAggregator", "arrays_from_score_inputs", "change_rich_draws", "compute_diagnostics",
    "compute_unit_diagnostics",
]
