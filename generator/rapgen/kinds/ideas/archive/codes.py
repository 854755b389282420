"""Integer codes for the evaluator files' keys, so their checks and credits run on whole columns.

An :class:`Interner` numbers strings: the values it is seeded with first, in
seed order, then every other value as it is met, so two rows hold the same
string exactly when they hold the same code. :class:`EvalIndex` seeds one per
archive: papers in byte order of their ids (so comparing two codes compares
the ids' UTF-8 bytes, the tie rule of ``candidates.parquet``), episodes in
manifest order, and the futures as (episode, paper) code pairs.
:class:`IdeaIndex` finds the idea of a row (episode, condition, rank) of one
model's predictions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from rapgen.kinds.ideas.archive.episodes import Pools
from rapgen.kinds.ideas.archive.evaluation import candidate_digest, prediction_digest
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import Idea, Predictions


class Interner:
    """String -> code: seeded values first (codes 0 … ``n_seed`` − 1), others appended as met."""

    def __init__(self, seed: Iterable[str] = ()):
        self.index: dict[str, int] = {}
        for value in seed:
            self.index.setdefault(value, len(self.index))
        self.n_seed = len(self.index)
        self._seed = None  # the seeded values as an Arrow array, for lookups in Arrow

    def __len__(self) -> int:
        return len(self.index)

    def codes(self, column) -> np.ndarray:
        """The code of every value of an Arrow string column (or a sequence of strings), int64."""
        import pyarrow as pa

        if not isinstance(column, (pa.Array, pa.ChunkedArray)):
            column = pa.array(list(column), type=pa.string())
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks() if column.num_chunks else pa.array([], type=column.type)
        import pyarrow.compute as pc

        encoded = column.dictionary_encode()  # hashing in Arrow: one lookup per distinct value
        values = encoded.dictionary
        if self.n_seed:  # seeded values are found in Arrow; only the others are numbered in Python
            if self._seed is None:
                self._seed = pa.array(list(self.index)[: self.n_seed], type=pa.string())
            found = pc.index_in(values, value_set=self._seed)
            mapping = np.asarray(found.fill_null(-1), dtype=np.int64)
            missing = np.flatnonzero(mapping < 0)
        else:
            mapping = np.full(len(values), -1, dtype=np.int64)
            missing = np.arange(len(values))
        if len(missing):
            index = self.index
            mapping[missing] = [index.setdefault(v, len(index)) for v in values.take(pa.array(missing)).to_pylist()]
        return mapping[encoded.indices.to_numpy(zero_copy_only=False)] if len(mapping) else np.zeros(len(column), dtype=np.int64)


def factorize(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes 0 … n−1 of any int64 values (equal values, equal codes) and n."""
    unique, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(unique)


def combine(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> tuple[np.ndarray, int]:
    """One code per (a, b) pair, equal exactly when both parts are, with its range."""
    if na * nb < 2**62:
        return a * nb + b, na * nb
    (a, na), (b, nb) = factorize(a), factorize(b)  # re-densify: each part then has at most one code per row
    return a * nb + b, na * nb


class EvalIndex:
    """The archive-wide codes of the evaluator checks: papers, episodes, conditions, futures, digests."""

    def __init__(self, papers: Mapping[str, Paper], pools: Pools):
        import pyarrow as pa
        import pyarrow.compute as pc

        members = [p for ids in pools.future.values() for p in ids]
        ids = pa.array(list(set(papers).union(members)), type=pa.string())
        self.papers_text = papers
        self.papers = Interner(ids.take(pc.sort_indices(ids)).to_pylist())  # Arrow orders strings by their bytes
        self.episodes = Interner(e.episode_id for e in pools.episodes)
        self.conditions = Interner()
        self.future_size = np.zeros(self.episodes.n_seed, dtype=np.int64)
        self.resolved = np.zeros(self.episodes.n_seed, dtype=bool)
        owner = np.zeros(len(members), dtype=np.int64)
        at = 0
        for eid, future in pools.future.items():
            e = self.episodes.index[eid]
            self.resolved[e], self.future_size[e] = True, len(future)
            owner[at:at + len(future)] = e
            at += len(future)
        self._pairs = np.sort(owner * self.papers.n_seed + self.papers.codes(members)) if members else np.zeros(0, dtype=np.int64)
        self._cand: dict[int, bytes] = {}

    def in_future(self, episodes: np.ndarray, papers: np.ndarray) -> np.ndarray:
        """Whether each (episode code, paper code) is a paper of that resolved episode's future."""
        known = (episodes < self.episodes.n_seed) & (papers < self.papers.n_seed)
        out = np.zeros(len(episodes), dtype=bool)
        if not known.any() or not len(self._pairs):
            return out
        e, p = episodes[known], papers[known]
        key = e * self.papers.n_seed + p
        at = np.minimum(np.searchsorted(self._pairs, key), len(self._pairs) - 1)
        out[known] = self.resolved[e] & (self._pairs[at] == key)
        return out

    def paper_ids(self) -> list[str]:
        return list(self.papers.index)

    def candidate_digests(self, codes: Sequence[int]) -> list[bytes | None]:
        """``cand`` of each paper code as ASCII hex (cached), None for an id that is no paper of the snapshot."""
        ids = None
        out: list[bytes | None] = []
        for code in codes:
            digest = self._cand.get(code)
            if digest is None:
                ids = ids if ids is not None else self.paper_ids()
                paper = self.papers_text.get(ids[code])
                if paper is None:
                    out.append(None)
                    continue
                digest = self._cand[code] = candidate_digest(paper.title, paper.abstract).encode("ascii")
            out.append(digest)
        return out


class IdeaIndex:
    """One predictions file's ideas (``all_ideas`` order) as codes, with their ``pred`` digests on demand."""

    def __init__(self, index: EvalIndex, predictions: Predictions):
        self.index = index
        self.ideas: list[Idea] = predictions.all_ideas()
        self.episode = index.episodes.codes([i.episode_id for i in self.ideas])
        self.condition = index.conditions.codes([i.condition for i in self.ideas])
        self.rank = np.array([i.rank for i in self.ideas], dtype=np.int64)
        self._pred: list[bytes | None] = [None] * len(self.ideas)

    def __len__(self) -> int:
        return len(self.ideas)

    def lookup(self, episode: np.ndarray, condition: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """The idea index of each (episode code, condition code, rank), −1 where there is none."""
        n_cond, top = len(self.index.conditions) + 1, int(max(self.rank.max(initial=0), 1)) + 1
        mine = (self.episode * n_cond + self.condition) * top + self.rank
        order = np.argsort(mine, kind="stable")
        ok = (rank >= 1) & (rank < top)
        key = (episode * n_cond + condition) * top + np.where(ok, rank, 0)
        out = np.full(len(key), -1, dtype=np.int64)
        if not len(mine):
            return out
        at = np.minimum(np.searchsorted(mine[order], key), len(mine) - 1)
        hit = ok & (mine[order][at] == key)
        out[hit] = order[at[hit]]
        return out

    def resolved(self) -> np.ndarray:
        """Per idea: whether its episode is resolved (has a future)."""
        e = self.episode
        known = e < self.index.episodes.n_seed
        out = np.zeros(len(e), dtype=bool)
        out[known] = self.index.resolved[e[known]]
        return out

    def future_size(self) -> np.ndarray:
        e = self.episode
        out = np.zeros(len(e), dtype=np.int64)
        known = e < self.index.episodes.n_seed
        out[known] = self.index.future_size[e[known]]
        return out

    def prediction_digests(self, ideas: Sequence[int]) -> list[bytes]:
        """``pred`` of each idea index as ASCII hex (computed once per idea)."""
        out = []
        for i in ideas:
            digest = self._pred[i]
            if digest is None:
                digest = self._pred[i] = prediction_digest(self.ideas[i].fields()).encode("ascii")
            out.append(digest)
        return out
