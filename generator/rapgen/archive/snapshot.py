"""The archive as release N listed it, after an ``errata`` release replaced some of its files.

A release is rebuilt from the bytes its manifest lists (RELEASES.md, principle 2). While
no errata release has replaced one of them, those bytes are the current files and the
verified archive itself serves release N (``rapgen score/build --release N`` select its
files). Once an errata release has replaced a file N listed, :func:`release_archive` lays
out N's files in a temporary root — each the current file when its digest is the one N
listed, else the copy the errata release kept (``ReleaseView.sources``), hard-linked where
the file system allows, copied otherwise — with N's manifest as its ``SHA256SUMS``, and
verifies that root: every record scored or shown for release N is then parsed from N's
own bytes. The folder is removed when the returned archive is garbage-collected.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path

from rapgen.archive.history.records import manifest_path
from rapgen.archive.sums import SUMS, format_sums
from rapgen.archive.verified import VerifiedArchive
from rapgen.errors import ArchiveError


def release_archive(archive: VerifiedArchive, number: int) -> VerifiedArchive:
    """``archive`` when release ``number``'s files are all current; else the verified archive of
    the bytes release ``number`` listed (its files only: nothing merged later, no unreleased line).
    A usage error for a release that does not exist."""
    view = archive.release_view(number)
    if view.implicit or not view.superseded:
        return archive
    cache = archive.__dict__.setdefault("_release_archives", {})
    if number not in cache:
        cache[number] = _materialise(archive, number, dict(view.sources))
    return cache[number]


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed: a copy has the same bytes
        shutil.copyfile(src, dst)


def _materialise(archive: VerifiedArchive, number: int, sources: dict[str, str]) -> VerifiedArchive:
    from rapgen.archive.verify import verify_archive, format_finding

    own = manifest_path(number)
    lines = dict(archive.release_manifests[number])
    lines[own] = archive.digests[own]
    sources[own] = own
    tmp = Path(tempfile.mkdtemp(prefix=f"rapgen-release-{number:04d}-"))
    try:
        for path, source in sources.items():
            _place(Path(archive.root) / source, tmp / path)
        (tmp / SUMS).write_bytes(format_sums(lines))
        report = verify_archive(tmp, validate_call=archive.validate_call)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if not report.ok or report.archive is None:
        shutil.rmtree(tmp, ignore_errors=True)
        first = format_finding(report.errors[0]) if report.errors else "no archive"
        raise ArchiveError(f"release {number}: its files do not verify as they were listed ({first})")
    weakref.finalize(report.archive, shutil.rmtree, str(tmp), True)
    return report.archive
