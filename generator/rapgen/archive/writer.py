"""Deterministic writers for archive files, used by ``rapgen sample``/``synth``
and by tests that build archives in code.

Canonical JSON: UTF-8, keys in the order given, ``ensure_ascii=False``, no
trailing spaces, one object per line, final newline. Files are written to a
temporary sibling and renamed, so a failure never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable

PAPERS_SCHEMA = (("arxiv_id", "string"), ("title", "string"), ("abstract", "string"), ("first_submitted", "date32"), ("categories", "string"))
ASSIGNMENTS_SCHEMA = (
    ("arxiv_id", "string"), ("field_id", "string"), ("first_submitted", "date32"),
    ("primary", "string"), ("secondary", "string"), ("assignment_type", "string"),
)


def _umask_mode() -> int:
    """0o666 less the process umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, _umask_mode())  # mkstemp creates 0600; give the file ordinary permissions
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def dumps_line(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def write_json(path: str | Path, obj: object) -> None:
    atomic_write_bytes(path, (json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8"))


def write_jsonl(path: str | Path, rows: Iterable[object]) -> None:
    atomic_write_bytes(path, "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8"))


def _write_table(path: str | Path, columns: dict[str, list], schema: tuple[tuple[str, str], ...]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "date32": pa.date32()}
    arrow_schema = pa.schema([(name, types[kind]) for name, kind in schema])
    table = pa.table({name: columns[name] for name, _ in schema}, schema=arrow_schema)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd", row_group_size=1 << 20, write_statistics=True)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_papers(path: str | Path, columns: dict[str, list]) -> None:
    """papers.parquet from column lists (dates as ``datetime.date``), rows sorted by arxiv_id by the caller."""
    _write_table(path, columns, PAPERS_SCHEMA)


def write_assignments(path: str | Path, columns: dict[str, list]) -> None:
    """assignments.parquet from column lists, rows sorted by (field_id, arxiv_id) by the caller."""
    _write_table(path, columns, ASSIGNMENTS_SCHEMA)
