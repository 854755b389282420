"""The date rules of a release history: the chain proves the order, these keep the dates consistent with it.

One place for every rule about dates, used by the verifier (:func:`check_dates`, over
records and manifests already read) and by the release operations, which refuse to
write what the verifier would reject (:func:`roll_date_problem`, :func:`deadline_problem`):

- release dates never decrease;
- a release is dated on or after the end of the target window of every origin it
  resolves (a roll cannot ingest a window that has not closed yet);
- an opened origin's ``closes`` lies in [the opening release's date, origin + window):
  not before the release that opened it, not before the origin itself, and before
  the target window ends, when the answers are known;
- a file's receipt (the first release listing it) never precedes the release that
  opened its origin: a commitment or an origin's prediction files cannot be in a
  release older than the origin's opening, and a sealed entry's reveal comes on or
  after the release that resolved the origin.

Every finding is ``INVARIANT`` and its detail starts with ``release N:``.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Mapping

from rapgen.archive.calendar import add_months
from rapgen.archive.history.records import ReleaseKind, ReleaseRecord, commitment_key, record_path
from rapgen.archive.layout import ORIGIN_FILE_PATTERN
from rapgen.archive.records import Category, Finding

_ORIGIN_FILE = re.compile(ORIGIN_FILE_PATTERN)


def roll_date_problem(origin: date, when: date, window_months: int) -> str | None:
    """Why a release dated ``when`` cannot resolve ``origin`` (its target window is still open), or None."""
    end = add_months(origin, window_months)
    if when < end:
        return f"dated {when}, before the window [{origin}, {end}) closes; roll it in on or after {end}"
    return None


def deadline_problem(origin: date, closes: date, opened_on: date, window_months: int) -> str | None:
    """Why ``closes`` cannot be the Live deadline of ``origin`` opened by a release dated ``opened_on``, or None.

    The deadline lies in [max(opened_on, origin), origin + window): a deadline before
    the release that opens the origin, or before the origin, admits no entry on time;
    one on or after the end of the target window would let entries see their answers."""
    end = add_months(origin, window_months)
    if closes < opened_on:
        return f"closes {closes}, before the release that opens it ({opened_on}): no entry could be on time"
    if closes < origin:
        return f"closes {closes}, before the origin {origin} itself"
    if closes >= end:
        return f"closes {closes}, on or after {end}, when the origin's target window [{origin}, {end}) has ended"
    return None


def on_time(receipt: int | None, receipt_date: date | None, opener: ReleaseRecord) -> bool:
    """A Live entry counts iff its receipt is a release no older than the one that opened its
    origin, dated on or before that origin's ``closes``."""
    closes = opener.open_origin.closes if opener.open_origin is not None else None
    return (receipt is not None and receipt_date is not None and closes is not None
            and receipt >= opener.release and receipt_date <= closes)


def check_dates(records: Mapping[int, ReleaseRecord], manifests: Mapping[int, Mapping[str, str]],
                window_months: int) -> list[Finding]:
    """Every date rule over the records and manifests that parsed; an empty list when the dates hold."""
    out: list[Finding] = []

    def add(path: str, k: int, detail: str) -> None:
        out.append(Finding(path, None, Category.INVARIANT, f"release {k}: {detail}"))

    numbers = sorted(records)
    for j, k in zip(numbers, numbers[1:]):
        if records[k].date < records[j].date:
            add(record_path(k), k, f"dated {records[k].date} before release {j} ({records[j].date}): release dates never decrease")
    opener: dict[date, ReleaseRecord] = {}
    resolver: dict[date, ReleaseRecord] = {}
    for k in numbers:
        record = records[k]
        prev = records.get(k - 1)
        newly = [o for o in record.resolved_origins if prev is None or o not in prev.resolved_origins]
        if record.kind is ReleaseKind.ROLL or k == 1:
            for origin in newly[-1:]:  # release 1's earlier origins resolved long before; its last window must have ended
                problem = roll_date_problem(origin, record.date, window_months)
                if problem:
                    add(record_path(k), k, f"{'a roll' if record.kind is ReleaseKind.ROLL else 'the initial release is'} {problem}")
        for origin in newly:
            resolver.setdefault(origin, record)
        o = record.open_origin
        if o is not None and o.origin not in opener:
            opener[o.origin] = record
            problem = deadline_problem(o.origin, o.closes, record.date, window_months)
            if problem:
                add(record_path(k), k, f"open origin {o.origin} {problem}")
    _check_receipts(records, manifests, opener, resolver, add)
    return out


def _check_receipts(records, manifests, opener: dict[date, ReleaseRecord], resolver: dict[date, ReleaseRecord], add) -> None:
    receipts: dict[str, int] = {}
    for k in sorted(manifests):
        for path in manifests[k]:
            receipts.setdefault(path, k)
    committed: set[tuple[str, date]] = set()
    for path, k in sorted(receipts.items()):
        key = commitment_key(path)
        if key is None:
            continue
        origin, model_id = key
        committed.add((model_id, origin))
        opened = opener.get(origin)
        if opened is not None and k < opened.release:
            add(path, k, f"a commitment for {origin} listed by release {k}{_dated(records, k)}, "
                f"before release {opened.release} ({opened.date}) opened that origin")
    for path, k in sorted(receipts.items()):
        m = _ORIGIN_FILE.match(path)
        if not m:
            continue
        try:
            model_id, origin = m.group(1), date.fromisoformat(m.group(2))
        except ValueError:
            continue  # not a calendar date: the layout check reports it
        opened, resolved = opener.get(origin), resolver.get(origin)
        if opened is not None and k < opened.release:
            add(path, k, f"files for origin {origin} listed by release {k}{_dated(records, k)}, before release {opened.release} "
                f"({opened.date}) opened that origin")
        elif (model_id, origin) in committed and opened is not None and (resolved is None or k < resolved.release):
            when = f"before release {resolved.release} ({resolved.date}) resolved it" if resolved else "before the origin is resolved"
            add(path, k, f"reveals a sealed entry for {origin} {when}: a reveal comes after its origin resolves")


def _dated(records: Mapping[int, ReleaseRecord], k: int) -> str:
    return f" ({records[k].date})" if k in records else ""
