"""Release operations for every kind: ``start``, ``roll`` and ``cut`` through the kind's :class:`HistorySpec`.

RAP's operations (:mod:`.ops`) build its files themselves (origins.json, the
Search manifests of an opened origin). Another kind declares its rhythm and, if
it has a time key, the :class:`~.spec.HistoryHooks` that build what a release
adds: release 1's resolved keys, a window's canonical tables, the files that
open and resolve a key. A kind without a time key (``rolls=False``) has
``initial``, ``models`` and ``errata`` releases only, and a roll is refused.

Every operation verifies the root first (with the caller's kinds), stages
what it adds, re-seals and verifies again, and leaves nothing behind on error
(the staging of :mod:`.ops`).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Sequence

from rapgen.archive.calendar import add_months
from rapgen.archive.history.dates import roll_date_problem
from rapgen.archive.history.load import LoadedHistory
from rapgen.archive.history.ops import (
    Kinds,
    ReleaseResult,
    Replacement,
    _check_date,
    _check_window_folder,
    _finish,
    _open,
    _open_latest,
    _Stage,
    _window_folder,
    cut_release,
    refuse_history,
    roll_release,
    stage_format2,
    start_history,
    verified_root,
)
from rapgen.archive.history.records import WINDOW_FILES, ReleaseKind, ReleaseRecord, manifest_path, window_path
from rapgen.archive.history.spec import RAP_HISTORY, HistorySpec, WindowFiles
from rapgen.errors import ArchiveError, UsageProblem

NO_ROLLS = ("{root}: a roll ingests a window of a time key, and the {kind} benchmark has none: its releases are initial, "
            "models and errata (use 'rapgen release cut --kind models|errata')")


def _is_rap(spec: HistorySpec) -> bool:
    return spec is RAP_HISTORY or (spec.hooks is None and spec.rolls)


def start(root: str | Path, *, kinds: Kinds = None, release_date: date | None = None, open_next: bool = True,
          closes: date | None = None, simulated: bool = False, notes: str = "") -> ReleaseResult:
    """Record a format-1 archive of any kind as release 1 (format_version 2). A kind with a time key
    resolves its format-1 keys and, with ``open_next``, opens the key whose answers come next."""
    root = Path(root)
    loaded, spec = verified_root(root, kinds)
    if _is_rap(spec):
        return start_history(root, release_date=release_date, open_next=open_next, closes=closes, simulated=simulated, notes=notes)
    refuse_history(root, loaded)
    when = release_date or date.today()
    stage = _Stage(root)
    try:
        stage_format2(stage, root, loaded)
        resolved: tuple[date, ...] = ()
        opened = None
        if spec.rolls and spec.hooks is not None:
            resolved = tuple(spec.hooks.initial(root))
            if not resolved:
                raise ArchiveError(f"{root}: the archive resolves no key, so it cannot start a history")
            nxt = add_months(resolved[-1], spec.answer_months) if open_next else None
            windows = _windows(root, loaded)
            for key in _between(resolved[-1], nxt or add_months(resolved[-1], spec.answer_months - spec.window_months), spec):
                for path, data in sorted(spec.hooks.opened(root, key, windows).items()):
                    stage.put(path, data)
            opened = _open(nxt, closes, when, spec.answer_months)
        elif closes is not None:
            raise UsageProblem("--closes: this benchmark has no time key, so nothing opens for Live forecasts")
        record = ReleaseRecord(1, when, ReleaseKind.INITIAL, resolved, resolved[-1] if resolved else None, opened, None, (),
                               simulated, notes or "the format-1 archive as release 1")
        base = {p: d for p, d in loaded.input.root.items() if p not in stage.removed}
        return _finish(root, loaded, stage, record, base, kinds)
    finally:
        stage.discard()


def roll(root: str | Path, window_dir: str | Path, *, kinds: Kinds = None, closes: date | None = None,
         release_date: date | None = None, open_next: bool = True, simulated: bool | None = None,
         notes: str | None = None) -> ReleaseResult:
    """Ingest the window [s, s + window) of the open key s: resolve s + window − target, open s + window."""
    root, window_dir = Path(root), _window_folder(window_dir)
    loaded, spec = verified_root(root, kinds)
    if _is_rap(spec):
        return roll_release(root, window_dir, closes=closes, release_date=release_date, open_next=open_next,
                            simulated=simulated, notes=notes)
    if not spec.rolls or spec.hooks is None:
        raise UsageProblem(NO_ROLLS.format(root=root, kind="this"))
    latest = _open_latest(root, loaded, "key")
    start_key = latest.open_origin.origin
    end = add_months(start_key, spec.window_months)
    target = add_months(end, -spec.answer_months)
    when = release_date or date.today()
    _check_date(when, latest)
    problem = roll_date_problem(target, when, spec.answer_months)
    if problem:
        raise UsageProblem(f"a roll resolving {target} is {problem}")
    if closes is not None and open_next:
        _open(end, closes, when, spec.answer_months)  # refuse a bad deadline before any work
    _check_window_folder(window_dir)
    stage = _Stage(root)
    try:
        windows = _windows(root, loaded)
        for path, data in sorted(spec.hooks.window(root, window_dir, start_key, end, windows).items()):
            stage.put(path, data)
        staged = WindowFiles(start_key, stage.files[window_path(start_key, WINDOW_FILES[0])],
                             stage.files[window_path(start_key, WINDOW_FILES[1])])
        windows = [*windows, staged]
        for path, data in sorted(spec.hooks.resolved(root, target, windows).items()):
            stage.put(path, data)
        if open_next:
            for path, data in sorted(spec.hooks.opened(root, end, windows).items()):
                stage.put(path, data)
        record = ReleaseRecord(
            latest.release + 1, when, ReleaseKind.ROLL, latest.resolved_origins + (target,), target,
            _open(end if open_next else None, closes, when, spec.answer_months),
            loaded.input.root[manifest_path(latest.release)], (), latest.simulated if simulated is None else simulated,
            notes if notes is not None else f"window {start_key} ingested; {target} resolved",
        )
        base = dict(loaded.input.manifests[latest.release])
        base[manifest_path(latest.release)] = loaded.input.root[manifest_path(latest.release)]
        return _finish(root, loaded, stage, record, base, kinds)
    finally:
        stage.discard()


def cut(root: str | Path, kind: str, *, kinds: Kinds = None, replaced: Sequence[Replacement] = (),
        release_date: date | None = None, simulated: bool | None = None, notes: str = "") -> ReleaseResult:
    """A ``models`` or ``errata`` release of an archive of any kind (shared by every kind)."""
    return cut_release(root, kind, replaced=replaced, release_date=release_date, simulated=simulated, notes=notes, kinds=kinds)


def _between(last: date, until: date, spec: HistorySpec) -> list[date]:
    """The keys after ``last`` up to ``until`` (inclusive), a window apart: a format-1 archive's data
    reaches the answers of ``last``, so each of them has its complete history and its files open at
    release 1 (the last one for Live forecasts); the rolls then resolve them in turn."""
    out, key = [], add_months(last, spec.window_months)
    while key <= until:
        out.append(key)
        key = add_months(key, spec.window_months)
    return out


def _windows(root: Path, loaded: LoadedHistory) -> list[WindowFiles]:
    """Every window the root lists, by start."""
    starts = sorted({date.fromisoformat(p.split("/")[3]) for p in loaded.input.root if p.startswith("archive/benchmark/windows/")})
    return [WindowFiles(s, root / window_path(s, WINDOW_FILES[0]), root / window_path(s, WINDOW_FILES[1])) for s in starts]
