"""The ledger as DuckDB tables: one connection over a release's papers and assignments files.

``papers`` and ``assignments`` are views over the union of the given parquet files
(``benchmark/`` first, then each window), opened by path through DuckDB's relation API
(paths are values, never spliced into SQL); ``fields`` is a table of the fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rapgen.archive.records import Field


def connect_ledger(root: Path, papers: Sequence[str], assignments: Sequence[str], fields: Sequence[Field]):
    """A fresh in-memory DuckDB connection with views ``papers`` and ``assignments`` over the files
    (archive paths below ``root``) and a ``fields`` table."""
    import duckdb
    import pandas as pd

    con = duckdb.connect()
    for name, files in (("papers", papers), ("assignments", assignments)):
        paths = [str(Path(root) / rel) for rel in files]
        con.read_parquet(paths[0] if len(paths) == 1 else paths).create_view(name)
    frame = pd.DataFrame(
        [(f.field_id, f.name, f.split, f.block_id, f.eligible_pre2024) for f in fields],
        columns=["field_id", "name", "split", "block_id", "eligible_pre2024"],
    )
    con.register("fields_frame", frame)
    con.execute("CREATE TABLE fields AS SELECT * FROM fields_frame")
    con.unregister("fields_frame")
    return con


def ledger_rows(archive, sql: str, parameters=None) -> list[tuple]:
    """The rows of one query over ``archive``'s ledger tables, on a connection of its own (closed after)."""
    con = archive.connect()
    try:
        return con.execute(sql, parameters).fetchall()
    finally:
        con.close()
