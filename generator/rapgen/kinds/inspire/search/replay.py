"""Replay: every recorded call re-executed on its shard must give the same answer.

A call reproduces when ``total_hits`` and the returned ids (same ids, same
order) are equal. Anything else — an edited result, a result from another
corpus or engine — is an ``INVARIANT`` finding naming the call; ``submit check``
fails a pull request on any of them (INSPIRE.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from rapgen.archive import Category, Finding, ProblemKind

from rapgen.kinds.inspire.archive import Call
from rapgen.kinds.inspire.search.shard import SearchFn


@dataclass(frozen=True)
class ReplaySummary:
    n_calls: int
    n_reproduced: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.n_calls == self.n_reproduced


def _difference(call: Call, total: int, ids: Sequence[str]) -> str:
    if total != call.total_hits:
        return f"total_hits {call.total_hits} recorded, {total} on replay"
    if len(ids) != len(call.returned_ids):
        return f"{len(call.returned_ids)} ids recorded, {len(ids)} on replay"
    at = next(k for k, (x, y) in enumerate(zip(call.returned_ids, ids)) if x != y)
    return f"position {at + 1} holds {call.returned_ids[at]} in the trace, {ids[at]} on replay"


def replay_calls(calls: Sequence[Call], search: SearchFn, path: str = "traces.jsonl") -> ReplaySummary:
    """Re-execute every call through ``search`` and compare."""
    findings: list[Finding] = []
    same = 0
    for call in calls:
        result = search(call.instance_id, call.args)
        ids = tuple(result.ids)
        if result.total_hits == call.total_hits and ids == call.returned_ids:
            same += 1
            continue
        findings.append(Finding(path, call.line or None, Category.INVARIANT,
                                f"{call.describe()} does not replay: {_difference(call, result.total_hits, ids)}",
                                kind=ProblemKind.TRACE))
    return ReplaySummary(len(calls), same, findings)
