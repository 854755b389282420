"""``verify_archive``: the promise of VERIFY.md, stage by stage, every finding collected.

The stages run cheap to expensive: read and parse SHA256SUMS, apply the path
policy, walk ``archive/`` without following links, hash every listed file, then
check the structural invariants. Hashing keeps the bytes of the JSON and JSONL
documents, and the invariants parse exactly those bytes, so what was checked is
what the :class:`VerifiedRoot` hands on: no stage reads a document again.
"""

from __future__ import annotations

import gc
import hashlib
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from rapgen.archive.history.load import LoadedHistory
from rapgen.archive.kind import ArchiveKind, CallValidator, CheckInput, archive_format
from rapgen.archive.layout import ARCHIVE_DIR, ARCHIVE_JSON, is_document
from rapgen.archive.rap_release import RAP_ARCHIVE
from rapgen.archive.records import Category, Finding
from rapgen.archive.sums import SUMS, SumsEntry, SumsUnreadable, check_paths, escape, parse_sums, read_sums
from rapgen.archive.verified import VerifiedRoot
from rapgen.archive.walk import Entry, HashResult, hash_files, walk
from rapgen.errors import ArchiveError, UsageProblem


@dataclass
class VerifyReport:
    """Findings sorted by path; ``n_files``/``n_bytes`` count files whose bytes verified."""

    root: str
    findings: list[Finding] = field(default_factory=list)
    n_files: int = 0
    n_bytes: int = 0
    n_listed: int = 0
    verified: VerifiedRoot | None = field(default=None, repr=False)  # set when ``ok`` (and invariants ran)
    history: LoadedHistory | None = field(default=None, repr=False)  # the release history read (invariants ran)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.category is not Category.WARNING]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.category is Category.WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.errors:
            out[f.category.value] = out.get(f.category.value, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        return {
            "schema_version": 1,
            "ok": self.ok,
            "root": self.root,
            "files_verified": self.n_files,
            "bytes_verified": self.n_bytes,
            "files_listed": self.n_listed,
            "counts": self.counts(),
            "findings": [f.to_dict() for f in self.errors],
            "warnings": [f.to_dict() for f in self.warnings],
        }


def format_finding(f: Finding) -> str:
    """``KEYWORD path[:line]: detail [expected=… actual=…]`` — one line, control characters escaped."""
    # Paths were escaped when the finding was made; details may quote file content.
    where = f.path + (f":{f.line}" if f.line else "")
    text = f"{f.category.value} {where}"
    if f.detail:
        text += f": {escape(f.detail, backslash=False)}"
    if f.expected is not None or f.actual is not None:
        text += f" (expected {f.expected}, actual {f.actual})"
    return text


def verify_archive(
    root: str | Path,
    *,
    strict: bool = False,
    jobs: int | None = None,
    invariants: bool = True,
    on_hashed: Callable[[HashResult], None] | None = None,
    on_hash_start: Callable[[int, int], None] | None = None,
    validate_call: CallValidator | None = None,
    kinds: Mapping[str, ArchiveKind] | None = None,
) -> VerifyReport:
    """Verify the archive below ``root`` (the folder holding SHA256SUMS and archive/).

    With ``invariants``, the verified ``ARCHIVE.json``'s ``format`` picks the benchmark kind
    among ``kinds`` (``format -> ArchiveKind``, from ``rapgen.kinds.registry().formats``;
    None: RAP alone) and the kind's structural checks run: for RAP the invariants, then the
    release history (RELEASES.md), later-origin files and intervention records
    (INTERVENTIONS.md). A format no kind reads is one ``INVARIANT`` finding, and the
    structural stage is ``NOT-EVALUATED``. ``validate_call`` judges whether a recorded
    Search call is malformed (``rapgen.search.validate_call``; without it, the archive's
    recorded-call rule). When every check passes (and ``invariants`` ran), ``report.verified``
    is the :class:`VerifiedRoot` built from the bytes that were hashed."""
    root = str(root)
    if not os.path.isdir(root):
        raise UsageProblem(f"{escape(root)}: the root is not a directory")
    report = VerifyReport(root)
    findings = report.findings
    data = _read_manifest(root, findings)  # 1. SHA256SUMS as bytes
    entries: list[SumsEntry] = []
    if data is not None:
        entries, problems = parse_sums(data, strict=strict)
        findings.extend(problems)
    report.n_listed = len(entries)
    safe, problems = check_paths(entries, strict=strict)  # 2. path policy, before any disk access
    findings.extend(problems)
    listed = {e.path: e for e in safe}
    found = _walk_archive(root, findings)  # 3. what is on disk, links not followed
    to_hash = _compare_listing(listed, found, findings)
    documents, verified = _hash_listed(root, to_hash, listed, found, report, jobs, on_hashed, on_hash_start)  # 4.
    if invariants and data is not None:  # 5. the kind's structural checks, on verified files only
        kind = _kind_of(documents.get(ARCHIVE_JSON) if ARCHIVE_JSON in verified else None, kinds, findings)
        if kind is not None:
            digests = {p: e.digest for p, e in listed.items()}
            present = frozenset(p for p, e in found.items() if e.kind == "file")
            with _collector_paused():
                checked = kind.check(CheckInput(Path(root), documents, frozenset(verified), digests, present, kind.history,
                                                validate_call))
            findings.extend(checked.findings)
            report.history = checked.history
            if not any(f.category is not Category.WARNING for f in findings):
                report.verified = VerifiedRoot(root, manifest_sha256=hashlib.sha256(data).hexdigest(), digests=digests,
                                                documents=documents, kind=kind, checked=checked, validate_call=validate_call)
    report.findings = sorted(set(findings), key=Finding.sort_key)
    return report


@contextmanager
def _collector_paused():
    """The structural checks build millions of small records that hold no reference cycle; the
    cycle collector's passes over them took about a tenth of verify's CPU and freed nothing, so it
    is paused while the checks run (reference counting still frees everything) and then restored."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _kind_of(info: bytes | None, kinds: Mapping[str, ArchiveKind] | None, findings: list[Finding]) -> ArchiveKind | None:
    """The kind reading ARCHIVE.json's ``format``; RAP when ``kinds`` is None, or when the format cannot
    be read at all (RAP's check then reports why). None, with the findings, for a format no kind reads."""
    if kinds is None:
        return RAP_ARCHIVE
    fmt = archive_format(info)
    if fmt is None:
        return kinds.get(RAP_ARCHIVE.format, RAP_ARCHIVE)
    if fmt in kinds:
        return kinds[fmt]
    known = ", ".join(sorted(kinds)) or "none"
    findings.append(Finding(ARCHIVE_JSON, None, Category.INVARIANT, f"unknown archive format {fmt!r}; this rapgen reads {known}"))
    findings.append(Finding(ARCHIVE_DIR, None, Category.NOT_EVALUATED, f"structural checks not run: no benchmark kind reads format {fmt!r}"))
    return None


def _read_manifest(root: str, findings: list[Finding]) -> bytes | None:
    try:
        return read_sums(os.path.join(root, SUMS))
    except SumsUnreadable as exc:
        if exc.missing:
            findings.append(Finding(SUMS, None, Category.MISSING, "no SHA256SUMS at the root; run 'rapgen seal' to create it"))
        else:
            findings.append(Finding(SUMS, None, Category.NOT_REGULAR, "SHA256SUMS is not a regular file"))
        return None


def _walk_archive(root: str, findings: list[Finding]) -> dict[str, Entry]:
    top = os.path.join(root, ARCHIVE_DIR)
    if os.path.islink(top):
        findings.append(Finding(ARCHIVE_DIR, None, Category.SYMLINK, "archive/ itself is a symbolic link"))
    elif not os.path.isdir(top):
        findings.append(Finding(ARCHIVE_DIR, None, Category.MISSING, "no archive/ folder at the root"))
    else:
        return walk(root, ARCHIVE_DIR)
    return {}


def _compare_listing(listed: dict[str, SumsEntry], found: dict[str, Entry], findings: list[Finding]) -> list[str]:
    """Listed vs found, both directions; returns the listed regular files to hash."""
    to_hash = []
    for path, entry in listed.items():
        hit = found.get(path)
        shown = escape(path)
        if hit is None:
            parent = _symlinked_parent(path, found)
            if parent:
                findings.append(Finding(shown, entry.line, Category.SYMLINK, f"inside symbolic link {escape(parent)}; not followed"))
            else:
                findings.append(Finding(shown, entry.line, Category.MISSING, "listed in SHA256SUMS but not in the archive"))
        elif hit.kind == "file":
            to_hash.append(path)
        elif hit.kind == "symlink":
            findings.append(Finding(shown, entry.line, Category.SYMLINK, f"symbolic link {escape(hit.detail)}; not followed"))
        elif hit.kind == "unreadable":
            findings.append(Finding(shown, entry.line, Category.UNREADABLE, escape(hit.detail)))
        else:
            what = "a folder" if hit.kind == "dir" else hit.detail
            findings.append(Finding(shown, entry.line, Category.NOT_REGULAR, f"is {what}, not a regular file"))
    findings.extend(_unlisted(listed, found))
    return to_hash


def _unlisted(listed: dict[str, SumsEntry], found: dict[str, Entry]) -> list[Finding]:
    """What is on disk but not accounted for by SHA256SUMS.

    A folder is accounted for by the listed files below it; an empty one is not
    (ARCHIVE.md: nothing may exist under archive/ that SHA256SUMS does not list)."""
    out = []
    parents = {p.rsplit("/", 1)[0] for p in found}
    listed_ancestors = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 1)}
    for path, hit in found.items():
        if hit.kind == "dir" and path not in listed_ancestors and path not in parents:
            out.append(Finding(escape(path), None, Category.UNLISTED, "empty folder not accounted for by SHA256SUMS"))
    for path, hit in found.items():
        if path in listed:
            continue
        if hit.kind == "file":
            out.append(Finding(escape(path), None, Category.UNLISTED, "regular file not listed in SHA256SUMS"))
        elif hit.kind == "symlink":
            out.append(Finding(escape(path), None, Category.SYMLINK, f"symbolic link {escape(hit.detail)} in the archive"))
        elif hit.kind == "other":
            out.append(Finding(escape(path), None, Category.NOT_REGULAR, f"{hit.detail} in the archive"))
        elif hit.kind == "unreadable":
            out.append(Finding(escape(path), None, Category.UNREADABLE, escape(hit.detail)))
    return out


def _hash_listed(
    root: str, to_hash: list[str], listed: dict[str, SumsEntry], found: dict[str, Entry], report: VerifyReport,
    jobs: int | None, on_hashed: Callable[[HashResult], None] | None, on_hash_start: Callable[[int, int], None] | None,
) -> tuple[dict[str, bytes], set[str]]:
    """Hash, largest files first so every worker stays busy. Records findings and
    counts on ``report``; returns the verified documents (path → the bytes hashed)
    and the set of every verified path."""
    to_hash = sorted(to_hash, key=lambda p: -found[p].size)
    if on_hash_start:
        on_hash_start(len(to_hash), sum(found[p].size for p in to_hash))
    documents: dict[str, bytes] = {}
    verified: set[str] = set()
    for path, result in hash_files(root, to_hash, jobs=jobs, on_done=on_hashed, keep=is_document).items():
        line = listed[path].line
        if result.not_regular:
            report.findings.append(Finding(escape(path), line, Category.NOT_REGULAR, f"is a {result.error}, not a regular file"))
        elif result.digest is None:
            report.findings.append(Finding(escape(path), line, Category.UNREADABLE, escape(result.error)))
        elif result.digest != listed[path].digest:
            report.findings.append(
                Finding(escape(path), line, Category.FAILED, "digest mismatch", expected=listed[path].digest, actual=result.digest)
            )
        else:
            verified.add(path)
            if result.data is not None:
                documents[path] = result.data
            report.n_bytes += result.size
    report.n_files = len(verified)
    return documents, verified


def _symlinked_parent(path: str, found: dict) -> str | None:
    parts = path.split("/")
    for i in range(1, len(parts)):
        prefix = "/".join(parts[:i])
        hit = found.get(prefix)
        if hit is not None and hit.kind != "dir":
            return prefix
    return None


def is_valid(root: str | Path, *, jobs: int | None = None, validate_call: CallValidator | None = None,
             kinds: Mapping[str, ArchiveKind] | None = None) -> bool:
    """True if the archive verifies with no finding (warnings allowed), as bagit's ``is_valid``."""
    return verify_archive(root, jobs=jobs, validate_call=validate_call, kinds=kinds).ok


def open_verified(root: str | Path, *, jobs: int | None = None, validate_call: CallValidator | None = None,
                  kinds: Mapping[str, ArchiveKind] | None = None) -> VerifiedRoot:
    """Verify the archive at ``root`` and return its :class:`VerifiedRoot`; raise ArchiveError if any finding."""
    report = verify_archive(root, jobs=jobs, validate_call=validate_call, kinds=kinds)
    if not report.ok or report.verified is None:
        n = len(report.errors)
        causes = [f for f in report.errors if f.category is not Category.NOT_EVALUATED] or report.errors
        first = f", the first: {format_finding(causes[0])}" if causes else ""
        raise ArchiveError(
            f"{escape(str(root))}: archive failed verification with {n} finding{'s' * (n != 1)}{first}; "
            f"run 'rapgen verify --root {escape(str(root))}' for details"
        )
    return report.verified


def open_release(root: str | Path, number: int | None = None, *, jobs: int | None = None,
                 validate_call: CallValidator | None = None, kinds: Mapping[str, ArchiveKind] | None = None):
    """``open_verified(root, …).release(number)``: release ``number`` (default: the archive as it stands)."""
    return open_verified(root, jobs=jobs, validate_call=validate_call, kinds=kinds).release(number)
