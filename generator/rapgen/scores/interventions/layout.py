"""What the interventions add to the scores -> site contract, re-exported from
:mod:`rapgen.scores.schema` (where it is declared): the files of
``DIR/interventions/`` with their columns and the diagnostics.json tables of
the §6 additions.
"""

from __future__ import annotations

from rapgen.scores.schema import OPTIONAL_SCORE_FILES, POSTERIOR_TABLE, REVISION_TABLES, TableSpec

SCORE_FILES: dict[str, tuple[str, ...]] = dict(OPTIONAL_SCORE_FILES)
RELIABILITY_TABLES: tuple[TableSpec, ...] = (POSTERIOR_TABLE, *REVISION_TABLES)
