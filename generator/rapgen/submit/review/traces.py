"""What parse_traces cannot know about traces.jsonl: which units it may cover, the call order and cap,
what a malformed call may return, and whether every returned paper lies in the unit's shard."""

from __future__ import annotations

from collections import defaultdict

from rapgen.archive import Archive, TraceCall, Unit, condition_shard_start, in_shard
from rapgen.search import call_is_malformed
from rapgen.submit.review.result import CheckResult

STAGE = "submission"


def check_trace_semantics(result: CheckResult, archive: Archive, rel: str, calls: list[TraceCall], units: list[Unit]) -> None:
    search = archive.ledger["search"]
    top_k, max_calls = int(search["top_k"]), int(search["max_calls"])
    _check_units_covered(result, rel, calls, units)
    by_unit: dict[tuple, list[TraceCall]] = defaultdict(list)
    for call in calls:
        by_unit[(call.field_id, call.origin, call.condition)].append(call)
        if len(call.returned_ids) > top_k:
            result.add(STAGE, "TRACE", rel, call.line, f"returned {len(call.returned_ids)} papers, more than top_k = {top_k}")
        if len(set(call.returned_ids)) != len(call.returned_ids):
            result.add(STAGE, "TRACE", rel, call.line, "the same paper is returned twice")
        if call.total_hits < len(call.returned_ids):
            result.add(STAGE, "TRACE", rel, call.line, f"total_hits {call.total_hits} is smaller than the {len(call.returned_ids)} papers returned")
        if call_is_malformed(call) and (call.returned_ids or call.total_hits):
            result.add(STAGE, "TRACE", rel, call.line, "a malformed call (bad sort, empty query or bad dates) must return no papers and total_hits 0")
    for (fid, origin, condition), unit_calls in sorted(by_unit.items()):
        indexes = sorted(c.call_index for c in unit_calls)
        if len(unit_calls) > max_calls:
            result.add(STAGE, "CALL-CAP", rel, max(unit_calls, key=lambda c: c.line).line, f"{fid} {origin} {condition} made {len(unit_calls)} calls; the cap is {max_calls}")
        if indexes != list(range(len(indexes))):
            gap = next(i for i, v in enumerate(indexes) if v != i)
            first = min((c for c in unit_calls if c.call_index > gap), key=lambda c: c.call_index)
            result.add(STAGE, "TRACE", rel, first.line, f"call_index {first.call_index} of {fid} {origin} {condition} follows no call {gap}: indexes run 0, 1, 2, … per unit")
    check_returned_papers(result, archive, rel, calls)


def _check_units_covered(result: CheckResult, rel: str, calls: list[TraceCall], units: list[Unit]) -> None:
    """A trace covers only units that predictions.jsonl claims (A0 calls are rejected by the parser)."""
    if not units:
        return  # predictions.jsonl is missing or unreadable: reported there
    claimed = {u.condition for u in units}
    predicted = {(u.field_id, u.origin, u.condition) for u in units}
    for call in calls:
        if call.condition not in claimed:
            result.add(STAGE, "TRACE", rel, call.line, f"a Search call for condition {call.condition}, which predictions.jsonl does not contain")
        elif (call.field_id, call.origin, call.condition) not in predicted:
            result.add(STAGE, "TRACE", rel, call.line, f"a Search call for unit {call.field_id} {call.origin} {call.condition}, which predictions.jsonl does not contain")


def check_returned_papers(result: CheckResult, archive: Archive, rel: str, calls: list[TraceCall]) -> None:
    """Every returned paper exists, belongs to the field, and lies in the unit's shard window."""
    ids = sorted({i for c in calls for i in c.returned_ids})
    if not ids:
        return
    import pandas as pd

    try:
        con = archive.connect()
        con.register("wanted", pd.DataFrame({"arxiv_id": ids}))
        dates = dict(con.execute("SELECT p.arxiv_id, p.first_submitted FROM papers p JOIN wanted USING (arxiv_id)").fetchall())
        members = {(a, f) for a, f in con.execute("SELECT a.arxiv_id, a.field_id FROM assignments a JOIN wanted USING (arxiv_id)").fetchall()}
        con.close()
    except Exception as exc:  # noqa: BLE001 - a broken archive is reported by the integrity section
        result.notes.append(f"returned papers were not checked: the archive's tables cannot be read ({type(exc).__name__})")
        return
    window = archive.origins.window_months
    for call in calls:
        start = condition_shard_start(call.condition, call.origin, window)
        for paper in call.returned_ids:
            first = dates.get(paper)
            if first is None:
                result.add(STAGE, "TRACE", rel, call.line, f"returned paper {paper} is not in the archive's papers")
            elif first >= call.origin:
                result.add(STAGE, "LEAK", rel, call.line, f"returned paper {paper} was first submitted {first}, on or after the origin {call.origin}")
            elif (paper, call.field_id) not in members:
                result.add(STAGE, "TRACE", rel, call.line, f"returned paper {paper} is not in field {call.field_id!r}, so not in its shard")
            elif not in_shard(first, call.origin, start):
                result.add(STAGE, "TRACE", rel, call.line, f"returned paper {paper} ({first}) is before the {call.condition} shard's window [{start}, {call.origin})")
