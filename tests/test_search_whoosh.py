"""The fast backend against real per-shard Whoosh indexes (whoosh-reloaded 2.7.5).

Each shard is indexed on its own by Whoosh (its papers only, added in arXiv-id
order); the fast backend answers from one field-wide postings table with the
shard's own statistics. Totals, ids, order and the float scores must be
identical, bit for bit, on both of Whoosh's summation paths (array matcher for
shards of at most 5000 papers, weighted union tree above).
"""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest

from rapgen.search.analysis import FIELDS, tokenize
from rapgen.search.engine import PRELOADED_OR_MAX_DOCS, Shard
from rapgen.search.reference import build_memory_index
from rapgen.search.reference import WhooshShard

K1, B = 1.5, 0.75
EXTRA = ["the", "of", "and", "a", "LLM", "U.S.", "e.g.", "x*y", "GPT-4", "naïve", "Über", "3.5", "state-of-the-art", "_x", "i"]


def corpus(n: int, seed: int, start: date, days: int, title_words=(4, 12), abstract_words=(20, 120), vocab=3000):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) ** 1.07 for i in range(vocab)]

    def text(lo, hi):
        k = rng.randint(lo, hi)
        out = rng.choices(words, weights, k=k)
        for _ in range(k // 8):
            out.insert(rng.randrange(len(out) + 1), rng.choice(EXTRA))
        return " ".join(out)

    ids = rng.sample(range(100000), n)
    return [
        (f"{2300 + (i % 24):04d}.{i:05d}", text(*title_words), text(*abstract_words), start + timedelta(days=rng.randrange(days)))
        for i in ids
    ], words, weights


def queries(rng, words, weights, n, lo, hi):
    out = []
    for _ in range(n):
        q = " ".join(rng.choices(words, weights, k=rng.randint(1, 5)) + ([rng.choice(EXTRA)] if rng.random() < 0.3 else []))
        sort = "date" if rng.random() < 0.3 else "relevance"
        bounds = (None, None)
        r = rng.random()
        if r < 0.4:
            a, b = sorted(rng.sample(range((hi - lo).days), 2))
            bounds = (lo + timedelta(days=a), lo + timedelta(days=b))
        elif r < 0.55:
            bounds = (lo + timedelta(days=rng.randrange((hi - lo).days)), None)
        out.append((q, sort, *bounds))
    return out


def compare(fast: Shard, reference: WhooshShard, calls) -> int:
    nonempty = 0
    for q, sort, dfrom, dto in calls:
        args = {"query": q, "sort": sort, "date_from": dfrom and dfrom.isoformat(), "date_to": dto and dto.isoformat()}
        got = fast.search(args, top_k=8, k1=K1, b=B)
        total, ids, scores = reference.search(q, sort, dfrom, dto, 8)
        assert got.error is None
        assert got.total_hits == total, (q, sort, dfrom, dto)
        assert list(got.ids) == ids, (q, sort, dfrom, dto)
        if sort == "relevance":
            assert list(got.scores) == scores, (q, dfrom, dto)  # bit-identical floats
        nonempty += total > 0
    return nonempty


@pytest.fixture(scope="module")
def small_field():
    papers, words, weights = corpus(1500, 11, date(2023, 1, 1), 730)
    index, vocab = build_memory_index("f", papers)
    return papers, words, weights, index, vocab


@pytest.mark.parametrize("lo,hi", [(date(2024, 7, 1), date(2025, 1, 1)), (None, date(2024, 7, 1)), (date(2023, 7, 1), date(2024, 1, 1))])
def test_shard_local_results_match_a_per_shard_whoosh_index(small_field, lo, hi):
    papers, words, weights, index, vocab = small_field
    subset = [p for p in papers if (lo is None or p[3] >= lo) and p[3] < hi]
    fast = Shard(index, lo, hi, lookup=vocab.get)
    assert fast.n == len(subset) < index.n <= PRELOADED_OR_MAX_DOCS
    reference = WhooshShard(subset, k1=K1, b=B)
    rng = random.Random(str((lo, hi)))
    calls = queries(rng, words, weights, 70, lo or date(2023, 1, 1), hi)
    assert compare(fast, reference, calls) > 40
    # the collection statistics themselves
    for term in ("w0", "w5", "w200", "llm"):
        for name in FIELDS:
            n, df, avgfl = reference.stats(name, term)
            assert fast.n == n
            assert fast.avgfl[name] == avgfl
            tid = vocab.get(term)
            docs, _ = index.postings(name, tid) if tid is not None else ([], [])
            assert (int(fast.member[docs].sum()) if len(docs) else 0) == df


def test_large_shard_uses_whooshs_weighted_union_tree_exactly():
    papers, words, weights = corpus(5150, 12, date(2020, 1, 1), 1500, title_words=(2, 5), abstract_words=(5, 14), vocab=400)
    index, vocab = build_memory_index("g", papers)
    fast = Shard(index, None, date(2030, 1, 1), lookup=vocab.get)
    assert fast.n > PRELOADED_OR_MAX_DOCS
    reference = WhooshShard(papers, k1=K1, b=B)
    rng = random.Random(5)
    calls = [c for c in queries(rng, words, weights, 60, date(2020, 1, 1), date(2024, 2, 1))]
    calls += [("w1 w2 w3 w50 w120 w399", "relevance", None, None), ("w7 w7 w9", "relevance", date(2021, 1, 1), None)]
    assert compare(fast, reference, calls) > 40


@pytest.mark.parametrize("text", [
    "State-of-the-art LLMs (e.g. GPT-4) beat U.S. baselines by 3.5 points; x*y=z.",
    "Naïve Über-models in the 21st century: A study of a_b and _x_ tokens.",
    "",
    "   ",
    "I a A of the OF",
    "ÅNGSTRÖM İstanbul ß straße ﬁnance ½ ² 三 言語モデル",
])
def test_tokenizer_equals_standard_analyzer(text):
    from whoosh.analysis import StandardAnalyzer

    assert tokenize(text) == [t.text for t in StandardAnalyzer()(text)]


def test_tokenizer_equals_standard_analyzer_on_a_generated_corpus(small_field):
    from whoosh.analysis import StandardAnalyzer

    analyzer = StandardAnalyzer()
    for _pid, title, abstract, _d in small_field[0][:300]:
        for text in (title, abstract):
            assert tokenize(text) == [t.text for t in analyzer(text)]


def test_length_quantiser_equals_whoosh():
    import numpy as np
    from whoosh.util.numeric import byte_to_length, length_to_byte

    from rapgen.search.analysis import quantise_lengths

    lengths = np.concatenate([np.arange(0, 3000), np.arange(3000, 200000, 37), [106373, 106374, 10**7]])
    expected = [byte_to_length(length_to_byte(int(n))) for n in lengths]
    assert quantise_lengths(lengths).tolist() == expected


@pytest.mark.parametrize("query", ["the of and", "a of the", "i"])
def test_stopword_only_query_is_valid_with_no_hits_as_in_whoosh(small_field, query):
    """SEARCH.md does not list it as malformed, and Whoosh answers it with nothing."""
    from whoosh.query import Or, Term

    papers, _, _, index, vocab = small_field
    reference = WhooshShard(papers, k1=K1, b=B)
    terms = [t.text for t in reference.analyzer(query)]
    assert terms == []
    whoosh_hits = reference.searcher.search(Or([Term(f, t) for t in terms for f in FIELDS]), limit=8)
    assert len(whoosh_hits) == 0 and whoosh_hits.scored_length() == 0
    got = Shard(index, None, date(2025, 1, 1), lookup=vocab.get).search({"query": query, "sort": "relevance"}, top_k=8, k1=K1, b=B)
    assert got.error is None and (got.total_hits, got.ids) == (0, ())
