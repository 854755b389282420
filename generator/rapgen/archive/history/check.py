"""The history checks of RELEASES.md ("What `rapgen verify` adds"), as a pure function.

Inputs are plain data already read and verified by the caller: the root
SHA256SUMS lines, each release's record and manifest lines, the date span of
every window file, the parsed manifests of origins opened after the format-1
part, and the commitments. Every finding is ``INVARIANT`` and its detail
starts with ``release N:`` for the release it concerns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Mapping, Sequence

from rapgen.archive.calendar import add_months
from rapgen.archive.history.dates import check_dates
from rapgen.archive.history.digests import digest_copies
from rapgen.archive.history.records import (
    COMMITMENTS_DIR,
    MODELS_DIR,
    RELEASES_DIR,
    REVEAL_FILES,
    SEARCH_DIR,
    SEARCH_FILES,
    WINDOW_FILES,
    WINDOWS_DIR,
    Commitment,
    ReleaseKind,
    ReleaseRecord,
    manifest_path,
    record_path,
    reveal_path,
    search_path,
    superseded_path,
)
from rapgen.archive.croissant.check import croissant_number
from rapgen.archive.croissant.document import croissant_path
from rapgen.archive.history.spec import RAP_HISTORY, HistorySpec
from rapgen.archive.records import Category, Finding, ShardManifest

UNRELEASED_ALLOWED = (MODELS_DIR + "/", COMMITMENTS_DIR + "/")
FORMAT2_PREFIXES = (RELEASES_DIR + "/", WINDOWS_DIR + "/", COMMITMENTS_DIR + "/")
_RELEASE_FILE = re.compile(r"^archive/releases/(\d{4})(\.json|\.SHA256SUMS|\.croissant\.json|/superseded/.+)$")
_ORIGIN_DIR = re.compile(r"^archive/search/(\d{4}-\d{2}-\d{2})/")
_WINDOW_DIR = re.compile(r"^archive/benchmark/windows/([^/]+)/")


@dataclass(frozen=True)
class WindowSpan:
    """The rows of one window file: how many, and their first and last ``first_submitted``."""

    path: str
    n_rows: int
    min_date: date | None
    max_date: date | None


@dataclass(frozen=True)
class HistoryInput:
    root: Mapping[str, str]  # root SHA256SUMS: path -> digest
    records: Mapping[int, ReleaseRecord]  # every record that parsed
    manifests: Mapping[int, Mapping[str, str]]  # every release manifest that parsed
    origins: tuple[date, ...]  # origins.json: release 1's resolved origins
    strict_origin: date | None
    window_months: int
    format_version: int | None
    windows: Sequence[WindowSpan] = ()
    shards: Mapping[date, Sequence[ShardManifest]] = field(default_factory=dict)  # search/<origin>/ manifests
    commitments: Mapping[str, Commitment] = field(default_factory=dict)  # path -> commitment
    unparsed: frozenset[str] = frozenset()  # release files already reported (did not verify or parse)
    spec: HistorySpec = RAP_HISTORY  # the kind's rhythm: what a roll resolves, opens and adds (window_months above wins)

    @property
    def answer_months(self) -> int:
        """Months from a key until its answers are known: the kind's target (RAP: its window, as origins.json sets it)."""
        return self.spec.target_months if self.spec.target_months is not None else self.window_months

    def roll_keys(self, open_key: date) -> tuple[date, date]:
        """(the key a roll resolves, the key it opens) when ``open_key`` was open: the roll ingests
        [open_key, open_key + window), resolving open_key + window − target and opening open_key + window."""
        opened = add_months(open_key, self.window_months)
        target = self.spec.target_months
        return (open_key if target is None else add_months(opened, -target)), opened


class _Findings(list):
    def add(self, path: str, release: int | None, detail: str) -> None:
        prefix = f"release {release}: " if release is not None else ""
        self.append(Finding(path, None, Category.INVARIANT, prefix + detail))


def release_numbers(paths: Sequence[str] | Mapping[str, str]) -> list[int]:
    """Numbers of the releases whose record or manifest is listed, ascending."""
    return sorted({int(m.group(1)) for p in paths if (m := _RELEASE_FILE.match(p)) and not m.group(2).startswith("/")})


def check_history(inp: HistoryInput) -> list[Finding]:
    """Every rule of RELEASES.md's verify additions; an empty list when the history holds."""
    out = _Findings()
    numbers = release_numbers(inp.root)
    if not numbers:
        _check_format1(inp, out)
        return out
    if inp.format_version not in (None, 2):
        out.add("archive/ARCHIVE.json", None, f"the archive has releases but 'format_version' is {inp.format_version}; a history needs 2")
    _check_release_files(inp, numbers, out)
    _check_numbering(inp, numbers, out)
    for k in numbers:
        _check_record(inp, k, out)
        if k >= 2:
            _check_chain(inp, k, out)
            _check_added(inp, k, out)
        _check_own_manifest(inp, k, out)
    _check_root(inp, numbers[-1], out)
    _check_windows(inp, out)
    _check_opened(inp, out)
    _check_commitments(inp, out)
    out.extend(check_dates(inp.records, inp.manifests, inp.answer_months))  # every rule about dates, in one module
    return out


def _check_format1(inp: HistoryInput, out: _Findings) -> None:
    if inp.format_version == 2:
        out.add("archive/ARCHIVE.json", None, "'format_version' is 2 but the archive has no releases/ record")
    for path in sorted(inp.root):
        if path.startswith(FORMAT2_PREFIXES) or _ORIGIN_DIR.match(path) or "/origins/" in path:
            out.add(path, 1, "a format-1 archive (one implicit release) cannot hold this format-2 file; cut releases first")


def _check_release_files(inp: HistoryInput, numbers: list[int], out: _Findings) -> None:
    for path in sorted(inp.root):
        if path.startswith(RELEASES_DIR + "/") and not _RELEASE_FILE.match(path):
            out.add(path, None, "unexpected file under archive/releases/ (allowed: NNNN.json, NNNN.SHA256SUMS, "
                    "NNNN.croissant.json, NNNN/superseded/…)")
    for k in numbers:
        for path in (record_path(k), manifest_path(k)):
            if path not in inp.root:
                out.add(path, k, f"{path.rsplit('/', 1)[1]} is missing: every release has a record and a manifest")


def _check_numbering(inp: HistoryInput, numbers: list[int], out: _Findings) -> None:
    expected = 1
    for k in numbers:
        if k != expected:
            missing = ", ".join(str(n) for n in range(expected, k))
            out.add(record_path(k), k, f"follows release {expected - 1} but release{'s' * (k - expected > 1)} {missing} "
                    "is missing: releases are numbered 1, 2, 3, … without gaps")
        expected = k + 1


def _check_record(inp: HistoryInput, k: int, out: _Findings) -> None:
    record = inp.records.get(k)
    if record is None:
        return
    path = record_path(k)
    if k == 1:
        if inp.origins and record.resolved_origins != inp.origins:
            out.add(path, 1, f"resolved_origins {_dates(record.resolved_origins)} differ from origins.json's {_dates(inp.origins)}")
        if inp.strict_origin is not None and record.strict_origin != inp.strict_origin:
            out.add(path, 1, f"strict_origin {record.strict_origin} differs from origins.json's {inp.strict_origin}")
        return
    prev = inp.records.get(k - 1)
    if prev is None:
        return
    if record.kind is ReleaseKind.ROLL:
        if prev.open_origin is None:
            out.add(path, k, f"a roll resolves the open origin, but release {k - 1} has none open")
            return
        target, nxt = inp.roll_keys(prev.open_origin.origin)
        if record.resolved_origins != prev.resolved_origins + (target,):
            out.add(path, k, f"a roll appends exactly the open origin {target} to release {k - 1}'s resolved origins "
                    f"{_dates(prev.resolved_origins)}, found {_dates(record.resolved_origins)}")
        if record.open_origin is not None and record.open_origin.origin != nxt:
            out.add(path, k, f"a roll may open only the next origin {nxt}, found {record.open_origin.origin}")
        return
    if record.resolved_origins != prev.resolved_origins:
        out.add(path, k, f"a {record.kind.value} release keeps release {k - 1}'s resolved origins "
                f"{_dates(prev.resolved_origins)}, found {_dates(record.resolved_origins)}")
    if record.open_origin is not None and record.open_origin != prev.open_origin:
        out.add(path, k, f"a {record.kind.value} release keeps release {k - 1}'s open origin or closes it; "
                f"found {record.open_origin.origin} closing {record.open_origin.closes}")


def _check_chain(inp: HistoryInput, k: int, out: _Findings) -> None:
    """Rule 1 (parent digest) and rule 2 (every line of k-1 is a line of k, errata aside)."""
    record, old, new = inp.records.get(k), inp.manifests.get(k - 1), inp.manifests.get(k)
    parent = inp.root.get(manifest_path(k - 1))
    if record is not None and parent is not None and record.parent_sha256 != parent:
        out.add(record_path(k), k, f"parent_sha256 does not match releases/{k - 1:04d}.SHA256SUMS "
                f"(expected {parent}, actual {record.parent_sha256}): the history was changed")
    if old is None or new is None:
        return
    replaced = {r.path for r in record.replaced} if record is not None and record.kind is ReleaseKind.ERRATA else set()
    for path in sorted(replaced):
        if path not in old:
            out.add(record_path(k), k, f"replaces {path}, which release {k - 1} does not list")
        elif path not in new:
            out.add(manifest_path(k), k, f"replaces {path} but no longer lists it")
    for path, digest in sorted(old.items()):
        if path in replaced:
            kept = superseded_path(k, path)
            if new.get(kept) != digest:
                out.add(manifest_path(k), k, f"replaces {path} but {kept} does not hold its old bytes "
                        f"(expected {digest}, actual {new.get(kept)})")
        elif path not in new:
            out.add(manifest_path(k), k, f"drops {path}, listed by release {k - 1}: a release never removes a file")
        elif new[path] != digest:
            out.add(manifest_path(k), k, f"changes {path}, frozen since release {k - 1} "
                    f"(expected {digest}, actual {new[path]}); only an errata release may replace a file")


def _check_added(inp: HistoryInput, k: int, out: _Findings) -> None:
    """Rule 3: what each kind of release may add beyond its predecessor."""
    record, old, new = inp.records.get(k), inp.manifests.get(k - 1), inp.manifests.get(k)
    if record is None or old is None or new is None:
        return
    added = {p for p, d in new.items() if old.get(p) != d}
    own = {record_path(k), manifest_path(k - 1), croissant_path(k)}
    past = {p for p in added if (n := croissant_number(p)) is not None and n < k}  # Croissant files of earlier releases
    if record.kind is ReleaseKind.ROLL:
        allowed = set(own)
        prev = inp.records.get(k - 1)
        if prev is not None and prev.open_origin is not None:
            allowed |= set(inp.spec.window_paths(prev.open_origin.origin))
            allowed |= set(inp.spec.resolved_paths(inp.roll_keys(prev.open_origin.origin)[0]))
        if record.open_origin is not None:
            allowed |= set(inp.spec.opened_paths(record.open_origin.origin))
        for path in sorted(allowed - added - own):
            out.add(manifest_path(k), k, f"a roll must add {path}, and does not")
        extra = added - allowed
    elif record.kind is ReleaseKind.MODELS:
        extra = {p for p in added - own - past if not p.startswith(UNRELEASED_ALLOWED)}
    else:  # errata: the replaced files and their old bytes
        replaced = {r.path for r in record.replaced}
        extra = added - own - past - replaced - {superseded_path(k, p) for p in replaced}
    for path in sorted(extra):
        out.add(path, k, f"added by a {record.kind.value} release, which may not add it")


def _check_own_manifest(inp: HistoryInput, k: int, out: _Findings) -> None:
    manifest = inp.manifests.get(k)
    if manifest is None:
        return
    if manifest_path(k) in manifest:
        out.add(manifest_path(k), k, "the release's manifest lists itself; it must exclude its own line")
    if record_path(k) not in manifest:
        out.add(manifest_path(k), k, f"the release's manifest must list its own record {record_path(k)}")
    elif record_path(k) in inp.root and manifest[record_path(k)] != inp.root[record_path(k)]:
        out.add(record_path(k), k, "the record's bytes differ from those its release listed (edited and re-sealed)")
    if k >= 2 and manifest_path(k - 1) not in manifest:
        out.add(manifest_path(k), k, f"the release's manifest must list {manifest_path(k - 1)}")
    for path in sorted(manifest):
        m = _RELEASE_FILE.match(path)
        if m and int(m.group(1)) > k:
            out.add(manifest_path(k), k, f"lists {path} of a later release")


def _check_root(inp: HistoryInput, latest: int, out: _Findings) -> None:
    """Rule 2 (latest manifest ⊆ root) and rule 3 (unreleased lines only under models/, commitments/)."""
    manifest = inp.manifests.get(latest)
    if manifest is None:
        return
    for path, digest in sorted(manifest.items()):
        if path not in inp.root:
            out.add(path, latest, "listed by the latest release but not by SHA256SUMS: a released file was removed")
        elif inp.root[path] != digest:
            out.add(path, first_release(inp, path) or latest, f"SHA256SUMS gives a digest other than the release's "
                    f"(expected {digest}, actual {inp.root[path]}); released files never change, except through an errata release")
    for path in sorted(set(inp.root) - set(manifest) - {manifest_path(latest)}):
        if _RELEASE_FILE.match(path):
            continue  # a stray release file is reported by the numbering and manifest checks
        if not path.startswith(UNRELEASED_ALLOWED):
            out.add(path, latest, f"listed by SHA256SUMS but by no release; only files under archive/models/ and "
                    f"archive/commitments/ may be unreleased (merged, not yet cut)")


def _check_windows(inp: HistoryInput, out: _Findings) -> None:
    """Rule 4: each window folder is a pair and its rows lie in [start, start + window)."""
    folders: dict[str, set[str]] = {}
    for path in inp.root:
        m = _WINDOW_DIR.match(path)
        if m:
            folders.setdefault(m.group(1), set()).add(path[m.end():])
    for name, files in sorted(folders.items()):
        release = first_release(inp, _window_file(name, WINDOW_FILES[0]))
        try:
            start = date.fromisoformat(name)
        except ValueError:
            start = None
        if start is None or start.day != 1:
            out.add(f"{WINDOWS_DIR}/{name}", release, "a window folder is named by its first day, the first of a month")
        for extra in sorted(files - set(WINDOW_FILES)):
            out.add(f"{WINDOWS_DIR}/{name}/{extra}", release, "unexpected file in a window (allowed: papers.parquet, assignments.parquet)")
        for missing in sorted(set(WINDOW_FILES) - files):
            out.add(f"{WINDOWS_DIR}/{name}/{missing}", release, "a window needs both papers.parquet and assignments.parquet")
    for span in inp.windows:
        m = _WINDOW_DIR.match(span.path)
        try:
            start = date.fromisoformat(m.group(1)) if m else None
        except ValueError:
            continue
        if start is None or span.min_date is None:
            continue
        end = add_months(start, inp.window_months) if start.day == 1 else start
        if span.min_date < start or span.max_date >= end:
            out.add(span.path, first_release(inp, span.path), f"rows dated {span.min_date}..{span.max_date} lie outside "
                    f"the window [{start}, {end}); every row of windows/{start}/ must lie in it")


def _window_file(name: str, file: str) -> str:
    return f"{WINDOWS_DIR}/{name}/{file}"


def _check_opened(inp: HistoryInput, out: _Findings) -> None:
    """search/<origin>/ exists only for origins a release opened; no open shard holds a paper on or after its origin."""
    opened = opened_origins(inp.records)
    folders: dict[str, set[str]] = {}
    for path in inp.root:
        m = _ORIGIN_DIR.match(path)
        if m:
            folders.setdefault(m.group(1), set()).add(path[m.end():])
        elif path.startswith(SEARCH_DIR + "/") and path.count("/") > 2:
            out.add(path, None, "unexpected file under archive/search/ (origin folders are named YYYY-MM-DD)")
    for name, files in sorted(folders.items()):
        release = first_release(inp, f"{SEARCH_DIR}/{name}/{SEARCH_FILES[0]}")
        try:
            origin = date.fromisoformat(name)
        except ValueError:
            origin = None
        if origin not in opened:
            out.add(f"{SEARCH_DIR}/{name}", release, f"search manifests for {name}, an origin no release opened")
        for extra in sorted(files - set(SEARCH_FILES)):
            out.add(f"{SEARCH_DIR}/{name}/{extra}", release, "unexpected file (allowed: manifest_fixed.jsonl, manifest_expanding.jsonl)")
        for missing in sorted(set(SEARCH_FILES) - files):
            out.add(f"{SEARCH_DIR}/{name}/{missing}", release, "an opened origin needs both Search manifests")
    for origin, shards in sorted(inp.shards.items()):
        for s in shards:
            path = search_path(origin, f"manifest_{s.regime}.jsonl")
            release = first_release(inp, path)
            if s.origin != origin or s.date_to != origin:
                out.add(path, release, f"{s.field_id}: episode origin {s.origin} / date_to {s.date_to} must both be {origin}")
            if s.max_date is not None and s.max_date >= origin:
                out.add(path, release, f"{s.field_id} {s.regime}: the open origin's shard holds a paper dated {s.max_date}, on or after {origin}")


def _check_commitments(inp: HistoryInput, out: _Findings) -> None:
    """Rule 5: a commitment is for an opened origin, and revealed files match its digests."""
    opened = opened_origins(inp.records)
    for path, c in sorted(inp.commitments.items()):
        release = first_release(inp, path)
        if c.origin not in opened:
            out.add(path, release, f"commitment for {c.origin}, an origin no release opened for Live submissions")
        for copy in digest_copies(c, inp.commitments, inp.root):  # the source received later is not the copier
            if _received(inp, copy.source) <= _received(inp, path):
                out.add(path, release, copy.describe())
        revealed = {name: inp.root.get(reveal_path(c.model_id, c.origin, name)) for name in REVEAL_FILES}
        if revealed["predictions.jsonl"] is None and revealed["traces.jsonl"] is None:
            continue  # not revealed yet: listed as unrevealed, never a finding
        for name in REVEAL_FILES:
            committed, actual = c.digest_of(name), revealed[name]
            where = reveal_path(c.model_id, c.origin, name)
            if committed != actual:
                why = "is not revealed" if actual is None else "was not committed" if committed is None else "differs from its commitment"
                out.add(where, first_release(inp, where) or release, f"{why} {path} "
                        f"(expected {committed}, actual {actual})")


# ---------------------------------------------------------------- queries
def opened_origins(records: Mapping[int, ReleaseRecord]) -> set[date]:
    return {r.open_origin.origin for r in records.values() if r.open_origin is not None}


def _received(inp: HistoryInput, path: str) -> float:
    k = first_release(inp, path)
    return float("inf") if k is None else k  # unreleased: after every release


def first_release(inp: HistoryInput, path: str) -> int | None:
    """The receipt of ``path``: the first release whose manifest lists it (None: unreleased)."""
    for k in sorted(inp.manifests):
        if path in inp.manifests[k]:
            return k
    return None


def _dates(values: Sequence[date]) -> str:
    return "[" + ", ".join(d.isoformat() for d in values) + "]"
