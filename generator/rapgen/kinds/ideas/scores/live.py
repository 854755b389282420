"""Ideas' Live track (IDEAS.md §6, RELEASES.md "Tracks"): forecasts received before their cutoff's deadline.

A Live entry for cutoff t is open (``models/<id>/origins/<t>/predictions.jsonl``
itself) or sealed (``commitments/<t>/<id>.json``, revealed after t resolves).
It counts once t is resolved in the release scored and its receipt — the first
release listing the file — is dated on or before t's ``closes``. A model takes
part in the ``live`` track with the episodes of its on-time cutoffs that each
strategy forecast and the judge evaluated; a model without one takes no part. A sealed entry never revealed has no units to score:
the Releases page lists it, the track leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from rapgen.archive import LiveStatus
from rapgen.kinds.ideas.scores.units import LIVE, Track

SCORED = (LiveStatus.OPEN, LiveStatus.REVEALED)


def live_cutoffs(release) -> dict[str, tuple[date, ...]]:
    """model -> its on-time, resolved Live cutoffs in ``release`` (format 1: none)."""
    if not release.is_history:
        return {}
    resolved = set(release.resolved_origins)
    out: dict[str, set[date]] = {}
    for e in release.live_entries():
        if e.on_time and e.status in SCORED and e.origin in resolved:
            out.setdefault(e.model_id, set()).add(e.origin)
    return {m: tuple(sorted(c)) for m, c in sorted(out.items())}


def live_tracks(release, items: Sequence) -> tuple[Track, ...]:
    """The ``live`` track as an item mask over ``items`` (the resolved episodes), or () without a history."""
    if not release.is_history:
        return ()
    cutoffs = np.array([e.cutoff.toordinal() for e in items], dtype=np.int64)
    chosen = live_cutoffs(release)

    def mask(model: str) -> np.ndarray | None:
        mine = chosen.get(model)
        return np.isin(cutoffs, [c.toordinal() for c in mine]) if mine else None

    return (Track(LIVE, mask, whole=False),)
