"""Read an archive's content as typed records and DuckDB views, unverified.

:class:`Archive` reads files under ``archive/`` on demand: each accessor parses
its file once and raises :class:`ArchiveError` naming the file and line if the
file breaks the schema. Stages that score or publish take the
:class:`~rapgen.archive.verified.VerifiedArchive` that
:func:`~rapgen.archive.verify.open_verified` returns instead; a plain ``Archive``
is for tools that work on an archive in progress (the prompt builder, the kit).

The path constants below are re-exported from :mod:`rapgen.archive.layout` for
older imports.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import Callable

from rapgen.archive import parse
from rapgen.archive.layout import (  # noqa: F401 - re-exported
    ARCHIVE_DIR,
    ARCHIVE_JSON,
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    LEDGER_JSON,
    MANIFEST_JSONL,
    MODELS_DIR,
    ORIGINS_JSON,
    PAPERS_PARQUET,
    PREDICTIONS_JSONL,
    SUMS_NAME,
    TRACES_JSONL,
    MODEL_JSON,
    model_file,
)
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
        rel = MANIFEST_JSONL[regime]
        value, findings = parse.parse_manifest(rel, self.read_bytes(rel), regime)
        _raise_on(findings)
        return value

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

    def predictions(self, model_id: str) -> list[Unit]:
        key = ("predictions", model_id)
        if key not in self._model_records:
            rel = model_file(model_id, PREDICTIONS_JSONL)
            units, findings = parse.parse_predictions(rel, self.read_bytes(rel), self.field_map, self.origins.origins)
            _raise_on(findings)
            self._model_records[key] = units
        return self._model_records[key]

    def has_traces(self, model_id: str) -> bool:
        return (self.root / model_file(model_id, TRACES_JSONL)).is_file()

    def traces(self, model_id: str) -> list[TraceCall]:
        key = ("traces", model_id)
        if key in self._model_records:
            return self._model_records[key]
        rel = model_file(model_id, TRACES_JSONL)
        if not self.has_traces(model_id):
            return []
        calls, findings = parse.parse_traces(
            rel, self.read_bytes(rel), self.field_map, self.origins.origins, int(self.ledger["search"]["max_calls"])
        )
        _raise_on(findings)
        self._model_records[key] = calls
        return calls

    # ------------------------------------------------------------ tables
    def connect(self):
        """A fresh in-memory DuckDB connection with views ``papers`` and
        ``assignments`` over the parquet files and a ``fields`` table."""
        import duckdb
        import pandas as pd

        con = duckdb.connect()
        for name, rel in (("papers", PAPERS_PARQUET), ("assignments", ASSIGNMENTS_PARQUET)):
            # The relation API takes the path as a value: no SQL text is built from it.
            con.read_parquet(str(self.root / rel)).create_view(name)
        frame = pd.DataFrame(
            [(f.field_id, f.name, f.split, f.block_id, f.eligible_pre2024) for f in self.fields],
            columns=["field_id", "name", "split", "block_id", "eligible_pre2024"],
        )
        con.register("fields_frame", frame)
        con.execute("CREATE TABLE fields AS SELECT * FROM fields_frame")
        con.unregister("fields_frame")
        return con

    @property
    def synthetic(self) -> bool:
        return bool(self.info["synthetic"])
