"""The ordinary line of a model file, built quickly (``_parse_lines``'s ``fast``).

Most lines of a large file are ordinary: the required keys (and a text rationale), a known
field and origin, eight finite non-negative weights. These builders return exactly the
record the checked builders of :mod:`rapgen.archive.parse` and
:mod:`rapgen.archive.interventions` return for such a line, computed the same way, and None
for any other line, which the checked builder then reads and words.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any, Callable, Iterable, Mapping

from rapgen.archive.jsonparse import _HEX64_RE
from rapgen.archive.records import CONDITIONS, SEARCH_CONDITIONS, SLOTS, TraceCall

_SLOT_KEYS = frozenset(SLOTS)
CONDITION_SET = frozenset(CONDITIONS)
_TEXT_OR_NULL = (str, type(None))
_BIG = 2 ** 1000
_SEARCH_CONDITION_SET = frozenset(SEARCH_CONDITIONS)


def origin_texts(origins: Iterable[date]) -> dict[str, date]:
    """``YYYY-MM-DD`` -> the origin: the one text of each origin that ``_date`` reads as it."""
    return {text: d for d in origins if len(text := d.isoformat()) == 10}


def quick_composition(weights: Any) -> tuple[float, ...] | None:
    """A valid unit's renormalised weights, as ``parse._unit_validity`` computes them, or None when unsure."""
    if type(weights) is not dict or weights.keys() != _SLOT_KEYS:
        return None
    values = []
    for slot in SLOTS:
        value = weights[slot]
        if type(value) is not float:
            if type(value) is not int or not -_BIG < value < _BIG:
                return None
            value = float(value)
        values.append(value)
    try:
        total = math.fsum(values)
    except (OverflowError, ValueError):
        return None
    if not 0.0 < total < math.inf or min(values) < 0:
        return None
    return tuple(v / total for v in values)


def quick_unit_core(obj: dict, field_set: set[str], origins: Mapping[str, date]) -> tuple[str, date, tuple[float, ...]] | None:
    """(field, origin, weights) of a valid unit line whose rationale, if any, is text; None when unsure."""
    fid, origin = obj["field_id"], obj["origin"]
    if type(fid) is not str or fid not in field_set or type(origin) is not str:
        return None
    day = origins.get(origin)
    if day is None or ("rationale" in obj and type(obj["rationale"]) not in _TEXT_OR_NULL):
        return None
    weights = quick_composition(obj["weights"])
    return None if weights is None else (fid, day, weights)


def hex64(value: Any) -> bool:
    return type(value) is str and _HEX64_RE.match(value) is not None


def quick_trace_call(field_set: set[str], origin_set: set[date], max_calls: int, key_sets: tuple[frozenset[str], frozenset[str]],
                     conditions: frozenset[str] = _SEARCH_CONDITION_SET) -> Callable[[dict, int], TraceCall | None]:
    """``parse._trace_call``'s record of an ordinary line, or None when unsure. ``key_sets``: the
    trace keys without and with ``prompt_sha256``; the condition must be one of ``conditions``."""
    origins = origin_texts(origin_set)
    plain, with_prompt = key_sets

    def fast(obj: dict, number: int) -> TraceCall | None:
        keys = obj.keys()
        prompt = None
        if keys != plain:
            if keys != with_prompt:
                return None
            prompt = obj["prompt_sha256"]
            if not hex64(prompt):
                return None
        fid, origin, condition, index = obj["field_id"], obj["origin"], obj["condition"], obj["call_index"]
        if (type(fid) is not str or fid not in field_set or type(origin) is not str or type(condition) is not str
                or condition not in conditions or type(index) is not int or not 0 <= index < max_calls):
            return None
        day = origins.get(origin)
        date_from, date_to, query, sort, hits, ids = (obj["date_from"], obj["date_to"], obj["query"], obj["sort"],
                                                       obj["total_hits"], obj["returned_ids"])
        if (day is None or type(date_from) not in _TEXT_OR_NULL or type(date_to) not in _TEXT_OR_NULL or type(query) is not str
                or type(sort) is not str or type(hits) is not int or hits < 0 or type(ids) is not list):
            return None
        for i in ids:
            if type(i) is not str:
                return None
        return TraceCall(fid, day, condition, index, query, sort, date_from, date_to, hits, tuple(ids), number, prompt)

    return fast
