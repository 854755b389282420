"""The bytes behind the intervention hashes (INTERVENTIONS.md §0–§2).

* :func:`canonical_hash` — ``H(obj)``: hex SHA-256 of the compact,
  non-ASCII-preserving JSON of ``obj`` (keys in the order built here).
* :func:`build_evidence` — the frozen evidence of one source unit (§1), the
  list a readout prompt embeds and ``evidence_sha256`` hashes.
* :func:`build_oracle_block` — the exact-history block of an O unit (§2),
  hashed by ``input_sha256``.

All are pure: the caller supplies the trace calls, the paper text and the
canonical direction counts. Whether a recorded call is malformed is decided
by the one Search-call validator (``rapgen.search.validate_call``), which the
archive stage may not import; callers pass it in as ``malformed``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any, NamedTuple

from rapgen.archive.calendar import history_windows
from rapgen.archive.records import SLOTS, TraceCall

MALFORMED_CALL = "malformed call"  # fixed text: traces keep no error message
ORACLE_WINDOWS: dict[str, int] = {"O1": 1, "O2": 3, "O3": 3}  # history windows shown, newest last


class PaperText(NamedTuple):
    first_submitted: str  # ISO date
    title: str
    abstract: str


def canonical_json(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``:
    only ``"``, ``\\`` and U+0000–U+001F are escaped."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def canonical_hash(obj: Any) -> str:
    """``H(obj)`` of INTERVENTIONS.md §0."""
    return hashlib.sha256(canonical_json(obj)).hexdigest()


def kept_calls(calls: Iterable[TraceCall], budget: int | None = None) -> list[TraceCall]:
    """A unit's calls in ``call_index`` order, truncated to the ``budget`` smallest indices."""
    ordered = sorted(calls, key=lambda c: c.call_index)
    return ordered if budget is None else ordered[:budget]


def call_arguments(call: TraceCall) -> dict:
    """The recorded arguments of a call, as the Search tool received them."""
    return {"query": call.query, "sort": call.sort, "date_from": call.date_from, "date_to": call.date_to}


def build_evidence(
    calls: Iterable[TraceCall],
    papers: Mapping[str, PaperText],
    malformed: Callable[[TraceCall], bool],
    budget: int | None = None,
) -> list[dict]:
    """The evidence list of one source unit: one object per kept call.

    ``papers`` maps every returned arXiv id to its text (a missing id raises
    KeyError: the archive's returned-papers invariant has failed). A call
    whose recorded arguments are malformed carries ``"error": "malformed call"``
    in place of ``total_hits`` and ``papers``.
    """
    out = []
    for call in kept_calls(calls, budget):
        item: dict[str, Any] = {"call_index": call.call_index, **call_arguments(call)}
        if malformed(call):
            item["error"] = MALFORMED_CALL
        else:
            item["total_hits"] = call.total_hits
            item["papers"] = [
                {"arxiv_id": pid, "first_submitted": papers[pid].first_submitted, "title": papers[pid].title,
                 "abstract": papers[pid].abstract}
                for pid in call.returned_ids
            ]
        out.append(item)
    return out


def evidence_sha256(calls: Iterable[TraceCall], papers: Mapping[str, PaperText], malformed: Callable[[TraceCall], bool],
                    budget: int | None = None) -> str:
    return canonical_hash(build_evidence(calls, papers, malformed, budget))


def canonical_counts(rows: Iterable[tuple[date, str]], date_from: date, date_to: date) -> list[int]:
    """SCORING.md §1 canonical n[f, w, ·] of one field's ledger rows ``(first_submitted, primary)``
    in [date_from, date_to): one per row to its primary; ``other`` never counts."""
    counts = [0] * len(SLOTS)
    index = {slot: i for i, slot in enumerate(SLOTS)}
    for day, primary in rows:
        if date_from <= day < date_to and primary in index:
            counts[index[primary]] += 1
    return counts


def oracle_windows(condition: str, origin: date, window_months: int) -> list[tuple[date, date]]:
    """The windows an O condition shows, oldest first: h3 for O1; h1, h2, h3 for O2 and O3."""
    return history_windows(origin, window_months, ORACLE_WINDOWS[condition])


def build_oracle_block(windows: Sequence[tuple[date, date]], counts: Sequence[Sequence[int]]) -> dict:
    """``{"windows": [{"date_from", "date_to", "counts": {"D0"…"D7"}}, …]}``, oldest first.

    ``counts[i]`` are window i's eight canonical counts (zeros for an empty window).
    """
    if len(windows) != len(counts):
        raise ValueError("one row of counts per window")
    out = []
    for (start, end), row in zip(windows, counts):
        if len(row) != len(SLOTS):
            raise ValueError("eight counts per window")
        out.append({"date_from": start.isoformat(), "date_to": end.isoformat(),
                    "counts": {slot: int(n) for slot, n in zip(SLOTS, row)}})
    return {"windows": out}
