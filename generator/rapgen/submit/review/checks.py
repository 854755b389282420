"""The repository-level checks: git (what changed since the base), archive integrity, SHA256SUMS lines.

The submission's own files are checked in :mod:`.files`; both fill a
:class:`~rapgen.submit.review.result.CheckResult`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rapgen.archive import Category, verify_archive
from rapgen.archive.sums import SUMS, parse_sums
from rapgen.errors import UsageProblem
from rapgen.submit.review.result import CheckResult
from rapgen.text import escape_terminal

MODELS_PREFIX = "archive/models/"


def visible(value: object) -> str:
    """A path or ref for a one-line message, controls escaped."""
    return escape_terminal(str(value))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def is_git_commit(root: Path, ref: str) -> bool:
    return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


def check_git(result: CheckResult, root: Path, base: str, prefix: str) -> bytes:
    """Files changed since ``base`` (committed, staged, unstaged, untracked under archive/); returns base's SHA256SUMS."""
    if not is_git_commit(root, base):
        raise UsageProblem(f"--base {visible(base)}: not a commit of the git repository at {visible(root)}")
    changed: set[str] = set()
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", base, "--")
    if diff.returncode != 0:
        raise UsageProblem(f"--base {visible(base)}: git diff failed: {visible(diff.stderr.decode(errors='replace').strip())}")
    changed.update(p for p in diff.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", "archive", SUMS)
    changed.update(p for p in untracked.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    for path in sorted(changed):
        if path == SUMS or path.startswith(prefix):
            continue
        result.add("integrity", "TOUCHED", path, None, f"changed since {base}, but a submission may only add {prefix} and its SHA256SUMS lines")
    existing = _git(root, "ls-tree", "--name-only", base, "--", prefix.rstrip("/"))
    if existing.returncode == 0 and existing.stdout.strip():
        result.add("integrity", "EXISTS", prefix.rstrip("/"), None, f"model {result.model_id!r} already exists on {base}; an existing model's files never change")
    shown = _git(root, "show", f"{base}:{SUMS}")
    return shown.stdout if shown.returncode == 0 else b""


def check_integrity(result: CheckResult, root: Path, prefix: str) -> None:
    """``rapgen verify`` on the repository, leaving the new folder's files and SHA256SUMS lines to the later sections."""
    report = verify_archive(root)
    folder_lines = _folder_line_numbers(root, prefix)
    for finding in report.findings:
        if finding.category is Category.WARNING:
            result.notes.append(f"{finding.path}{':' + str(finding.line) if finding.line else ''}: {finding.detail}")
            continue
        if finding.path.startswith(prefix) or (finding.path == SUMS and finding.line in folder_lines):
            continue  # checked below, with precise fixes
        detail = finding.detail or finding.category.value.lower()
        if finding.expected or finding.actual:
            detail += f" (expected {finding.expected}, found {finding.actual})"
        result.add("integrity", "INTEGRITY", finding.path, finding.line, f"{finding.category.value}: {detail}")


def _raw_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _folder_line_numbers(root: Path, prefix: str) -> set[int]:
    try:
        data = (root / SUMS).read_bytes()
    except OSError:
        return set()
    needle = prefix.encode("utf-8", "surrogateescape")
    return {n for n, raw in enumerate(_raw_lines(data), start=1) if needle in raw}


def canonical_lines(prefix: str, digests: dict[str, str]) -> list[str]:
    """The canonical SHA256SUMS lines of the folder's files (``rapgen seal`` writes exactly these)."""
    return [f"{digests[name]}  {prefix}{name}" for name in sorted(digests, key=lambda n: n.encode("utf-8"))]


def check_sums(result: CheckResult, root: Path, prefix: str, digests: dict[str, str], base_sums: bytes | None) -> None:
    """The folder's SHA256SUMS lines: present, canonical, right digests, sorted; with a base, nothing else changed."""
    stage = "checksums"
    try:
        data = (root / SUMS).read_bytes()
    except OSError:
        result.add(stage, "CHECKSUM", SUMS, None, "SHA256SUMS is missing")
        return
    result.sums_lines = canonical_lines(prefix, digests)
    entries, _ = parse_sums(data)
    raw = _raw_lines(data)
    seen: dict[str, int] = {}
    for entry in entries:
        if not entry.path.startswith(prefix):
            continue
        name = entry.path[len(prefix):]
        if raw[entry.line - 1] != f"{entry.digest}  {entry.path}".encode("utf-8"):
            result.add(stage, "CHECKSUM", SUMS, entry.line, f"the line for {entry.path} is not canonical ('<64 lower-case hex>  <path>')")
        if entry.path in seen:
            result.add(stage, "CHECKSUM", SUMS, entry.line, f"{entry.path} is listed twice (first on line {seen[entry.path]})")
            continue
        seen[entry.path] = entry.line
        if name not in digests:
            result.add(stage, "CHECKSUM", SUMS, entry.line, f"lists {entry.path}, which is not a file of the submission")
        elif entry.digest != digests[name]:
            result.add(stage, "CHECKSUM", SUMS, entry.line, f"wrong digest for {entry.path}: listed {entry.digest}, actual {digests[name]}")
    parsed = {e.line for e in entries}
    needle = prefix.encode("utf-8", "surrogateescape")
    for number, line in enumerate(raw, start=1):
        if number not in parsed and needle in line:
            result.add(stage, "CHECKSUM", SUMS, number, "a line naming the folder is not a SHA256SUMS line ('<64 lower-case hex>  <path>')")
    for name in sorted(digests):
        if prefix + name not in seen:
            result.add(stage, "CHECKSUM", SUMS, None, f"no line for {prefix}{name}")
    keys = [e.path.encode("utf-8", "surrogateescape") for e in entries]
    if keys != sorted(keys):
        bad = next(i for i in range(1, len(keys)) if keys[i] < keys[i - 1])
        result.add(stage, "CHECKSUM", SUMS, entries[bad].line, "lines are not sorted by path (byte order)")
    if data and not data.endswith(b"\n"):
        result.add(stage, "CHECKSUM", SUMS, len(raw), "the last line has no newline")
    if base_sums is not None:
        _check_base_lines(result, prefix, raw, entries, base_sums)


def _check_base_lines(result: CheckResult, prefix: str, raw: list[bytes], entries: list, base_sums: bytes) -> None:
    """Every base line is still there, byte for byte; no new line outside the folder."""
    stage = "checksums"
    path_of = {e.line: e.path for e in entries}
    current_paths = {e.path: e.line for e in entries}
    now = {line: n for n, line in enumerate(raw, start=1) if not path_of.get(n, "").startswith(prefix)}
    base_raw = _raw_lines(base_sums)
    base_entries, _ = parse_sums(base_sums)
    base_path_of = {e.line: e.path for e in base_entries}
    base_set = set(base_raw)
    for number, line in enumerate(base_raw, start=1):
        if line in now:
            continue
        path = base_path_of.get(number)
        if path and path in current_paths:
            result.add(stage, "CHECKSUM-CHANGED", SUMS, current_paths[path], f"the existing line for {path} changed (base line {number})")
        else:
            shown = path or repr(line.decode("utf-8", "replace"))
            result.add(stage, "CHECKSUM-CHANGED", SUMS, None, f"the existing line for {shown} was removed (base line {number})")
    base_paths = set(base_path_of.values())
    for line, number in sorted(now.items(), key=lambda kv: kv[1]):
        if line in base_set or path_of.get(number) in base_paths:
            continue  # unchanged, or already reported as changed
        result.add(stage, "CHECKSUM-CHANGED", SUMS, number, f"a new line outside {prefix}: {line[:100].decode('utf-8', 'replace')!r}")
