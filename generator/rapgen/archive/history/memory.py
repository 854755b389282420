"""Release operations on an archive held in memory: the bytes ``release start|roll|cut`` write, without the disk.

A builder that replays many releases (a sample's history) would pay for a whole
verification before and after each one if it went through :mod:`.kinded`. A
:class:`MemoryHistory` holds the archive as path -> bytes and assembles each
release exactly as :func:`~.ops._finish` does — the record, the release's
Croissant file (describing what its manifest lists), the manifest, and the
root ``SHA256SUMS`` — from files the caller computed (a window, the files that
open and resolve keys, merged submissions). It checks nothing: the caller
verifies the result once, and a test compares its bytes with the commands'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, timedelta

from rapgen.archive.croissant.document import croissant_path, release_croissant
from rapgen.archive.history.records import OpenOrigin, ReleaseKind, ReleaseRecord, format_record, manifest_path, record_path
from rapgen.archive.layout import ARCHIVE_JSON, CROISSANT_JSON
from rapgen.archive.sums import format_sums, sha256_bytes

DEFAULT_CLOSES_DAYS = 14  # RELEASES.md: --closes defaults to origin + 14 days
START_NOTES = "the format-1 archive as release 1"
MODELS_NOTES = "submissions merged since the last release"


def format2_archive_json(data: bytes) -> bytes:
    """ARCHIVE.json of release 1: the format-1 document with ``format_version`` 2 (what ``release start`` writes)."""
    info = json.loads(data)
    info["format_version"] = 2
    return (json.dumps(info, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def default_open(key: date | None, closes: date | None = None) -> OpenOrigin | None:
    return None if key is None else OpenOrigin(key, closes or key + timedelta(days=DEFAULT_CLOSES_DAYS))


class MemoryHistory:
    """A format-1 archive (``files``: every ``archive/…`` path -> bytes) and the releases cut on it."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files: dict[str, bytes] = {p: b for p, b in files.items() if p.startswith("archive/")}
        self.digests: dict[str, str] = {p: sha256_bytes(b) for p, b in self.files.items()}
        self.records: dict[int, ReleaseRecord] = {}
        self.manifests: dict[int, dict[str, str]] = {}

    # ---------------------------------------------------------------- the archive as it stands
    @property
    def latest(self) -> ReleaseRecord | None:
        return self.records[max(self.records)] if self.records else None

    def put(self, path: str, data: bytes) -> None:
        self.files[path] = data
        self.digests[path] = sha256_bytes(data)

    def merge(self, files: Mapping[str, bytes]) -> None:
        """Add files as a merged pull request does (listed at the root, in no release until the next cut)."""
        for path, data in sorted(files.items()):
            if path in self.files:
                raise ValueError(f"{path}: already in the archive")
            self.put(path, data)

    def sums(self) -> bytes:
        """The root ``SHA256SUMS``."""
        return format_sums(self.digests)

    def output(self) -> dict[str, bytes]:
        """Every file of the root (``archive/…`` and ``SHA256SUMS``)."""
        return {**self.files, "SHA256SUMS": self.sums()}

    # ---------------------------------------------------------------- the operations
    def start(self, *, when: date, resolved: tuple[date, ...], opened: OpenOrigin | None, added: Mapping[str, bytes] = {},
              simulated: bool = False, notes: str = "") -> ReleaseRecord:
        """Release 1 (``initial``): ARCHIVE.json at format_version 2, ``added`` (the files that open keys)."""
        assert not self.records, "a history starts once"
        staged = {ARCHIVE_JSON: format2_archive_json(self.files[ARCHIVE_JSON]), **added}
        if CROISSANT_JSON in self.files:  # superseded by release 1's own Croissant file
            del self.files[CROISSANT_JSON], self.digests[CROISSANT_JSON]
        record = ReleaseRecord(1, when, ReleaseKind.INITIAL, resolved, resolved[-1] if resolved else None, opened, None, (),
                               simulated, notes or START_NOTES)
        return self._finish(record, dict(self.digests), staged)

    def roll(self, *, when: date, target: date, opened: OpenOrigin | None, added: Mapping[str, bytes],
             simulated: bool | None = None, notes: str) -> ReleaseRecord:
        """A ``roll`` resolving ``target``: ``added`` is the window's two files and those that resolve and open keys."""
        latest = self._latest()
        record = ReleaseRecord(latest.release + 1, when, ReleaseKind.ROLL, latest.resolved_origins + (target,), target, opened,
                               self.digests[manifest_path(latest.release)], (),
                               latest.simulated if simulated is None else simulated, notes)
        return self._finish(record, self._released_base(latest), dict(added))

    def cut_models(self, *, when: date, simulated: bool | None = None, notes: str = "") -> ReleaseRecord:
        """A ``models`` release: every root line no release lists yet (merged submissions, commitments, reveals)."""
        latest = self._latest()
        base = self._released_base(latest)
        for path in sorted(set(self.digests) - set(base)):
            base[path] = self.digests[path]
        record = ReleaseRecord(latest.release + 1, when, ReleaseKind.MODELS, latest.resolved_origins, latest.strict_origin,
                               latest.open_origin, self.digests[manifest_path(latest.release)], (),
                               latest.simulated if simulated is None else simulated, notes or MODELS_NOTES)
        return self._finish(record, base, {})

    # ---------------------------------------------------------------- as ops._finish
    def _latest(self) -> ReleaseRecord:
        latest = self.latest
        if latest is None:
            raise ValueError("no release yet: start the history first")
        return latest

    def _released_base(self, latest: ReleaseRecord) -> dict[str, str]:
        base = dict(self.manifests[latest.release])
        base[manifest_path(latest.release)] = self.digests[manifest_path(latest.release)]
        return base

    def _finish(self, record: ReleaseRecord, base: dict[str, str], staged: dict[str, bytes]) -> ReleaseRecord:
        """Record k, its Croissant file and manifest k = ``base`` + staged files + record; the root re-sealed."""
        k = record.release
        staged[record_path(k)] = format_record(record)
        manifest = dict(base)
        manifest.update({p: sha256_bytes(b) for p, b in staged.items()})
        info = json.loads(staged.get(ARCHIVE_JSON, self.files[ARCHIVE_JSON]))
        staged[croissant_path(k)] = release_croissant(record, manifest, info)
        manifest[croissant_path(k)] = sha256_bytes(staged[croissant_path(k)])
        staged[manifest_path(k)] = format_sums(manifest)
        for path, data in staged.items():
            self.put(path, data)
        self.records[k] = record
        self.manifests[k] = manifest
        return record
