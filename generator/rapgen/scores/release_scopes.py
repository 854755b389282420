"""Release scopes read off a release's history (RELEASES.md), for :mod:`rapgen.scores.releases`.

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

from rapgen.archive import HistoryInput, live_entries, opening_records, reveal_path, PREDICTIONS_JSONL, model_file
from rapgen.scores.releases import ReleaseScope


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


def scored_release(release) -> tuple[HistoryInput | None, ReleaseScope | None]:
    """The history and the scope of ``release`` (a :class:`~rapgen.archive.Release`): release N alone
    (the files it listed), or for the archive as it stands the latest release with every merged line
    (unreleased ones too). A format-1 archive has neither."""
    if not release.is_history:
        return None, None
    inp = release.history
    n = release.number
    record = inp.records[n]
    models = sorted({p.split("/")[2] for p in inp.root if p.startswith("archive/models/") and p.count("/") >= 3})
    scope = history_scopes(inp, models, tuple(record.resolved_origins), upto=n)[-1]
    return inp, (replace(scope, listed=None) if release.current else scope)
