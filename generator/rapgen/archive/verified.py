"""``VerifiedRoot``: a benchmark root as ``verify`` saw it, and the way into its releases.

Built only by :func:`rapgen.archive.verify.verify_archive`, from the bytes it hashed:
the root's digests (SHA256SUMS), the documents it kept (every JSON and JSONL file and
every release manifest), ARCHIVE.json, the release history (records, manifests,
commitments) and what the benchmark's kind parsed while checking (``state``). Nothing
is verified twice and no document is read from disk again; only tables (parquet)
are opened by path, by DuckDB.

``root.release()`` is the archive as it stands; ``root.release(n)`` is release n, a
view over the same bytes (:class:`~rapgen.archive.release.Release`, the kind's
subclass of it). Each view is built once per root.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.records import Commitment, ReleaseRecord
from rapgen.archive.history.view import implicit_record, release_view
from rapgen.archive.kind import ArchiveKind, CallValidator, KindCheck


class VerifiedRoot:
    """A verified root: ``root`` (the folder), ``manifest_sha256`` (SHA-256 of the SHA256SUMS bytes
    checked), ``digests`` (path -> SHA-256 as listed), ``documents`` (path -> the bytes hashed),
    ``info`` (ARCHIVE.json), ``kind`` (its :class:`ArchiveKind`) and ``history``."""

    def __init__(self, root: str | Path, *, manifest_sha256: str, digests: Mapping[str, str], documents: Mapping[str, bytes],
                 kind: ArchiveKind, checked: KindCheck, validate_call: CallValidator | None = None) -> None:
        self.root = Path(root)
        self.manifest_sha256 = manifest_sha256
        self.digests: Mapping[str, str] = MappingProxyType(dict(digests))
        self.documents: Mapping[str, bytes] = MappingProxyType(dict(documents))
        self.kind = kind
        self.info: Mapping[str, Any] = MappingProxyType(dict(checked.info or {}))
        self.state = checked.state  # what the kind parsed while verifying (its open() reads it)
        self.validate_call = validate_call  # the Search-call judge verify used
        # a kind without a history (format 1 of a kind with no time key) still has its root lines
        self.history: HistoryInput = checked.history.input if checked.history is not None else \
            HistoryInput(dict(self.digests), {}, {}, (), None, 0, None)
        self._views: dict[int | None, Any] = {}  # number -> the kind's Release view

    def __repr__(self) -> str:
        return f"<VerifiedRoot {self.kind.format} {self.root} ({len(self.digests)} files)>"

    @property
    def format(self) -> str:
        return self.kind.format

    @property
    def is_history(self) -> bool:
        return bool(self.history.records)

    @property
    def created(self) -> date:
        """ARCHIVE.json's ``created``, the date of a format-1 archive's implicit release."""
        try:
            return date.fromisoformat(str(self.info.get("created"))[:10])
        except ValueError:
            return date(1970, 1, 1)

    @property
    def releases(self) -> Mapping[int, ReleaseRecord]:
        """Release number -> its record, ascending; a format-1 archive has one implicit release 1."""
        if self.history.records:
            return MappingProxyType(dict(sorted(self.history.records.items())))
        return MappingProxyType({1: implicit_record(self.history, self.created)})

    @property
    def latest_release(self) -> int:
        return max(self.releases)

    @property
    def commitments(self) -> Mapping[str, Commitment]:
        """Every sealed Live submission: ``archive/commitments/<origin>/<model_id>.json`` -> its commitment."""
        return MappingProxyType(dict(self.history.commitments))

    def release(self, number: int | None = None):
        """Release ``number`` (default: the archive as it stands, unreleased lines included);
        a usage error naming the releases for one that does not exist."""
        if number not in self._views:
            view = release_view(self.history, number, created=self.created)
            key = None if view.current else view.number
            if key not in self._views:
                self._views[key] = self.kind.open(self, view)
            self._views[number] = self._views[key]
        return self._views[number]

