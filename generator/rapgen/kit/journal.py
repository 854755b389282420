"""Durable line-by-line JSONL output for the kit (paid work is never lost).

:class:`LineAppender` appends whole lines to a file opened with ``O_APPEND``:
each line is encoded first (a record that cannot be written as strict JSON in
UTF-8 never touches the file), written with one ``write`` call and
``fsync``'d before the call returns. A crash can therefore lose at most the
line being written, never an earlier one.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Iterable


def dumps_line(obj: object) -> str:
    """The canonical archive line format (keys in the order given, UTF-8 text, no NaN)."""
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def encode_lines(rows: Iterable[object]) -> bytes:
    """``rows`` as JSONL bytes; ValueError/UnicodeEncodeError if any row cannot be a strict UTF-8 JSON line."""
    return "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8")


class LineAppender:
    """Append JSON lines to ``path`` durably; ``exclusive`` refuses an existing file."""

    def __init__(self, path: str | Path, *, exclusive: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | (os.O_EXCL if exclusive else 0)
        self._fd = os.open(self.path, flags, 0o666)
        self._lock = threading.Lock()

    def append(self, rows: Iterable[object]) -> None:
        data = encode_lines(rows)
        if not data:
            return
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)

    def __call__(self, row: object) -> None:
        self.append([row])

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> "LineAppender":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
