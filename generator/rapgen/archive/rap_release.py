"""RAP's archive kind: its verify stage (:func:`check_rap`) and its release view (:class:`RapRelease`).

``check_rap`` runs the structural invariants (:mod:`rapgen.archive.invariants`) and then
the history, later-origin and intervention checks (:mod:`rapgen.archive.format2`) on the
bytes verify hashed, and keeps everything they parsed (:class:`RapState`).

:class:`RapRelease` is one release of a RAP root: the benchmark documents, the models,
their units, traces and intervention records, the Search manifests and the ledger
tables of the files that release listed. A file whose listed bytes are the root's
current file is served from what verify parsed; a file a later ``errata`` release
replaced is parsed from its kept old bytes, once. The view of the archive as it stands
(``root.release()``) holds every verified file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from types import SimpleNamespace
from typing import Any

from rapgen.archive import parse
from rapgen.archive.format2 import Format2Result, check_format2, folder_interventions, intervention_facts, malformed_by
from rapgen.archive.history.prefetch import LedgerPrefetch
from rapgen.archive.history.records import history_origins, search_path
from rapgen.archive.history.spec import RAP_HISTORY
from rapgen.archive.intervention_folder import InterventionRecords
from rapgen.archive.interventions import ModelExtensions, OracleUnit, Readout, Training
from rapgen.archive.invariants import ParsedDocuments, check_invariants
from rapgen.archive.kind import ArchiveKind, CheckInput, KindCheck
from rapgen.archive.parse_child import ParseAhead
from rapgen.archive.layout import (
    ARCHIVE_JSON,
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    INTERVENTION_MODEL_FILES,
    LEDGER_JSON,
    MANIFEST_JSONL,
    MODEL_FILES,
    MODEL_JSON,
    ORACLE_JSONL,
    ORACLE_TRACES_JSONL,
    ORIGINS_JSON,
    PAPERS_PARQUET,
    REPLAYS_JSONL,
    REQUIRED_FILES,
    TRAINING_JSON,
    WINDOW_FILE_PATTERN,
    model_file,
)
from rapgen.archive.ledger_tables import connect_ledger
from rapgen.archive.records import Block, Direction, Field, ModelInfo, Origins, ShardManifest, TraceCall, Unit
from rapgen.archive.release import Release
from rapgen.errors import ArchiveError

RAP_FORMAT = "rap-archive"
_MODEL_FILE = re.compile(r"^archive/models/([^/]+)/(?:origins/(\d{4}-\d{2}-01)/)?(predictions|traces)\.jsonl$")
_WINDOW = re.compile(WINDOW_FILE_PATTERN)
_NO_RECORDS = InterventionRecords(ModelExtensions())


@dataclass(frozen=True)
class RapState:
    """What RAP's verify stage parsed: the benchmark documents and each model's main files
    (``parsed``), and the history, later-origin files and intervention records (``extra``)."""

    parsed: ParsedDocuments
    extra: Format2Result


def check_rap(inp: CheckInput) -> KindCheck:
    """VERIFY.md step 5 for a RAP archive: ARCHIVE.md's invariants, then RELEASES.md and INTERVENTIONS.md."""
    ahead = ParseAhead(inp.root, inp.documents, set(inp.verified), inp.listed)  # a child process, forked before any thread
    prefetch = LedgerPrefetch(inp.root, inp.listed, set(inp.verified), inp.documents)  # DuckDB, beside the parsing
    try:
        result = check_invariants(inp.root, dict(inp.documents), set(inp.verified), set(inp.listed), set(inp.present), ahead)
        extra = check_format2(inp.root, inp.documents, set(inp.verified), inp.listed, result.parsed, inp.validate_call,
                              prefetch, ahead)
    finally:
        prefetch.close()
        ahead.close()
    return KindCheck(result.findings + extra.findings, extra.history, result.parsed.info, RapState(result.parsed, extra))


def open_rap(verified, view) -> RapRelease:
    return RapRelease(verified, view)


class RapRelease(Release):
    """A RAP release: fields, codebooks, blocks, origins, the parameter ledger, models with their
    units, traces and intervention records, Search manifests and the ledger tables."""

    def __init__(self, verified, view) -> None:
        super().__init__(verified, view)
        state: RapState = verified.state
        parsed = state.parsed
        missing = [name for name in ("info", "origins", "ledger", "fields", "codebooks", "blocks") if getattr(parsed, name) is None]
        missing += [MANIFEST_JSONL[r] for r in MANIFEST_JSONL if r not in parsed.manifests]
        if missing:
            raise ArchiveError(f"{verified.root}: cannot open a release without {', '.join(missing)}")
        self._state = state
        found: dict[str, dict[str, list[tuple[str, str]]]] = {"predictions": {}, "traces": {}}
        for path in self.files:
            if m := _MODEL_FILE.match(path):
                found[m.group(3)].setdefault(m.group(1), []).append((m.group(2) or "", path))  # "": the main file, first
        self._files_of = {kind: {model: [p for _, p in sorted(paths)] for model, paths in by_model.items()}
                          for kind, by_model in found.items()}

    # ------------------------------------------------------------ documents
    def _document(self, path: str, own: Any, parser) -> Any:
        """The root's parsed value while the listed bytes are the current file, else those bytes parsed."""
        return own if self.is_own(path) else self.parsed(path, parser)

    @cached_property
    def origins(self) -> Origins:
        """origins.json: release 1's origins, the window and history lengths (each release's resolved
        origins and strict origin are its record's: ``resolved_origins``, ``strict_origin``)."""
        return self._document(ORIGINS_JSON, self._state.parsed.origins, parse.parse_origins)

    @cached_property
    def ledger(self) -> dict:
        return self._document(LEDGER_JSON, self._state.parsed.ledger, parse.parse_ledger)

    @cached_property
    def fields(self) -> list[Field]:
        return sorted(self._document(FIELDS_JSONL, self._state.parsed.fields, parse.parse_fields), key=lambda f: f.field_id)

    @cached_property
    def field_map(self) -> dict[str, Field]:
        return {f.field_id: f for f in self.fields}

    @cached_property
    def codebooks(self) -> dict[str, tuple[Direction, ...]]:
        return self._document(CODEBOOKS_JSONL, self._state.parsed.codebooks, parse.parse_codebooks)

    @cached_property
    def blocks(self) -> list[Block]:
        blocks = self._document(BLOCKS_JSONL, self._state.parsed.blocks, parse.parse_blocks)
        return sorted(blocks, key=lambda b: b.block_id.encode())

    @property
    def info(self) -> Mapping[str, Any]:
        return self._document(ARCHIVE_JSON, self.verified.info, parse.parse_archive_json)

    @property
    def synthetic(self) -> bool:
        return bool(self.info["synthetic"])

    # ------------------------------------------------------------ origins
    @cached_property
    def known_origins(self) -> tuple[date, ...]:
        """Every origin this release knows: origins.json's and each one a release up to it resolved or opened."""
        return history_origins(self.origins.origins, self.history.records.values())

    def origin_listing(self) -> str:
        """The known origins for an error message, the open one marked: ``2023-01-01, …, 2025-07-01 (open)``."""
        opened = self.open_origin.origin if self.open_origin is not None else None
        return ", ".join(o.isoformat() + (" (open)" if o == opened else "") for o in self.known_origins)

    # ------------------------------------------------------------ models
    @cached_property
    def _models(self) -> dict[str, ModelInfo]:
        parsed = self._state.parsed.models
        out = {}
        for model_id in sorted(parsed):
            path = model_file(model_id, MODEL_JSON)
            if path in self.files:
                out[model_id] = self._document(path, parsed[model_id],
                                               lambda p, d, m=model_id: parse.parse_model_json(p, d, folder=m))
        return out

    @property
    def model_ids(self) -> list[str]:
        return list(self._models)

    @property
    def models(self) -> list[ModelInfo]:
        return list(self._models.values())

    def _records(self, kind: str, model_id: str) -> list:
        out: list = []
        for path in self._files_of[kind].get(model_id, ()):
            out += self._file_records(kind, model_id, path)
        return out

    def _file_records(self, kind: str, model_id: str, path: str) -> list:
        main = path == model_file(model_id, f"{kind}.jsonl")
        if self.is_own(path):
            parsed = (self._state.parsed.predictions if kind == "predictions" else self._state.parsed.traces) if main else None
            found = parsed.get(model_id) if parsed is not None else self._state.extra.files.get(path)
            if found is not None:
                return list(found)
        origins = self.origins.origins if main else [date.fromisoformat(path.split("/")[4])]
        ids = [f.field_id for f in self.fields]
        if kind == "traces":
            max_calls = int(self.ledger["search"]["max_calls"])
            return self.parsed(path, lambda p, d: parse.parse_traces(p, d, ids, origins, max_calls))
        panel = self._panel(model_id)
        return self.parsed(path, lambda p, d: parse.parse_predictions(p, d, ids, origins, coverage=not panel))

    def _panel(self, model_id: str) -> bool:
        path = model_file(model_id, MODEL_JSON)
        return path in self.files and parse.names_panel(self.read(path))

    def predictions(self, model_id: str) -> list[Unit]:
        """The model's units: the union of every prediction file of it this release lists."""
        if model_id not in self._models and model_id not in self._files_of["predictions"]:
            raise ArchiveError(f"no model {model_id!r} in release {self.number}")
        return self._records("predictions", model_id)

    def has_traces(self, model_id: str) -> bool:
        return model_id in self._files_of["traces"]

    def traces(self, model_id: str) -> list[TraceCall]:
        return self._records("traces", model_id)

    # ------------------------------------------------------------ interventions (INTERVENTIONS.md)
    def interventions(self, model_id: str) -> InterventionRecords | None:
        """The model folder's intervention records as this release listed them, None when it has none."""
        return self._interventions.get(model_id)

    @cached_property
    def _interventions(self) -> dict[str, InterventionRecords]:
        out = {}
        for model_id in self.model_ids:
            names = [n for n in INTERVENTION_MODEL_FILES if model_file(model_id, n) in self.files]
            own = all(self.is_own(model_file(model_id, n)) for n in (MODEL_JSON, *names))
            root = self._state.extra.interventions.get(model_id)
            records = self._listed_records(root, names) if own else self._folder_records(model_id, names)
            if records is not None and (names or records.extensions != ModelExtensions()):
                out[model_id] = records
        return out

    @staticmethod
    def _listed_records(root: InterventionRecords | None, names: list[str]) -> InterventionRecords | None:
        """The root's records, keeping only the files this release lists."""
        if root is None:
            return None
        return replace(root, readouts=root.readouts if REPLAYS_JSONL in names else (),
                       oracle=root.oracle if ORACLE_JSONL in names else (),
                       oracle_traces=root.oracle_traces if ORACLE_TRACES_JSONL in names else (),
                       training=root.training if TRAINING_JSON in names else None)

    def _folder_records(self, model_id: str, names: list[str]) -> InterventionRecords:
        """A folder some of whose files an errata replaced: its records parsed from this release's bytes."""
        files = {n: self.read(model_file(model_id, n)) for n in (MODEL_JSON, *names)}
        malformed = malformed_by(self.verified.validate_call)
        facts = intervention_facts(self.root, self.ledger_sources(), self._facts_view(), self.resolved_origins, malformed,
                                   self.predictions)
        records, findings = folder_interventions(self.history, facts, model_id, files, self.predictions(model_id),
                                                 self.traces(model_id), self._models[model_id])
        if findings or records is None:
            first = findings[0].detail if findings else "model.json cannot be read"
            raise ArchiveError(f"release {self.number}: archive/models/{model_id}: its listed intervention records do not "
                               f"parse ({first})")
        return records

    def _facts_view(self) -> SimpleNamespace:
        return SimpleNamespace(fields=self.fields, blocks=self.blocks, origins=self.origins, ledger=self.ledger,
                               models=self._models)

    def replays(self, model_id: str) -> tuple[Readout, ...]:
        return (self.interventions(model_id) or _NO_RECORDS).readouts

    def oracle(self, model_id: str) -> tuple[OracleUnit, ...]:
        return (self.interventions(model_id) or _NO_RECORDS).oracle

    def oracle_traces(self, model_id: str) -> tuple[TraceCall, ...]:
        return (self.interventions(model_id) or _NO_RECORDS).oracle_traces

    def training(self, model_id: str) -> Training | None:
        return (self.interventions(model_id) or _NO_RECORDS).training

    # ------------------------------------------------------------ Search manifests and the ledger
    def manifest(self, regime: str) -> list[ShardManifest]:
        """Every shard of ``regime``: release 1's manifest, then those of each origin opened later
        that this release lists (``search/<origin>/manifest_<regime>.jsonl``), by origin."""
        if regime not in MANIFEST_JSONL:
            raise ArchiveError(f"unknown search regime {regime!r} (expected one of {', '.join(MANIFEST_JSONL)})")
        return self._manifests[regime]

    @cached_property
    def _manifests(self) -> dict[str, list[ShardManifest]]:
        out = {}
        for regime, path in MANIFEST_JSONL.items():
            first = self._document(path, self._state.parsed.manifests[regime],
                                   lambda p, d, r=regime: parse.parse_manifest(p, d, r))
            later: list[ShardManifest] = []
            for origin, entries in sorted((self.verified.history.shards or {}).items()):
                rel = search_path(origin, f"manifest_{regime}.jsonl")
                if rel in self.files:
                    later += [m for m in entries if m.regime == regime] if self.is_own(rel) else \
                        self.parsed(rel, lambda p, d, r=regime: parse.parse_manifest(p, d, r))
            out[regime] = [*first, *later]
        return out

    def ledger_files(self) -> tuple[list[str], list[str]]:
        """(papers files, assignments files) this release lists: benchmark/ first, then each window by start."""
        papers, rows = [PAPERS_PARQUET], [ASSIGNMENTS_PARQUET]
        for path in sorted(self.files):
            if m := _WINDOW.match(path):
                (papers if m.group(2) == "papers" else rows).append(path)
        return papers, rows

    def ledger_sources(self) -> tuple[list[str], list[str]]:
        """:meth:`ledger_files`, each where its listed bytes are (an errata's kept copy, if replaced)."""
        papers, rows = self.ledger_files()
        return [self.source(p) for p in papers], [self.source(p) for p in rows]

    def connect(self):
        """A fresh in-memory DuckDB connection with views ``papers`` and ``assignments`` over this
        release's ledger files and a ``fields`` table."""
        papers, rows = self.ledger_sources()
        return connect_ledger(self.root, papers, rows, self.fields)


RAP_ARCHIVE = ArchiveKind(
    format=RAP_FORMAT,
    format_versions=(1, 2),
    required_files=REQUIRED_FILES,
    model_files=MODEL_FILES,
    check=check_rap,
    open=open_rap,
    history=RAP_HISTORY,
)
