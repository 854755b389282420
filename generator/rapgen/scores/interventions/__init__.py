"""The paper's intervention analyses (INTERVENTIONS.md): frozen-evidence replay,
exact-history conditions, partial-coverage panels, temporal exposure, Search
behaviour and the reliability additions.

Pure functions over plain arrays and records; the scorer assembles their
inputs from the verified archive and writes ``DIR/interventions/``. Every
interval is on the split's SCORING.md §5 draws (common random numbers).
"""

from rapgen.scores.interventions.assemble import Grid, ModelRecords, assemble_rows
from rapgen.scores.interventions.compute import InterventionOutput, compute_interventions
from rapgen.scores.interventions.conditions import UnitValues, cell_statistics, contrast_statistics, oracle_statistics, panel_statistics
from rapgen.scores.interventions.core import (
    ALL_SPLITS,
    INTERVAL_COLUMNS,
    SplitDraws,
    Statistic,
    field_values,
    interval_arrays,
    paired_field_values,
    split_draws,
    summarise,
)
from rapgen.scores.interventions.exposure import (
    MaskRow,
    effective_cutoff,
    exposure_statistics,
    forecast_strict,
    joint_strict,
    mask_kind,
    masks_of,
    strict_mask_rows,
)
from rapgen.scores.interventions.reliability import ceiling_gaps, posterior_ceiling, revision_reliability, revision_section
from rapgen.scores.interventions.replay import CELLS, CONTRASTS, CellUnits, fidelity_statistics, readout_values, replay_statistics
from rapgen.scores.interventions.signature import (
    Call,
    PairSignature,
    counterfactual_statistics,
    counterfactual_values,
    pair_signature,
    signature_statistics,
)
from rapgen.scores.interventions.tables import INTERVENTION_FILES, build_table, intervention_files, mask_rows

__all__ = [
    "ALL_SPLITS", "CELLS", "CONTRASTS", "INTERVAL_COLUMNS", "INTERVENTION_FILES",
    "Call", "CellUnits", "Grid", "InterventionOutput", "MaskRow", "ModelRecords", "PairSignature", "SplitDraws", "Statistic", "UnitValues",
    "assemble_rows", "build_table", "ceiling_gaps", "cell_statistics", "compute_interventions", "contrast_statistics", "counterfactual_statistics", "counterfactual_values",
    "effective_cutoff", "exposure_statistics", "fidelity_statistics", "field_values", "forecast_strict",
    "intervention_files", "interval_arrays", "joint_strict", "mask_kind", "mask_rows", "masks_of", "oracle_statistics",
    "pair_signature", "paired_field_values", "panel_statistics", "posterior_ceiling", "readout_values", "replay_statistics",
    "revision_reliability", "revision_section", "signature_statistics", "split_draws", "strict_mask_rows", "summarise",
]
