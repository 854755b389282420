"""Trace lines in SEARCH.md format.

(The replayable synthetic traces of ``rapgen synth`` are made by
:func:`rapgen.sample.generate_traces`, through this stage's public face.)
"""

from __future__ import annotations

from datetime import date
from typing import Mapping

from rapgen.search.engine import SearchResult


def call_keys(condition: str, call_index: int, args: Mapping, total_hits: int, ids) -> dict:
    """A trace line's keys after its unit's own (SEARCH.md), in file order: the condition, the call's
    index, its four recorded arguments and what it returned. Every kind's trace line ends with these."""
    return {
        "condition": condition,
        "call_index": call_index,
        "query": args.get("query"),
        "sort": args.get("sort"),
        "date_from": args.get("date_from"),
        "date_to": args.get("date_to"),
        "total_hits": total_hits,
        "returned_ids": list(ids),
    }


def trace_line(field_id: str, origin: date, condition: str, call_index: int, args: Mapping, result: SearchResult) -> dict:
    """One traces.jsonl object for a call and its result (an error result records 0 hits, no ids)."""
    return {"field_id": field_id, "origin": origin.isoformat(),
            **call_keys(condition, call_index, args, result.total_hits, result.ids)}
