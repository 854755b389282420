"""The repository-level checks: git (what changed since the base), archive integrity, SHA256SUMS lines.

The submission's own files are checked in :mod:`.files`; both fill a
:class:`~rapgen.submit.review.result.CheckResult`.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from rapgen.archive import (
    SUMS_NAME, Archive, Category, ProblemKind, SumsLine, SumsUnreadable, read_sums, sums_lines, verify_archive,
    INTERVENTION_MODEL_FILES,
)
from rapgen.kinds import registry
from rapgen.errors import UsageProblem
from rapgen.search import validate_call
from rapgen.submit.review.files import keyword_of
from rapgen.submit.review.result import CheckResult
from rapgen.text import escape_terminal

def visible(value: object) -> str:
    """A path or ref for a one-line message, controls escaped."""
    return escape_terminal(str(value))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def is_git_commit(root: Path, ref: str) -> bool:
    return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


def _commitment_of(path: str, model_id: str) -> bool:
    """``archive/commitments/<origin>/<model_id>.json``: a sealed submission of this model."""
    return re.match(rf"^archive/commitments/\d{{4}}-\d{{2}}-01/{re.escape(model_id)}\.json$", path) is not None


def check_git(result: CheckResult, root: Path, base: str, prefix: str) -> tuple[bytes, set[str]]:
    """Files changed since ``base`` (committed, staged, unstaged, untracked under archive/); returns base's
    SHA256SUMS and the paths changed under the folder (a pull request may add files to a listed model)."""
    if not is_git_commit(root, base):
        raise UsageProblem(f"--base {visible(base)}: not a commit of the git repository at {visible(root)}")
    changed: set[str] = set()
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", base, "--")
    if diff.returncode != 0:
        raise UsageProblem(f"--base {visible(base)}: git diff failed: {visible(diff.stderr.decode(errors='replace').strip())}")
    changed.update(p for p in diff.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", "archive", SUMS_NAME)
    changed.update(p for p in untracked.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    for path in sorted(changed):
        if path == SUMS_NAME or path.startswith(prefix) or _commitment_of(path, result.model_id):
            continue
        result.add("integrity", "TOUCHED", path, None,
                   f"changed since {base}, but a submission may only add {prefix}, its commitments and their SHA256SUMS lines")
    shown = _git(root, "show", f"{base}:{SUMS_NAME}")
    return (shown.stdout if shown.returncode == 0 else b""), {p for p in changed if p.startswith(prefix)}


def listed_files(sums: bytes, prefix: str) -> dict[str, str]:
    """The folder's files a SHA256SUMS lists: name relative to the folder -> digest."""
    return {line.path[len(prefix):]: line.digest for line in sums_lines(sums) if line.path and line.digest and line.path.startswith(prefix)}


def check_listed_unchanged(result: CheckResult, prefix: str, listed: dict[str, str], digests: dict[str, str], where: str) -> None:
    """An existing model's listed files never change: each is still there, with its listed bytes."""
    for name, digest in sorted(listed.items()):
        if name not in digests:
            result.add("integrity", "EXISTS", prefix + name, None,
                       f"model {result.model_id!r} already exists on {where}, and its listed file {name} was removed; an existing model's files never change")
        elif digests[name] != digest:
            result.add("integrity", "EXISTS", prefix + name, None,
                       f"model {result.model_id!r} already exists on {where}, and its listed file {name} changed "
                       f"(listed {digest[:12]}…, now {digests[name][:12]}…); a pull request may only add files to it")


# Findings of verify's format-2 checks on a model folder that the submission section does not make itself:
# the intervention records (INTERVENTIONS.md §0) and the kinds of their cross-file rules.
_INTERVENTION_KINDS = {ProblemKind.EVIDENCE, ProblemKind.INPUT, ProblemKind.PANEL, ProblemKind.BASE_COVERAGE}
_KEPT_CATEGORIES = {Category.MALFORMED, Category.INVARIANT}


def _intervention_finding(finding, prefix: str) -> bool:
    name = finding.path[len(prefix):]
    return finding.category in _KEPT_CATEGORIES and (name in INTERVENTION_MODEL_FILES or finding.kind in _INTERVENTION_KINDS)


def check_integrity(result: CheckResult, root: Path, prefix: str, *, invariants: bool = True) -> Archive:
    """``rapgen verify`` on the repository, leaving the new folder's files and SHA256SUMS lines to the later sections.

    Returns the archive as it stands, as verify built it from the bytes it hashed (a
    :class:`~rapgen.archive.RapRelease`), or, when something did not verify, the kit's
    reader of the repository for the checks that follow.
    ``invariants=False`` (the submission's files were refused as too large) hashes
    every file but parses none, so a huge file cannot exhaust memory or time here."""
    # With the Search-call validator, as 'rapgen verify' and the overlay's opening: the scores and the
    # render may then reuse this verification when the overlay holds the same bytes (overlay.py).
    report = verify_archive(root, invariants=invariants, kinds=registry().formats, validate_call=validate_call)
    if not invariants:
        result.notes.append("the archive's invariants were not checked, because the submission's files were refused as too large")
    folder_lines = _folder_line_numbers(root, prefix)
    for finding in report.findings:
        if finding.category is Category.WARNING:
            result.notes.append(f"{finding.path}{':' + str(finding.line) if finding.line else ''}: {finding.detail}")
            continue
        if finding.path.startswith(prefix) and _intervention_finding(finding, prefix):
            result.add("submission", "MALFORMED" if finding.kind is None else keyword_of(finding), finding.path, finding.line, finding.detail)
            continue  # the intervention records are checked by verify's own rules (archive/intervention_folder.py)
        if finding.path.startswith(prefix) or (finding.path == SUMS_NAME and finding.line in folder_lines):
            continue  # checked below, with precise fixes
        if _commitment_of(finding.path, result.model_id):
            continue  # the submission's own commitment: parsed and judged in the Live section
        detail = finding.detail or finding.category.value.lower()
        if finding.expected or finding.actual:
            detail += f" (expected {finding.expected}, found {finding.actual})"
        result.add("integrity", "INTEGRITY", finding.path, finding.line, f"{finding.category.value}: {detail}")
    return report.verified.release() if report.verified is not None else Archive(root)


def _read_sums(root: Path) -> bytes | None:
    try:
        return read_sums(root / SUMS_NAME)
    except SumsUnreadable:
        return None  # the integrity section reports it


def _folder_line_numbers(root: Path, prefix: str) -> set[int]:
    data = _read_sums(root)
    return {line.line for line in sums_lines(data) if _names_folder(line, prefix)} if data else set()


def _names_folder(line: SumsLine, prefix: str, others: tuple[str, ...] = ()) -> bool:
    raw = line.raw
    return (line.path or "").startswith(prefix) or prefix.encode("utf-8", "surrogateescape") in raw or (line.path or "") in others


def canonical_lines(prefix: str, digests: dict[str, str]) -> list[str]:
    """The canonical SHA256SUMS lines of the folder's files (``rapgen seal`` writes exactly these)."""
    return [f"{digests[name]}  {prefix}{name}" for name in sorted(digests, key=lambda n: n.encode("utf-8"))]


def check_sums(result: CheckResult, root: Path, prefix: str, digests: dict[str, str], base_sums: bytes | None,
               others: dict[str, str] | None = None) -> None:
    """The folder's SHA256SUMS lines (and those of ``others``, the submission's commitments: archive
    path -> digest): present, canonical, right digests, sorted; with a base, nothing else changed."""
    stage = "checksums"
    data = _read_sums(root)
    if data is None:
        result.add(stage, "CHECKSUM", SUMS_NAME, None, "SHA256SUMS is missing or not a regular file")
        return
    others = dict(others or {})
    extra = tuple(others)
    result.sums_lines = sorted(canonical_lines(prefix, digests) + [f"{d}  {p}" for p, d in others.items()],
                               key=lambda line: line[66:].encode("utf-8"))
    lines = sums_lines(data)
    seen: dict[str, int] = {}
    for line in lines:
        if not _names_folder(line, prefix, extra):
            continue
        if line.path is None or not (line.path.startswith(prefix) or line.path in others):
            result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"a line naming the folder is not a SHA256SUMS line ({line.error or 'no path'})")
            continue
        if not line.canonical:
            result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"the line for {line.path} is not canonical ('<64 lower-case hex>  <path>')")
        if line.path in seen:
            result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"{line.path} is listed twice (first on line {seen[line.path]})")
            continue
        seen[line.path] = line.line
        if line.path in others:
            if line.digest != others[line.path]:
                result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"wrong digest for {line.path}: listed {line.digest}, actual {others[line.path]}")
            continue
        name = line.path[len(prefix):]
        if name not in digests:
            result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"lists {line.path}, which is not a file of the submission")
        elif line.digest != digests[name]:
            result.add(stage, "CHECKSUM", SUMS_NAME, line.line, f"wrong digest for {line.path}: listed {line.digest}, actual {digests[name]}")
    for path in sorted([prefix + name for name in digests] + list(others)):
        if path not in seen:
            result.add(stage, "CHECKSUM", SUMS_NAME, None, f"no line for {path}")
    listed = [line for line in lines if line.path is not None]
    keys = [line.path.encode("utf-8", "surrogateescape") for line in listed]
    if keys != sorted(keys):
        bad = next(i for i in range(1, len(keys)) if keys[i] < keys[i - 1])
        result.add(stage, "CHECKSUM", SUMS_NAME, listed[bad].line, "lines are not sorted by path (byte order)")
    if data and not data.endswith(b"\n"):
        result.add(stage, "CHECKSUM", SUMS_NAME, len(lines), "the last line has no newline")
    if base_sums is not None:
        _check_base_lines(result, prefix, lines, sums_lines(base_sums), extra)


def _check_base_lines(result: CheckResult, prefix: str, lines: list[SumsLine], base: list[SumsLine], extra: tuple[str, ...]) -> None:
    """Every base line is still there, byte for byte (an existing model's lines too); no new line outside
    the folder and the submission's commitments."""
    stage = "checksums"
    now = {line.raw: line for line in lines}
    current_paths = {line.path: line.line for line in lines if line.path}
    base_raw = {line.raw for line in base}
    base_paths = {line.path for line in base if line.path}
    for line in base:
        if line.raw in now:
            continue
        if line.path and line.path in current_paths:
            result.add(stage, "CHECKSUM-CHANGED", SUMS_NAME, current_paths[line.path], f"the existing line for {line.path} changed (base line {line.line})")
        else:
            shown = line.path or repr(line.raw.decode("utf-8", "replace"))
            result.add(stage, "CHECKSUM-CHANGED", SUMS_NAME, None, f"the existing line for {shown} was removed (base line {line.line})")
    for raw, line in sorted(now.items(), key=lambda kv: kv[1].line):
        if raw in base_raw or line.path in base_paths or _names_folder(line, prefix, extra):
            continue  # unchanged, already reported as changed, or the submission's own line
        result.add(stage, "CHECKSUM-CHANGED", SUMS_NAME, line.line, f"a new line outside {prefix}: {raw[:100].decode('utf-8', 'replace')!r}")
