"""Release operations: start a history, roll a window in, cut a models or errata release.

Each operation refuses an archive that does not verify, stages every new
file in a hidden folder next to ``archive/``, moves the files into place,
re-seals ``SHA256SUMS`` and verifies the result with its history; on any
error it puts every byte back as it was, so nothing is left half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rapgen.archive.calendar import add_months
from rapgen.archive.history.dates import deadline_problem, roll_date_problem
from rapgen.archive.history.ledger import UnionLedger, WindowSource
from rapgen.archive.history.load import LoadedHistory
from rapgen.archive.history.memory import DEFAULT_CLOSES_DAYS, format2_archive_json
from rapgen.archive.history.spec import RAP_HISTORY, HistorySpec
from rapgen.archive.history.records import (
    SEARCH_FILES,
    WINDOW_FILES,
    OpenOrigin,
    ReleaseKind,
    ReleaseRecord,
    Replaced,
    format_record,
    manifest_path,
    record_path,
    search_path,
    superseded_path,
    window_path,
)
from rapgen.archive.croissant.document import croissant_path, missing_croissants, release_croissant
from rapgen.archive.layout import ARCHIVE_JSON, ASSIGNMENTS_PARQUET, CROISSANT_JSON, FIELDS_JSONL, PAPERS_PARQUET
from rapgen.archive.sums import SUMS, format_sums, sha256_file
from rapgen.archive.verify import format_finding, verify_archive
from rapgen.archive.writer import write_assignments, write_papers
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.io import atomic_write_bytes, dumps_line

Kinds = Optional[Mapping[str, Any]]  # format -> ArchiveKind (rapgen.kinds.registry().formats); None: RAP alone
_SHOWN = 3


@dataclass(frozen=True)
class Replacement(Replaced):
    """An errata entry: what the release record lists (the archive path to replace and why) and the
    file holding its new bytes."""

    source: Path


@dataclass(frozen=True)
class ReleaseResult:
    record: ReleaseRecord
    added: tuple[str, ...]  # archive paths the release lists that its predecessor did not (or listed differently)

    def summary(self) -> list[str]:
        r = self.record
        resolved = f"resolved {', '.join(o.isoformat() for o in r.resolved_origins)}" if r.resolved_origins else "no time key"
        head = f"release {r.release} ({r.kind.value}, {r.date}): {resolved}"
        if r.open_origin is not None:
            head += f"; open {r.open_origin.origin} until {r.open_origin.closes}"
        return [head] + [f"added {p}" for p in self.added]


# ---------------------------------------------------------------- staging
class _Stage:
    """New and replacing files, written under a hidden folder of the root and moved in at commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = Path(tempfile.mkdtemp(prefix=".rapgen-release-", dir=root))
        self.files: dict[str, Path] = {}
        self.digests: dict[str, str] = {}
        self.removed: list[str] = []  # listed files the release drops (only release start: archive/croissant.json)

    def put(self, path: str, data: bytes) -> None:
        self.write(path, lambda target: atomic_write_bytes(target, data))

    def write(self, path: str, writer: Callable[[Path], None]) -> None:
        target = self.dir / "new" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        writer(target)
        self.files[path] = target
        self.digests[path] = sha256_file(target)

    def commit(self, sums: dict[str, str], check: Callable[[], None]) -> None:
        """Move every staged file into place, write SHA256SUMS, run ``check``; undo all on any error."""
        old_sums = (self.root / SUMS).read_bytes()
        moved: list[str] = []
        backups: dict[str, Path] = {}
        made: list[Path] = []
        try:
            for path in self.removed:
                backups[path] = self.dir / "old" / path
                backups[path].parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.root / path, backups[path])
            for path, staged in self.files.items():
                target = self.root / path
                if target.exists():
                    backups[path] = self.dir / "old" / path
                    backups[path].parent.mkdir(parents=True, exist_ok=True)
                    os.replace(target, backups[path])
                made += _make_parents(target.parent)
                os.replace(staged, target)
                moved.append(path)
            atomic_write_bytes(self.root / SUMS, format_sums(sums))
            check()
        except BaseException:
            atomic_write_bytes(self.root / SUMS, old_sums)
            for path in reversed(moved):
                (self.root / path).unlink(missing_ok=True)
            for path, backup in backups.items():
                os.replace(backup, self.root / path)
            for folder in reversed(made):
                try:
                    folder.rmdir()
                except OSError:
                    pass
            raise
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _make_parents(folder: Path) -> list[Path]:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        f.mkdir()
    return list(reversed(missing))


# ---------------------------------------------------------------- shared steps
def _verified_history(root: Path, kinds: Kinds = None) -> LoadedHistory:
    return verified_root(root, kinds)[0]


def verified_root(root: Path, kinds: Kinds = None) -> tuple[LoadedHistory, HistorySpec]:
    """The history of a root that verifies (``kinds``: format -> ArchiveKind; None: RAP alone), and its
    kind's :class:`HistorySpec`; an archive that does not verify is refused, naming its first finding."""
    if not root.is_dir():
        raise UsageProblem(f"{root}: the root is not a directory")
    report = verify_archive(root, kinds=kinds)
    if not report.ok:
        primary = [f for f in report.errors if f.category.value != "NOT-EVALUATED"] or report.errors
        first = format_finding(primary[0])
        raise ArchiveError(f"{root}: the archive does not verify ({len(report.errors)} finding"
                           f"{'s' * (len(report.errors) != 1)}, first: {first}); run 'rapgen release verify' and fix it first")
    verified = report.verified
    spec = (verified.kind.history if verified is not None else None) or RAP_HISTORY
    loaded = report.history if report.history is not None else LoadedHistory(verified.history if verified is not None else None)
    return loaded, spec


def _check_after(root: Path, kinds: Kinds = None) -> Callable[[], None]:
    def check() -> None:
        report = verify_archive(root, kinds=kinds)
        if not report.ok:
            raise ArchiveError("the new release would not verify, so nothing was written: "
                               + "; ".join(format_finding(f) for f in report.errors[:_SHOWN]))
    return check


def _finish(root: Path, loaded: LoadedHistory, stage: _Stage, record: ReleaseRecord, base: dict[str, str],
            kinds: Kinds = None) -> ReleaseResult:
    """Write record k and manifest k = ``base`` + staged files + record; re-seal the root; verify."""
    k = record.release
    stage.put(record_path(k), format_record(record))
    manifest = dict(base)
    manifest.update(stage.digests)
    _stage_croissant(stage, root, record, manifest)
    manifest.update(stage.digests)
    stage.put(manifest_path(k), format_sums(manifest))
    sums = {p: d for p, d in loaded.input.root.items() if p not in stage.removed}
    sums.update(stage.digests)
    previous = loaded.input.manifests.get(k - 1, {})
    added = tuple(sorted(p for p, d in manifest.items() if previous.get(p) != d))
    stage.commit(sums, _check_after(root) if kinds is None else _check_after(root, kinds))
    return ReleaseResult(record, added)


def _stage_croissant(stage: _Stage, root: Path, record: ReleaseRecord, files: dict[str, str]) -> None:
    """Release ``record``'s Croissant file, describing ``files`` (what its manifest lists)."""
    info = json.loads(stage.files.get(ARCHIVE_JSON, root / ARCHIVE_JSON).read_bytes())
    stage.put(croissant_path(record.release), release_croissant(record, files, info))


def _field_ids(root: Path) -> list[str]:
    return [json.loads(line)["field_id"] for line in (root / FIELDS_JSONL).read_text(encoding="utf-8").splitlines() if line.strip()]


def _windows(root: Path, loaded: LoadedHistory) -> list[WindowSource]:
    starts = sorted({date.fromisoformat(p.split("/")[3]) for p in loaded.input.root if p.startswith("archive/benchmark/windows/")})
    return [WindowSource(s, window_path(s, WINDOW_FILES[0]), window_path(s, WINDOW_FILES[1]),
                         root / window_path(s, WINDOW_FILES[0]), root / window_path(s, WINDOW_FILES[1])) for s in starts]


def _stage_manifests(stage: _Stage, ledger: UnionLedger, origin: date, window_months: int) -> None:
    for regime, rows in ledger.shard_manifests(origin, window_months).items():
        stage.put(search_path(origin, f"manifest_{regime}.jsonl"), "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8"))


def _open(origin: date | None, closes: date | None, when: date, window_months: int) -> OpenOrigin | None:
    """The origin opened by a release dated ``when``, its deadline checked by the verifier's rule."""
    if origin is None:
        return None
    deadline = closes or origin + timedelta(days=DEFAULT_CLOSES_DAYS)
    problem = deadline_problem(origin, deadline, when, window_months)
    if problem:
        hint = "" if closes else f" (origin + {DEFAULT_CLOSES_DAYS} days); give a later one with --closes"
        raise UsageProblem(f"{'--closes' if closes else 'the default deadline'}: origin {origin} {problem}{hint}")
    return OpenOrigin(origin, deadline)


def _window_folder(window_dir: str | Path) -> Path:
    window_dir = Path(window_dir)
    if not window_dir.is_dir():
        raise UsageProblem(f"{window_dir}: not a directory (expected a folder with papers.parquet and assignments.parquet)")
    return window_dir


def _open_latest(root: Path, loaded: LoadedHistory, key: str = "origin") -> ReleaseRecord:
    """The latest release, which a roll needs to have an open ``key`` (RAP's origin, a kind's time key)."""
    latest = loaded.latest
    if latest is None or latest.open_origin is None:
        which = f"release {latest.release}" if latest else "the format-1 archive (one implicit release)"
        raise ArchiveError(f"{root}: {which} has no open {key}, so there is no window to roll in; "
                           + ("run 'rapgen release start' to open one" if latest is None else f"only a roll opens {key}s"))
    return latest


def _check_date(when: date, latest: ReleaseRecord) -> None:
    if when < latest.date:
        raise UsageProblem(f"release date {when} is before release {latest.release}'s date {latest.date}; release dates never decrease")


def refuse_history(root: Path, loaded: LoadedHistory) -> None:
    """``release start`` takes a format-1 archive only."""
    if loaded.is_history:
        raise UsageProblem(f"{root}: the archive already has releases (latest {loaded.latest.release if loaded.latest else '?'})")


def stage_format2(stage: _Stage, root: Path, loaded: LoadedHistory) -> None:
    """Release 1's own changes: ARCHIVE.json at format_version 2, archive/croissant.json dropped
    (superseded by release 1's own Croissant file)."""
    info = json.loads((root / ARCHIVE_JSON).read_text(encoding="utf-8"))
    info["format_version"] = 2
    stage.put(ARCHIVE_JSON, (json.dumps(info, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    if CROISSANT_JSON in loaded.input.root:
        stage.removed.append(CROISSANT_JSON)


# ---------------------------------------------------------------- operations
def start_history(
    root: str | Path, *, release_date: date | None = None, open_next: bool = True, closes: date | None = None,
    simulated: bool = False, notes: str = "",
) -> ReleaseResult:
    """Make a format-1 archive's implicit release explicit: release 1 (``initial``), format_version 2.

    With ``open_next``, the origin after the last resolved one opens for Live
    submissions, its Search manifests built from the ledger.
    """
    root = Path(root)
    loaded = _verified_history(root)
    refuse_history(root, loaded)
    origins = loaded.origins
    when = release_date or date.today()
    stage = _Stage(root)
    try:
        stage_format2(stage, root, loaded)
        nxt = add_months(origins.origins[-1], origins.window_months) if open_next else None
        if nxt is not None:
            ledger = UnionLedger(root / PAPERS_PARQUET, root / ASSIGNMENTS_PARQUET, [], _field_ids(root))
            try:
                _stage_manifests(stage, ledger, nxt, origins.window_months)
            finally:
                ledger.close()
        record = ReleaseRecord(1, when, ReleaseKind.INITIAL, origins.origins, origins.strict_origin,
                               _open(nxt, closes, when, origins.window_months),
                               None, (), simulated, notes or "the format-1 archive as release 1")
        return _finish(root, loaded, stage, record, {p: d for p, d in loaded.input.root.items() if p not in stage.removed})
    finally:
        stage.discard()


def roll_release(
    root: str | Path, window_dir: str | Path, *, closes: date | None = None, release_date: date | None = None,
    open_next: bool = True, simulated: bool | None = None, notes: str | None = None,
) -> ReleaseResult:
    """Ingest the open origin's target window from ``window_dir`` (papers.parquet, assignments.parquet).

    Every row must lie in [T, T + window) for the open origin T and every
    arxiv id must be new; the roll resolves T and, with ``open_next``, opens
    T + window (``closes`` defaults to that origin + 14 days).
    """
    root, window_dir = Path(root), _window_folder(window_dir)
    loaded = _verified_history(root)
    latest = _open_latest(root, loaded)
    target = latest.open_origin.origin
    months = loaded.origins.window_months
    end = add_months(target, months)
    when = release_date or date.today()
    _check_date(when, latest)
    problem = roll_date_problem(target, when, months)
    if problem:
        raise UsageProblem(f"a roll {problem}")
    if closes is not None and open_next:
        _open(end, closes, when, months)  # refuse a bad deadline before any work
    _check_window_folder(window_dir)
    stage = _Stage(root)
    try:
        _stage_window(stage, root, loaded, window_dir, target, end)
        nxt = end if open_next else None
        if nxt is not None:
            sources = _windows(root, loaded) + [_staged_window(stage, target)]
            ledger = UnionLedger(root / PAPERS_PARQUET, root / ASSIGNMENTS_PARQUET, sources, _field_ids(root))
            try:
                _stage_manifests(stage, ledger, nxt, months)
            finally:
                ledger.close()
        record = ReleaseRecord(
            latest.release + 1, when, ReleaseKind.ROLL, latest.resolved_origins + (target,), target, _open(nxt, closes, when, months),
            loaded.input.root[manifest_path(latest.release)], (), latest.simulated if simulated is None else simulated,
            notes if notes is not None else f"window {target} ingested",
        )
        base = dict(loaded.input.manifests[latest.release])
        base[manifest_path(latest.release)] = loaded.input.root[manifest_path(latest.release)]
        return _finish(root, loaded, stage, record, base)
    finally:
        stage.discard()


def _check_window_folder(window_dir: Path) -> None:
    names = sorted(p.name for p in window_dir.iterdir())
    missing = [n for n in WINDOW_FILES if n not in names]
    if missing:
        raise UsageProblem(f"{window_dir}: {missing[0]} is missing (a window folder holds papers.parquet and assignments.parquet)")
    extra = [n for n in names if n not in WINDOW_FILES]
    if extra:
        raise UsageProblem(f"{window_dir}: unexpected {extra[0]} (a window folder holds only papers.parquet and assignments.parquet)")


def _staged_window(stage: _Stage, start: date) -> WindowSource:
    p, a = window_path(start, WINDOW_FILES[0]), window_path(start, WINDOW_FILES[1])
    return WindowSource(start, p, a, stage.files[p], stage.files[a])


def _stage_window(stage: _Stage, root: Path, loaded: LoadedHistory, window_dir: Path, start: date, end: date) -> None:
    """Check the window's rows against the union ledger, then stage them canonically (sorted, ARCHIVE.md types)."""
    source = WindowSource(start, str(window_dir / WINDOW_FILES[0]), str(window_dir / WINDOW_FILES[1]),
                          window_dir / WINDOW_FILES[0], window_dir / WINDOW_FILES[1])
    ledger = UnionLedger(root / PAPERS_PARQUET, root / ASSIGNMENTS_PARQUET, _windows(root, loaded) + [source], _field_ids(root))
    try:
        problems = [(p, d) for p, d in ledger.problems if p in (source.papers_path, source.assignments_path)]
        for span in ledger.spans:
            if span.path in (source.papers_path, source.assignments_path) and span.n_rows and (span.min_date < start or span.max_date >= end):
                problems.insert(0, (span.path, f"rows dated {span.min_date}..{span.max_date} lie outside the window [{start}, {end})"))
        if problems:
            more = f" (and {len(problems) - 1} more problem{'s' * (len(problems) > 2)})" if len(problems) > 1 else ""
            raise ArchiveError(f"{problems[0][0]}: {problems[0][1]}{more}; nothing was written")
        papers = ledger.con.execute(
            f"SELECT arxiv_id, title, abstract, first_submitted, categories FROM read_parquet(?) ORDER BY arxiv_id COLLATE \"C\"",
            [str(source.papers_file)]).fetchall()
        rows = ledger.con.execute(
            "SELECT arxiv_id, field_id, first_submitted, \"primary\", secondary, assignment_type FROM read_parquet(?) "
            "ORDER BY field_id COLLATE \"C\", arxiv_id COLLATE \"C\"", [str(source.assignments_file)]).fetchall()
    finally:
        ledger.close()
    names = ("arxiv_id", "title", "abstract", "first_submitted", "categories")
    stage.write(window_path(start, "papers.parquet"), lambda t: write_papers(t, {n: [r[i] for r in papers] for i, n in enumerate(names)}))
    names = ("arxiv_id", "field_id", "first_submitted", "primary", "secondary", "assignment_type")
    stage.write(window_path(start, "assignments.parquet"), lambda t: write_assignments(t, {n: [r[i] for r in rows] for i, n in enumerate(names)}))


def cut_release(
    root: str | Path, kind: str, *, replaced: Sequence[Replacement] = (), release_date: date | None = None,
    simulated: bool | None = None, notes: str = "", kinds: Kinds = None,
) -> ReleaseResult:
    """Cut a ``models`` release (every unreleased line under models/ and commitments/) or an ``errata`` release
    (``kinds``: format -> ArchiveKind, for an archive of any kind; None: RAP alone)."""
    root = Path(root)
    try:
        kind_ = ReleaseKind(kind)
    except ValueError:
        raise UsageProblem(f"unknown release kind {kind!r}; cut makes 'models' or 'errata' releases") from None
    if kind_ not in (ReleaseKind.MODELS, ReleaseKind.ERRATA):
        raise UsageProblem(f"cut makes 'models' or 'errata' releases; use 'rapgen release {'roll' if kind_ is ReleaseKind.ROLL else 'start'}' for {kind}")
    if kind_ is ReleaseKind.ERRATA and not replaced:
        raise UsageProblem("an errata release names at least one replaced file (--replace PATH=FILE --reason TEXT)")
    if kind_ is ReleaseKind.MODELS and replaced:
        raise UsageProblem("a models release replaces nothing; cut an errata release to replace files")
    loaded = _verified_history(root, kinds)
    latest = loaded.latest
    if latest is None:
        raise ArchiveError(f"{root}: a format-1 archive has no releases to add to; run 'rapgen release start' first")
    when = release_date or date.today()
    _check_date(when, latest)
    k = latest.release + 1
    base = dict(loaded.input.manifests[latest.release])
    base[manifest_path(latest.release)] = loaded.input.root[manifest_path(latest.release)]
    stage = _Stage(root)
    try:
        if kind_ is ReleaseKind.MODELS:
            for path in sorted(set(loaded.input.root) - set(base) - {manifest_path(latest.release)}):
                base[path] = loaded.input.root[path]  # the unreleased lines (verify allows them only under models/, commitments/)
        else:
            _stage_errata(stage, root, base, k, replaced)
        for j, data in missing_croissants(loaded.input.records, loaded.input.manifests, loaded.input.root, root / ARCHIVE_JSON):
            stage.put(croissant_path(j), data)  # earlier releases cut before Croissant files were written
        record = ReleaseRecord(
            k, when, kind_, latest.resolved_origins, latest.strict_origin, latest.open_origin,
            loaded.input.root[manifest_path(latest.release)],
            tuple(Replaced(r.path, r.reason) for r in replaced), latest.simulated if simulated is None else simulated,
            notes or ("submissions merged since the last release" if kind_ is ReleaseKind.MODELS else "files replaced; old bytes kept"),
        )
        return _finish(root, loaded, stage, record, base, kinds)
    finally:
        stage.discard()


def _stage_errata(stage: _Stage, root: Path, base: dict[str, str], k: int, replaced: Sequence[Replacement]) -> None:
    for r in replaced:
        if r.path not in base or r.path.startswith("archive/releases/"):
            raise UsageProblem(f"cannot replace {r.path}: the latest release does not list it")
        if not r.reason.strip():
            raise UsageProblem(f"replacing {r.path} needs a reason")
        try:
            data = Path(r.source).read_bytes()
        except OSError as exc:
            raise UsageProblem(f"{r.source}: cannot be read ({exc.strerror})") from None
        if hashlib.sha256(data).hexdigest() == base[r.path]:
            raise UsageProblem(f"{r.source}: has the same bytes as {r.path}; nothing to replace")
        stage.put(superseded_path(k, r.path), (root / r.path).read_bytes())
        stage.put(r.path, data)
