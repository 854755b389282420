"""The Live track's entries and deadlines, read off a history (RELEASES.md, "Submissions across releases").

Pure functions over :class:`HistoryInput`. An entry's *receipt* is the first
release whose manifest lists its file (a commitment for a sealed entry, the
predictions for an open one); it is on time iff that release is dated on or
before the origin's ``closes``. A sealed entry whose origin is resolved but
whose files never arrived is *unrevealed* — listed, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Mapping

from rapgen.archive.layout import COMMITMENT_PATTERN
from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.dates import on_time
from rapgen.archive.history.records import ReleaseRecord, reveal_path

_COMMITMENT = re.compile(COMMITMENT_PATTERN)
_OPEN = re.compile(r"^archive/models/([^/]+)/origins/(\d{4}-\d{2}-01)/predictions\.jsonl$")


class LiveStatus(str, Enum):
    PENDING = "pending"  # merged, not yet in any release
    SEALED = "sealed"  # committed; the origin is not resolved yet
    REVEALED = "revealed"  # committed and revealed (the digests are checked by verify)
    UNREVEALED = "unrevealed"  # committed, origin resolved, files never revealed
    OPEN = "open"  # submitted openly: the files themselves


@dataclass(frozen=True)
class LiveEntry:
    model_id: str
    origin: date
    sealed: bool
    path: str  # the commitment (sealed) or the predictions file (open)
    digest: str
    closes: date
    receipt: int | None  # first release listing ``path``
    receipt_date: date | None
    on_time: bool
    revealed_in: int | None  # first release listing the revealed predictions (sealed entries)
    status: LiveStatus


def opening_records(records: Mapping[int, ReleaseRecord]) -> dict[date, ReleaseRecord]:
    """Each origin ever opened → the first release that opened it (whose ``closes`` is the deadline)."""
    out: dict[date, ReleaseRecord] = {}
    for k in sorted(records):
        record = records[k]
        if record.open_origin is not None and record.open_origin.origin not in out:
            out[record.open_origin.origin] = record
    return out


def live_entries(inp: HistoryInput, *, as_of: int | None = None) -> list[LiveEntry]:
    """Every Live entry of the history, by origin then model; ``as_of`` sees only releases 1..N."""
    numbers = [k for k in sorted(inp.manifests) if as_of is None or k <= as_of]
    records = {k: r for k, r in inp.records.items() if k in numbers}
    files = dict(inp.root) if as_of is None else dict(inp.manifests.get(as_of, {}))
    receipts: dict[str, int] = {}
    for k in numbers:
        for path in inp.manifests[k]:
            receipts.setdefault(path, k)
    opened = opening_records(records)
    resolved = set(records[max(records)].resolved_origins) if records else set()
    sealed = {(m.group(2), date.fromisoformat(m.group(1))): p for p in files if (m := _COMMITMENT.match(p))}
    open_ = {(m.group(1), date.fromisoformat(m.group(2))): p for p in files if (m := _OPEN.match(p))}
    out = []
    for key, path in sorted({**open_, **sealed}.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        model_id, origin = key
        opener = opened.get(origin)
        if opener is None:
            continue  # no release opened this origin: verify reports it
        closes = opener.open_origin.closes
        receipt = receipts.get(path)
        when = records[receipt].date if receipt is not None else None
        is_sealed = key in sealed
        revealed_in = receipts.get(reveal_path(model_id, origin, "predictions.jsonl")) if is_sealed else None
        if receipt is None:
            status = LiveStatus.PENDING
        elif not is_sealed:
            status = LiveStatus.OPEN
        elif reveal_path(model_id, origin, "predictions.jsonl") in files:
            status = LiveStatus.REVEALED
        else:
            status = LiveStatus.UNREVEALED if origin in resolved else LiveStatus.SEALED
        out.append(LiveEntry(model_id, origin, is_sealed, path, files[path], closes, receipt, when,
                             on_time(receipt, when, opener), revealed_in, status))
    return out


def judge_deadline(inp: HistoryInput, origin: date, now: date) -> str | None:
    """Why a Live submission for ``origin`` made on ``now`` cannot count, or None if it can.

    ``now`` is the date the submission was made (CI passes the pull request's
    opening time); the latest release must have ``origin`` open, and ``now``
    must be on or before its ``closes``.
    """
    if not inp.records:
        return "the archive has no releases, so no origin is open for Live submissions"
    latest = inp.records[max(inp.records)]
    if latest.open_origin is None:
        return f"release {latest.release} has no origin open for Live submissions"
    if latest.open_origin.origin != origin:
        return f"origin {origin} is not open; release {latest.release} has {latest.open_origin.origin} open"
    if now > latest.open_origin.closes:
        return f"the deadline for origin {origin} was {latest.open_origin.closes}; this submission is dated {now}"
    return None
