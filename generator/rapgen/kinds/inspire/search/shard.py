"""An instance's search shard and the search callable every Inspire tool is written against.

KINDS.md §7: Inspire has one group, ``corpus``; an instance's shard is
(corpus, null, cutoff), every corpus paper dated before the cutoff, searched
with the frozen BM25F of SEARCH.md (``top_k`` and the BM25 constants from the
ledger). :class:`InspireBackend` maps instances to their keys on the shared
:class:`rapgen.search.GroupedBackend` (KINDS.md §7); :class:`MemoryBackend` is
one over an in-memory index of a corpus given as records.
"""

from __future__ import annotations

from datetime import date
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

from rapgen.search import GroupedBackend, GroupIndexes, SearchResult, Shard, call_keys

from rapgen.kinds.inspire.archive import CorpusPaper, Instance, layout


class CallResult(Protocol):
    """What a search call answers (``rapgen.search.SearchResult`` is one)."""

    total_hits: int
    ids: tuple[str, ...]
    error: str | None


# (instance_id, call arguments) -> result: the one interface agents and replay use.
SearchFn = Callable[[str, Mapping[str, object]], CallResult]


class ShardKey(NamedTuple):
    """KINDS.md §7's shard key, a plain tuple: (group, date_from, date_to)."""

    group: str
    date_from: date | None
    date_to: date


def shard_key(instance: Instance) -> ShardKey:
    """An instance's shard: the whole corpus before its cutoff."""
    return ShardKey(layout.SEARCH_GROUP, None, instance.cutoff)


CORPUS_FILES: tuple[str, ...] = (layout.CORPUS_PARQUET,)  # what the index cache key hashes


class InspireBackend:
    """Every instance's shard on the shared :class:`rapgen.search.GroupedBackend`: an instance
    id is looked up as its key (corpus, None, cutoff), so instances with one cutoff share a shard."""

    def __init__(self, grouped: GroupedBackend, instances: Sequence[Instance]):
        self.grouped = grouped
        self._keys = {i.instance_id: shard_key(i) for i in instances}
        self.top_k, self.k1, self.b = grouped.top_k, grouped.k1, grouped.b

    def key_of(self, instance_id: str) -> ShardKey:
        """The instance's shard key (instances with one cutoff share a shard)."""
        return self._keys[instance_id]

    def shard(self, instance_id: str) -> Shard:
        return self.grouped.shard(self._keys[instance_id])

    def release(self, key: ShardKey) -> None:
        """Forget the shard of ``key`` and its cached answers (replay is done with it)."""
        self.grouped.release(key)

    def search(self, instance_id: str, args: Mapping[str, object]) -> SearchResult:
        """One call on the instance's shard; a malformed call is an error result."""
        return self.grouped.search(self._keys[instance_id], args)

    __call__ = search

    def search_variants(self, instance_id: str, variants: Sequence[Mapping[str, object]]) -> list[SearchResult]:
        """Several calls on the instance's shard, each answered as :meth:`search` would;
        calls with the same query terms share their matching and BM25 scores."""
        return self.grouped.search_variants(self._keys[instance_id], variants)


def corpus_rows(corpus: Mapping[str, CorpusPaper]) -> list[tuple]:
    """The corpus as the index's paper rows (id, title, abstract, date)."""
    return [(p.arxiv_id, p.title, p.abstract, p.first_submitted) for p in corpus.values()]


class MemoryBackend(InspireBackend):
    """Every instance's shard over one in-memory index of the corpus (no cache, no manifest check)."""

    def __init__(self, corpus: Mapping[str, CorpusPaper], instances: Sequence[Instance], *, top_k: int, k1: float, b: float):
        indexes = GroupIndexes.in_memory(corpus_rows(corpus), {layout.SEARCH_GROUP: list(corpus)})
        super().__init__(GroupedBackend(indexes, top_k=top_k, k1=k1, b=b), instances)


def trace_line(instance_id: str, condition: str, call_index: int, args: Mapping[str, object], result: CallResult) -> dict:
    """One traces.jsonl object (INSPIRE.md §2: SEARCH.md's keys, ``instance_id`` for the unit)."""
    return {"instance_id": instance_id, **call_keys(condition, call_index, args, result.total_hits, result.ids)}
