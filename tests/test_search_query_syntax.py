"""Search queries are analysed text, never parsed: no query syntax can break the backend.

Each hostile query has a defined result (the same as a plain query of its
tokens) or a clear error result; none raises.
"""

from __future__ import annotations

from datetime import date

import pytest

from rapgen.search import CallProblem, parse_strict_date, validate_call
from rapgen.search.engine import Shard
from rapgen.search.reference import build_memory_index

K1, B, TOP_K = 1.5, 0.75, 8
D = date(2024, 3, 1)
CORPUS = [
    ("2403.00001", "graph neural networks", "graph methods for the graph title", D),
    ("2403.00002", "neural parsing", "parsing with graph features", D),
    ("2403.00003", "speech", "speech recognition and the gra h", D),
]


@pytest.fixture(scope="module")
def shard():
    index, vocab = build_memory_index("f", CORPUS)
    return Shard(index, None, date(2030, 1, 1), lookup=vocab.get)


def run(shard, query, sort="relevance"):
    return shard.search({"query": query, "sort": sort, "date_from": None, "date_to": None}, top_k=TOP_K, k1=K1, b=B)


# (hostile query, the plain query it must behave exactly like)
SAME_AS = [
    ("title:graph", "title graph"),  # a field prefix is two words
    ("abstract:speech OR title:neural", "abstract speech title neural"),  # "or" is a stopword
    ("graph AND neural", "graph neural"),
    ("NOT graph", "graph"),
    ("graph*", "nosuchterm"),  # Whoosh's token pattern keeps the "*": a term no paper has, not a wildcard
    ("gra?h", "gra"),  # "?" separates; "h" is shorter than the analyser's minimum
    ("*", "the"),  # nothing left: 0 hits
    ('"graph neural', "graph neural"),  # unbalanced quote
    ("(graph OR (speech", "graph speech"),  # unbalanced parentheses
    ("graph^2 speech~1", "graph speech"),  # boosts and fuzziness are just digits
    ("graph\x00neural", "graph neural"),  # NUL
    ("graph\x1b[31mneural\x07\x7f", "graph 31mneural"),  # escape sequences and control characters
    ("\u202egraph\u2066", "graph"),  # bidirectional controls
    ("GRAPH Graph graph", "graph"),  # case and repeats
    ("graph " * 170_000, "graph"),  # a 1 MB query
]


@pytest.mark.parametrize("hostile, plain", SAME_AS, ids=[repr(h[:24]) for h, _ in SAME_AS])
def test_query_syntax_is_plain_text(shard, hostile, plain):
    for sort in ("relevance", "date"):
        got, want = run(shard, hostile, sort), run(shard, plain, sort)
        assert got.error is None
        assert got == want


def test_a_one_megabyte_query_of_distinct_words_is_answered(shard):
    query = " ".join(f"w{i}x" for i in range(130_000)) + " speech"
    assert len(query) > 1_000_000
    result = run(shard, query)
    assert result.error is None and result.ids == ("2403.00003",)


def test_stopword_only_queries_have_no_hits_and_no_error(shard):
    for query in ("the and of", "a an the", "AND OR NOT"):
        result = run(shard, query)
        assert (result.error, result.total_hits, result.ids) == (None, 0, ())


@pytest.mark.parametrize("query", ["graph\ud800", "\udfff", "ok \udc80 ok"])
def test_a_lone_surrogate_is_a_malformed_call(shard, query):
    result = run(shard, query)
    assert result.error is not None and result.error.startswith("the query is not valid Unicode text (a lone surrogate at position")
    assert (result.total_hits, result.ids) == (0, ())
    with pytest.raises(CallProblem) as info:
        validate_call({"query": query, "sort": "date"})
    assert info.value.recordable is False


@pytest.mark.parametrize("args, recordable", [
    ({"query": "x", "sort": "score"}, True),  # a wrong value, still a string: the trace can hold it
    ({"query": "x", "sort": "date", "date_from": "2024/01/01"}, True),
    ({"query": "x", "sort": "date", "date_from": 20240101}, False),
    ({"query": 1, "sort": "date"}, False),
    ({"query": "x", "sort": "date", "limit": 3}, False),
    (["x", "date"], False),
])
def test_call_problems_say_whether_a_trace_can_hold_the_call(args, recordable):
    with pytest.raises(CallProblem) as info:
        validate_call(args)
    assert info.value.recordable is recordable


@pytest.mark.parametrize("value, ok", [
    ("2024-01-01", True), ("2024-02-29", True), ("2023-02-29", False), ("20240101", False),
    ("2024-W01-1", False), ("2024-01-01T00:00", False), (" 2024-01-01", False), ("2024-01-01\n", False), (None, False),
])
def test_the_strict_date_rule(value, ok):
    if ok:
        assert parse_strict_date(value) == date.fromisoformat(value)
    else:
        with pytest.raises(ValueError):
            parse_strict_date(value)
