"""The history's union ledger, built in a thread while the record checks run.

The ledger checks of :func:`rapgen.archive.history.load.load_history` spend most of their
time in DuckDB (loading the base ledger and every window, the window rules, each opened
origin's shard manifests), which releases the GIL. :class:`LedgerPrefetch` builds that same
:class:`UnionLedger` from the verified bytes as soon as verification has listed them, beside
the Python parsing of the models' files. It is only a head start: the ledger checks take it
when it was built from exactly the inputs they would use (the same window sources and the same
field ids), and otherwise build their own, as before. Anything that goes wrong in the thread
is dropped, so the checks, run again in the caller, fail the way they always did; findings are
made by the caller alone, in its order.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from rapgen.archive import parse
from rapgen.archive.history.check import release_numbers
from rapgen.archive.history.ledger import UnionLedger, WindowSource, window_sources
from rapgen.archive.layout import ASSIGNMENTS_PARQUET, FIELDS_JSONL, ORIGINS_JSON, PAPERS_PARQUET, SEARCH_ORIGIN_PATTERN, WINDOW_FILE_PATTERN

_WINDOW = re.compile(WINDOW_FILE_PATTERN)
_SEARCH = re.compile(SEARCH_ORIGIN_PATTERN)


def ledger_sources(root: Path, paths, ok: set[str]) -> list[WindowSource]:
    """The windows whose papers and assignments files both verified, oldest first."""
    windows: dict[date, dict[str, str]] = {}
    for path in paths:
        m = _WINDOW.match(path)
        if m and path in ok:
            windows.setdefault(date.fromisoformat(m.group(1)), {})[m.group(2)] = path
    return window_sources(root, {start: (files["papers"], files["assignments"]) for start, files in windows.items() if len(files) == 2})


class LedgerPrefetch:
    """A :class:`UnionLedger` of ``root`` built in a daemon thread (see the module's note)."""

    def __init__(self, root: str | Path, sums: Mapping[str, str], verified: set[str], documents: Mapping[str, bytes]):
        self._root = Path(root)
        self._ledger: UnionLedger | None = None
        self._sources: list[WindowSource] | None = None
        self._field_ids: list[str] | None = None
        self._thread: threading.Thread | None = None
        base = (PAPERS_PARQUET, ASSIGNMENTS_PARQUET, FIELDS_JSONL)
        if not release_numbers(sums) or any(p not in sums or p not in verified for p in base) or FIELDS_JSONL not in documents:
            return
        self._thread = threading.Thread(target=self._build, args=(dict(sums), set(verified), documents), daemon=True)
        self._thread.start()

    def _build(self, sums: dict[str, str], verified: set[str], documents: Mapping[str, bytes]) -> None:
        ledger = None
        try:
            fields, problems = parse.parse_fields(FIELDS_JSONL, documents[FIELDS_JSONL])
            if problems:
                return
            field_ids = [f.field_id for f in fields]
            sources = ledger_sources(self._root, sums, verified)
            ledger = UnionLedger(self._root / PAPERS_PARQUET, self._root / ASSIGNMENTS_PARQUET, sources, field_ids)
            origins = None
            if ORIGINS_JSON in verified and documents.get(ORIGINS_JSON) is not None:
                origins, _ = parse.parse_origins(ORIGINS_JSON, documents[ORIGINS_JSON])
            if origins is not None:
                for origin in sorted({m.group(1) for p in sums if p in verified and (m := _SEARCH.match(p))}):
                    ledger.shard_manifests(date.fromisoformat(origin), origins.window_months)
        except Exception:  # noqa: BLE001 - the caller builds its own ledger and meets the error itself
            if ledger is not None:
                ledger.close()
            return
        self._ledger, self._sources, self._field_ids = ledger, sources, field_ids

    def take(self, root: Path, sources: Sequence[WindowSource], field_ids: Sequence[str]) -> UnionLedger | None:
        """The ledger built here when it was built from these inputs (the caller then owns it), else None."""
        if self._thread is None:
            return None
        self._thread.join()
        ledger, self._ledger = self._ledger, None
        if ledger is None:
            return None
        if Path(root) != self._root or list(sources) != self._sources or list(field_ids) != self._field_ids:
            ledger.close()
            return None
        return ledger

    def close(self) -> None:
        """Wait for the thread and close a ledger no one took."""
        if self._thread is not None:
            self._thread.join()
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
