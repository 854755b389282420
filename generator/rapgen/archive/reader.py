"""The kit's reader: an archive's content as typed records, read from disk, unverified.

:class:`Archive` reads files under ``archive/`` on demand: each accessor parses its file
once and raises :class:`ArchiveError` naming the file and line if the file breaks the
schema. It is for tools that work on an archive in progress — the prompt builder, the
Search tool and agent driver of the kit, ``submit init``/``commit`` — and for the
submission check when the archive does not verify. Every stage that scores, replays,
renders or publishes takes a verified :class:`~rapgen.archive.release.Release` instead
(``open_verified(root).release(n)``).
"""

from __future__ import annotations

import hashlib
import re
from datetime import date
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping

from rapgen.archive import parse
from rapgen.archive.history.records import OpenOrigin, ReleaseRecord, history_origins, parse_release_record, release_number
from rapgen.archive.layout import (
    ARCHIVE_DIR, ARCHIVE_JSON, ASSIGNMENTS_PARQUET, BLOCKS_JSONL, CODEBOOKS_JSONL, FIELDS_JSONL, LEDGER_JSON,
    MANIFEST_JSONL, MODEL_JSON, MODELS_DIR, ORIGINS_JSON, ORIGINS_SUBDIR, PAPERS_PARQUET, PREDICTIONS_JSONL,
    RELEASES_DIR, SEARCH_DIR, SEARCH_ORIGIN_PATTERN, SUMS_NAME, TRACES_JSONL, WINDOW_FILES, WINDOWS_DIR, model_file,
    origin_file, window_file
)
from rapgen.archive.ledger_tables import connect_ledger
from rapgen.archive.sums import SumsUnreadable, parse_sums, read_sums
from rapgen.archive.records import Block, Direction, Field, Finding, ModelInfo, Origins, ShardManifest, TraceCall, Unit
from rapgen.errors import ArchiveError, UsageProblem



def _raise_on(findings: list[Finding]) -> None:
    if findings:
        first = findings[0]
        where = first.path + (f":{first.line}" if first.line else "")
        more = f" ({len(findings) - 1} more problems; run 'rapgen verify')" if len(findings) > 1 else ""
        raise ArchiveError(f"{where}: {first.detail}{more}")


class Archive:
    """The archive below a repository root (the folder holding ``SHA256SUMS``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        if not self.root.is_dir():
            raise UsageProblem(f"{self.root}: not a directory")
        self.archive_dir = self.root / ARCHIVE_DIR
        self._model_records: dict = {}  # ("predictions" | "traces", model_id) -> records, parsed on first use

    # ------------------------------------------------------------ raw access
    def path(self, relative: str) -> Path:
        return self.root / relative

    def read_bytes(self, relative: str) -> bytes:
        try:
            return (self.root / relative).read_bytes()
        except FileNotFoundError:
            raise ArchiveError(f"{relative}: missing") from None
        except OSError as exc:
            raise ArchiveError(f"{relative}: unreadable ({exc.strerror})") from None

    def _parsed(self, relative: str, parser: Callable[[str, bytes], tuple]) -> object:
        value, findings = parser(relative, self.read_bytes(relative))
        _raise_on(findings)
        return value

    @cached_property
    def files(self) -> Mapping[str, str]:
        """SHA256SUMS as it stands on disk: path -> digest (empty when it cannot be read)."""
        try:
            entries, _ = parse_sums(read_sums(self.root / SUMS_NAME))
        except SumsUnreadable:
            return MappingProxyType({})
        return MappingProxyType({e.path: e.digest for e in entries})

    @cached_property
    def manifest_sha256(self) -> str:
        """SHA-256 of the SHA256SUMS file: the archive's identity, shown on every page."""
        return hashlib.sha256(self.read_bytes(SUMS_NAME)).hexdigest()

    # ------------------------------------------------------------ documents
    @cached_property
    def info(self) -> dict:
        return self._parsed(ARCHIVE_JSON, parse.parse_archive_json)  # type: ignore[return-value]

    @cached_property
    def origins(self) -> Origins:
        return self._parsed(ORIGINS_JSON, parse.parse_origins)  # type: ignore[return-value]

    @cached_property
    def ledger(self) -> dict:
        return self._parsed(LEDGER_JSON, parse.parse_ledger)  # type: ignore[return-value]

    @cached_property
    def fields(self) -> list[Field]:
        fields = self._parsed(FIELDS_JSONL, parse.parse_fields)
        return sorted(fields, key=lambda f: f.field_id)  # type: ignore[arg-type]

    @cached_property
    def field_map(self) -> dict[str, Field]:
        return {f.field_id: f for f in self.fields}

    @cached_property
    def codebooks(self) -> dict[str, tuple[Direction, ...]]:
        return self._parsed(CODEBOOKS_JSONL, parse.parse_codebooks)  # type: ignore[return-value]

    @cached_property
    def blocks(self) -> list[Block]:
        blocks = self._parsed(BLOCKS_JSONL, parse.parse_blocks)
        return sorted(blocks, key=lambda b: b.block_id.encode())  # type: ignore[arg-type]

    def manifest(self, regime: str) -> list[ShardManifest]:
        """Every shard of ``regime``: release 1's manifest, then (format 2) the manifests of
        each origin opened later, ``search/<origin>/manifest_<regime>.jsonl``, by origin."""
        rel = MANIFEST_JSONL[regime]
        value, findings = parse.parse_manifest(rel, self.read_bytes(rel), regime)
        _raise_on(findings)
        for later in self._later_manifest_paths(regime):
            more, findings = parse.parse_manifest(later, self.read_bytes(later), regime)
            _raise_on(findings)
            value = [*value, *more]
        return value

    def _later_manifest_paths(self, regime: str) -> list[str]:
        folder = self.root / SEARCH_DIR
        if not folder.is_dir():
            return []
        paths = (f"{SEARCH_DIR}/{d.name}/{Path(MANIFEST_JSONL[regime]).name}" for d in sorted(folder.iterdir()) if d.is_dir())
        return [p for p in paths if re.match(SEARCH_ORIGIN_PATTERN, p) and (self.root / p).is_file()]

    # ------------------------------------------------------------ releases (format 2)
    @cached_property
    def release_records(self) -> Mapping[int, ReleaseRecord]:
        """Release number -> its record (``releases/NNNN.json`` on disk), ascending; empty for format 1.
        A verified archive holds the records verify checked instead."""
        folder = self.root / RELEASES_DIR
        out: dict[int, ReleaseRecord] = {}
        names = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
        for name in names:
            rel = f"{RELEASES_DIR}/{name}"
            number = release_number(rel)
            if number is not None:
                out[number] = self._parsed(rel, parse_release_record)  # type: ignore[assignment]
        return MappingProxyType(dict(sorted(out.items())))

    @cached_property
    def known_origins(self) -> tuple[date, ...]:
        """Every origin the history knows, ascending: origins.json's and every origin a release
        resolved or opened (for format 1, origins.json's). The kit and Search accept exactly these."""
        return history_origins(self.origins.origins, self.release_records.values())

    @property
    def open_origin(self) -> OpenOrigin | None:
        """The latest release's open origin (Live submissions, with its ``closes`` date), or None."""
        records = self.release_records
        return records[max(records)].open_origin if records else None

    @property
    def resolved_origins(self) -> tuple[date, ...]:
        """The origins with an outcome: the latest release's resolved origins (format 1: origins.json's)."""
        records = self.release_records
        return tuple(sorted({*self.origins.origins, *records[max(records)].resolved_origins})) if records else self.origins.origins

    def origin_listing(self) -> str:
        """The known origins for an error message, the open one marked: ``2023-01-01, …, 2025-07-01 (open)``."""
        opened = self.open_origin.origin if self.open_origin is not None else None
        return ", ".join(o.isoformat() + (" (open)" if o == opened else "") for o in self.known_origins)

    # ------------------------------------------------------------ models
    @cached_property
    def model_ids(self) -> list[str]:
        folder = self.root / MODELS_DIR
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink())

    @cached_property
    def models(self) -> list[ModelInfo]:
        out = []
        for mid in self.model_ids:
            rel = model_file(mid, MODEL_JSON)
            value, findings = parse.parse_model_json(rel, self.read_bytes(rel), folder=mid)
            _raise_on(findings)
            out.append(value)
        return out

    def later_origins(self, model_id: str) -> list[str]:
        """ISO origins of ``models/<id>/origins/<origin>/`` folders on disk (format 2), ascending."""
        folder = self.root / model_file(model_id, ORIGINS_SUBDIR)
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink())

    def _model_file_set(self, model_id: str, name: str) -> list[tuple[str, list]]:
        """(path, origins) of a model's main file and each later origin's file of ``name`` present on disk."""
        out = []
        main = model_file(model_id, name)
        if (self.root / main).is_file():
            out.append((main, list(self.origins.origins)))
        for origin in self.later_origins(model_id):
            rel = origin_file(model_id, origin, name)
            if (self.root / rel).is_file():
                out.append((rel, [parse.parse_date(origin)]))
        return out

    def predictions(self, model_id: str) -> list[Unit]:
        """The model's units: the union of predictions.jsonl and every later origin's file."""
        key = ("predictions", model_id)
        if key not in self._model_records:
            files = self._model_file_set(model_id, PREDICTIONS_JSONL) or [(model_file(model_id, PREDICTIONS_JSONL), [])]
            units: list[Unit] = []
            main = model_file(model_id, MODEL_JSON)
            panel = (self.root / main).is_file() and parse.names_panel(self.read_bytes(main))
            for rel, origins in files:
                found, findings = parse.parse_predictions(rel, self.read_bytes(rel), self.field_map, origins, coverage=not panel)
                _raise_on(findings)
                units += found
            self._model_records[key] = units
        return self._model_records[key]

    def has_traces(self, model_id: str) -> bool:
        return bool(self._model_file_set(model_id, TRACES_JSONL))

    def traces(self, model_id: str) -> list[TraceCall]:
        key = ("traces", model_id)
        if key in self._model_records:
            return self._model_records[key]
        calls: list[TraceCall] = []
        for rel, origins in self._model_file_set(model_id, TRACES_JSONL):
            found, findings = parse.parse_traces(rel, self.read_bytes(rel), self.field_map, origins, int(self.ledger["search"]["max_calls"]))
            _raise_on(findings)
            calls += found
        self._model_records[key] = calls
        return calls

    def ledger_files(self) -> tuple[list[str], list[str]]:
        """(papers files, assignments files): benchmark/ first, then every window on disk by start."""
        papers, rows = [PAPERS_PARQUET], [ASSIGNMENTS_PARQUET]
        folder = self.root / WINDOWS_DIR
        for start in sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else ():
            if all((self.root / window_file(start, n)).is_file() for n in WINDOW_FILES):
                papers.append(window_file(start, WINDOW_FILES[0]))
                rows.append(window_file(start, WINDOW_FILES[1]))
        return papers, rows

    # ------------------------------------------------------------ tables
    def connect(self):
        """A fresh in-memory DuckDB connection with views ``papers`` and ``assignments`` over the
        union of the parquet files (benchmark/ and every complete window) and a ``fields`` table."""
        papers, rows = self.ledger_files()
        return connect_ledger(self.root, papers, rows, self.fields)

    @property
    def synthetic(self) -> bool:
        return bool(self.info["synthetic"])
