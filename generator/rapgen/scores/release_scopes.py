"""Release scopes read off an archive's history (RELEASES.md), for :mod:`rapgen.scores.releases`.

A format-1 archive is one implicit release: number 1, dated by ``ARCHIVE.json``'s
``created``, every origin of ``origins.json`` resolved, every unit listed, no
Live origin. In a format-2 archive, release N lists (model, origin) when the
file holding those units — ``models/<id>/origins/<origin>/predictions.jsonl``
if the archive has one, else the model's main ``predictions.jsonl`` — is in
N's manifest; a Live entry counts in N when it was received on time by a
release up to N.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.live import live_entries, opening_records
from rapgen.archive.history.records import reveal_path
from rapgen.archive.layout import PREDICTIONS_JSONL, model_file
from rapgen.errors import UsageProblem
from rapgen.scores.releases import ReleaseScope


def archive_history(archive) -> HistoryInput | None:
    """The archive's history input, or None for a format-1 archive (no release records)."""
    loaded = getattr(archive, "history", None)
    if loaded is not None:
        inp = getattr(loaded, "input", loaded)
        return inp if getattr(inp, "records", None) else None
    root = Path(archive.root)
    if not (root / "archive" / "releases").is_dir():
        return None
    from rapgen.archive.history.load import load_history

    inp = load_history(root, with_ledger=False).input
    return inp if inp.records else None


def _created(archive) -> date | None:
    try:
        return date.fromisoformat(str(archive.info.get("created")))
    except (TypeError, ValueError):
        return None


def implicit_scope(archive) -> ReleaseScope:
    og = archive.origins
    return ReleaseScope(1, _created(archive), tuple(og.origins), og.strict_origin)


def unit_source(inp: HistoryInput, model_id: str, origin: date) -> str:
    """The archive path of the file holding a model's units of ``origin`` (a unit appears once across files)."""
    later = reveal_path(model_id, origin, PREDICTIONS_JSONL)
    return later if later in inp.root else model_file(model_id, PREDICTIONS_JSONL)


def history_scopes(inp: HistoryInput, model_ids: list[str], origins: tuple[date, ...],
                   upto: int | None = None) -> list[ReleaseScope]:
    """One scope per release 1..``upto`` (default: every release)."""
    latest = max(inp.records)
    last = latest if upto is None else upto
    sources = {(m, o): unit_source(inp, m, o) for m in model_ids for o in origins}
    out = []
    for n in sorted(k for k in inp.records if k <= last and k in inp.manifests):
        record = inp.records[n]
        listed = frozenset(key for key, path in sources.items() if path in inp.manifests[n])
        opened = opening_records({k: r for k, r in inp.records.items() if k <= n})
        on_time = frozenset((e.model_id, e.origin) for e in live_entries(inp, as_of=n) if e.on_time)
        live = tuple(o for o in record.resolved_origins if o in opened)
        out.append(ReleaseScope(n, record.date, tuple(record.resolved_origins), record.strict_origin, listed, on_time, live))
    return out


def scored_release(archive, release: int | None) -> tuple[HistoryInput | None, ReleaseScope | None]:
    """The history and the scope ``rapgen score`` scores: release ``release`` alone (the files
    it listed), or by default the latest release with every merged line (unreleased ones too).
    A format-1 archive has neither (and only release 1)."""
    inp = archive_history(archive)
    if inp is None:
        if release not in (None, 1):
            raise UsageProblem(f"release {release} does not exist: a format-1 archive has one implicit release")
        return None, None
    latest = max(inp.records)
    n = latest if release is None else release
    if n not in inp.records or n not in inp.manifests:
        raise UsageProblem(f"release {n} does not exist (releases 1-{latest})")
    record = inp.records[n]
    models = sorted({p.split("/")[2] for p in inp.root if p.startswith("archive/models/") and p.count("/") >= 3})
    scope = history_scopes(inp, models, tuple(record.resolved_origins), upto=n)[-1]
    return inp, (replace(scope, listed=None) if release is None else scope)
