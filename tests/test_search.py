"""The Search backend on hand-built corpora: rankings, hit counts, ties, bounds, malformed calls."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from rapgen.search.engine import Shard, validate_call
from rapgen.search.reference import build_memory_index

K1, B, TOP_K = 1.5, 0.75, 8


def make_shard(papers, date_from=None, date_to=date(2030, 1, 1)):
    index, vocab = build_memory_index("f", papers)
    return Shard(index, date_from, date_to, lookup=vocab.get)


def run(shard, query, sort="relevance", date_from=None, date_to=None, top_k=TOP_K):
    return shard.search({"query": query, "sort": sort, "date_from": date_from, "date_to": date_to}, top_k=top_k, k1=K1, b=B)


D = date(2024, 3, 1)
CORPUS = [
    # id, title, abstract, date
    ("2403.00001", "graph neural networks", "graph methods for the graph", D),
    ("2403.00002", "neural parsing", "parsing with graph features", D),
    ("2403.00003", "speech", "speech recognition", D),
]


def bm25(tf, fl, avgfl, n, df):
    """Whoosh 2.7.5 scoring.bm25 with WeightingModel.idf, written out by hand."""
    idf = math.log(n / (df + 1)) + 1
    return idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / avgfl)))


def test_hand_checked_ranking_and_scores():
    shard = make_shard(CORPUS)
    result = run(shard, "graph")
    # 'graph' is in doc 1 (title tf 1 of 3 tokens, abstract tf 2 of 4 tokens: "graph methods graph"
    # after stopwords 'for', 'the' -> 3 tokens) and doc 2 (abstract tf 1 of "parsing graph features" = 3).
    assert result.total_hits == 2
    assert result.ids == ("2403.00001", "2403.00002")
    title_avg = (3 + 2 + 1) / 3
    abstract_avg = (3 + 3 + 2) / 3
    doc1 = bm25(1, 3, title_avg, 3, 1) + bm25(2, 3, abstract_avg, 3, 2)
    doc2 = bm25(1, 3, abstract_avg, 3, 2)
    assert result.scores == pytest.approx((doc1, doc2), rel=1e-15)


def test_or_over_terms_counts_each_document_once():
    shard = make_shard(CORPUS)
    assert run(shard, "graph speech").total_hits == 3
    assert run(shard, "graph graph GRAPH").scores == run(shard, "graph").scores  # terms de-duplicated
    # only stopwords / one-letter tokens: a valid call with nothing to search (SEARCH.md)
    for q in ("the for with", "the of and", "a b c", "of the"):
        r = run(shard, q)
        assert r.error is None and (r.total_hits, r.ids) == (0, ())
    assert validate_call({"query": "the of and", "sort": "date"}).terms == ()
    assert run(shard, "unknownword").total_hits == 0


def test_score_ties_break_by_arxiv_id_whatever_the_input_order():
    twins = [("2403.00009", "alpha beta", "gamma", D), ("2403.00002", "alpha beta", "gamma", D), ("2403.00005", "delta", "zeta", D)]
    shard = make_shard(list(reversed(twins)))
    result = run(shard, "alpha")
    assert result.ids == ("2403.00002", "2403.00009")
    assert result.scores[0] == result.scores[1]


def test_date_sort_newest_first_ties_by_id():
    papers = [
        ("2401.00003", "topic", "x", date(2024, 1, 5)),
        ("2401.00001", "topic", "x", date(2024, 1, 5)),
        ("2402.00001", "topic", "x", date(2024, 2, 1)),
        ("2312.00001", "topic", "x", date(2023, 12, 31)),
    ]
    result = run(make_shard(papers), "topic", sort="date")
    assert result.ids == ("2402.00001", "2401.00001", "2401.00003", "2312.00001")
    assert result.dates[0] == date(2024, 2, 1)
    assert result.scores is None


def test_top_k_limits_returned_but_not_total():
    papers = [(f"2401.{i:05d}", "topic", "", date(2024, 1, 1)) for i in range(12)]
    result = run(make_shard(papers), "topic", top_k=8)
    assert result.total_hits == 12 and len(result.ids) == 8
    assert result.ids == tuple(f"2401.{i:05d}" for i in range(8))  # all tied -> id order


EDGE = [
    ("2406.00001", "edge", "", date(2024, 6, 30)),
    ("2407.00001", "edge", "", date(2024, 7, 1)),
    ("2407.00002", "edge", "", date(2024, 7, 2)),
    ("2412.00001", "edge", "", date(2024, 12, 31)),
    ("2501.00001", "edge", "", date(2025, 1, 1)),  # on the origin: never in the shard
]


@pytest.mark.parametrize(
    "date_from,date_to,expected",
    [
        (None, None, ("2412.00001", "2407.00002", "2407.00001")),
        ("2024-07-01", None, ("2412.00001", "2407.00002", "2407.00001")),  # inclusive lower bound
        ("2024-07-02", None, ("2412.00001", "2407.00002")),
        (None, "2024-07-02", ("2407.00001",)),  # exclusive upper bound
        (None, "2024-12-31", ("2407.00002", "2407.00001")),
        ("2020-01-01", "2030-01-01", ("2412.00001", "2407.00002", "2407.00001")),  # clipped to the shard
        ("2025-01-01", "2026-01-01", ()),  # after the origin: nothing, not an error
        ("2024-01-01", "2024-07-01", ()),  # before the shard starts
    ],
)
def test_date_bounds_at_window_edges(date_from, date_to, expected):
    shard = make_shard(EDGE, date(2024, 7, 1), date(2025, 1, 1))
    assert shard.n == 3
    result = run(shard, "edge", sort="date", date_from=date_from, date_to=date_to)
    assert result.error is None
    assert result.ids == expected and result.total_hits == len(expected)


def test_shard_statistics_are_the_shards_own():
    papers = [("2301.00001", "rare word", "long abstract text " * 20, date(2023, 1, 2))] + [
        (f"2407.{i:05d}", "rare" if i == 0 else "common", "short", date(2024, 7, 3)) for i in range(4)
    ]
    shard = make_shard(papers, date(2024, 7, 1), date(2025, 1, 1))
    assert shard.n == 4
    assert shard.field_length == {"title": 4, "abstract": 4}
    assert shard.avgfl == {"title": 1.0, "abstract": 1.0}
    only = run(shard, "rare")
    assert only.total_hits == 1
    assert only.scores == pytest.approx((bm25(1, 1, 1.0, 4, 1),), rel=1e-15)


def test_empty_shard_returns_no_hits():
    shard = make_shard(EDGE, date(2020, 1, 1), date(2020, 7, 1))
    assert shard.n == 0
    assert run(shard, "edge").total_hits == 0


MALFORMED = [
    ({"query": "graph", "sort": "relevance", "limit": 5}, "unknown argument 'limit'"),
    ({"sort": "relevance"}, "missing required argument 'query'"),
    ({"query": "graph"}, "missing required argument 'sort'"),
    ({"query": "graph", "sort": "score"}, "sort must be 'relevance' or 'date'"),
    ({"query": "graph", "sort": None}, "sort must be 'relevance' or 'date'"),
    ({"query": "graph", "sort": "date", "date_from": "2024/01/01"}, "date_from must be an ISO date"),
    ({"query": "graph", "sort": "date", "date_to": "2024-02-30"}, "is not a calendar date"),
    ({"query": "graph", "sort": "date", "date_from": "2024-W01-1"}, "date_from must be an ISO date"),
    ({"query": "graph", "sort": "date", "date_to": 20240101}, "date_to must be an ISO date"),
    ({"query": "graph", "sort": "date", "date_from": "2024-03-01", "date_to": "2024-03-01"}, "must be before"),
    ({"query": "graph", "sort": "date", "date_from": "2024-04-01", "date_to": "2024-03-01"}, "must be before"),
    ({"query": "", "sort": "date"}, "the query is empty"),
    ({"query": "   ", "sort": "date"}, "the query is empty"),
    ({"query": 42, "sort": "date"}, "query must be a string"),
    (["graph", "date"], "the arguments must be an object"),
]


@pytest.mark.parametrize("args,message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_calls_are_error_results(args, message):
    shard = make_shard(CORPUS)
    result = shard.search(args, top_k=TOP_K, k1=K1, b=B)
    assert result.error is not None and message in result.error
    assert (result.total_hits, result.ids) == (0, ())
    assert run(shard, "graph").total_hits == 2  # the shard still works


def test_validate_call_keeps_first_occurrence_order():
    assert validate_call({"query": "Neural GRAPH neural nets", "sort": "date"}).terms == ("neural", "graph", "nets")


def test_results_are_identical_across_rebuilds():
    a, b = make_shard(CORPUS + EDGE), make_shard(list(reversed(CORPUS + EDGE)))
    for q in ("graph", "edge speech", "neural parsing graph"):
        for sort in ("relevance", "date"):
            assert run(a, q, sort) == run(b, q, sort)
    for name in ("title", "abstract"):
        assert np.array_equal(a.index.docs[name], b.index.docs[name])


def test_variants_share_answers_only_when_bounds_filter_nothing():
    # A bound at or beyond the shard's own filters nothing and shares the unbounded answer;
    # a bound one day inside the shard must not.
    papers = [(f"2401.{i:05d}", f"graph {'neural ' * (i % 3)}", "graph methods", date(2024, 1, 1 + i)) for i in range(12)]
    lo, hi = date(2024, 1, 3), date(2024, 1, 11)
    shard = make_shard(papers, lo, hi)
    variants = [{"query": "graph neural", "sort": s, "date_from": f, "date_to": t}
                for s in ("relevance", "date")
                for f, t in ((None, None), ("2024-01-01", "2024-02-01"), (lo.isoformat(), hi.isoformat()),
                             ("2024-01-04", None), (None, "2024-01-10"))]
    together = shard.search_variants(variants, top_k=3, k1=K1, b=B)
    alone = [make_shard(papers, lo, hi).search(v, top_k=3, k1=K1, b=B) for v in variants]
    assert together == alone
    assert together[0] == together[1] == together[2] and together[5] == together[6] == together[7]
    assert together[3].total_hits == 7 and together[4].total_hits == 7 and together[0].total_hits == 8
