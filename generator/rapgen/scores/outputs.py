"""Tables and the files ``rapgen score`` writes (SCORING.md §7 plus the site's extras).

Every file is deterministic: rows in a fixed, documented order; floats in
Python's shortest round-trip form (``repr``, so every digit is exact and
re-reading gives the same double), ``-0.0`` written as ``0.0``; an undefined
value is an empty cell (CSV) or a null (parquet, JSON). The whole output
folder is built in a temporary sibling and swapped in with one rename.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rapgen import io
from rapgen.errors import OutputError, ScoringError
from rapgen.scores.schema import FLOAT_COLUMNS, OPTIONAL_SCORE_FILES, SCORE_FILES


@dataclass(frozen=True)
class Coded:
    """A column of few distinct values, stored as integer ``codes`` into ``labels``
    (each label is formatted or converted once, not once per row)."""

    codes: np.ndarray
    labels: tuple

    def __len__(self) -> int:
        return len(self.codes)

    def label_array(self) -> np.ndarray:
        out = np.empty(len(self.labels), dtype=object)
        out[:] = list(self.labels)
        return out

    def tolist(self) -> list:
        return self.label_array()[self.codes].tolist()


@dataclass
class Table:
    """A column-oriented table: names and one sequence per column (a list, a
    numpy array or a :class:`Coded` column)."""

    columns: tuple[str, ...]
    data: dict[str, object]

    def __len__(self) -> int:
        first = self.data[self.columns[0]] if self.columns else []
        return len(first)  # type: ignore[arg-type]

    def column(self, name: str) -> list:
        value = self.data[name]
        return value.tolist() if isinstance(value, (np.ndarray, Coded)) else list(value)  # type: ignore[arg-type]

    def rows(self) -> list[tuple]:
        return list(zip(*(self.column(c) for c in self.columns)))


def format_float(value: float | None) -> str:
    """Shortest round-trip decimal; empty for None/NaN; no negative zero."""
    if value is None:
        return ""
    value = float(value)
    if math.isnan(value):
        return ""
    if math.isinf(value):
        raise ScoringError(f"refusing to write a non-finite value ({value})")
    return repr(value + 0.0)



def _escape(text: str) -> str:
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _format_floats(values: object) -> list[str]:
    arr = np.asarray([np.nan if v is None else v for v in values] if isinstance(values, list) else values, dtype=np.float64)
    if np.isinf(arr).any():
        raise ScoringError("refusing to write a non-finite value")
    arr = arr + 0.0  # -0.0 -> 0.0
    if arr.size > 4096:
        # Long columns repeat values (spearman takes few distinct values): format each
        # distinct value once. factorize keeps first-seen order; NaN gets code -1.
        import pandas as pd

        codes, uniques = pd.factorize(arr, use_na_sentinel=True)
        formatted = np.array(list(map(repr, np.asarray(uniques, dtype=np.float64).tolist())) + [""], dtype=object)
        return formatted[codes].tolist()  # code -1 picks the trailing "" (NaN)
    out = list(map(repr, arr.tolist()))
    if np.isnan(arr).any():
        for i in np.flatnonzero(np.isnan(arr)).tolist():
            out[i] = ""
    return out


def _format_one(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_float(v)
    return _escape(str(v))


def _format_other(values: object) -> list[str]:
    """Text and integer cells: format each distinct value once (factorised)."""
    import pandas as pd

    if isinstance(values, Coded):
        formatted = np.array([_format_one(u) for u in values.labels] + [None], dtype=object)[:-1]
        return formatted[values.codes].tolist()
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return list(map(str, values.tolist()))
    items = values if isinstance(values, np.ndarray) else np.array(list(values) + [None], dtype=object)[:-1]  # type: ignore[arg-type]
    if len(items) == 0:
        return []
    codes, uniques = pd.factorize(items, use_na_sentinel=False)
    formatted = np.array([_format_one(u) for u in uniques.tolist()], dtype=object)
    return formatted[codes].tolist()


def check_columns(table: Table, name: str) -> None:
    """Refuse to write ``name`` unless ``table`` has exactly its declared columns (schema.SCORE_FILES)."""
    declared = SCORE_FILES.get(name) or OPTIONAL_SCORE_FILES.get(name)
    if declared is None or tuple(table.columns) != declared:
        raise ScoringError(f"{name}: columns {', '.join(table.columns)} differ from the declared {', '.join(declared or ())}")


def csv_bytes(table: Table, name: str | None = None) -> bytes:
    """CSV bytes of ``table``; with ``name``, its columns are checked against the schema first."""
    if name is not None:
        check_columns(table, name)
    cols = [_format_floats(table.data[c]) if c in FLOAT_COLUMNS else _format_other(table.data[c]) for c in table.columns]
    lines = [",".join(table.columns)]
    lines.extend(map(",".join, zip(*cols)))
    return ("\n".join(lines) + "\n").encode("utf-8")


def json_bytes(obj: object) -> bytes:
    """The canonical JSON document (two-space indent, final newline) of ``rapgen.io``."""
    return io.dumps_document(obj).encode("utf-8")


def parquet_bytes(table: Table, types: dict[str, str], name: str | None = None) -> bytes:
    """Deterministic parquet (fixed schema, no pandas metadata, zstd)."""
    if name is not None:
        check_columns(table, name)
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow_types = {"string": pa.string(), "date32": pa.date32(), "bool": pa.bool_(), "float64": pa.float64(), "int64": pa.int64()}
    arrays = []
    for name in table.columns:
        value = table.data[name]
        kind = types[name]
        if kind == "float64":
            arr = np.asarray(value, dtype=np.float64)
            arrays.append(pa.array(arr, type=pa.float64(), mask=np.isnan(arr)))
        elif isinstance(value, Coded):
            # Each label converted once; Arrow gathers the rows (a plain, non-dictionary array).
            labels = pa.array(list(value.labels), type=arrow_types[kind])
            arrays.append(labels.take(pa.array(np.asarray(value.codes, dtype=np.int64))))
        else:
            arrays.append(pa.array(value, type=arrow_types[kind]))
    arrow = pa.Table.from_arrays(arrays, schema=pa.schema([(n, arrow_types[types[n]]) for n in table.columns]))
    sink = pa.BufferOutputStream()
    # Dictionary encoding pays off only for the repetitive (non-float) columns.
    dictionary = [n for n in table.columns if types[n] != "float64"]
    pq.write_table(arrow, sink, compression="zstd", row_group_size=1 << 20, write_statistics=True, use_dictionary=dictionary)
    return sink.getvalue().to_pybytes()


def write_folder(out_dir: str | Path, files: dict[str, bytes]) -> list[Path]:
    """Write ``files`` into ``out_dir`` with the shared staged writer (``rapgen.io``):
    every file is written in full to a temporary folder inside ``out_dir``, then each
    is renamed into place; other files in ``out_dir`` are never touched. A folder a
    score folder may not be (the archive, the repository root) is refused first."""
    io.guard_output_dir(out_dir, io.SCORES_OUTPUT)
    try:
        return io.write_folder(out_dir, files, prefix=".rapgen-score-")
    except OutputError as exc:
        raise ScoringError(str(exc)) from None
