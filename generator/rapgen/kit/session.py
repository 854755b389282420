"""The Search tool as a submitter's harness sees it (SEARCH.md, "A Search call").

A :class:`SearchSession` is the one authority on a unit's Search calls: it
counts them against the ledger's call cap, validates each with the Search
stage's validator (:func:`rapgen.search.validate_call`), executes valid calls
on the frozen shards, and records every counted call in the ``traces.jsonl``
format. ``rapgen agent run``, the reference agents, ``rapgen serve-search``
(HTTP) and ``rapgen serve-search --mcp`` all use it.

Decisions where SEARCH.md is silent (docs/submitting.md repeats them):

- A malformed call is an error result, counts against the cap and is always
  recorded with ``total_hits`` 0 and no ids, so the trace proves the cap.
  When its arguments fit the trace format (an object with only the four keys,
  string ``query`` and ``sort``, string-or-null dates) they are recorded as
  given and replay sees the same error. Otherwise a sanitised line is
  recorded (:func:`trace_arguments`): ``query`` "" — which the backend rejects
  as an empty query, so the line replays as 0 hits and no ids whatever else the
  call held — ``sort`` as given if a string else "", each date as given if a
  string else null.
- Calls after the cap are refused, not counted and not recorded, so a trace
  never exceeds ``max_calls`` per unit and is gapless (0 … n−1).
- Text that cannot be written as UTF-8 (a lone surrogate) is malformed
  (the validator says so for the query); a value that cannot be written is
  recorded sanitised like any other unrecordable call.
- Dates: an absent ``date_from``/``date_to`` means null.
- Besides A1–A4 a session serves O3, the exact-history condition that also
  searches (INTERVENTIONS.md §2): the Expanding shard as for A3, its lines
  recorded with condition ``O3`` (the ``oracle_traces.jsonl`` format).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Callable, Protocol

from rapgen.archive import ORACLE_SEARCH, SEARCH_CONDITIONS, SEARCH_REGIME, Archive
from rapgen.errors import RapgenError, SearchError
from rapgen.search import CALL_KEYS, call_keys, validate_call


# The conditions a session serves and the shard each searches: A1–A4 as CONDITION_REGIME says,
# and the exact-history condition O3 (INTERVENTIONS.md §2), which searches the Expanding shard as A3.
SESSION_REGIME: dict[str, str] = SEARCH_REGIME
SESSION_CONDITIONS: tuple[str, ...] = (*SEARCH_CONDITIONS, ORACLE_SEARCH)


class ToolError(RapgenError):
    """A request that names no valid unit, or one that can never be recorded."""


class Executor(Protocol):
    def __call__(self, field_id: str, origin: date, regime: str, query: str, sort: str,
                 date_from: date | None, date_to: date | None) -> tuple[int, list[dict], str | None]: ...


@dataclass(frozen=True)
class SearchOutcome:
    """What the model sees: an error, or total_hits and the returned papers."""

    call_index: int | None
    total_hits: int
    papers: tuple[dict, ...]
    error: str | None = None
    calls_left: int = 0

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(p["arxiv_id"] for p in self.papers)

    def to_dict(self) -> dict:
        if self.error is not None:
            return {"error": self.error, "call_index": self.call_index, "calls_left": self.calls_left}
        return {"call_index": self.call_index, "total_hits": self.total_hits, "papers": list(self.papers), "calls_left": self.calls_left}


def backend_executor(backend: Any, *, with_text: bool = True) -> Executor:
    """Run calls on ``backend`` (a :class:`rapgen.search.Backend`). Papers carry
    id, date, title and abstract — the text from the backend's one in-memory
    copy of the papers table, loaded on the first call, so a long-running
    server answers in milliseconds — or (``with_text=False``) only id and date,
    which is all the reference agents need."""

    def execute(field_id, origin, regime, query, sort, date_from, date_to):
        args = {"query": query, "sort": sort,
                "date_from": date_from.isoformat() if date_from else None,
                "date_to": date_to.isoformat() if date_to else None}
        result = backend.search(field_id, origin, regime, args)
        if result.error is not None:
            return 0, [], result.error
        papers = [{"arxiv_id": i, "first_submitted": d} for i, d in zip(result.ids, result.dates)]
        if with_text:
            for paper, (title, abstract) in zip(papers, backend.paper_texts(result.ids)):
                paper["title"], paper["abstract"] = title, abstract
        return result.total_hits, papers, None

    return execute


def _fits_trace(arguments: Any) -> bool:
    """Arguments a trace line can hold as given (see the module notes)."""
    if not isinstance(arguments, dict) or any(k not in CALL_KEYS for k in arguments):
        return False
    return (isinstance(arguments.get("query"), str) and isinstance(arguments.get("sort"), str)
            and all(arguments.get(k) is None or isinstance(arguments.get(k), str) for k in ("date_from", "date_to")))


def trace_arguments(arguments: Any, faithful: bool) -> dict:
    """The query/sort/date values a trace line records for a call.

    ``faithful`` calls are recorded as given. Any other malformed call gets
    ``query`` "" (an empty query is malformed for the backend, so replay gives
    0 hits and no ids too), ``sort`` as given when a string else "", and each
    date as given when a string else null."""
    args = arguments if isinstance(arguments, dict) else {}
    if faithful:
        return {"query": args["query"], "sort": args["sort"], "date_from": args.get("date_from"), "date_to": args.get("date_to")}
    sort = args.get("sort")
    dates = {k: (args.get(k) if isinstance(args.get(k), str) else None) for k in ("date_from", "date_to")}
    return {"query": "", "sort": sort if isinstance(sort, str) else "", **dates}


def _encodable(values: dict) -> bool:
    try:
        for v in values.values():
            if isinstance(v, str):
                v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _recorded(arguments: Any, faithful: bool) -> dict:
    """The trace values of a call; never text a UTF-8 file cannot hold."""
    values = trace_arguments(arguments, faithful)
    if _encodable(values):
        return values
    values = trace_arguments(arguments, False)
    return {k: (v if _encodable({k: v}) else ("" if k in ("query", "sort") else None)) for k, v in values.items()}


def recorded_call(arguments: Any) -> tuple[dict, bool]:
    """The four values a trace line records for a call, and whether they are the call as given:
    as given when the arguments fit the trace format and are UTF-8 text, else as
    :func:`trace_arguments` records a call that does not (for a session whose backend judges
    the call itself, as Inspire's does)."""
    faithful = _fits_trace(arguments) and _encodable(arguments)
    return _recorded(arguments, faithful), faithful


class CallLog:
    """A Search session's per-unit call counts and trace lines (every kind's session is one).

    ``on_record(line)`` is called, under the session's lock, for every counted call in
    call order; if it raises, the call is not counted (the count and the trace never
    disagree). With ``keep_records`` the lines are kept in ``records`` too."""

    def __init__(self, on_record: Callable[[dict], None] | None, keep_records: bool):
        self.on_record = on_record
        self.keep_records = keep_records
        self.counts: dict[tuple, int] = defaultdict(int)
        self.records: list[dict] = []
        self._lock = threading.Lock()

    def _count(self, key: tuple, line_of: Callable[[int], dict]) -> int:
        """Count a call of unit ``key`` and record ``line_of(its index)``; returns the index."""
        index = self.counts[key]
        line = line_of(index)
        if self.on_record is not None:
            self.on_record(line)  # first: a failed write leaves the call uncounted
        self.counts[key] = index + 1
        if self.keep_records:
            self.records.append(line)
        return index


class SearchSession(CallLog):
    """Per-unit call counting, validation and trace recording over one archive (see :class:`CallLog`)."""

    def __init__(self, archive: Archive, executor: Executor | None = None, on_record: Callable[[dict], None] | None = None,
                 cache_dir: Path | None = None, *, keep_records: bool = True):
        self.archive = archive
        self.max_calls = int(archive.ledger["search"]["max_calls"])
        self.top_k = int(archive.ledger["search"]["top_k"])
        if executor is None:
            from rapgen.search import Backend

            executor = backend_executor(Backend(archive, cache_dir=cache_dir))
        self.executor = executor
        super().__init__(on_record, keep_records)

    def unit(self, field_id: Any, origin: Any, condition: Any) -> tuple[str, date, str]:
        """The unit key, or :class:`ToolError` if it names no Search unit of the archive."""
        return check_unit(self.archive, field_id, origin, condition)

    def calls_made(self, field_id: str, origin: date, condition: str) -> int:
        return self.counts[(field_id, origin, condition)]

    def call(self, field_id: Any, origin: Any, condition: Any, arguments: Any) -> SearchOutcome:
        """One Search call of a unit. Raises ToolError only if the unit itself is unknown."""
        key = self.unit(field_id, origin, condition)
        with self._lock:
            made = self.counts[key]
            if made >= self.max_calls:
                return SearchOutcome(None, 0, (), f"the call cap of {self.max_calls} Search calls is reached; call Finish now", 0)
            left = self.max_calls - made - 1
            try:
                clean = validate_call(arguments)
            except ValueError as exc:  # CallProblem: a malformed call, counted and recorded
                faithful = getattr(exc, "recordable", False) and _fits_trace(arguments)
                index = self._record(key, _recorded(arguments, faithful), 0, [])
                return SearchOutcome(index, 0, (), f"malformed call: {exc}", left)
            regime = SESSION_REGIME[key[2]]
            total, papers, error = self.executor(key[0], key[1], regime, clean.query, clean.sort, clean.date_from, clean.date_to)
            recorded = _recorded(arguments, True)
            if error is not None:  # the backend's own schema rules
                index = self._record(key, recorded, 0, [])
                return SearchOutcome(index, 0, (), f"malformed call: {error}", left)
            papers = [_checked_paper(p, key[1]) for p in list(papers)[: self.top_k]]
            index = self._record(key, recorded, int(total), [p["arxiv_id"] for p in papers])
            return SearchOutcome(index, int(total), tuple(papers), None, left)

    def _record(self, key: tuple[str, date, str], args: dict, total: int, ids: list[str]) -> int:
        """Count the call and record its trace line; ``args`` holds the four recorded values."""
        return self._count(key, lambda index: {"field_id": key[0], "origin": key[1].isoformat(),
                                               **call_keys(key[2], index, args, total, ids)})


def check_unit(archive: Archive, field_id: Any, origin: Any, condition: Any) -> tuple[str, date, str]:
    """(field_id, origin, condition) of a Search unit of ``archive``, or :class:`ToolError`."""
    if not isinstance(field_id, str) or field_id not in archive.field_map:
        raise ToolError(f"field_id {_show(field_id)} is not a field of this archive")
    try:
        origin_date = date.fromisoformat(origin) if isinstance(origin, str) and len(origin) == 10 else None
    except ValueError:
        origin_date = None
    if origin_date not in archive.known_origins:
        raise ToolError(f"origin {_show(origin)} is not an origin of this archive ({archive.origin_listing()})")
    if condition not in SESSION_CONDITIONS:
        raise ToolError(f"condition {_show(condition)} has no Search tool (Search conditions: {', '.join(SESSION_CONDITIONS)})")
    return field_id, origin_date, condition


def _checked_paper(paper: dict, origin: date) -> dict:
    """The paper with an ISO date, or SearchError if the backend leaked one on or after the origin."""
    p = dict(paper)
    when = p.get("first_submitted")
    when = date.fromisoformat(when) if isinstance(when, str) else when
    if when is None or when >= origin:
        raise SearchError(f"the Search backend returned {p.get('arxiv_id')} ({when}) on or after the origin {origin}; refusing to record it")
    p["first_submitted"] = when.isoformat()
    return p


def _show(value: Any, limit: int = 60) -> str:
    """A short, printable repr of a value from a request, for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
