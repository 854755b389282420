"""The arithmetic of one relevance call on a shard: Whoosh's clause sums and the top-k order.

:func:`union_scores` adds a query's clause scores (BM25F leaves, see
:mod:`rapgen.search.engine`) for the documents that match any clause, in the
order Whoosh's matcher adds them, so every sum is the same IEEE double:

* ``PreloadedOr`` (a shard of at most :data:`PRELOADED_OR_MAX_DOCS` documents and a
  clause count other than two, or :data:`TOO_MANY_CLAUSES` clauses or more): the
  clauses are added one by one, in clause order, into zeros;
* otherwise ``DefaultOr``'s tree of ``UnionMatcher`` nodes (``make_weighted_tree``),
  each node adding its two children.

Two rules keep the tree's sums exact with fewer array operations than one dense
array per clause: IEEE addition is commutative (``x + y == y + x``, bit for bit),
and a clause a document lacks adds ``0.0``, which leaves a non-negative sum as it
is. So a node with a clause as one child adds that clause's scores into its other
child's array in place, at the clause's documents only, and a subtree of empty
clauses is no array at all.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from rapgen.search.index import FieldIndex

PRELOADED_OR_MAX_DOCS = 5000  # whoosh.query.compound.Or: array matcher only for doc_count_all() <= 5000
TOO_MANY_CLAUSES = 1024  # whoosh.query.compound.Or.TOO_MANY_CLAUSES

_NONE_I = np.zeros(0, dtype=np.int32)
_NONE_F = np.zeros(0, dtype=np.float64)


@dataclass
class _Matched:
    """A query's clauses on one shard, the members matching any of them (ascending positions)
    and their days, and (once a relevance call needs them) their BM25 scores."""

    clauses: list[tuple[str, np.ndarray, np.ndarray]]
    union: np.ndarray
    days: np.ndarray
    scores: np.ndarray | None = None
    scored_with: tuple[float, float] | None = None


def weighted_tree(weights: Sequence[int]) -> object:
    """``make_weighted_tree`` over clauses of these document frequencies: a clause is its
    position, a node the pair of its children. Stable sort by weight; the two lightest
    are joined and the pair goes after every entry of equal weight."""
    items: list[tuple[int, object]] = sorted(((w, i) for i, w in enumerate(weights)), key=lambda x: x[0])
    while len(items) > 1:
        (wa, a), (wb, bnode) = items[0], items[1]
        del items[:2]
        w = wa + wb
        at = bisect.bisect_right([x[0] for x in items], w)
        items.insert(at, (w, (a, bnode)))
    return items[0][1]


def union_scores(n_shard: int, spots: Sequence[np.ndarray | None], leaves: Sequence[np.ndarray | None], n_docs: int) -> np.ndarray:
    """The summed score of each of the ``n_docs`` matching documents. Clause ``i`` scores
    ``leaves[i]`` at the union positions ``spots[i]`` (both None for an empty clause);
    ``n_shard``: the shard's document count, which picks Whoosh's matcher."""
    n = len(leaves)
    if n >= TOO_MANY_CLAUSES or (n_shard <= PRELOADED_OR_MAX_DOCS and n != 2):
        acc = np.zeros(n_docs)  # ArrayUnionMatcher: a[i] += m.score() in clause order
        for spot, leaf in zip(spots, leaves):
            if leaf is not None:
                acc[spot] += leaf
        return acc

    def add(acc: np.ndarray | None, i: int) -> np.ndarray | None:
        """``acc`` (None: all zeros) plus clause ``i``, in place."""
        leaf = leaves[i]
        if leaf is None:
            return acc
        if acc is None:
            acc = np.zeros(n_docs)
            acc[spots[i]] = leaf  # 0.0 + x == x
        else:
            acc[spots[i]] += leaf  # the positions of one clause are distinct
        return acc

    def value(node: object) -> np.ndarray | None:
        if not isinstance(node, tuple):
            return add(None, node)  # type: ignore[arg-type]
        left, right = node
        if not isinstance(right, tuple):
            return add(value(left), right)
        if not isinstance(left, tuple):
            return add(value(right), left)
        a, b = value(left), value(right)
        if a is None or b is None:
            return b if a is None else a
        a += b
        return a

    out = value(weighted_tree([0 if spot is None else len(spot) for spot in spots]))
    return np.zeros(n_docs) if out is None else out


def _top(candidates: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the first ``k`` of ``np.lexsort((candidates, key))`` (key ascending, then
    candidate ascending), in that order. Only the entries whose key is at most the k-th smallest
    are sorted: every other entry has k entries before it, so the first k are the same."""
    if k <= 0:
        return _NONE_I
    if len(key) > k:
        kth = np.partition(key, k - 1)[k - 1]
        near = np.flatnonzero(key <= kth)
        return near[np.lexsort((candidates[near], key[near]))[:k]]
    return np.lexsort((candidates, key))[:k]


def gather_postings(index: "FieldIndex", fname: str, tids: np.ndarray, member: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The postings of several terms in one scored field, one after the other, kept to the
    shard's ``member`` (None: every member): (docs, tfs, bounds), term ``j``'s postings at
    ``bounds[j]:bounds[j+1]``, each in the index's (ascending) order."""
    terms = index.terms[fname]
    indptr = index.indptr[fname]
    if not len(terms):
        return _NONE_I, _NONE_F, [0] * (len(tids) + 1)
    at = np.minimum(np.searchsorted(terms, tids), len(terms) - 1)
    found = terms[at] == tids
    lo = np.where(found, indptr[at], 0)
    lengths = np.where(found, indptr[at + 1] - lo, 0)
    ends = np.cumsum(lengths)
    spots = np.arange(int(ends[-1])) + np.repeat(lo - (ends - lengths), lengths)
    docs, tfs = index.docs[fname][spots], index.tfs[fname][spots]
    if member is not None and len(docs):
        keep = member[docs]
        docs, tfs = docs[keep], tfs[keep]
        ends = np.concatenate(([0], np.cumsum(keep)))[ends]  # kept before each term's end
    return docs, tfs, [0, *ends.tolist()]
