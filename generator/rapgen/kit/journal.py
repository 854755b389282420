"""Durable line-by-line JSONL output for the kit (paid work is never lost).

A thin handle over :func:`rapgen.io.append_jsonl`: every line is encoded
first (a record that cannot be a strict UTF-8 JSON line never touches the
file), written whole with one ``write`` on an ``O_APPEND`` descriptor and
``fsync``'d before the call returns, so a crash can lose at most the line being
written, never an earlier one.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Iterable

from rapgen.io import append_jsonl, dumps_line

__all__ = ["LineAppender", "dumps_line", "encode_lines"]


def encode_lines(rows: Iterable[object]) -> bytes:
    """``rows`` as JSONL bytes; ValueError/UnicodeEncodeError if any row cannot be a strict UTF-8 JSON line."""
    return "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8")


class LineAppender:
    """Append JSON lines to ``path`` durably; ``exclusive`` refuses a file that already exists."""

    def __init__(self, path: str | Path, *, exclusive: bool = False):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else 0), 0o666))

    def append(self, rows: Iterable[object]) -> None:
        rows = list(rows)
        encode_lines(rows)  # all or nothing: refuse before the first line is written
        with self._lock:
            for row in rows:
                append_jsonl(self.path, row)

    def __call__(self, row: object) -> None:
        self.append([row])

    def close(self) -> None:
        """Nothing stays open between lines; kept so callers can close a handle."""
