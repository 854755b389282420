"""``phrase-v1`` over whole columns: every paper's words coded once, every term looked up as a run of codes.

:func:`assign_rows` returns exactly :func:`~rapgen.kinds.ideas.archive.assignment.assign`'s
rows (that function states the rule paper by paper and stays the reference
the tests compare with). Both sides of the rule are single-space-separated
words of ``[0-9a-z]``, so " term " ⊂ " text " holds exactly when the term's
words are consecutive words of the text: the texts are normalised in Arrow,
split into words, the words dictionary-coded, and a term of m words matches
at every position whose next m codes are the term's, inside one paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rapgen.kinds.ideas.archive.normalise import norm, norm_all, paper_text
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.topics import Topic


def _words(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """(word code, paper index) of every word of every normalised text, and the code of each word."""
    import pyarrow.compute as pc

    split = pc.split_pattern(norm_all(texts), " ")
    encoded = pc.list_flatten(split).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    parent = pc.list_parent_indices(split).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, parent, {w: i for i, w in enumerate(encoded.dictionary.to_pylist())}


def assign_rows(papers: Mapping[str, Paper], topics: Sequence[Topic]) -> list[tuple[str, str, object, str]]:
    """Every ``phrase-v1`` membership as (topic_id, arxiv_id, first_submitted, matched_term), sorted by
    (topic_id, arxiv_id) in byte order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    items = list(papers.values())
    if not items or not topics:
        return []
    codes, parent, vocabulary = _words([paper_text(p.title, p.key_points) for p in items])
    n = len(codes)
    by_code = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[by_code], np.arange(len(vocabulary) + 1))
    byte_order = pc.sort_indices(pa.array([p.arxiv_id for p in items], type=pa.string())).to_numpy()  # Arrow orders by bytes
    rank_of = np.empty(len(items), dtype=np.int64)
    rank_of[byte_order] = np.arange(len(items))
    rows: list[tuple[str, str, object, str]] = []
    for topic in sorted(topics, key=lambda t: t.topic_id.encode("utf-8")):
        best = np.full(len(items), -1, dtype=np.int64)  # the first term (index) that matches each paper
        for k, term in enumerate(topic.terms):
            ids = [vocabulary.get(w) for w in norm(term).split(" ")]
            if any(i is None for i in ids):
                continue
            at = by_code[starts[ids[0]]:starts[ids[0] + 1]]
            for m, code in enumerate(ids[1:], start=1):
                nxt = np.minimum(at + m, n - 1)
                at = at[(at + m < n) & (codes[nxt] == code) & (parent[nxt] == parent[at])]
            hit = np.unique(parent[at])
            best[hit[best[hit] < 0]] = k
        members = np.flatnonzero(best >= 0)
        members = members[np.argsort(rank_of[members])]
        terms, topic_id = topic.terms, topic.topic_id
        rows.extend((topic_id, items[i].arxiv_id, items[i].first_submitted, terms[k]) for i, k in zip(members.tolist(), best[members].tolist()))
    return rows
