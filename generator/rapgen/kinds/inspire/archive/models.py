"""A model's predictions.jsonl and traces.jsonl (INSPIRE.md §2).

Malformed lines are findings; a well-formed unit with bad ids is *not*: its ids
are scored (malformed, duplicate, post-cutoff, unsurfaced ids keep a zero slot)
by :mod:`rapgen.kinds.inspire.scores.cleaned`. Traces must be whole and
untouched: a gap in ``call_index``, a call past the cap, or an answer that cannot
have come from the instance's shard is a finding naming the call.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Sequence

from rapgen.archive import Finding, ProblemKind

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.fields import (
    Bad, first_of_each, integer, invariant, keys, malformed, number, one_of, optional_text, parse_each, sha256_hex, show, text,
)
from rapgen.kinds.inspire.archive.ids import is_canonical
from rapgen.kinds.inspire.archive.records import Call, CorpusPaper, Instance, Prediction, RankedEntry

PREDICTION_KEYS = ("instance_id", "condition", "status", "ranking", "reason", "tokens_in", "tokens_out", "latency_s", "cost_usd")
PREDICTION_OPTIONAL = ("prompt_sha256",)
ENTRY_KEYS = ("arxiv_id",)
ENTRY_OPTIONAL = ("rationale",)
TRACE_KEYS = ("instance_id", "condition", "call_index", "query", "sort", "date_from", "date_to", "total_hits", "returned_ids")
TRACE_OPTIONAL = ("prompt_sha256",)


def _instance_of(obj: dict, known: Mapping[str, Instance]) -> str:
    iid = text(obj, "instance_id")
    if iid not in known:
        raise Bad(f"instance_id {iid!r} is not an instance of this archive")
    return iid


def _entry(value: object, at: int) -> RankedEntry:
    if not isinstance(value, dict):
        raise Bad(f"ranking[{at}] must be an object {{\"arxiv_id\": …}}, found {show(value)}")
    try:
        keys(value, ENTRY_KEYS, ENTRY_OPTIONAL)
        if not isinstance(value["arxiv_id"], str):
            raise Bad(f"'arxiv_id' must be a string, found {show(value['arxiv_id'])}")
        return RankedEntry(value["arxiv_id"], optional_text(value, "rationale"))
    except Bad as exc:
        raise Bad(f"ranking[{at}]: {exc}") from None


def _prediction(known: Mapping[str, Instance]):
    def build(obj: dict, line: int) -> Prediction:
        keys(obj, PREDICTION_KEYS, PREDICTION_OPTIONAL)
        iid = _instance_of(obj, known)
        condition = one_of(obj, "condition", layout.CONDITIONS)
        status = one_of(obj, "status", layout.STATUSES)
        ranking = obj["ranking"]
        if status == "failed" and ranking is not None:
            raise Bad("a unit with status \"failed\" must have ranking null")
        if status == "submitted":
            if not isinstance(ranking, list):
                raise Bad(f"'ranking' must be a list for a submitted unit, found {show(ranking)}")
            ranking = tuple(_entry(v, at) for at, v in enumerate(ranking))
        return Prediction(
            iid, condition, status, ranking, optional_text(obj, "reason"),
            integer(obj, "tokens_in", nullable=True), integer(obj, "tokens_out", nullable=True),
            number(obj, "latency_s", nullable=True, minimum=0.0), number(obj, "cost_usd", nullable=True),
            sha256_hex(obj, "prompt_sha256") if "prompt_sha256" in obj else None, line,
        )

    return build


def parse_predictions(data: bytes, instances: Sequence[Instance], path: str = "predictions.jsonl") -> tuple[list[Prediction], list[Finding]]:
    """predictions.jsonl: one line per (instance, condition); a claimed (split,
    condition) covers every instance of the split; ``eval`` × ``detailed`` is required."""
    known = {i.instance_id: i for i in instances}
    findings: list[Finding] = []
    out = first_of_each(path, parse_each(path, data, findings, _prediction(known)), lambda p: (p.instance_id, p.condition),
                        lambda p: f"unit {p.instance_id} {p.condition}", findings, ProblemKind.DUPLICATE_UNIT)
    findings.extend(coverage_findings(out, instances, path))
    return out, findings


def coverage_findings(predictions: Sequence[Prediction], instances: Sequence[Instance], path: str) -> list[Finding]:
    """A claimed (split, condition) missing an instance, and a missing eval × detailed."""
    split_of = {i.instance_id: i.split for i in instances}
    members: dict[str, list[str]] = defaultdict(list)
    for i in sorted(instances, key=lambda i: i.instance_id):
        members[i.split].append(i.instance_id)
    have: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p in predictions:
        have[(split_of[p.instance_id], p.condition)].add(p.instance_id)
    out = []
    for (split, condition), ids in sorted(have.items()):
        gaps = [i for i in members[split] if i not in ids]
        if gaps:
            out.append(malformed(path, None, f"{split} × {condition} is claimed but misses {len(gaps)} instance(s), first {gaps[0]}",
                                 ProblemKind.COVERAGE))
    primary = (layout.PRIMARY_SPLIT, layout.PRIMARY_CONDITION)
    if members[layout.PRIMARY_SPLIT] and primary not in have:
        out.append(malformed(path, None, "no eval × detailed predictions: every model must answer the eval split's detailed briefs",
                             ProblemKind.COVERAGE))
    return out


def _call(known: Mapping[str, Instance], max_calls: int):
    def build(obj: dict, line: int) -> Call:
        keys(obj, TRACE_KEYS, TRACE_OPTIONAL)
        iid = _instance_of(obj, known)
        condition = one_of(obj, "condition", layout.CONDITIONS)
        index = integer(obj, "call_index")
        if index >= max_calls:
            raise Bad(f"call {index} of {iid} {condition} is beyond the cap of {max_calls} calls per unit", ProblemKind.CALL_CAP)
        if not isinstance(obj["query"], str) or not isinstance(obj["sort"], str):
            raise Bad("'query' and 'sort' must be strings")
        for key in ("date_from", "date_to"):
            if obj[key] is not None and not isinstance(obj[key], str):
                raise Bad(f"{key!r} must be a string or null, found {show(obj[key])}")
        ids = obj["returned_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise Bad("'returned_ids' must be a list of arXiv id strings")
        return Call(iid, condition, index, obj["query"], obj["sort"], obj["date_from"], obj["date_to"], integer(obj, "total_hits"),
                    tuple(ids), line, sha256_hex(obj, "prompt_sha256") if "prompt_sha256" in obj else None)

    return build


def parse_traces(data: bytes, instances: Sequence[Instance], max_calls: int, path: str = "traces.jsonl") -> tuple[list[Call], list[Finding]]:
    """traces.jsonl: SEARCH.md's keys with ``instance_id`` for the unit; one line per call."""
    known = {i.instance_id: i for i in instances}
    findings: list[Finding] = []
    out = first_of_each(path, parse_each(path, data, findings, _call(known, max_calls)), lambda c: (*c.unit, c.call_index),
                        Call.describe, findings, ProblemKind.DUPLICATE_CALL)
    return out, findings


def calls_by_unit(calls: Sequence[Call]) -> dict[tuple[str, str], list[Call]]:
    """Each unit's calls in ``call_index`` order."""
    out: dict[tuple[str, str], list[Call]] = defaultdict(list)
    for c in sorted(calls, key=lambda c: (c.instance_id, c.condition, c.call_index)):
        out[c.unit].append(c)
    return dict(out)


def _ranges(indices: Sequence[int]) -> str:
    parts, start = [], None
    for k, i in enumerate(indices):
        if start is None:
            start = i
        if k + 1 == len(indices) or indices[k + 1] != i + 1:
            parts.append(f"{start}" if start == i else f"{start}–{i}")
            start = None
    return ", ".join(parts)


def check_traces(calls: Sequence[Call], predictions: Sequence[Prediction], instances: Sequence[Instance],
                 corpus: Mapping[str, CorpusPaper], top_k: int, path: str = "traces.jsonl") -> list[Finding]:
    """Traces whole and untouched, each problem naming the call: ``call_index`` gapless
    from 0 per unit; every returned id a distinct corpus paper dated before the cutoff;
    no more than ``top_k`` ids and ``total_hits`` at least their number; every traced
    unit has a prediction line."""
    out: list[Finding] = []
    cutoff = {i.instance_id: i.cutoff for i in instances}
    units = {(p.instance_id, p.condition) for p in predictions}
    dated: dict[str, object] = {}  # returned string -> its corpus date, None if it is no canonical corpus id
    for unit, unit_calls in calls_by_unit(calls).items():
        indices = [c.call_index for c in unit_calls]
        if indices != list(range(len(indices))):
            missing = next(k for k in range(len(indices) + 1) if k not in set(indices))
            out.append(invariant(path, None, f"call {missing} of {unit[0]} {unit[1]} is missing: the trace has a gap "
                                             f"(calls {_ranges(indices)} recorded)", ProblemKind.TRACE))
        if unit not in units:
            out.append(invariant(path, unit_calls[0].line, f"{unit_calls[0].describe()}: the unit {unit[0]} {unit[1]} has no "
                                                           "line in predictions.jsonl", ProblemKind.TRACE))
        for c in unit_calls:
            problem = _answer_problem(c, corpus, cutoff[c.instance_id], top_k, dated)
            if problem:
                out.append(invariant(path, c.line, f"{c.describe()} {problem}: the recorded result was edited or is not "
                                                   "from the frozen backend", ProblemKind.TRACE))
    return out


def _date_of(arxiv_id: str, corpus: Mapping[str, CorpusPaper], dated: dict[str, object]):
    if arxiv_id not in dated:
        paper = corpus.get(arxiv_id) if is_canonical(arxiv_id) else None
        dated[arxiv_id] = paper.first_submitted if paper is not None else None
    return dated[arxiv_id]


def _answer_problem(c: Call, corpus: Mapping[str, CorpusPaper], cutoff, top_k: int, dated: dict[str, object]) -> str:
    if len(c.returned_ids) > top_k:
        return f"returned {len(c.returned_ids)} ids, more than top_k {top_k}"
    if c.total_hits < len(c.returned_ids):
        return f"reports total_hits {c.total_hits} but returned {len(c.returned_ids)} ids"
    if len(set(c.returned_ids)) != len(c.returned_ids):
        return "returned the same id twice"
    for arxiv_id in c.returned_ids:
        when = _date_of(arxiv_id, corpus, dated)
        if when is None:
            return f"returned {arxiv_id!r}, which is not a corpus paper"
        if when >= cutoff:
            return f"returned {arxiv_id}, dated {when}, outside its shard (the corpus before {cutoff})"
    return ""
