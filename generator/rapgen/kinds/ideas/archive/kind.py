"""The Ideas archive as the engine sees it (KINDS.md §3): ``ideas-archive``, its check and its release view.

``verify_archive`` hashes every listed file and keeps the JSON and JSONL bytes;
:func:`check` adds the verified tables (parquet, read once from the files that
just verified), runs :func:`~rapgen.kinds.ideas.archive.check.check_archive` on
them and keeps the parsed archive as the root's state. A listed file whose
bytes did not verify was reported by verify already: it is not read, and what
depends on it is not evaluated.

Format 1 is one implicit release (every cutoff of ``config.json`` resolved).
Format 2 records its history (:data:`~.history.IDEAS_HISTORY`: monthly windows,
a cutoff resolved four months after it opened): verify walks the hash chain
and what each release added, and the files are checked against the cutoffs
the latest release resolves. ``root.release(n)`` is release n as a view of the
same parsed files: its listed episodes, the futures of its resolved cutoffs and
the model files it listed (:class:`IdeasRelease`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from typing import Any

from rapgen.archive import ARCHIVE_JSON, ArchiveKind, CheckInput, Finding, KindCheck, ModelFolder, Release, load_history
from rapgen.errors import ArchiveError
from rapgen.kinds.ideas.archive.check import (
    EVAL_FILES,
    FORMAT,
    MODEL_FILES,
    REQUIRED_FILES,
    IdeasArchive,
    check_archive,
    merge_parts,
)
from rapgen.kinds.ideas.archive.history import IDEAS_HISTORY, episodes_path, history_findings, resolved_keys
from rapgen.kinds.ideas.archive.lines import Bad, day, integer, invariant, read_document, string

FORMAT_VERSIONS = (1, 2)
ARCHIVE_KEYS = ("format", "format_version", "name", "created")
TABLE_SUFFIX = ".parquet"



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
                                              f"{', '.join(map(str, FORMAT_VERSIONS))}"))
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
    history = load_history(inp.root, set(inp.verified), with_ledger=False, sums=inp.listed, documents=inp.documents,
                           spec=IDEAS_HISTORY)
    findings += history.findings + history_findings(history.input)
    if info is not None and history.is_history != (info.format_version == 2):
        findings.append(invariant(ARCHIVE_JSON, None, f"format_version {info.format_version}, but the archive "
                                  f"{'records' if history.is_history else 'has no'} release history (format 2 has one, format 1 none)"))
    archive, found = check_archive(files, unverified=unverified, resolved=resolved_keys(history.input))
    return KindCheck(findings + found, history if history.is_history else None, info.raw if info is not None else None, archive)


class IdeasRelease(Release):
    """One release of an Ideas root: the parsed archive verify checked (``archive``), as this release listed it.

    The archive as it stands is what verify parsed. A past release is a view of the same parsed files:
    the episodes it listed, the futures of the cutoffs it resolved, and each model's unit groups and
    evaluator folders it listed. A release whose listed bytes an errata replaced since is parsed once
    from the bytes it listed (kept under ``releases/NNNN/superseded/``)."""

    @cached_property
    def archive(self) -> IdeasArchive:
        state: IdeasArchive = self.verified.state
        if self.current:
            return state
        listed = set(self.files)
        if not all(self.is_own(p) for p in listed if not p.startswith("archive/releases/")):
            return self._reparsed()
        resolved = tuple(self.record.resolved_origins) or state.resolved
        pools = state.pools
        if pools is not None:
            episodes = tuple(e for e in pools.episodes if _episode_listed(e.cutoff, state, listed))
            kept = {e.episode_id for e in episodes}
            futures = tuple(f for f in pools.futures if f.episode_id in kept and _cutoff_of(f.episode_id) in set(resolved))
            pools = replace(pools, episodes=episodes, futures=futures)
        models = {}
        for model_id, mf in state.models.items():
            parts = [part for base, part in mf.parts.items() if f"{base}/predictions.jsonl" in listed]
            if not parts:
                continue
            models[model_id] = merge_parts(mf, parts, listed)
        return replace(state, pools=pools, models=models, resolved=resolved)

    def _reparsed(self) -> IdeasArchive:
        files = {}
        for path in self.files:
            if path.startswith("archive/releases/"):
                continue
            data = self.verified.documents.get(self.source(path))
            files[path] = data if data is not None else self.disk_path(path).read_bytes()
        archive, findings = check_archive(files, resolved=self.record.resolved_origins or None)
        if findings:
            first = findings[0]
            raise ArchiveError(f"release {self.number}: {first.path}: {first.detail} (the bytes it listed do not check)")
        return archive


def _cutoff_of(episode_id: str) -> date:
    return date.fromisoformat(episode_id.rsplit("@", 1)[1])


def _episode_listed(cutoff: date, state: IdeasArchive, listed: set[str]) -> bool:
    """A cutoff's episodes are in the release when it lists their file (base episodes.jsonl holds the rest)."""
    path = episodes_path(cutoff)
    return path in listed if path in state.episode_files else True


_EVAL = tuple(f"eval/{{judge}}/{n}" for n in EVAL_FILES)
_GROUP = (*MODEL_FILES[1:], *_EVAL)  # one unit group: the cutoffs of predictions.jsonl, or origins/<t>/ for a later cutoff t
# What seal lets an Ideas model folder hold (IDEAS.md §1, §4; RELEASES.md): a new folder its files and later
# cutoffs' groups; a sealed folder gains evaluator files (eval/<judge>/ and the novelty features the evaluator
# writes) for the cutoffs it has, and whole groups of later cutoffs — never a changed line.
FOLDER = ModelFolder(
    files=(MODEL_FILES[0], *_GROUP, *(f"origins/{{key}}/{n}" for n in _GROUP)),
    required=(MODEL_FILES[0], MODEL_FILES[1]),
    later=("features.parquet", *_EVAL, *(f"origins/{{key}}/{n}" for n in _GROUP)),
)
ARCHIVE = ArchiveKind(FORMAT, FORMAT_VERSIONS, REQUIRED_FILES, (*MODEL_FILES, *_EVAL), check, IdeasRelease, IDEAS_HISTORY, FOLDER)
