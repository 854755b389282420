"""``Release``: one release of a verified root, the unit every stage takes.

``root.release(n)`` (:meth:`~rapgen.archive.verified.VerifiedRoot.release`) returns the
view of release n: the files n listed, each read from the bytes verify hashed and
parsed once, on first use, then kept. ``root.release()`` is the archive as it stands
(the latest release and every merged, unreleased line). A past release is a view
over the same verified bytes, never a copy: a file that a later ``errata`` release
replaced is read from the kept old bytes (``releases/NNNN/superseded/…``), which
verify hashed too.

This class holds what every kind shares (files, record, history, Live entries);
a kind's own view subclasses it with its documents (RAP: :class:`~rapgen.archive.
rap_release.RapRelease`) and is what the kind's ``open`` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.live import LiveEntry, live_entries
from rapgen.archive.history.records import Commitment, OpenOrigin, ReleaseRecord, manifest_path
from rapgen.archive.history.view import ReleaseView
from rapgen.archive.records import Finding
from rapgen.errors import ArchiveError

if TYPE_CHECKING:
    from rapgen.archive.verified import VerifiedRoot

Parser = Callable[[str, bytes], tuple[Any, list[Finding]]]


class Release:
    """Release ``number`` of the verified root ``verified`` (``root`` is its folder): ``files``
    (path -> digest, as it listed them; the current state lists every line of SHA256SUMS) and
    ``sources`` (path -> the path holding those bytes now)."""

    def __init__(self, verified: VerifiedRoot, view: ReleaseView) -> None:
        self.verified = verified
        self.root: Path = verified.root  # the folder holding SHA256SUMS and archive/
        self.view = view
        self.number: int = view.number
        self.record: ReleaseRecord = view.record
        self.current: bool = view.current
        self.implicit: bool = view.implicit
        if self.current:
            self.files: Mapping[str, str] = verified.digests
            self.sources: Mapping[str, str] = MappingProxyType({p: p for p in verified.digests})
        else:
            self.files = MappingProxyType(dict(view.files))
            self.sources = MappingProxyType(dict(view.sources))
        self._parsed: dict[tuple[str, str], Any] = {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.number}{' (current)' if self.current else ''} of {self.root}>"

    # ------------------------------------------------------------ identity
    @property
    def manifest_sha256(self) -> str:
        """The release's identity: SHA256SUMS's digest for the archive as it stands (and a
        format-1 archive's one release), else the digest of ``releases/NNNN.SHA256SUMS``."""
        if self.current or self.implicit:
            return self.verified.manifest_sha256
        return self.verified.digests[manifest_path(self.number)]

    @property
    def info(self) -> Mapping[str, Any]:
        return self.verified.info

    @property
    def synthetic(self) -> bool:
        return bool(self.verified.info.get("synthetic"))

    @property
    def resolved_origins(self) -> tuple[date, ...]:
        return tuple(self.record.resolved_origins)

    @property
    def strict_origin(self) -> date | None:
        return self.record.strict_origin

    @property
    def open_origin(self) -> OpenOrigin | None:
        return self.record.open_origin

    @property
    def unreleased(self) -> tuple[str, ...]:
        """Merged lines no release lists yet (the current state only)."""
        return self.view.unreleased if self.current else ()

    # ------------------------------------------------------------ history as this release saw it
    @cached_property
    def history(self) -> HistoryInput:
        """The history up to this release: its records and manifests, its files as the root."""
        inp = self.verified.history
        if self.current or not inp.records:
            return inp
        n = self.number
        listed = set(self.files)
        return replace(inp, root=dict(self.files), records={k: r for k, r in inp.records.items() if k <= n},
                       manifests={k: m for k, m in inp.manifests.items() if k <= n},
                       commitments={p: c for p, c in inp.commitments.items() if p in listed})

    @property
    def releases(self) -> Mapping[int, ReleaseRecord]:
        """Release number -> record, 1..this one (a format-1 archive: its implicit release 1)."""
        if not self.verified.history.records:
            return MappingProxyType({1: self.record})
        return MappingProxyType(dict(sorted(self.history.records.items())))

    @property
    def is_history(self) -> bool:
        """True for an archive with release records (format 2)."""
        return bool(self.verified.history.records)

    @property
    def commitments(self) -> Mapping[str, Commitment]:
        return MappingProxyType(dict(self.history.commitments))

    def live_entries(self, as_of: int | None = None) -> list[LiveEntry]:
        """Every Live entry with its receipt and status, as release ``as_of`` (default: this one) saw them."""
        if as_of is None and not self.current:
            as_of = self.number
        return live_entries(self.verified.history, as_of=as_of)

    # ------------------------------------------------------------ bytes
    def source(self, path: str) -> str:
        """The path holding the bytes this release listed for ``path``."""
        if path not in self.files:
            raise ArchiveError(f"{path}: not a file of release {self.number}")
        return self.sources.get(path, path)

    def read(self, path: str) -> bytes:
        """A listed document's bytes, as verify hashed them (never read from disk again)."""
        data = self.verified.documents.get(self.source(path))
        if data is None:
            raise ArchiveError(f"{path}: not a document of release {self.number} (verify keeps JSON and JSONL files only)")
        return data

    def disk_path(self, path: str) -> Path:
        """Where the listed bytes of ``path`` are on disk (the tables DuckDB opens by path)."""
        return self.root / self.source(path)

    def size(self, path: str) -> int | None:
        try:
            return self.disk_path(path).stat().st_size
        except OSError:
            return None

    def parsed(self, path: str, parse: Parser, key: str = "") -> Any:
        """``parse(path, bytes)``'s value for a listed document, parsed once per (path, ``key``); a
        finding is an ArchiveError (the bytes were valid when listed, so it names what differs)."""
        slot = (path, key)
        if slot not in self._parsed:
            value, findings = parse(path, self.read(path))
            if findings:
                first = findings[0]
                where = first.path + (f":{first.line}" if first.line else "")
                raise ArchiveError(f"release {self.number}: {where}: {first.detail} (the bytes it listed do not parse)")
            self._parsed[slot] = value
        return self._parsed[slot]

    def is_own(self, path: str) -> bool:
        """True when ``path``'s listed bytes are the root's current file (no errata replaced them)."""
        return path in self.files and self.sources.get(path, path) == path
