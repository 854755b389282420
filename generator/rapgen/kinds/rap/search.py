"""RAP's Search (SEARCH.md): BM25 over the papers of one field dated inside a unit's shard."""

from __future__ import annotations

from rapgen.archive import ASSIGNMENTS_PARQUET, MANIFEST_JSONL, PAPERS_PARQUET
from rapgen.kit import SEARCH_TOOL_NAME
from rapgen.search import SearchSpec

SEARCH = SearchSpec(
    corpus_files=(PAPERS_PARQUET, ASSIGNMENTS_PARQUET),
    groups_sql="SELECT DISTINCT field_id FROM assignments",
    manifest=tuple(MANIFEST_JSONL.values()),
    unit_key=("field_id", "origin", "condition"),
    shard_of=lambda unit: (unit.field_id, None, unit.origin),  # the manifest row (field, origin, regime) holds the bounds
    tools=(SEARCH_TOOL_NAME,),
)
