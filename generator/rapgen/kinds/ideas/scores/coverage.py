"""Partial entries of an Ideas release (RELEASES.md "Tracks", IDEAS.md §6): who covers only some cutoffs.

A strategy of a model covers a resolved cutoff when the model's unit group of
that cutoff claims it, and it is scored there under a judge when that group has
the judge's evaluator folder (:func:`~rapgen.kinds.ideas.scores.score.archive_coverage`).
``all_cutoff`` and ``forecast_strict`` take an entry only if it is scored on
every cutoff of the track (or on none: a row awaiting evaluation). An entry
scored on some but not all of them is **partial**: it gets no row and no rank in
that track; scores.json lists it with how many of the track's cutoffs it
forecast and had evaluated, which are missing or awaiting evaluation, and the
row of the last earlier release in which it was complete (that release's own
files, scored again the same way, so the same numbers; unranked here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np

from rapgen.kinds.ideas.scores.units import Coverage, Track, entry_mask

SHOWN_METRICS = ("hit@5", "p@5", "mrr", "budget")  # the leaderboard's columns


def _cutoff_set(items: Sequence, where: np.ndarray) -> list[date]:
    return sorted({items[i].cutoff for i in np.flatnonzero(where).tolist()})


def partial_entries(items: Sequence, tracks: Sequence[Track], coverage: Mapping[tuple[str, str, str], Coverage],
                    judges: Sequence[str]) -> list[dict]:
    """Every (track, judge, model, strategy) that is partial in a whole track, in the leaderboard's order."""
    out = []
    for track in tracks:
        if not track.whole:
            continue
        for judge in judges:
            for (model, j, condition), cov in sorted(coverage.items()):
                mask = track.mask(model)
                if j != judge or mask is None or not mask.any() or entry_mask(track, model, judge, condition, coverage) is not None:
                    continue
                forecast = _cutoff_set(items, mask & cov.forecast)
                if not forecast:
                    continue  # nothing in this track: not listed
                every = _cutoff_set(items, mask)
                scored = _cutoff_set(items, mask & cov.scored)
                out.append({"track": track.name, "judge": judge, "entry": model, "kind": "model", "condition": condition,
                            "cutoffs": len(forecast), "evaluated": len(scored), "of": len(every),
                            "missing": [c.isoformat() for c in every if c not in set(forecast)],
                            "awaiting": [c.isoformat() for c in forecast if c not in set(scored)],
                            "last_complete_release": None, "rows": []})
    return out


def complete_in(archive, track_name: str, model: str, judge: str, condition: str) -> bool:
    """Was (model, condition) scored on every cutoff of ``track_name`` under ``judge`` in ``archive`` (a release)?"""
    from rapgen.kinds.ideas.scores.score import archive_coverage, archive_tracks, resolved_items

    items = resolved_items(archive)
    coverage = archive_coverage(archive, items)
    track = next(t for t in archive_tracks(archive, items) if t.name == track_name)
    mask = entry_mask(track, model, judge, condition, coverage)
    cov = coverage.get((model, judge, condition))
    return mask is not None and cov is not None and bool(mask.any()) and bool(cov.scored[mask].all())


def last_complete_rows(release, partial: list[dict], scored_release: Callable[[int], Any]) -> None:
    """Fill each partial record's ``last_complete_release`` and ``rows`` (gate, metric, estimate, interval)
    from the latest earlier release in which the entry was complete (none: both stay empty).
    ``scored_release(k)``: release k's statistics (the ones its releases.csv rows come from)."""
    if not partial or not release.is_history:
        return
    pending = list(partial)
    for k in sorted((n for n in release.releases if n < release.number), reverse=True):
        if not pending:
            break
        past = release.verified.release(k).archive
        found = [p for p in pending if p["entry"] in past.models and complete_in(past, p["track"], p["entry"], p["judge"], p["condition"])]
        if not found:
            continue
        scored = scored_release(k)
        for p in found:
            p["last_complete_release"] = k
            p["rows"] = [{"gate": r.stat.axes[1], "metric": r.stat.metric, "estimate": r.estimate, "ci_low": r.ci_low,
                          "ci_high": r.ci_high, "n_items": r.n_items}
                         for r in scored.rows if (r.stat.track, r.stat.axes[0], r.stat.entry, r.stat.condition)
                         == (p["track"], p["judge"], p["entry"], p["condition"]) and r.stat.metric in SHOWN_METRICS]
            pending.remove(p)
