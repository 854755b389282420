"""An instance's search shard and the search callable every Inspire tool is written against.

KINDS.md §7: Inspire has one group, ``corpus``; an instance's shard is
(corpus, null, cutoff), every corpus paper dated before the cutoff, searched
with the frozen BM25F of SEARCH.md (``top_k`` and the BM25 constants from the
ledger). :class:`MemoryBackend` holds such shards in memory over a corpus given
as records, on the engine's exact :class:`rapgen.search.Shard`; the shared
backend of KINDS.md §7 is meant to replace it with the same answers.
"""

from __future__ import annotations

from datetime import date
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

from rapgen.search import SearchResult, Shard

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


class MemoryBackend:
    """Every instance's shard over one in-memory index of the corpus."""

    def __init__(self, corpus: Mapping[str, CorpusPaper], instances: Sequence[Instance], *, top_k: int, k1: float, b: float):
        from rapgen.search.reference import build_memory_index

        rows = [(p.arxiv_id, p.title, p.abstract, p.first_submitted) for p in corpus.values()]
        self._index, vocab = build_memory_index(layout.SEARCH_GROUP, rows)
        self._lookup = vocab.get
        self._keys = {i.instance_id: shard_key(i) for i in instances}
        self._shards: dict[ShardKey, Shard] = {}
        self.top_k, self.k1, self.b = top_k, k1, b

    def key_of(self, instance_id: str) -> ShardKey:
        """The instance's shard key (instances with one cutoff share a shard)."""
        return self._keys[instance_id]

    def shard(self, instance_id: str) -> Shard:
        key = self._keys[instance_id]
        if key not in self._shards:
            self._shards[key] = Shard(self._index, key.date_from, key.date_to, lookup=self._lookup)
        return self._shards[key]

    def search(self, instance_id: str, args: Mapping[str, object]) -> SearchResult:
        """One call on the instance's shard; a malformed call is an error result."""
        return self.shard(instance_id).search(args, top_k=self.top_k, k1=self.k1, b=self.b)

    __call__ = search

    def search_variants(self, instance_id: str, variants: Sequence[Mapping[str, object]]) -> list[SearchResult]:
        """Several calls on the instance's shard, each answered as :meth:`search` would;
        calls with the same query terms share their matching and BM25 scores."""
        return self.shard(instance_id).search_variants(variants, top_k=self.top_k, k1=self.k1, b=self.b)


def trace_line(instance_id: str, condition: str, call_index: int, args: Mapping[str, object], result: CallResult) -> dict:
    """One traces.jsonl object (INSPIRE.md §2: SEARCH.md's keys, ``instance_id`` for the unit)."""
    return {
        "instance_id": instance_id,
        "condition": condition,
        "call_index": call_index,
        "query": args.get("query"),
        "sort": args.get("sort"),
        "date_from": args.get("date_from"),
        "date_to": args.get("date_to"),
        "total_hits": result.total_hits,
        "returned_ids": list(result.ids),
    }
