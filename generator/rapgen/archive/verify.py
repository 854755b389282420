"""``verify_archive``: the promise of VERIFY.md, stage by stage, every finding collected."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rapgen.archive.invariants import check_invariants
from rapgen.archive.records import Category, Finding
from rapgen.archive.sums import SUMS, check_paths, escape, parse_sums
from rapgen.archive.walk import HashResult, hash_files, walk
from rapgen.errors import UsageProblem


@dataclass
class VerifyReport:
    """Findings sorted by path; ``n_files``/``n_bytes`` count files whose bytes verified."""

    root: str
    findings: list[Finding] = field(default_factory=list)
    n_files: int = 0
    n_bytes: int = 0
    n_listed: int = 0
    cache: dict = field(default_factory=dict, repr=False)  # parsed model files, see check_invariants

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
) -> VerifyReport:
    """Verify the archive below ``root`` (the folder holding SHA256SUMS and archive/)."""
    root = str(root)
    if not os.path.isdir(root):
        raise UsageProblem(f"{root}: the root is not a directory")
    report = VerifyReport(root)
    findings = report.findings

    # 1. SHA256SUMS as bytes, every line parsed.
    sums_path = os.path.join(root, SUMS)
    try:
        fd = os.open(sums_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise IsADirectoryError
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
        finally:
            os.close(fd)
    except FileNotFoundError:
        findings.append(Finding(SUMS, None, Category.MISSING, "no SHA256SUMS at the root; run 'rapgen seal' to create it"))
        data = None
    except OSError:
        findings.append(Finding(SUMS, None, Category.NOT_REGULAR, "SHA256SUMS is not a regular file"))
        data = None
    entries = []
    if data is not None:
        entries, problems = parse_sums(data, strict=strict)
        findings.extend(problems)
    report.n_listed = len(entries)

    # 2. Path policy before any disk access.
    safe, problems = check_paths(entries, strict=strict)
    findings.extend(problems)
    listed = {e.path: e for e in safe}

    # 3. Walk archive/ without following symlinks.
    top = os.path.join(root, "archive")
    found = {}
    if os.path.islink(top):
        findings.append(Finding("archive", None, Category.SYMLINK, "archive/ itself is a symbolic link"))
    elif not os.path.isdir(top):
        findings.append(Finding("archive", None, Category.MISSING, "no archive/ folder at the root"))
    else:
        found = walk(root, "archive")
    to_hash = []
    for path, entry in listed.items():
        hit = found.get(path)
        if hit is None:
            parent = _symlinked_parent(path, found)
            if parent:
                findings.append(Finding(escape(path), entry.line, Category.SYMLINK, f"inside symbolic link {escape(parent)}; not followed"))
            else:
                findings.append(Finding(escape(path), entry.line, Category.MISSING, "listed in SHA256SUMS but not in the archive"))
        elif hit.kind == "file":
            to_hash.append(path)
        elif hit.kind == "symlink":
            findings.append(Finding(escape(path), entry.line, Category.SYMLINK, f"symbolic link {escape(hit.detail)}; not followed"))
        elif hit.kind == "unreadable":
            findings.append(Finding(escape(path), entry.line, Category.UNREADABLE, hit.detail))
        else:
            what = "a folder" if hit.kind == "dir" else hit.detail
            findings.append(Finding(escape(path), entry.line, Category.NOT_REGULAR, f"is {what}, not a regular file"))
    # A folder is accounted for by the listed files below it; an empty one is not
    # (ARCHIVE.md: nothing may exist under archive/ that SHA256SUMS does not list).
    parents = {p.rsplit("/", 1)[0] for p in found}
    listed_ancestors = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 1)}
    for path, hit in found.items():
        if hit.kind == "dir" and path not in listed_ancestors and path not in parents:
            findings.append(Finding(escape(path), None, Category.UNLISTED, "empty folder not accounted for by SHA256SUMS"))
    for path, hit in found.items():
        if path in listed:
            continue
        if hit.kind == "file":
            findings.append(Finding(escape(path), None, Category.UNLISTED, "regular file not listed in SHA256SUMS"))
        elif hit.kind == "symlink":
            findings.append(Finding(escape(path), None, Category.SYMLINK, f"symbolic link {escape(hit.detail)} in the archive"))
        elif hit.kind == "other":
            findings.append(Finding(escape(path), None, Category.NOT_REGULAR, f"{hit.detail} in the archive"))
        elif hit.kind == "unreadable":
            findings.append(Finding(escape(path), None, Category.UNREADABLE, hit.detail))

    # 4. Hash, largest files first so both workers stay busy.
    to_hash.sort(key=lambda p: -found[p].size)
    if on_hash_start:
        on_hash_start(len(to_hash), sum(found[p].size for p in to_hash))
    verified: set[str] = set()
    for path, result in hash_files(root, to_hash, jobs=jobs, on_done=on_hashed).items():
        line = listed[path].line
        if result.not_regular:
            findings.append(Finding(escape(path), line, Category.NOT_REGULAR, f"is a {result.error}, not a regular file"))
        elif result.digest is None:
            findings.append(Finding(escape(path), line, Category.UNREADABLE, result.error))
        elif result.digest != listed[path].digest:
            findings.append(Finding(escape(path), line, Category.FAILED, "digest mismatch", expected=listed[path].digest, actual=result.digest))
        else:
            verified.add(path)
            report.n_bytes += result.size
    report.n_files = len(verified)

    # 5. Structural invariants, on verified files only.
    if invariants and data is not None:
        present = {p for p, e in found.items() if e.kind == "file"}
        findings.extend(check_invariants(root, verified, set(listed), report.cache, present))

    report.findings = sorted(set(findings), key=Finding.sort_key)
    return report


def _symlinked_parent(path: str, found: dict) -> str | None:
    parts = path.split("/")
    for i in range(1, len(parts)):
        prefix = "/".join(parts[:i])
        hit = found.get(prefix)
        if hit is not None and hit.kind != "dir":
            return prefix
    return None


def is_valid(root: str | Path) -> bool:
    """True if the archive verifies with no finding."""
    return verify_archive(root).ok
