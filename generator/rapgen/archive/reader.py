"""Read an archive's content as typed records and DuckDB views.

:class:`Archive` is the one reader of files under ``archive/``. Each accessor
parses its file once and raises :class:`ArchiveError` naming the file and line
if the file breaks the schema. Downstream stages get an ``Archive`` from
:func:`open_verified`, which refuses an archive that fails ``rapgen verify``.
"""

from __future__ import annotations

import hashlib
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Callable

from rapgen.archive import parse
from rapgen.archive.records import Block, Direction, Field, Finding, ModelInfo, Origins, ShardManifest, TraceCall, Unit
from rapgen.errors import ArchiveError, UsageProblem

ARCHIVE_DIR = "archive"
SUMS_NAME = "SHA256SUMS"
ARCHIVE_JSON = "archive/ARCHIVE.json"
ORIGINS_JSON = "archive/benchmark/origins.json"
FIELDS_JSONL = "archive/benchmark/fields.jsonl"
CODEBOOKS_JSONL = "archive/benchmark/codebooks.jsonl"
BLOCKS_JSONL = "archive/benchmark/blocks.jsonl"
PAPERS_PARQUET = "archive/benchmark/papers.parquet"
ASSIGNMENTS_PARQUET = "archive/benchmark/assignments.parquet"
LEDGER_JSON = "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json"
MANIFEST_JSONL = {"fixed": "archive/search/manifest_fixed.jsonl", "expanding": "archive/search/manifest_expanding.jsonl"}
MODELS_DIR = "archive/models"


def model_file(model_id: str, name: str) -> str:
    """Archive-relative path of one of a model's files."""
    return f"{MODELS_DIR}/{model_id}/{name}"


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
        self.verified = False
        self._parsed_models: dict = {}  # ("predictions" | "traces", model_id) -> records

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
            rel = model_file(mid, "model.json")
            value, findings = parse.parse_model_json(rel, self.read_bytes(rel), folder=mid)
            _raise_on(findings)
            out.append(value)
        return out

    def predictions(self, model_id: str) -> list[Unit]:
        key = ("predictions", model_id)
        if key not in self._parsed_models:
            rel = model_file(model_id, "predictions.jsonl")
            units, findings = parse.parse_predictions(rel, self.read_bytes(rel), self.field_map, self.origins.origins)
            _raise_on(findings)
            self._parsed_models[key] = units
        return self._parsed_models[key]

    def has_traces(self, model_id: str) -> bool:
        return (self.root / model_file(model_id, "traces.jsonl")).is_file()

    def traces(self, model_id: str) -> list[TraceCall]:
        key = ("traces", model_id)
        if key in self._parsed_models:
            return self._parsed_models[key]
        rel = model_file(model_id, "traces.jsonl")
        if not self.has_traces(model_id):
            return []
        calls, findings = parse.parse_traces(
            rel, self.read_bytes(rel), self.field_map, self.origins.origins, int(self.ledger["search"]["max_calls"])
        )
        _raise_on(findings)
        self._parsed_models[key] = calls
        return calls

    # ------------------------------------------------------------ tables
    def connect(self):
        """A fresh in-memory DuckDB connection with views ``papers`` and
        ``assignments`` over the parquet files and a ``fields`` table."""
        import duckdb
        import pandas as pd

        con = duckdb.connect()
        for name, rel in (("papers", PAPERS_PARQUET), ("assignments", ASSIGNMENTS_PARQUET)):
            path = str(self.root / rel).replace("'", "''")
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{path}')")
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

    def origin_list(self) -> list[date]:
        return list(self.origins.origins)


def open_verified(root: str | Path, *, jobs: int | None = None) -> Archive:
    """Verify the archive at ``root`` and return it; raise ArchiveError if any finding."""
    from rapgen.archive.verify import verify_archive

    report = verify_archive(root, jobs=jobs)
    if not report.ok:
        n = len(report.errors)
        raise ArchiveError(f"{root}: archive failed verification with {n} finding{'s' * (n != 1)}; run 'rapgen verify --root {root}' for details")
    archive = Archive(root)
    archive.verified = True
    archive._parsed_models.update(report.cache)  # the verifier already parsed every model file
    return archive
