"""The kind-neutral Search backend: Whoosh-exact shards keyed by (group, date_from, date_to).

KINDS.md §7: a kind names its corpus files and groups its papers (RAP: one group
per field; Inspire: one group, ``corpus``); a shard is a group's papers dated in
[date_from, date_to), searched exactly as a separate Whoosh index of its own
documents would be (:class:`rapgen.search.engine.Shard`, SEARCH.md).

* :class:`GroupIndexes` — every group's postings over one vocabulary, built from
  paper rows either in memory (:meth:`GroupIndexes.in_memory`) or into the
  search cache (:meth:`GroupIndexes.cached`: ``<cache>/search/<key>/``, the key a
  digest of the engine rules and the recorded digests of the kind's corpus files,
  never hashed again; ``vocab.txt`` and ``groups/<group>.npz``, the same arrays
  as RAP's per-field files);
* :class:`GroupedBackend` — shards on demand by key, each checked once against
  the kind's manifest (member count and ``ids_sha256``) when one is given.

RAP's :class:`~rapgen.search.engine.Backend` keeps its own (field, origin,
regime) front and cache layout; both answer through the same ``Shard``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from rapgen.errors import SearchError
from rapgen.search.analysis import ENGINE_VERSION, FIELDS, MIN_TOKEN_SIZE, STOPWORDS, TOKEN_RE, WHOOSH_VERSION
from rapgen.search.cache import cache_key
from rapgen.search.engine import SearchResult, Shard
from rapgen.search.index import FieldIndex, build_field_arrays, day_number, paper_term_counts, sha256_ids, tokenize_corpus, write_index_dir

ShardKey = tuple[str, "date | None", date]  # (group, date_from inclusive or None, date_to exclusive)
PaperRow = tuple[str, "str | None", "str | None", date]  # (arxiv_id, title, abstract, first_submitted)


@dataclass(frozen=True)
class ManifestShard:
    """What a kind's manifest says a shard holds."""

    n_papers: int
    ids_sha256: str


def _arrays(rows: Sequence[PaperRow], groups: Mapping[str, Iterable[str]], jobs: int = 1):
    """Papers of every group (byte order of ids), tokenised once: (vocabulary, group -> npz arrays)."""
    rows = sorted(rows, key=lambda r: r[0].encode("utf-8"))
    ids = np.array([r[0] for r in rows], dtype=object)
    position = {pid: k for k, pid in enumerate(ids)}
    days = np.array([day_number(r[3]) for r in rows], dtype=np.int64)
    vocab, ptrs, flats = tokenize_corpus([(r[1], r[2]) for r in rows], jobs=jobs)
    per_field = [paper_term_counts(ptrs[k], flats[k], len(vocab)) for k in range(len(FIELDS))]
    lengths = [np.diff(ptrs[k]) for k in range(len(FIELDS))]
    out = {}
    for group in sorted(groups):
        try:
            members = np.array(sorted(position[p] for p in set(groups[group])), dtype=np.int64)
        except KeyError as exc:
            raise SearchError(f"group {group!r}: paper {exc.args[0]} is not among the corpus papers") from None
        out[group] = build_field_arrays(members, days[members], ids, per_field, lengths)
    return vocab, out


class GroupIndexes:
    """Each group's :class:`FieldIndex` and the term lookup of their shared vocabulary."""

    def __init__(self, load: Callable[[str], FieldIndex | None], lookup: Callable[[str], int | None],
                 groups: Sequence[str], folder: Path | None = None) -> None:
        self._load = load
        self.lookup = lookup
        self.groups = tuple(groups)
        self.folder = folder  # the cache folder, None in memory
        self._loaded: dict[str, FieldIndex] = {}

    def __getitem__(self, group: str) -> FieldIndex:
        if group not in self._loaded:
            index = self._load(group) if group in self.groups else None
            if index is None:
                raise SearchError(f"group {group!r} has no papers; no shard of it can be searched")
            self._loaded[group] = index
        return self._loaded[group]

    def forget(self, group: str) -> None:
        self._loaded.pop(group, None)

    @classmethod
    def in_memory(cls, rows: Sequence[PaperRow], groups: Mapping[str, Iterable[str]] | None = None) -> GroupIndexes:
        """From paper rows; ``groups``: group -> member ids (default: one group ``corpus`` of every row)."""
        groups = groups if groups is not None else {"corpus": [r[0] for r in rows]}
        vocab, arrays = _arrays(rows, groups)
        terms = {t: i for i, t in enumerate(vocab)}
        return cls(lambda g: FieldIndex.from_arrays(g, arrays[g]), terms.get, sorted(arrays))

    @classmethod
    def cached(cls, cache_dir: str | Path, inputs: Mapping[str, str], read: Callable[[], tuple[Sequence[PaperRow], Mapping[str, Iterable[str]]]],
               *, jobs: int = 1, log: Callable[[str], None] | None = None) -> GroupIndexes:
        """From the cache folder of ``inputs`` (corpus file -> its recorded SHA-256), built once by
        ``read()`` -> (paper rows, group -> member ids) when absent."""
        digest = {"engine": ENGINE_VERSION, "whoosh": WHOOSH_VERSION, "layout": "groups",
                  "analyzer": {"pattern": TOKEN_RE.pattern, "minsize": MIN_TOKEN_SIZE, "stopwords": sorted(STOPWORDS)},
                  "files": dict(sorted(inputs.items()))}
        folder = Path(cache_dir) / cache_key(digest)
        if not (folder / "meta.json").is_file():
            rows, groups = read()
            (log or (lambda _m: None))(f"indexing {len(rows):,} papers in {len(groups)} search group{'s' * (len(groups) != 1)}")
            vocab, arrays = _arrays(rows, groups, jobs)

            def write(tmp: Path) -> None:
                (tmp / "groups").mkdir()
                (tmp / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
                for group, z in arrays.items():
                    np.savez(tmp / "groups" / f"{group}.npz", **z)
                (tmp / "inputs.json").write_text(json.dumps(digest, indent=1, sort_keys=True), encoding="utf-8")
                (tmp / "meta.json").write_text(json.dumps({"groups": sorted(arrays), "papers": len(rows)}, indent=1), encoding="utf-8")

            write_index_dir(folder, write)
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        vocab_text = (folder / "vocab.txt").read_text(encoding="utf-8")
        terms = {t: i for i, t in enumerate(vocab_text.split("\n")[:-1])}
        return cls(lambda g: FieldIndex.load(folder / "groups" / f"{g}.npz", g), terms.get, meta["groups"], folder)


class GroupedBackend:
    """Shards keyed (group, date_from, date_to) over :class:`GroupIndexes`; the ledger's ``top_k``
    and BM25 constants. ``expected``: the manifest's word on each shard (checked when first opened)."""

    def __init__(self, indexes: GroupIndexes, *, top_k: int, k1: float, b: float,
                 expected: Mapping[ShardKey, ManifestShard] | None = None) -> None:
        self.indexes = indexes
        self.top_k, self.k1, self.b = top_k, k1, b
        self.expected = dict(expected) if expected is not None else None
        self._shards: dict[ShardKey, Shard] = {}

    def shard(self, key: ShardKey) -> Shard:
        key = tuple(key)  # a NamedTuple key and a plain one are the same shard
        if key in self._shards:
            return self._shards[key]
        group, date_from, date_to = key
        want = None
        if self.expected is not None:
            want = self.expected.get(key)
            if want is None:
                raise SearchError(f"no shard {_show(key)} in the manifest")
        shard = Shard(self.indexes[group], date_from, date_to, lookup=self.indexes.lookup)
        if want is not None and (shard.n != want.n_papers or sha256_ids(shard.ids) != want.ids_sha256):
            where = f" (cache {self.indexes.folder})" if self.indexes.folder else ""
            raise SearchError(f"shard {_show(key)}: its {shard.n} papers do not match the manifest ({want.n_papers} papers, "
                              f"ids_sha256 {want.ids_sha256[:12]}…){where}; the cache is stale or the archive is inconsistent")
        self._shards[key] = shard
        return shard

    def release(self, key: ShardKey) -> None:
        """Forget a shard (its cached answers with it); asked again, it is opened and checked again.
        Replay goes shard by shard: a worker's memory then holds one shard's answers at a time."""
        self._shards.pop(tuple(key), None)

    def search(self, key: ShardKey, args: object) -> SearchResult:
        """One call on one shard; a malformed call is an error result."""
        return self.shard(key).search(args, top_k=self.top_k, k1=self.k1, b=self.b)

    def search_variants(self, key: ShardKey, variants: Sequence[object]) -> list[SearchResult]:
        """Several calls on one shard, each answered as :meth:`search` would (shared matching and scores)."""
        return self.shard(key).search_variants(variants, top_k=self.top_k, k1=self.k1, b=self.b)


def _show(key: ShardKey) -> str:
    group, date_from, date_to = key
    return f"{group} [{date_from or 'start'}, {date_to})"
