"""Inspire's deterministic reference agents, written against any :data:`SearchFn`.

* ``bm25-brief`` (INSPIRE.md §4): one call, the brief itself as the query,
  relevance order, no date bounds; it submits the top K ids the call returned.
* ``keyword-loop`` (§6): five queries, the brief's most frequent word pairs
  (bigrams of the frozen analyzer's tokens, ties by first position); it submits
  the K ids returned most often, ties by first exposure.

Both only submit what their searches returned, so nothing they submit is
unsurfaced; both record every call as a trace line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from rapgen.search import tokenize

from rapgen.kinds.inspire.archive import Instance
from rapgen.kinds.inspire.search.shard import SearchFn, trace_line

N_LOOP_QUERIES = 5


@dataclass(frozen=True)
class AgentRun:
    """One unit's prediction line and its trace lines."""

    prediction: dict
    traces: tuple[dict, ...]


def _args(query: str) -> dict:
    return {"query": query, "sort": "relevance", "date_from": None, "date_to": None}


def _prediction(instance: Instance, condition: str, ranked: Sequence[tuple[str, str]]) -> dict:
    return {
        "instance_id": instance.instance_id, "condition": condition, "status": "submitted",
        "ranking": [{"arxiv_id": i, "rationale": why} for i, why in ranked],
        "reason": None, "tokens_in": None, "tokens_out": None, "latency_s": None, "cost_usd": None,
    }


def bm25_brief(instance: Instance, condition: str, search: SearchFn, *, K: int) -> AgentRun:
    """Search once with the brief, submit the top K results in their order."""
    args = _args(instance.brief_for(condition))
    result = search(instance.instance_id, args)
    ranked = [(i, f"rank {r} for the brief as a query") for r, i in enumerate(result.ids[:K], start=1)]
    return AgentRun(_prediction(instance, condition, ranked), (trace_line(instance.instance_id, condition, 0, args, result),))


def loop_queries(brief: str, n: int = N_LOOP_QUERIES) -> list[str]:
    """The ``n`` most frequent adjacent token pairs of the brief (ties: first position)."""
    tokens = tokenize(brief)
    pairs = [f"{x} {y}" for x, y in zip(tokens, tokens[1:]) if x != y]
    counts = Counter(pairs)
    first = {p: k for k, p in reversed(list(enumerate(pairs)))}
    return sorted(counts, key=lambda p: (-counts[p], first[p]))[:n] or tokens[:1]


def keyword_loop(instance: Instance, condition: str, search: SearchFn, *, K: int) -> AgentRun:
    """Five bigram queries, then the K most often returned ids (ties: first exposure)."""
    traces = []
    counts: Counter = Counter()
    first: dict[str, int] = {}
    for k, query in enumerate(loop_queries(instance.brief_for(condition))):
        args = _args(query)
        result = search(instance.instance_id, args)
        traces.append(trace_line(instance.instance_id, condition, k, args, result))
        for i in result.ids:
            counts[i] += 1
            first.setdefault(i, len(first))
    chosen = sorted(counts, key=lambda i: (-counts[i], first[i]))[:K]
    ranked = [(i, f"returned by {counts[i]} of the {len(traces)} keyword queries") for i in chosen]
    return AgentRun(_prediction(instance, condition, ranked), tuple(traces))


Agent = Callable[..., AgentRun]
REFERENCE_AGENTS: dict[str, Agent] = {"bm25-brief": bm25_brief, "keyword-loop": keyword_loop}
AGENT_NOTES: dict[str, tuple[str, str]] = {  # name -> (display name, notes) of its model.json
    "bm25-brief": ("BM25 brief (reference)", "One search_papers call with the brief as the query (relevance, top K); submits what it returns."),
    "keyword-loop": ("Keyword loop (reference)", "Five queries from the brief's most frequent word pairs; submits the K ids returned most often."),
}


def reference_model_json(name: str, submitted: str) -> dict:
    """A reference agent's model.json (``reference_agent: true``: scored as a reference, not a model)."""
    display, notes = AGENT_NOTES[name]
    return {
        "model_id": name, "display_name": display, "provider": "rapgen (reference agent)", "proprietary": False,
        "knowledge_cutoff": None, "release_date": None, "cutoff_source": "none: a fixed search procedure without a language model",
        "diagnostic": False, "submitted": submitted, "contact": "", "notes": notes, "reference_agent": True,
    }


def run_agent(name: str, instances: Sequence[Instance], conditions: Sequence[str], search: SearchFn, *, K: int) -> tuple[list[dict], list[dict]]:
    """An agent's predictions.jsonl and traces.jsonl rows over every instance and condition,
    in (instance_id, condition) order."""
    agent = REFERENCE_AGENTS[name]
    predictions, traces = [], []
    for inst in sorted(instances, key=lambda i: i.instance_id):
        for condition in conditions:
            run = agent(inst, condition, search, K=K)
            predictions.append(run.prediction)
            traces.extend(run.traces)
    return predictions, traces
