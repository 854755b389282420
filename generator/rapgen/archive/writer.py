"""The archive's parquet writers, used by ``rapgen sample``/``synth``, the release operations
and by tests that build archives in code (the JSON writers are :mod:`rapgen.io`'s)."""

from __future__ import annotations

from pathlib import Path

from rapgen.io import atomic_path

PAPERS_SCHEMA = (("arxiv_id", "string"), ("title", "string"), ("abstract", "string"), ("first_submitted", "date32"), ("categories", "string"))
ASSIGNMENTS_SCHEMA = (
    ("arxiv_id", "string"), ("field_id", "string"), ("first_submitted", "date32"),
    ("primary", "string"), ("secondary", "string"), ("assignment_type", "string"),
)


def _write_table(path: str | Path, columns: dict[str, list], schema: tuple[tuple[str, str], ...]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "date32": pa.date32()}
    arrow_schema = pa.schema([(name, types[kind]) for name, kind in schema])
    table = pa.table({name: columns[name] for name, _ in schema}, schema=arrow_schema)
    with atomic_path(path) as tmp:
        pq.write_table(table, str(tmp), compression="zstd", row_group_size=1 << 20, write_statistics=True)


def write_papers(path: str | Path, columns: dict[str, list]) -> None:
    """papers.parquet from column lists (dates as ``datetime.date``), rows sorted by arxiv_id by the caller."""
    _write_table(path, columns, PAPERS_SCHEMA)


def write_assignments(path: str | Path, columns: dict[str, list]) -> None:
    """assignments.parquet from column lists, rows sorted by (field_id, arxiv_id) by the caller."""
    _write_table(path, columns, ASSIGNMENTS_SCHEMA)
