"""The Ideas archive as the engine sees it (KINDS.md §3): ``ideas-archive``, its check and its release view.

``verify_archive`` hashes every listed file and keeps the JSON and JSONL bytes;
:func:`check` adds the verified tables (parquet, read once from the files that
just verified), runs :func:`~rapgen.kinds.ideas.archive.check.check_archive` on
them and keeps the parsed archive as the root's state. A listed file whose
bytes did not verify was reported by verify already: it is not read, and what
depends on it is not evaluated.

Format 1 is one implicit release (every cutoff of ``config.json`` resolved).
The release rhythm of format 2 is declared (:data:`IDEAS_HISTORY`: monthly
windows, a cutoff resolved four months after it opened) but its archives are
not read yet: a format-2 ``ARCHIVE.json`` is one finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from rapgen.archive import ARCHIVE_JSON, ArchiveKind, CheckInput, Finding, HistorySpec, KindCheck, Release
from rapgen.kinds.ideas.archive.check import (
    BENCHMARK,
    EVAL_FILES,
    FORMAT,
    MODEL_FILES,
    REQUIRED_FILES,
    IdeasArchive,
    check_archive,
)
from rapgen.kinds.ideas.archive.lines import Bad, day, integer, invariant, read_document, string

FORMAT_VERSIONS = (1,)
ARCHIVE_KEYS = ("format", "format_version", "name", "created")
TABLE_SUFFIX = ".parquet"

# IDEAS.md §6 / KINDS.md §5: a roll ingests month M, opens M + 1 and resolves M − 3.
IDEAS_HISTORY = HistorySpec(
    window_months=1,
    target_months=4,
    window_files=(f"{BENCHMARK}/windows/{{start}}/papers.parquet", f"{BENCHMARK}/windows/{{start}}/assignments.parquet"),
    opened_files=(f"{BENCHMARK}/cutoffs/{{key}}/episodes.jsonl",),
    resolved_files=(f"{BENCHMARK}/cutoffs/{{key}}/futures.jsonl",),
    reveal_files=("archive/models/{model}/origins/{key}/predictions.jsonl",),
)


@dataclass(frozen=True)
class ArchiveInfo:
    """ARCHIVE.json of an Ideas archive (other keys are kept in ``raw``)."""

    name: str
    created: date
    format_version: int
    synthetic: bool
    raw: dict[str, Any]


def parse_archive_json(path: str, data: bytes) -> tuple[ArchiveInfo | None, list[Finding]]:
    findings: list[Finding] = []

    def build(obj: dict) -> ArchiveInfo:
        missing = [k for k in ARCHIVE_KEYS if k not in obj]
        if missing:
            raise Bad(f"missing key {missing[0]!r}")
        if obj["format"] != FORMAT:
            raise Bad(f"'format' must be {FORMAT!r}, found {obj['format']!r}")
        version = integer(obj, "format_version", 1)
        synthetic = obj.get("synthetic", False)
        if not isinstance(synthetic, bool):
            raise Bad(f"'synthetic' must be true or false, found {synthetic!r}")
        return ArchiveInfo(string(obj, "name", nonempty=True), day(obj, "created"), version, synthetic, dict(obj))

    info = read_document(path, data, findings, build)
    if info is not None and info.format_version not in FORMAT_VERSIONS:
        findings.append(invariant(path, None, f"format_version {info.format_version}: this rapgen reads Ideas archives of format "
                                              f"{', '.join(map(str, FORMAT_VERSIONS))} (one implicit release)"))
    return info, findings


def _tables(inp: CheckInput) -> dict[str, bytes]:
    """The verified parquet files' bytes, read once each."""
    return {p: (inp.root / p).read_bytes() for p in sorted(inp.verified) if p.endswith(TABLE_SUFFIX)}


def check(inp: CheckInput) -> KindCheck:
    """VERIFY.md step 5 for an Ideas archive: ARCHIVE.json, then every file and invariant of IDEAS.md §1–§4."""
    info, findings = parse_archive_json(ARCHIVE_JSON, inp.documents[ARCHIVE_JSON]) if ARCHIVE_JSON in inp.documents else (None, [])
    files = {p: b for p, b in inp.documents.items() if p in inp.verified}
    files.update(_tables(inp))
    unverified = frozenset(inp.listed) - inp.verified
    archive, found = check_archive(files, unverified=unverified)
    return KindCheck(findings + found, None, info.raw if info is not None else None, archive)


class IdeasRelease(Release):
    """One release of an Ideas root: the parsed archive verify checked (``archive``)."""

    @property
    def archive(self) -> IdeasArchive:
        return self.verified.state


ARCHIVE = ArchiveKind(FORMAT, FORMAT_VERSIONS, REQUIRED_FILES, (*MODEL_FILES, *(f"eval/{{judge}}/{n}" for n in EVAL_FILES)),
                      check, IdeasRelease, IDEAS_HISTORY)
