"""A durable key → result journal: what the evaluator has paid for survives an interrupted run.

Each result is one JSON line ``{"key": …, **value}`` appended with the kit's
:class:`~rapgen.kit.LineAppender` (one whole ``write``, fsync'd before it
returns). Opening drops a torn last line (a crash mid-write) and keeps the
last entry of a key written twice; a line that is not an object with a
string ``key`` is a usage error naming the file and line.
"""

from __future__ import annotations

from pathlib import Path

from rapgen.errors import UsageProblem
from rapgen.io import atomic_write_bytes
from rapgen.kit import LineAppender, decode_json


class Journal:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.entries: dict[str, dict] = {}
        if self.path.is_file():
            self._read()
        self._out = LineAppender(self.path)

    def _read(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):  # a crash tore the last line: drop it before appending
            data = data[: data.rfind(b"\n") + 1]
            atomic_write_bytes(self.path, data, fsync=True)
        for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
            try:
                obj = decode_json(raw)
            except ValueError as exc:
                raise UsageProblem(f"{self.path} line {number}: not JSON ({exc}); move the cache aside to start afresh") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
                raise UsageProblem(f"{self.path} line {number}: not a cache entry (an object with a string key)")
            self.entries[obj["key"]] = {k: v for k, v in obj.items() if k != "key"}

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def add(self, key: str, value: dict) -> None:
        self._out({"key": key, **value})
        self.entries[key] = dict(value)

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)
