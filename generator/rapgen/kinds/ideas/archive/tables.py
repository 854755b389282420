"""Reading the Ideas kind's parquet files: exact columns, types checked, rows as Python values.

A finding about a parquet file names its 1-based row as the line.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapgen.archive import Finding, ProblemKind
from rapgen.kinds.ideas.archive.lines import malformed

# Arrow type names as ``str(pyarrow type)`` gives them.
STRING, DATE, DOUBLE, INT, STRINGS = "string", "date32[day]", "double", "int64", "list<element: string>"


def read_arrow(path: str, data: bytes, columns: Sequence[tuple[str, str]], findings: list[Finding],
               optional: Sequence[tuple[str, str]] = ()):
    """The parquet file as an Arrow table, or None (and one finding) if the file is not parquet
    or its columns differ from ``columns`` (plus any of ``optional``) by name or type."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # ParquetFile, not read_table: no dataset layer (a second of import) and no thread pool for one small file.
        table = pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        findings.append(malformed(path, None, f"not a readable parquet file ({str(exc).splitlines()[0][:120]})", ProblemKind.SYNTAX))
        return None
    expected = dict(columns)
    allowed = {**expected, **dict(optional)}
    names = table.schema.names
    missing = [c for c in expected if c not in names]
    unknown = [c for c in names if c not in allowed]
    if missing or unknown or len(set(names)) != len(names):
        what = f"missing column {missing[0]!r}" if missing else (f"unknown column {unknown[0]!r}" if unknown else "a column is there twice")
        findings.append(malformed(path, None, f"{what}; expected {', '.join(expected)}"))
        return None
    for name in names:
        want, got = allowed[name], str(table.column(name).type)
        if got != want and not (want == STRINGS and got.startswith("list<") and "string" in got) and not (want == STRING and got == "large_string"):
            findings.append(malformed(path, None, f"column {name!r} has type {got}, expected {want}"))
            return None
    return table


def read_table(path: str, data: bytes, columns: Sequence[tuple[str, str]], findings: list[Finding],
               optional: Sequence[tuple[str, str]] = ()) -> dict[str, list] | None:
    """The columns of a parquet file as lists (see :func:`read_arrow`), or None and one finding."""
    table = read_arrow(path, data, columns, findings, optional)
    if table is None:
        return None
    return {name: table.column(name).to_pylist() for name in table.schema.names}


def null_rows(table: dict[str, list], names: Sequence[str]) -> list[tuple[int, str]]:
    """(1-based row, column) of every null among ``names``."""
    return [(i + 1, n) for n in names for i, v in enumerate(table[n]) if v is None]


def first_null(table, names: Sequence[str]) -> tuple[int, str] | None:
    """``null_rows(…)[0]`` of an Arrow table without listing every row: the first of ``names``
    (in that order) holding a null, and its first null row (1-based)."""
    import numpy as np

    for name in names:
        column = table.column(name)
        if column.null_count:
            return int(np.argmax(column.is_null().to_numpy(zero_copy_only=False))) + 1, name
    return None


def days(column) -> list:
    """A date32 column as ``datetime.date`` values (None for a null), through numpy: far quicker than ``to_pylist``."""
    import numpy as np

    values = np.asarray(column.to_numpy(zero_copy_only=False), dtype="datetime64[D]").tolist()
    if column.null_count:
        nulls = column.is_null().to_numpy(zero_copy_only=False)
        values = [None if n else v for v, n in zip(values, nulls.tolist())]
    return values
