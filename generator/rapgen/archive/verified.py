"""``VerifiedArchive``: the archive as ``verify`` saw it.

Built only by :func:`rapgen.archive.verify.verify_archive`, from the bytes it
hashed and checked: every document was parsed once, while being verified, and
this object hands out those records. Nothing is read from disk again except
the two parquet tables, which DuckDB opens by path (their digests are in
``digests``). It offers every accessor of :class:`~rapgen.archive.reader.Archive`,
so a stage that took an ``Archive`` takes a ``VerifiedArchive`` unchanged.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from rapgen.archive.invariants import ParsedDocuments
from rapgen.archive.layout import MANIFEST_JSONL
from rapgen.archive.reader import Archive
from rapgen.archive.records import Block, Direction, Field, ModelInfo, Origins, ShardManifest, TraceCall, Unit
from rapgen.errors import ArchiveError


class VerifiedArchive(Archive):
    """A verified archive: ``root``, ``manifest_sha256`` (SHA-256 of the SHA256SUMS
    bytes that were checked), ``digests`` (archive path → SHA-256 from SHA256SUMS)
    and the parsed documents."""

    def __init__(self, root: str | Path, *, manifest_sha256: str, digests: Mapping[str, str], parsed: ParsedDocuments):
        super().__init__(root)
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
        self._manifests = {r: list(parsed.manifests[r]) for r in MANIFEST_JSONL}
        self._predictions = dict(parsed.predictions)
        self._traces = dict(parsed.traces)

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
