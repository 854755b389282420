"""Trace lines in SEARCH.md format.

(The replayable synthetic traces of ``rapgen synth`` are made by
:func:`rapgen.sample.generate_traces`, through this stage's public face.)
"""

from __future__ import annotations

from datetime import date
from typing import Mapping

from rapgen.search.engine import SearchResult


def trace_line(field_id: str, origin: date, condition: str, call_index: int, args: Mapping, result: SearchResult) -> dict:
    """One traces.jsonl object for a call and its result (an error result records 0 hits, no ids)."""
    return {
        "field_id": field_id,
        "origin": origin.isoformat(),
        "condition": condition,
        "call_index": call_index,
        "query": args.get("query"),
        "sort": args.get("sort"),
        "date_from": args.get("date_from"),
        "date_to": args.get("date_to"),
        "total_hits": result.total_hits,
        "returned_ids": list(result.ids),
    }
