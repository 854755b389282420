"""Reading the Ideas kind's parquet files: exact columns, types checked, rows as Python values.

A finding about a parquet file names its 1-based row as the line.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rapgen.archive import Finding, ProblemKind
from rapgen.kinds.ideas.archive.lines import malformed

# Arrow type names as ``str(pyarrow type)`` gives them.
STRING, DATE, DOUBLE, INT, STRINGS = "string", "date32[day]", "double", "int64", "list<element: string>"


def read_table(path: str, data: bytes, columns: Sequence[tuple[str, str]], findings: list[Finding],
               optional: Sequence[tuple[str, str]] = ()) -> dict[str, list] | None:
    """The columns of a parquet file as lists, or None (and one finding) if the file is not
    parquet or its columns differ from ``columns`` (plus any of ``optional``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
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
    out: dict[str, list] = {}
    for name in names:
        column = table.column(name)
        want = allowed[name]
        got = str(column.type)
        if got != want and not (want == STRINGS and got.startswith("list<") and "string" in got) and not (want == STRING and got == "large_string"):
            findings.append(malformed(path, None, f"column {name!r} has type {got}, expected {want}"))
            return None
        out[name] = column.to_pylist()
    return out


def null_rows(table: dict[str, list], names: Sequence[str]) -> list[tuple[int, str]]:
    """(1-based row, column) of every null among ``names``."""
    return [(i + 1, n) for n in names for i, v in enumerate(table[n]) if v is None]
