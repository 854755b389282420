"""The Search backend of one Inspire release: every instance's shard over the release's corpus,
indexed once into the search cache (or in memory) and checked against ``search/manifest.jsonl``."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from rapgen.search import GroupedBackend, GroupIndexes, ManifestShard, resolve_cache_dir

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.search.shard import CORPUS_FILES, InspireBackend, ShardKey, corpus_rows


def manifest_shards(release) -> dict[ShardKey, ManifestShard]:
    """What the manifest says of each shard: (corpus, None, cutoff) -> papers and ids_sha256."""
    return {ShardKey(layout.SEARCH_GROUP, None, row.date_to): ManifestShard(row.n_papers, row.ids_sha256)
            for row in release.manifest}


def release_backend(release, *, cache_dir: str | Path | None = None, memory: bool = False, jobs: int = 1,
                    log: Callable[[str], None] | None = None) -> InspireBackend:
    """The shards of ``release`` (an ``InspireRelease``), with the ledger's ``top_k`` and BM25 constants.
    The index lives in the search cache (``--cache-dir``, else ``$RAPGEN_CACHE``, else
    ``<root>/.rapgen-cache``), keyed by the corpus file's recorded digest; ``memory``: built in memory."""
    ledger = release.ledger
    group = {layout.SEARCH_GROUP: list(release.corpus)}
    if memory:
        indexes = GroupIndexes.in_memory(corpus_rows(release.corpus), group)
    else:
        inputs = {p: release.files[p] for p in CORPUS_FILES}
        indexes = GroupIndexes.cached(resolve_cache_dir(release.root, cache_dir), inputs,
                                      lambda: (corpus_rows(release.corpus), group), jobs=jobs, log=log)
    grouped = GroupedBackend(indexes, top_k=ledger.top_k, k1=ledger.k1, b=ledger.b, expected=manifest_shards(release))
    return InspireBackend(grouped, release.instances)
