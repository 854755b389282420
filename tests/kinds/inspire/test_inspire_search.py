"""Inspire's shard, replay and reference agents."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from inspire_fixture import LEDGER, jsonl
from rapgen.archive import Category, ProblemKind
from rapgen.kinds.inspire.archive import CorpusPaper, Instance, brief_digest, check_traces, parse_predictions, parse_traces
from rapgen.kinds.inspire.scores import score_units
from rapgen.kinds.inspire.search import (
    MemoryBackend, ShardKey, bm25_brief, keyword_loop, loop_queries, replay_calls, run_agent, shard_key, trace_line,
)

TEXTS = [
    ("2301.00001", "LoRA: low-rank adaptation of large language models", "We adapt large language models with low-rank matrices.", date(2023, 1, 5)),
    ("2302.00002", "Prefix tuning for generation", "Continuous prompts steer frozen language models for generation.", date(2023, 2, 5)),
    ("2303.00003", "A benchmark of reading comprehension", "We release a dataset of questions over long documents.", date(2023, 3, 5)),
    ("2304.00004", "Quantised adapters", "Low-rank adapters on quantised language models cut memory during fine-tuning.", date(2024, 4, 5)),
    ("2305.00005", "Speech translation at scale", "End-to-end speech translation without transcripts.", date(2024, 9, 5)),
    ("2412.00006", "Efficient fine-tuning survey", "A survey of low-rank and prefix methods for efficient fine-tuning.", date(2024, 12, 20)),
]
CORPUS = {i: CorpusPaper(i, t, a, d, "cs.CL") for i, t, a, d in TEXTS}
BRIEF = ("We want cheap fine-tuning of large language models: low-rank updates, frozen weights, little memory. "
         "What prior work should we read to make progress on this problem?")
INST = Instance("insp-0001", "eval", date(2024, 12, 1), BRIEF, "We want cheap fine-tuning of language models.", brief_digest(BRIEF), 1)


@pytest.fixture(scope="module")
def backend():
    return MemoryBackend(CORPUS, [INST], top_k=LEDGER.top_k, k1=LEDGER.k1, b=LEDGER.b)


def test_shard_key_is_the_corpus_before_the_cutoff(backend):
    assert shard_key(INST) == ShardKey("corpus", None, date(2024, 12, 1))
    assert sorted(backend.shard("insp-0001").ids) == [i for i, *_ in TEXTS[:5]]  # 2412.00006 is after the cutoff


def test_memory_backend_equals_a_real_whoosh_index_of_the_shard(backend):
    from rapgen.search.reference import WhooshShard

    ref = WhooshShard([(i, t, a, d) for i, t, a, d in TEXTS if d < INST.cutoff], k1=LEDGER.k1, b=LEDGER.b)
    for query in (BRIEF, "low-rank language", "speech", "dataset questions"):
        got = backend.search("insp-0001", {"query": query, "sort": "relevance", "date_from": None, "date_to": None})
        total, ids, _ = ref.search(query, top_k=LEDGER.top_k)
        assert (got.total_hits, list(got.ids)) == (total, ids), query
    # a date_to beyond the cutoff is clipped to the shard
    late = backend.search("insp-0001", {"query": "fine-tuning", "sort": "date", "date_from": None, "date_to": "2025-06-01"})
    assert "2412.00006" not in late.ids and late.ids[0] == "2304.00004"


def test_bm25_brief_submits_what_its_one_call_returned(backend):
    run = bm25_brief(INST, "detailed", backend, K=LEDGER.K)
    (line,) = run.traces
    assert line["query"] == BRIEF and line["call_index"] == 0 and line["sort"] == "relevance"
    assert [e["arxiv_id"] for e in run.prediction["ranking"]] == line["returned_ids"]
    assert line["returned_ids"][0] == "2301.00001"
    terse = bm25_brief(INST, "terse", backend, K=2)
    assert terse.traces[0]["query"] == INST.brief_terse and len(terse.prediction["ranking"]) == 2


class FakeSearch:
    """Answers by a table of query -> ids; records the calls."""

    def __init__(self, answers):
        self.answers, self.seen = answers, []

    def __call__(self, instance_id, args):
        self.seen.append((instance_id, args["query"]))
        ids = tuple(self.answers.get(args["query"], ()))
        return type("R", (), {"total_hits": len(ids) + 1, "ids": ids, "error": None})()


def test_keyword_loop_counts_returns_and_breaks_ties_by_first_exposure():
    queries = loop_queries(BRIEF)
    assert queries == ["want cheap", "cheap fine", "fine tuning", "tuning large", "large language"]
    fake = FakeSearch({queries[0]: ["a", "b"], queries[1]: ["c", "b"], queries[2]: ["d", "c"], queries[3]: [], queries[4]: ["e"]})
    run = keyword_loop(INST, "detailed", fake, K=3)
    assert [e["arxiv_id"] for e in run.prediction["ranking"]] == ["b", "c", "a"]  # b, c twice; then a first seen
    assert [t["call_index"] for t in run.traces] == [0, 1, 2, 3, 4] and len(fake.seen) == 5


def test_agent_files_parse_clean_and_replay(backend):
    preds, traces = run_agent("keyword-loop", [INST], ("detailed", "terse"), backend, K=LEDGER.K)
    p, f1 = parse_predictions(jsonl(preds), [INST])
    c, f2 = parse_traces(jsonl(traces), [INST], LEDGER.max_calls)
    assert f1 == f2 == [] and check_traces(c, p, [INST], CORPUS, LEDGER.top_k) == []
    summary = replay_calls(c, backend)
    assert summary.ok and summary.n_calls == len(traces) and summary.findings == []
    table = score_units("keyword-loop", "detailed", [INST], [], p, c, CORPUS, K=10)
    assert table.totals()["n_unsurfaced"] == 0  # it submits only what it saw


def test_an_edited_result_does_not_replay(backend):
    _, traces = run_agent("bm25-brief", [INST], ("detailed",), backend, K=LEDGER.K)
    calls, _ = parse_traces(jsonl(traces), [INST], LEDGER.max_calls)
    swapped = dataclasses.replace(calls[0], returned_ids=calls[0].returned_ids[::-1])
    (f,) = replay_calls([swapped], backend).findings
    assert (f.category, f.kind, f.line) == (Category.INVARIANT, ProblemKind.TRACE, 1)
    assert f.detail == (f"call 0 of insp-0001 detailed does not replay: position 1 holds {swapped.returned_ids[0]} in the trace, "
                        f"{calls[0].returned_ids[0]} on replay")
    inflated = dataclasses.replace(calls[0], total_hits=calls[0].total_hits + 1)
    assert "total_hits" in replay_calls([inflated], backend).findings[0].detail


def test_a_malformed_call_is_recorded_and_replays(backend):
    args = {"query": "   ", "sort": "relevance", "date_from": None, "date_to": None}
    result = backend.search("insp-0001", args)
    assert result.error and result.total_hits == 0
    line = trace_line("insp-0001", "detailed", 0, args, result)
    calls, findings = parse_traces(jsonl([line]), [INST], LEDGER.max_calls)
    assert findings == [] and replay_calls(calls, backend).ok
