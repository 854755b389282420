"""``VerifiedArchive``: the archive as ``verify`` saw it.

Built only by :func:`rapgen.archive.verify.verify_archive`, from the bytes it
hashed and checked: every document was parsed once, while being verified, and
this object hands out those records. Nothing is read from disk again except
the two parquet tables, which DuckDB opens by path (their digests are in
``digests``). It offers every accessor of :class:`~rapgen.archive.reader.Archive`,
so a stage that took an ``Archive`` takes a ``VerifiedArchive`` unchanged.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.live import LiveEntry, live_entries
from rapgen.archive.history.records import Commitment, ReleaseRecord
from rapgen.archive.history.view import ReleaseView, implicit_record, release_view
from rapgen.archive.intervention_folder import InterventionRecords
from rapgen.archive.interventions import OracleUnit, Readout, Training
from rapgen.archive.invariants import ParsedDocuments
from rapgen.archive.layout import MANIFEST_JSONL
from rapgen.archive.reader import Archive
from rapgen.archive.records import Block, Direction, Field, ModelInfo, Origins, ShardManifest, TraceCall, Unit
from rapgen.errors import ArchiveError

if TYPE_CHECKING:
    from rapgen.archive.format2 import Format2Result


class VerifiedArchive(Archive):
    """A verified archive: ``root``, ``manifest_sha256`` (SHA-256 of the SHA256SUMS
    bytes that were checked), ``digests`` (archive path → SHA-256 from SHA256SUMS)
    and the parsed documents."""

    def __init__(self, root: str | Path, *, manifest_sha256: str, digests: Mapping[str, str], parsed: ParsedDocuments,
                 format2: Format2Result | None = None, validate_call=None):
        super().__init__(root)
        self.validate_call = validate_call  # the Search-call judge verify used (a release's own archive reuses it)
        missing = [name for name in ("info", "origins", "ledger", "fields", "codebooks", "blocks") if getattr(parsed, name) is None]
        missing += [MANIFEST_JSONL[r] for r in MANIFEST_JSONL if r not in parsed.manifests]
        if missing:
            raise ArchiveError(f"{root}: cannot build a verified archive without {', '.join(missing)}")
        self.digests: Mapping[str, str] = MappingProxyType(dict(digests))
        # Fill the reader's cached properties with what verify parsed (functools.cached_property
        # keeps its value in the instance dict, so these are never recomputed from disk).
        fields = sorted(parsed.fields, key=lambda f: f.field_id)
        model_ids = sorted(parsed.models)
        self.__dict__.update(
            manifest_sha256=manifest_sha256,
            info=parsed.info,
            origins=parsed.origins,
            ledger=parsed.ledger,
            fields=fields,
            field_map={f.field_id: f for f in fields},
            codebooks=parsed.codebooks,
            blocks=sorted(parsed.blocks, key=lambda b: b.block_id.encode()),
            model_ids=model_ids,
            models=[parsed.models[m] for m in model_ids],
        )
        self._predictions = dict(format2.predictions if format2 else parsed.predictions)
        self._traces = dict(format2.traces if format2 else parsed.traces)
        history = format2.history if format2 else None
        self.history: HistoryInput = history.input if history is not None else HistoryInput(
            dict(digests), {}, {}, parsed.origins.origins, parsed.origins.strict_origin, parsed.origins.window_months, None)
        # Release 1's shards, then those of every origin opened later (search/<origin>/), by origin.
        later = [m for _, entries in sorted((self.history.shards or {}).items()) for m in entries]
        self._manifests = {r: [*parsed.manifests[r], *(m for m in later if m.regime == r)] for r in MANIFEST_JSONL}
        self.intervention_records: Mapping[str, InterventionRecords] = MappingProxyType(dict(format2.interventions if format2 else {}))

    # Typed again here for readers of this class; the values are set in __init__.
    manifest_sha256: str
    info: dict
    origins: Origins
    ledger: dict
    fields: list[Field]
    field_map: dict[str, Field]
    codebooks: dict[str, tuple[Direction, ...]]
    blocks: list[Block]
    model_ids: list[str]
    models: list[ModelInfo]

    def manifest(self, regime: str) -> list[ShardManifest]:
        if regime not in self._manifests:
            raise ArchiveError(f"unknown search regime {regime!r} (expected one of {', '.join(MANIFEST_JSONL)})")
        return self._manifests[regime]

    def predictions(self, model_id: str) -> list[Unit]:
        if model_id not in self._predictions:
            raise ArchiveError(f"no model {model_id!r} in this archive")
        return self._predictions[model_id]

    def has_traces(self, model_id: str) -> bool:
        return model_id in self._traces

    def traces(self, model_id: str) -> list[TraceCall]:
        return self._traces.get(model_id, [])

    # ------------------------------------------------------------ format 2 (RELEASES.md)
    @property
    def is_history(self) -> bool:
        """True for a format-2 archive (release records listed); False for format 1's one implicit release."""
        return bool(self.history.records)

    @property
    def releases(self) -> Mapping[int, ReleaseRecord]:
        """Release number -> its record, ascending; a format-1 archive has one implicit release 1."""
        if self.history.records:
            return MappingProxyType(dict(sorted(self.history.records.items())))
        return MappingProxyType({1: implicit_record(self.history, _created(self.info))})

    @property
    def latest_release(self) -> int:
        return max(self.releases)

    @property
    def release_manifests(self) -> Mapping[int, Mapping[str, str]]:
        """Release number -> the manifest it listed (path -> digest); format 1: release 1 is SHA256SUMS."""
        if self.history.manifests:
            return MappingProxyType(dict(sorted(self.history.manifests.items())))
        return MappingProxyType({1: self.digests})

    @property
    def commitments(self) -> Mapping[str, Commitment]:
        """Every sealed Live submission: ``archive/commitments/<origin>/<model_id>.json`` -> its commitment."""
        return MappingProxyType(dict(self.history.commitments))

    def release_view(self, number: int | None = None) -> ReleaseView:
        """The files release ``number`` listed (default the latest, with its unreleased lines);
        ``rapgen score/build --release N`` read through this. A usage error for an unknown release."""
        return release_view(self.history, number, created=_created(self.info))

    def live_entries(self, as_of: int | None = None) -> list[LiveEntry]:
        """Every Live entry with its receipt and status (as release ``as_of`` saw them)."""
        return live_entries(self.history, as_of=as_of)

    def release_ledger_files(self, release: int) -> tuple[list[str], list[str]]:
        """The papers and ledger files release ``release`` listed, each where its listed bytes are now."""
        view = self.release_view(release)
        return [view.sources.get(p, p) for p in view.papers], [view.sources.get(p, p) for p in view.assignments]

    def ledger_files(self) -> tuple[list[str], list[str]]:
        """benchmark/ and every window SHA256SUMS lists (released or not), by start."""
        view = self.release_view(None)
        papers = list(view.papers) + [p for p in view.unreleased if p.endswith("/papers.parquet")]
        rows = list(view.assignments) + [p for p in view.unreleased if p.endswith("/assignments.parquet")]
        return papers, rows

    # ------------------------------------------------------------ interventions (INTERVENTIONS.md)
    def interventions(self, model_id: str) -> InterventionRecords | None:
        """The model folder's parsed intervention records, None when it has none."""
        return self.intervention_records.get(model_id)

    def replays(self, model_id: str) -> tuple[Readout, ...]:
        records = self.interventions(model_id)
        return records.readouts if records else ()

    def oracle(self, model_id: str) -> tuple[OracleUnit, ...]:
        records = self.interventions(model_id)
        return records.oracle if records else ()

    def oracle_traces(self, model_id: str) -> tuple[TraceCall, ...]:
        records = self.interventions(model_id)
        return records.oracle_traces if records else ()

    def training(self, model_id: str) -> Training | None:
        records = self.interventions(model_id)
        return records.training if records else None


def _created(info: Mapping) -> date:
    """The archive's creation date (ARCHIVE.json ``created``), the implicit release's date."""
    value = info.get("created") if isinstance(info, Mapping) else None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return date(1970, 1, 1)
