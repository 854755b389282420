"""The Search tool as a submitter's harness sees it (SEARCH.md, "A Search call").

A :class:`SearchSession` enforces the tool schema, the unit's temporal bounds
and the per-unit call cap, executes valid calls on the frozen shards through
the Search stage's public API, and records every call in the ``traces.jsonl``
format. ``rapgen serve-search`` exposes one session over loopback HTTP;
``rapgen agent run`` uses one in process.

Decisions where SEARCH.md is silent (docs/submitting.md repeats them):

- A malformed call is an error result, counts against the cap and is always
  recorded with ``total_hits`` 0 and no ids, so the trace proves the cap.
  When its arguments fit the trace format (an object with only the four keys,
  string ``query`` and ``sort``, string-or-null dates) they are recorded as
  given and replay sees the same error. Otherwise (not an object, an unknown
  key, a missing or non-string ``query``/``sort``, a non-string date) a
  sanitised line is recorded (:func:`trace_arguments`): ``query`` "" — which
  the backend rejects as an empty query, so the line replays as 0 hits and no
  ids whatever else the call held — ``sort`` as given if a string else "",
  each date as given if a string else null.
- Calls after the cap are refused, not counted and not recorded, so a trace
  never exceeds ``max_calls`` per unit.
- Dates: an absent ``date_from``/``date_to`` means null.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Callable, Protocol

from rapgen.archive import CONDITION_REGIME, SEARCH_CONDITIONS, Archive
from rapgen.errors import RapgenError, SearchError

SEARCH_KEYS = ("query", "sort", "date_from", "date_to")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # strictly YYYY-MM-DD (date.fromisoformat also takes week dates)
SORTS = ("relevance", "date")


class ToolError(RapgenError):
    """A request that names no valid unit (unknown field, origin or condition)."""


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

    def to_dict(self) -> dict:
        if self.error is not None:
            return {"error": self.error, "call_index": self.call_index, "calls_left": self.calls_left}
        return {"call_index": self.call_index, "total_hits": self.total_hits, "papers": list(self.papers), "calls_left": self.calls_left}


def _parse_bound(value: Any, key: str) -> tuple[date | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, str) or not ISO_DATE.match(value):
        return None, f"{key} must be a YYYY-MM-DD date or null"
    try:
        return date.fromisoformat(value), None
    except ValueError:
        return None, f"{key} {value!r} is not a valid date"


def validate_arguments(arguments: Any) -> tuple[dict | None, str | None, bool]:
    """(clean arguments, error, recordable). ``clean`` is None when the call is malformed."""
    if not isinstance(arguments, dict):
        return None, "the arguments must be a JSON object", False
    unknown = sorted(k for k in arguments if k not in SEARCH_KEYS)
    query, sort = arguments.get("query"), arguments.get("sort")
    date_from, date_to = arguments.get("date_from"), arguments.get("date_to")
    recordable = (
        not unknown and isinstance(query, str) and isinstance(sort, str)
        and all(v is None or isinstance(v, str) for v in (date_from, date_to))
    )
    if unknown:
        return None, f"unknown argument {unknown[0]!r}; Search takes only query, sort, date_from, date_to", False
    if "query" not in arguments or "sort" not in arguments:
        return None, "query and sort are required", False
    if not isinstance(query, str) or not query.strip():
        return None, "query must be a non-empty string", recordable
    if sort not in SORTS:
        return None, "sort must be 'relevance' or 'date'", recordable
    lo, err = _parse_bound(date_from, "date_from")
    if err:
        return None, err, recordable
    hi, err = _parse_bound(date_to, "date_to")
    if err:
        return None, err, recordable
    if lo is not None and hi is not None and lo >= hi:
        return None, "date_from must be before date_to", recordable
    return {"query": query, "sort": sort, "date_from": lo, "date_to": hi}, None, True


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


class SearchSession:
    """Per-unit call counting, schema enforcement and trace recording over one archive."""

    def __init__(self, archive: Archive, executor: Executor | None = None, on_record: Callable[[dict], None] | None = None,
                 cache_dir: Path | None = None):
        self.archive = archive
        self.max_calls = int(archive.ledger["search"]["max_calls"])
        self.top_k = int(archive.ledger["search"]["top_k"])
        if executor is None:
            from rapgen.submit.stages import search_executor

            executor = search_executor(archive, cache_dir)
        self.executor = executor
        self.on_record = on_record
        self.counts: dict[tuple[str, date, str], int] = defaultdict(int)
        self.recorded: dict[tuple[str, date, str], int] = defaultdict(int)
        self.records: list[dict] = []
        self._lock = threading.Lock()

    def unit(self, field_id: Any, origin: Any, condition: Any) -> tuple[str, date, str]:
        if not isinstance(field_id, str) or field_id not in self.archive.field_map:
            raise ToolError(f"field_id {field_id!r} is not a field of this archive")
        try:
            origin_date = date.fromisoformat(origin) if isinstance(origin, str) else None
        except ValueError:
            origin_date = None
        if origin_date not in self.archive.origins.origins:
            raise ToolError(f"origin {origin!r} is not an origin of this archive")
        if condition not in SEARCH_CONDITIONS:
            raise ToolError(f"condition {condition!r} has no Search tool (Search conditions: {', '.join(SEARCH_CONDITIONS)})")
        return field_id, origin_date, condition

    def calls_made(self, field_id: str, origin: date, condition: str) -> int:
        return self.counts[(field_id, origin, condition)]

    def call(self, field_id: Any, origin: Any, condition: Any, arguments: Any) -> SearchOutcome:
        """One Search call of a unit. Raises ToolError only if the unit itself is unknown."""
        key = self.unit(field_id, origin, condition)
        with self._lock:
            made = self.counts[key]
            if made >= self.max_calls:
                return SearchOutcome(None, 0, (), f"the call cap of {self.max_calls} Search calls is reached; call Finish now", 0)
            self.counts[key] = made + 1
            left = self.max_calls - made - 1
            clean, error, recordable = validate_arguments(arguments)
            if clean is None:
                index = self._record(key, trace_arguments(arguments, recordable), 0, [])
                return SearchOutcome(index, 0, (), f"malformed call: {error}", left)
            regime = CONDITION_REGIME[key[2]]
            total, papers, error = self.executor(key[0], key[1], regime, clean["query"], clean["sort"], clean["date_from"], clean["date_to"])
            if error is not None:  # the backend's own schema rules
                index = self._record(key, trace_arguments(arguments, True), 0, [])
                return SearchOutcome(index, 0, (), f"malformed call: {error}", left)
            papers = [dict(p) for p in papers][: self.top_k]
            for p in papers:
                when = p.get("first_submitted")
                when = date.fromisoformat(when) if isinstance(when, str) else when
                if when is None or when >= key[1]:
                    raise SearchError(f"the Search backend returned {p.get('arxiv_id')} ({when}) on or after the origin {key[1]}; refusing to record it")
                p["first_submitted"] = when.isoformat()
            index = self._record(key, trace_arguments(arguments, True), int(total), [p["arxiv_id"] for p in papers])
            return SearchOutcome(index, int(total), tuple(papers), None, left)

    def _record(self, key: tuple[str, date, str], args: dict, total: int, ids: list[str]) -> int:
        """Append one trace line; ``args`` holds the four recorded values (see :func:`trace_arguments`)."""
        index = self.recorded[key]
        self.recorded[key] = index + 1
        record = {
            "field_id": key[0], "origin": key[1].isoformat(), "condition": key[2], "call_index": index,
            "query": args["query"], "sort": args["sort"], "date_from": args["date_from"], "date_to": args["date_to"],
            "total_hits": total, "returned_ids": ids,
        }
        self.records.append(record)
        if self.on_record is not None:
            self.on_record(record)
        return index

    def traces_for(self, field_id: str, origin: date, condition: str) -> list[dict]:
        o = origin.isoformat()
        return [r for r in self.records if r["field_id"] == field_id and r["origin"] == o and r["condition"] == condition]
