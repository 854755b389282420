"""What one release lists, as the later stages need it (score, site, ``build --release N``).

:func:`release_view` turns a history and a release number into the files that
release N listed, grouped the way a reader uses them: the papers and ledger
files (``benchmark/`` plus every window listed), each origin's Search
manifests, each model's prediction and trace files, and — for the latest
release — the unreleased lines. A format-1 archive is one implicit release.

``sources`` says where the bytes release N listed are now: the path itself while
its current digest is the one N listed, else the copy the first later ``errata``
release that replaced it kept under ``releases/NNNN/superseded/`` (verify checked
that copy against the old line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Mapping

from rapgen.archive.layout import SEARCH_ORIGIN_PATTERN, WINDOW_FILE_PATTERN
from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.records import ReleaseKind, ReleaseRecord, manifest_path, superseded_path
from rapgen.archive.layout import ASSIGNMENTS_PARQUET, MANIFEST_JSONL, PAPERS_PARQUET
from rapgen.errors import UsageProblem

_WINDOW = re.compile(WINDOW_FILE_PATTERN)
_SEARCH = re.compile(SEARCH_ORIGIN_PATTERN)
_MODEL = re.compile(r"^archive/models/([^/]+)/(?:origins/(\d{4}-\d{2}-01)/)?(predictions|traces)\.jsonl$")


@dataclass(frozen=True)
class ReleaseView:
    number: int
    record: ReleaseRecord
    files: Mapping[str, str]  # path -> digest, as release N listed them
    papers: tuple[str, ...]  # benchmark/papers.parquet, then windows by start
    assignments: tuple[str, ...]
    manifests: Mapping[date, Mapping[str, str]]  # origin -> regime -> path
    predictions: Mapping[str, tuple[str, ...]]  # model id -> its prediction files (the main one first)
    traces: Mapping[str, tuple[str, ...]]
    unreleased: tuple[str, ...] = ()  # only in the latest view: merged lines no release lists
    implicit: bool = False  # a format-1 archive's one release
    sources: Mapping[str, str] = field(default_factory=dict)  # listed path -> the path holding its bytes now
    current: bool = False  # the archive as it stands: the latest release and every merged line (format 1: its one release)

    @property
    def superseded(self) -> dict[str, str]:
        """The listed paths whose bytes are now an errata's kept copy: path -> that copy."""
        return {p: s for p, s in self.sources.items() if s != p}


def implicit_record(inp: HistoryInput, created: date) -> ReleaseRecord:
    """The one release of a format-1 archive: number 1, ``initial``, origins from origins.json
    (a kind without a time key has none, and no strict origin)."""
    strict = inp.strict_origin or (inp.origins[-1] if inp.origins else None)
    return ReleaseRecord(1, created, ReleaseKind.INITIAL, inp.origins, strict, None, None,  # type: ignore[arg-type]
                         notes="format 1: one implicit release")


def release_view(inp: HistoryInput, number: int | None = None, *, created: date | None = None) -> ReleaseView:
    """The view of release ``number`` (default: the latest); a usage error for a release that does not exist."""
    if not inp.records:
        if number not in (None, 1):
            raise UsageProblem(f"release {number} does not exist: a format-1 archive has one implicit release")
        return _view(inp, 1, implicit_record(inp, created or date(1970, 1, 1)), dict(inp.root), (), implicit=True, current=True)
    latest = max(inp.records)
    n = latest if number is None else number
    if n not in inp.records or n not in inp.manifests:
        raise UsageProblem(f"release {n} does not exist (releases 1–{latest})")
    files = dict(inp.manifests[n])
    unreleased: tuple[str, ...] = ()
    if n == latest:
        unreleased = tuple(sorted(set(inp.root) - set(files) - {manifest_path(n)}))
    return _view(inp, n, inp.records[n], files, unreleased, sources=release_sources(inp, n), current=number is None)


def errata_after(inp: HistoryInput, number: int) -> list[int]:
    """The errata releases after ``number``, ascending."""
    return [k for k in sorted(inp.records) if k > number and inp.records[k].kind is ReleaseKind.ERRATA]


def release_sources(inp: HistoryInput, number: int) -> dict[str, str]:
    """Every path release ``number`` listed -> where its bytes are now (the path, or a superseded copy).

    Between two errata no release changes a listed line, so the first errata after
    ``number`` that replaced a path kept exactly the bytes ``number`` listed."""
    files = inp.manifests[number]
    out = {p: p for p in files}
    for k in errata_after(inp, number):
        for r in inp.records[k].replaced:
            if out.get(r.path) == r.path and inp.root.get(r.path) != files[r.path]:
                out[r.path] = superseded_path(k, r.path)
    return out


def _view(inp: HistoryInput, n: int, record: ReleaseRecord, files: dict[str, str], unreleased: tuple[str, ...],
          implicit: bool = False, sources: dict[str, str] | None = None, current: bool = False) -> ReleaseView:
    windows: dict[str, dict[str, str]] = {}
    manifests: dict[date, dict[str, str]] = {o: dict(MANIFEST_JSONL) for o in inp.origins}
    models: dict[str, dict[str, list[tuple[str, str]]]] = {"predictions": {}, "traces": {}}
    for path in files:
        if m := _WINDOW.match(path):
            windows.setdefault(m.group(1), {})[m.group(2)] = path
        elif m := _SEARCH.match(path):
            manifests.setdefault(date.fromisoformat(m.group(1)), {})[m.group(2)] = path
        elif m := _MODEL.match(path):
            models[m.group(3)].setdefault(m.group(1), []).append((m.group(2) or "", path))  # "" sorts the main file first
    papers = (PAPERS_PARQUET, *(windows[s]["papers"] for s in sorted(windows) if "papers" in windows[s]))
    rows = (ASSIGNMENTS_PARQUET, *(windows[s]["assignments"] for s in sorted(windows) if "assignments" in windows[s]))
    by_model = {kind: {m: tuple(p for _, p in sorted(v)) for m, v in sorted(found.items())} for kind, found in models.items()}
    return ReleaseView(n, record, files, papers, rows, dict(sorted(manifests.items())), by_model["predictions"],
                       by_model["traces"], unreleased, implicit, sources if sources is not None else {p: p for p in files}, current)
