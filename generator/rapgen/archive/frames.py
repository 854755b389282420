"""Python columns handed to DuckDB as a typed relation, without pyarrow.

The checks join small Python-built tables (returned papers, shard episodes, wanted ids)
against the ledger's parquet files. Handed over as Arrow tables, the first
``pyarrow.array`` call imports pandas (pyarrow looks for pandas objects in any input),
a quarter of a second that verify otherwise never spends. :func:`register_frame` hands
DuckDB numpy arrays instead, under a view that gives each column the type the Arrow
table had: ``text`` VARCHAR, ``int`` BIGINT, ``date`` DATE (days since 1970-01-01
added to that date, which is exact for every date Python holds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

import numpy as np

_EPOCH = date(1970, 1, 1).toordinal()
_SQL_TYPE = {"text": "VARCHAR", "int": "BIGINT", "date": "DATE"}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _array(kind: str, values: Iterable[Any]) -> np.ndarray:
    if kind == "text":
        return np.array(list(values), dtype=object)
    if kind == "int":
        return np.array(list(values), dtype=np.int64)
    if kind == "date":
        return np.array([d.toordinal() - _EPOCH for d in values], dtype=np.int32)
    raise ValueError(f"unknown column kind {kind!r}")


def register_frame(con: Any, name: str, columns: Mapping[str, tuple[str, Iterable[Any]]]) -> None:
    """Make ``name`` a relation on ``con`` (a DuckDB connection) with ``columns``: column name ->
    (kind, values), kind one of ``text``, ``int``, ``date``; every column as long as the first.
    Undo with :func:`unregister_frame`."""
    raw = f"{name}__columns"
    con.register(raw, {column: _array(kind, values) for column, (kind, values) in columns.items()})
    select = ", ".join(
        (f"CAST(DATE '1970-01-01' + {_quoted(c)} AS DATE)" if kind == "date" else f"CAST({_quoted(c)} AS {_SQL_TYPE[kind]})")
        + f" AS {_quoted(c)}"
        for c, (kind, _) in columns.items()
    )
    con.execute(f"CREATE OR REPLACE TEMP VIEW {_quoted(name)} AS SELECT {select} FROM {_quoted(raw)}")


def unregister_frame(con: Any, name: str) -> None:
    """Drop what :func:`register_frame` made under ``name``."""
    con.execute(f"DROP VIEW IF EXISTS {_quoted(name)}")
    con.unregister(f"{name}__columns")
