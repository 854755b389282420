"""What the interventions add to the scores -> site contract (:mod:`rapgen.scores.schema`).

Declared here, next to the code that writes it, so the contract can take it
over by import: the files of ``DIR/interventions/`` with their columns, the
two new float columns, and the diagnostics.json tables of the §6 additions in
the contract's own :class:`~rapgen.scores.schema.TableSpec` terms.
"""

from __future__ import annotations

from rapgen.scores.interventions.core import ALL_SPLITS
from rapgen.scores.interventions.tables import FOLDER, INTERVENTION_FILES
from rapgen.scores.schema import ColumnSpec, TableSpec

SCORE_FILES: dict[str, tuple[str, ...]] = {f"{FOLDER}/{name}": columns for name, columns in INTERVENTION_FILES.items()}


def _interval(key: str, label: str) -> ColumnSpec:
    low, high = ("ci_low", "ci_high") if key == "estimate" else (f"{key}_ci_low", f"{key}_ci_high")
    return ColumnSpec(key, label, low, high)


POSTERIOR_TABLE = TableSpec(
    "Posterior-predictive ceiling by split", ("reliability", "posterior"), (
        ColumnSpec("split", "split"), _interval("estimate", "repeatability"), _interval("ceiling", "ceiling"),
        _interval("ewma_gap", "ceiling − EWMA"), ColumnSpec("n_fields", "n_fields"),
        ColumnSpec("n_episodes", "n_episodes"), ColumnSpec("n_defined", "n_defined"),
    ), keyed_by="split",
)
REVISION_TABLES: tuple[TableSpec, ...] = tuple(
    TableSpec(f"Revision-target reliability: {split}", ("reliability", "revision", split), (
        ColumnSpec("horizon", "horizon (months)"), _interval("estimate", "reliability"),
        ColumnSpec("n_fields", "n_fields"), ColumnSpec("n_pairs", "n_pairs"), ColumnSpec("n_defined", "n_defined"),
    ))
    for split in ("dev", "test", ALL_SPLITS)
)
RELIABILITY_TABLES: tuple[TableSpec, ...] = (POSTERIOR_TABLE, *REVISION_TABLES)
