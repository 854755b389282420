"""Read a history from disk into :class:`HistoryInput` and run every history check.

Only files whose bytes verified are read; the others were already reported
by the verifier and are skipped here (never reported twice).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Mapping, Sequence

from rapgen.archive.layout import ORIGIN_FILE_PATTERN, SEARCH_ORIGIN_PATTERN
from rapgen.archive import parse
from rapgen.archive.croissant.check import check_croissants
from rapgen.archive.history.check import HistoryInput, check_history, first_release, release_numbers
from rapgen.archive.history.ledger import UnionLedger, compare_manifest
from rapgen.archive.history.prefetch import LedgerPrefetch, ledger_sources
from rapgen.archive.history.spec import RAP_HISTORY, HistorySpec
from rapgen.archive.history.records import (
    REVEAL_FILES,
    SEARCH_FILES,
    WINDOW_FILES,
    Commitment,
    ReleaseRecord,
    commitment_key,
    manifest_path,
    parse_commitment,
    parse_release_record,
    record_path,
)
from rapgen.archive.layout import ARCHIVE_JSON, ASSIGNMENTS_PARQUET, FIELDS_JSONL, ORIGINS_JSON, PAPERS_PARQUET
from rapgen.archive.records import Category, Finding, Origins
from rapgen.archive.sums import SUMS, SumsUnreadable, check_paths, escape, parse_sums, read_sums
from rapgen.errors import ArchiveError, UsageProblem

_SEARCH = re.compile(SEARCH_ORIGIN_PATTERN)
_REVEAL = re.compile(ORIGIN_FILE_PATTERN)


@dataclass
class LoadedHistory:
    """A history as read from disk, and the findings of reading and checking it."""

    input: HistoryInput
    findings: list[Finding] = field(default_factory=list)
    origins: Origins | None = None

    @property
    def latest(self) -> ReleaseRecord | None:
        records = self.input.records
        return records[max(records)] if records else None

    @property
    def is_history(self) -> bool:
        return bool(release_numbers(self.input.root))


def read_root_sums(root: Path) -> dict[str, str]:
    """The root SHA256SUMS as path → digest (lines that do not parse are the verifier's to report)."""
    try:
        data = read_sums(root / SUMS)
    except SumsUnreadable:
        return {}
    entries, _ = parse_sums(data)
    safe, _ = check_paths(entries)
    return {e.path: e.digest for e in safe}


def load_history(
    root: str | Path, verified: set[str] | None = None, *, with_ledger: bool = True,
    sums: Mapping[str, str] | None = None, documents: Mapping[str, bytes] | None = None,
    origins: Origins | None = None, field_ids: Sequence[str] | None = None, spec: HistorySpec = RAP_HISTORY,
    prefetch: LedgerPrefetch | None = None,
) -> LoadedHistory:
    """Read every history file of the archive below ``root``; ``verified`` defaults to every listed path.

    ``sums`` (path -> digest of the root SHA256SUMS) and ``documents`` (path -> the
    bytes the verifier hashed) spare reading them again; a path not in
    ``documents`` is read from disk. ``origins`` and ``field_ids``, when the
    caller parsed them already, are used instead of parsing those files again. ``spec``: the kind's
    release rhythm (what a roll resolves, opens and adds). ``prefetch``: a union ledger being built in a
    thread, taken by the ledger checks when it was built from their very inputs."""
    root = Path(root)
    if sums is None:
        _require_root(root)
    sums = dict(sums) if sums is not None else read_root_sums(root)
    ok = set(sums) if verified is None else verified
    findings: list[Finding] = []
    unparsed: set[str] = set()
    kept = documents or {}

    def read(path: str) -> bytes | None:
        if path not in ok:
            unparsed.add(path)
            return None
        data = kept.get(path)
        return data if data is not None else (root / path).read_bytes()

    records: dict[int, ReleaseRecord] = {}
    manifests: dict[int, dict[str, str]] = {}
    for k in release_numbers(sums):
        _read_release(k, read, records, manifests, findings, unparsed, spec.rolls)
    origins = origins if origins is not None else _read_origins(read)
    format_version = _format_version(read(ARCHIVE_JSON)) if ARCHIVE_JSON in sums else None
    commitments = _read_commitments(sums, read, findings)
    inp = HistoryInput(
        sums, records, manifests, origins.origins if origins else (), origins.strict_origin if origins else None,
        origins.window_months if origins else spec.window_months, format_version, commitments=commitments,
        unparsed=frozenset(unparsed), spec=spec,
    )
    loaded = LoadedHistory(inp, findings, origins)
    if with_ledger and origins is not None and release_numbers(sums):
        _ledger_checks(root, loaded, read, field_ids, ok, prefetch)
    loaded.findings.extend(check_history(loaded.input))
    loaded.findings.extend(check_croissants(sums, manifests, bool(release_numbers(sums)), read))
    return loaded


def _require_root(root: Path) -> None:
    """A root read without verifying it first must at least be an archive's root (one line, never an empty answer)."""
    if not root.is_dir():
        raise UsageProblem(f"{escape(str(root))}: the root is not a directory")
    if not (root / SUMS).is_file():
        raise ArchiveError(f"{escape(str(root))}: no {SUMS} at the root, so it is not an archive (run 'rapgen seal' to create it)")


def _read_release(k, read, records, manifests, findings, unparsed, keyed: bool = True) -> None:
    data = read(record_path(k))
    if data is not None:
        record, problems = parse_release_record(record_path(k), data, keyed=keyed)
        findings.extend(_tag(problems, k))
        if record is not None:
            records[k] = record
    data = read(manifest_path(k))
    if data is not None:
        entries, problems = parse_sums(data, strict=True)
        safe, path_problems = check_paths(entries, strict=True)
        problems = [f for f in problems + path_problems if f.category is not Category.WARNING]
        for f in problems:
            detail = f"release {k}: {f.detail}" + ("" if f.path == SUMS else f" ({f.path})")
            findings.append(Finding(manifest_path(k), f.line, f.category, detail))
        if not problems:
            manifests[k] = {e.path: e.digest for e in safe}
        else:
            unparsed.add(manifest_path(k))


def _tag(problems: list[Finding], k: int) -> list[Finding]:
    return [Finding(f.path, f.line, f.category, f"release {k}: {f.detail}") for f in problems]


def _read_origins(read) -> Origins | None:
    data = read(ORIGINS_JSON)
    if data is None:
        return None
    origins, _ = parse.parse_origins(ORIGINS_JSON, data)  # its problems are the verifier's findings
    return origins


def _format_version(data: bytes | None) -> int | None:
    try:
        value = json.loads(data)["format_version"] if data is not None else None
    except (ValueError, TypeError, KeyError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read_commitments(sums: dict[str, str], read, findings: list[Finding]) -> dict[str, Commitment]:
    out: dict[str, Commitment] = {}
    for path in sorted(sums):
        if not path.startswith("archive/commitments/"):
            continue
        if commitment_key(path) is None:
            findings.append(Finding(path, None, Category.INVARIANT, "a commitment lives at archive/commitments/<origin>/<model_id>.json"))
            continue
        data = read(path)
        if data is None:
            continue
        commitment, problems = parse_commitment(path, data)
        findings.extend(Finding(f.path, f.line, Category.INVARIANT, f.detail) for f in problems)
        if commitment is not None:
            out[path] = commitment
    return out


def _ledger_checks(root: Path, loaded: LoadedHistory, read, field_ids: Sequence[str] | None = None,
                   ok: set[str] | None = None, prefetch: LedgerPrefetch | None = None) -> None:
    """Window rows and the opened origins' manifests, against the union ledger. ``ok``: the paths
    that verified (a table is tested by membership, never read just to see that it is there)."""
    ok = set(loaded.input.root) if ok is None else ok
    inp = loaded.input
    base = (PAPERS_PARQUET, ASSIGNMENTS_PARQUET, FIELDS_JSONL)
    if any(p not in inp.root or p not in ok for p in base):
        return
    if field_ids is None:
        fields, problems = parse.parse_fields(FIELDS_JSONL, read(FIELDS_JSONL) or b"")
        if problems:
            return
        field_ids = [f.field_id for f in fields]
    sources = ledger_sources(root, inp.root, ok)
    ledger = prefetch.take(root, sources, field_ids) if prefetch is not None else None
    if ledger is None:
        ledger = UnionLedger(root / PAPERS_PARQUET, root / ASSIGNMENTS_PARQUET, sources, list(field_ids))
    try:
        shards = {}
        problems_found = list(ledger.problems)
        for path in sorted(inp.root):
            m = _SEARCH.match(path)
            data = read(path) if m else None
            if data is None:
                continue
            origin = date.fromisoformat(m.group(1))
            entries, parse_problems = parse.parse_manifest(path, data, m.group(2))
            problems_found += [(path, f.detail) for f in parse_problems]
            shards.setdefault(origin, []).extend(entries)
            expected = ledger.shard_manifests(origin, inp.window_months)[m.group(2)]
            problems_found += compare_manifest(expected, entries, path)
        spans = list(ledger.spans)
    finally:
        ledger.close()
    loaded.input = replace(inp, windows=spans, shards=shards)
    for path, detail in problems_found:
        k = first_release(loaded.input, path)
        loaded.findings.append(Finding(path, None, Category.INVARIANT, (f"release {k}: " if k else "") + detail))


def reveal_files(paths) -> dict[tuple[str, date], set[str]]:
    """Revealed or open Live files: (model_id, origin) → file names under models/<id>/origins/<origin>/."""
    out: dict[tuple[str, date], set[str]] = {}
    for path in paths:
        m = _REVEAL.match(path)
        if m:
            out.setdefault((m.group(1), date.fromisoformat(m.group(2))), set()).add(m.group(3) + ".jsonl")
    return out


__all__ = ["LoadedHistory", "load_history", "read_root_sums", "reveal_files", "REVEAL_FILES", "SEARCH_FILES", "WINDOW_FILES"]
