"""The sample's evaluator tables as parquet, with the column types INSPIRE.md §1 gives."""

from __future__ import annotations

from pathlib import Path

from rapgen.io import atomic_path

TARGETS = (("instance_id", "string"), ("arxiv_id", "string"), ("title", "string"), ("abstract", "string"),
           ("first_submitted", "date32"), ("topic", "string"), ("audit_named", "bool"), ("audit_confidence", "float64"),
           ("title_overlap", "float64"), ("view", "string"))
JUDGEMENTS = (("instance_id", "string"), ("arxiv_id", "string"), ("tier", "string"), ("role", "string"), ("gain", "float64"),
              ("n_votes", "int8"), ("agreement", "int8"), ("rationale", "string"))
REFERENCES = (("instance_id", "string"), ("arxiv_id", "string"), ("first_submitted", "date32"), ("status", "string"),
              ("tier", "string"), ("role", "string"))


def _write(path: str | Path, rows: list[dict], schema: tuple[tuple[str, str], ...]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.schema([(name, getattr(pa, kind)() if kind != "bool" else pa.bool_()) for name, kind in schema])
    table = pa.table({name: [r[name] for r in rows] for name, _ in schema}, schema=arrow)
    with atomic_path(path) as tmp:
        pq.write_table(table, str(tmp), compression="zstd", write_statistics=True)


def write_targets(path: str | Path, rows: list[dict]) -> None:
    _write(path, rows, TARGETS)


def write_judgements(path: str | Path, rows: list[dict]) -> None:
    _write(path, rows, JUDGEMENTS)


def write_references(path: str | Path, rows: list[dict]) -> None:
    _write(path, rows, REFERENCES)
