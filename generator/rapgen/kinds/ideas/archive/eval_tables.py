"""The evaluator files as whole columns: parsed, checked and handed to scoring without a record per row.

:class:`CandidateTable` and :class:`JudgmentTable` hold ``candidates.parquet``
and ``judgments.parquet`` as Arrow string columns and numpy integer columns
(P, M, S as −1 where null), each row with its 1-based file row.
:func:`parse_candidate_table`, :func:`parse_judgment_table`,
:func:`check_candidate_table` and :func:`check_judgment_table` give exactly
the findings of the row-by-row :mod:`~rapgen.kinds.ideas.archive.evaluation`
functions (kept there as the readable statement of the rules, and as the
reference the tests compare with), in the same order; only rows that break a
rule become Python objects. The one difference: a judgment whose idea or
paper does not exist, which the row-by-row check could not handle, is an
``INVARIANT`` here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from rapgen.archive import Finding, ProblemKind
from rapgen.kinds.ideas.archive.codes import EvalIndex, IdeaIndex, Interner, combine, factorize
from rapgen.kinds.ideas.archive.evaluation import CANDIDATE_COLUMNS, CLUSTER_COLUMNS, JUDGMENT_COLUMNS, STATUSES, Candidate, Judgment, judge_digest
from rapgen.kinds.ideas.archive.lines import invariant, malformed
from rapgen.kinds.ideas.archive.tables import first_null, read_arrow

STRING_COLUMNS = ("episode_id", "condition", "arxiv_id", "judge_id", "status", "cache_key")


def _strings(values) -> object:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], type=pa.string())
    if not isinstance(values, pa.Array):
        return pa.array(list(values), type=pa.string())
    return values.cast(pa.string()) if values.type != pa.string() else values


def _ints(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


@dataclass(frozen=True)
class _Table:
    row: np.ndarray  # 1-based row in the file

    def __len__(self) -> int:
        return len(self.row)

    def codes(self, interner: Interner, name: str) -> np.ndarray:
        """The interner's codes of a string column, computed once per (interner, column)."""
        cache = self.__dict__.setdefault("_codes", {})
        key = (id(interner), name)
        if key not in cache:
            cache[key] = (interner, interner.codes(getattr(self, name)))  # the interner is kept alive with its codes
        return cache[key][1]

    def text(self, name: str, i: int) -> str:
        return getattr(self, name)[i].as_py()

    @classmethod
    def concat(cls, tables: Sequence[_Table]):
        """The rows of several tables, in order (an evaluator's groups as one model)."""
        import pyarrow as pa

        out = {}
        for f in fields(cls):
            parts = [getattr(t, f.name) for t in tables]
            out[f.name] = pa.concat_arrays(parts) if f.name in STRING_COLUMNS else np.concatenate(parts) if parts else np.zeros(0)
        return cls(**out)


@dataclass(frozen=True)
class CandidateTable(_Table):
    episode_id: object
    condition: object
    rank: np.ndarray
    cand_rank: np.ndarray
    arxiv_id: object
    cosine: np.ndarray

    @classmethod
    def empty(cls) -> CandidateTable:
        return cls.from_records([])

    @classmethod
    def from_records(cls, rows: Sequence[Candidate]) -> CandidateTable:
        return cls(_ints([c.row for c in rows]), _strings([c.episode_id for c in rows]), _strings([c.condition for c in rows]),
                   _ints([c.rank for c in rows]), _ints([c.cand_rank for c in rows]), _strings([c.arxiv_id for c in rows]),
                   np.asarray([c.cosine for c in rows], dtype=np.float64))

    def records(self) -> list[Candidate]:
        return [Candidate(e, c, r, k, a, x, row=n) for e, c, r, k, a, x, n in
                zip(self.episode_id.to_pylist(), self.condition.to_pylist(), self.rank.tolist(), self.cand_rank.tolist(),
                    self.arxiv_id.to_pylist(), self.cosine.tolist(), self.row.tolist())]


@dataclass(frozen=True)
class JudgmentTable(_Table):
    episode_id: object
    condition: object
    rank: np.ndarray
    cand_rank: np.ndarray
    arxiv_id: object
    judge_id: object
    P: np.ndarray  # −1 where null
    M: np.ndarray
    S: np.ndarray
    scored: np.ndarray  # P, M and S all present
    status: object
    cache_key: object

    @classmethod
    def empty(cls) -> JudgmentTable:
        return cls.from_records([])

    @classmethod
    def from_records(cls, rows: Sequence[Judgment]) -> JudgmentTable:
        def score(name: str) -> np.ndarray:
            return _ints([-1 if getattr(j, name) is None else getattr(j, name) for j in rows])

        return cls(_ints([j.row for j in rows]), _strings([j.episode_id for j in rows]), _strings([j.condition for j in rows]),
                   _ints([j.rank for j in rows]), _ints([j.cand_rank for j in rows]), _strings([j.arxiv_id for j in rows]),
                   _strings([j.judge_id for j in rows]), score("P"), score("M"), score("S"),
                   np.array([j.P is not None and j.M is not None and j.S is not None for j in rows], dtype=bool),
                   _strings([j.status for j in rows]), _strings([j.cache_key for j in rows]))

    def records(self) -> list[Judgment]:
        def score(x: np.ndarray) -> list:
            return [None if v < 0 or not ok else v for v, ok in zip(x.tolist(), self.scored.tolist())]

        return [Judgment(*r) for r in zip(self.episode_id.to_pylist(), self.condition.to_pylist(), self.rank.tolist(), self.cand_rank.tolist(),
                                           self.arxiv_id.to_pylist(), self.judge_id.to_pylist(), score(self.P), score(self.M), score(self.S),
                                           self.status.to_pylist(), self.cache_key.to_pylist(), self.row.tolist())]

    def failed(self) -> int:
        return int(np.count_nonzero(_equal(self.status, "failed")))


def _equal(column, value: str) -> np.ndarray:
    import pyarrow.compute as pc

    return pc.equal(column, value).to_numpy(zero_copy_only=False)


def _read(path: str, data: bytes, columns, nullable: Sequence[str], findings: list[Finding]):
    table = read_arrow(path, data, columns, findings)
    if table is None:
        return None
    null = first_null(table, [c for c, _ in columns if c not in nullable])
    if null:
        findings.append(malformed(path, null[0], f"{null[1]} is null"))
        return None
    return table


def parse_candidate_table(path: str, data: bytes) -> tuple[CandidateTable, list[Finding]]:
    """``candidates.parquet`` as columns (empty after a finding), as :func:`parse_candidates` rows."""
    findings: list[Finding] = []
    t = _read(path, data, CANDIDATE_COLUMNS, (), findings)
    if t is None:
        return CandidateTable.empty(), findings
    col = t.column
    return CandidateTable(np.arange(1, t.num_rows + 1, dtype=np.int64), _strings(col("episode_id")), _strings(col("condition")),
                          _ints(col("rank")), _ints(col("cand_rank")), _strings(col("arxiv_id")),
                          np.asarray(col("cosine"), dtype=np.float64)), findings


def parse_judgment_table(path: str, data: bytes) -> tuple[JudgmentTable, list[Finding]]:
    """``judgments.parquet`` as columns, without the rows :func:`parse_judgments` refuses (same findings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    findings: list[Finding] = []
    t = _read(path, data, JUDGMENT_COLUMNS, ("P", "M", "S"), findings)
    if t is None:
        return JudgmentTable.empty(), findings
    status = _strings(t.column("status"))
    present = [~t.column(s).is_null().to_numpy(zero_copy_only=False) for s in "PMS"]
    values = [np.asarray(pc.fill_null(t.column(s), -1), dtype=np.int64) for s in "PMS"]
    known = pc.is_in(status, value_set=pa.array(STATUSES)).to_numpy(zero_copy_only=False)
    failed, ok = _equal(status, "failed"), _equal(status, "ok")
    any_present = present[0] | present[1] | present[2]
    all_good = np.logical_and.reduce([p & (v >= 0) & (v <= 3) for p, v in zip(present, values)])
    bad_failed = known & failed & any_present
    bad_ok = known & ok & ~all_good
    for i in np.flatnonzero(~known | bad_failed | bad_ok).tolist():
        if not known[i]:
            detail = f"status {status[i].as_py()!r} is not one of {', '.join(STATUSES)}"
        elif bad_failed[i]:
            detail = "a 'failed' judgment has P, M and S null"
        else:
            detail = "P, M and S of an 'ok' judgment are integers 0–3"
        findings.append(malformed(path, i + 1, detail))
    keep = known & ~bad_failed & ~bad_ok
    take = np.flatnonzero(keep)
    every = len(take) == t.num_rows  # the usual file: nothing to drop, no copy

    def strings(values):
        return values if every else values.take(take)

    col = {name: strings(_strings(t.column(name))) for name in ("episode_id", "condition", "arxiv_id", "judge_id", "cache_key")}
    ints = {name: _ints(t.column(name))[take] for name in ("rank", "cand_rank")}
    return JudgmentTable(take + 1, col["episode_id"], col["condition"], ints["rank"], ints["cand_rank"], col["arxiv_id"], col["judge_id"],
                         values[0][take], values[1][take], values[2][take], (present[0] & present[1] & present[2])[take], strings(status),
                         col["cache_key"]), findings


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _name(table: _Table, i: int) -> str:
    return f"{table.text('episode_id', i)} {table.text('condition', i)} {int(table.rank[i])}"


def _groups(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(count, start) of each key 0 … n−1 in a sorted key array."""
    counts = np.bincount(keys, minlength=n)
    return counts, np.concatenate(([0], np.cumsum(counts)[:-1]))


def check_candidate_table(path: str, cands: CandidateTable, ideas: IdeaIndex, depth: int) -> list[Finding]:
    """:func:`check_candidates` on columns: the same findings, in the same order."""
    index = ideas.index
    out: list[Finding] = []
    e, c = cands.codes(index.episodes, "episode_id"), cands.codes(index.conditions, "condition")
    idea = ideas.lookup(e, c, cands.rank)
    resolved = ideas.resolved()
    valid = idea >= 0
    valid[valid] = resolved[idea[valid]]
    for i in np.flatnonzero(~valid).tolist():
        out.append(invariant(path, int(cands.row[i]), f"{_name(cands, i)} is not an idea of a resolved episode in predictions.jsonl"))
    v = np.flatnonzero(valid)
    s = v[np.lexsort((v, cands.cand_rank[v], idea[v]))]  # by idea, then cand_rank, then file order (a stable sort)
    si, n = idea[s], len(ideas)
    counts, start = _groups(si, n)
    size = ideas.future_size()
    want = np.minimum(depth, size)
    crank = cands.cand_rank[s]
    mismatch = np.bincount(si, weights=(crank != np.arange(len(s)) - start[si] + 1), minlength=n) > 0
    bad_rank = resolved & ((counts != want) | mismatch)
    paper = cands.codes(index.papers, "arxiv_id")[s]
    outside = ~index.in_future(e[s], paper)
    first_out = np.full(n, -1, dtype=np.int64)
    ideas_out, at = np.unique(si[outside], return_index=True)
    first_out[ideas_out] = np.flatnonzero(outside)[at]
    same = si[1:] == si[:-1]
    twice = np.zeros(n, dtype=bool)
    by_paper = np.lexsort((paper, si))
    twice[si[by_paper][1:][(si[by_paper][1:] == si[by_paper][:-1]) & (paper[by_paper][1:] == paper[by_paper][:-1])]] = True
    cos = cands.cosine[s]
    broken = same & ((cos[1:] > cos[:-1]) | ((cos[1:] == cos[:-1]) & (paper[1:] < paper[:-1])))
    first_broken = np.full(n, -1, dtype=np.int64)
    ideas_broken, at = np.unique(si[1:][broken], return_index=True)
    first_broken[ideas_broken] = np.flatnonzero(broken)[at] + 1
    for k in np.flatnonzero(resolved & (bad_rank | (first_out >= 0) | twice | (first_broken >= 0))).tolist():
        idea_ = ideas.ideas[k]
        name = " ".join(map(str, idea_.key))
        rows = s[start[k]:start[k] + counts[k]]
        if bad_rank[k]:
            ranks = ", ".join(str(r) for r in cands.cand_rank[rows].tolist()) or "none"
            out.append(invariant(path, int(cands.row[rows[0]]) if len(rows) else None,
                                 f"{name}: cand_rank {ranks}, expected 1 … {want[k]} (min({depth}, |F| = {size[k]}))"))
        elif first_out[k] >= 0:
            i = s[first_out[k]]
            out.append(invariant(path, int(cands.row[i]), f"{name}: candidate {cands.text('arxiv_id', i)} is not in the episode's future"))
        else:
            if twice[k]:
                out.append(invariant(path, int(cands.row[rows[0]]), f"{name}: a paper is a candidate twice"))
            if first_broken[k] >= 0:
                i = s[first_broken[k]]
                out.append(invariant(path, int(cands.row[i]),
                                     f"{name}: cand_rank {cands.cand_rank[i]} breaks the order (cosine non-increasing, ties by arxiv_id)"))
    return out


def _keys(index: EvalIndex, *tables: _Table) -> list[np.ndarray]:
    """One int64 key per row of each table for (episode_id, condition, rank, cand_rank), comparable across the tables."""
    e = np.concatenate([t.codes(index.episodes, "episode_id") for t in tables])
    c = np.concatenate([t.codes(index.conditions, "condition") for t in tables])
    r, nr = factorize(np.concatenate([t.rank for t in tables]))
    k, nk = factorize(np.concatenate([t.cand_rank for t in tables]))
    key, n = combine(*combine(*combine(e, len(index.episodes), c, len(index.conditions)), r, nr), k, nk)
    bounds = np.cumsum([0] + [len(t) for t in tables])
    return [key[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def check_judgment_table(path: str, judgments: JudgmentTable, cands: CandidateTable, ideas: IdeaIndex, judge_id: str,
                         judge_line: bytes) -> list[Finding]:
    """:func:`check_judgments` on columns: the same findings, in the same order; every cache key recomputed."""
    index = ideas.index
    ckey, jkey = _keys(index, cands, judgments)
    n = len(judgments)
    found: list[tuple[int, Finding]] = []

    def name(i: int) -> str:
        return f"{_name(judgments, i)} cand_rank {judgments.cand_rank[i]}"

    _, first, inverse = np.unique(jkey, return_index=True, return_inverse=True)
    first_of = first[inverse.reshape(-1)]
    for i in np.flatnonzero(first_of != np.arange(n)).tolist():
        found.append((i, malformed(path, int(judgments.row[i]), f"{name(i)} is judged twice (first on row {judgments.row[first_of[i]]})",
                                   ProblemKind.DUPLICATE_UNIT)))
    live = first_of == np.arange(n)
    other_judge = live & ~_equal(judgments.judge_id, judge_id)
    je = judgments.codes(index.episodes, "episode_id")
    jp = judgments.codes(index.papers, "arxiv_id")
    outside = live & ~other_judge & ~index.in_future(je, jp)
    # wanted: the last candidate row of each key, keys in order of their first row
    wanted, last_rev = np.unique(ckey[::-1], return_index=True)
    last = len(ckey) - 1 - last_rev
    cp = cands.codes(index.papers, "arxiv_id")
    at = np.minimum(np.searchsorted(wanted, jkey), max(len(wanted) - 1, 0))
    is_cand = (wanted[at] == jkey) & (cp[last[at]] == jp) if len(wanted) else np.zeros(n, dtype=bool)
    not_cand = live & ~other_judge & ~outside & ~is_cand
    for i in np.flatnonzero(other_judge).tolist():
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: judge_id {judgments.text('judge_id', i)!r} in the folder of judge {judge_id!r}")))
    for i in np.flatnonzero(outside).tolist():
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: {judgments.text('arxiv_id', i)} is outside the episode's future; "
                                                               "a judgment is only for a paper of F")))
    for i in np.flatnonzero(not_cand).tolist():
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: {judgments.text('arxiv_id', i)} is not that candidate in candidates.parquet")))
    rows = np.flatnonzero(live & ~other_judge & ~outside & ~not_cand)
    idea = ideas.lookup(je[rows], judgments.codes(index.conditions, "condition")[rows], judgments.rank[rows])
    for i in rows[idea < 0].tolist():
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: not an idea of predictions.jsonl")))
    rows, idea = rows[idea >= 0], idea[idea >= 0]
    unique_papers, paper_of = np.unique(jp[rows], return_inverse=True)
    digests = index.candidate_digests(unique_papers.tolist())
    for i in rows[np.array([d is None for d in digests], dtype=bool)[paper_of]].tolist():
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: {judgments.text('arxiv_id', i)} is not a paper of the snapshot")))
    has_text = np.array([d is not None for d in digests], dtype=bool)[paper_of]
    rows, idea, paper_of = rows[has_text], idea[has_text], paper_of[has_text]
    unique_ideas, idea_of = np.unique(idea, return_inverse=True)
    # the key hashes pred "\n" cand "\n" judge: the first part per idea, the rest per paper, joined per row
    tail = b"\n" + judge_digest(judge_line).encode("ascii")
    head = _objects([d + b"\n" for d in ideas.prediction_digests(unique_ideas.tolist())])[idea_of.reshape(-1)]
    rest = _objects([(d or b"") + tail for d in digests])[paper_of.reshape(-1)]
    sha = hashlib.sha256
    expected = [sha(h + r).hexdigest() for h, r in zip(head.tolist(), rest.tolist())]
    actual = judgments.cache_key.take(rows).to_pylist()
    for k in [k for k, (x, y) in enumerate(zip(expected, actual)) if x != y]:
        i = int(rows[k])
        found.append((i, invariant(path, int(judgments.row[i]), f"{name(i)}: stale cache_key (the idea, the paper's text or the judge changed "
                                                               "since it was judged)", expected=expected[k], actual=actual[k])))
    found.sort(key=lambda x: x[0])
    out = [f for _, f in found]
    missing = ~np.isin(wanted, jkey)
    first_c = np.unique(ckey, return_index=True)[1]  # first candidate row of each key (same key order as `wanted`)
    for k in np.argsort(first_c, kind="stable").tolist():
        if missing[k]:
            i = int(last[k])
            out.append(invariant(path, None, f"{_name(cands, i)} cand_rank {cands.cand_rank[i]} ({cands.text('arxiv_id', i)}) has no judgment"))
    return out


def parse_cluster_table(path: str, data: bytes, index: EvalIndex, k: int) -> tuple[dict[str, dict[str, int]], list[Finding]]:
    """``future_clusters.parquet`` as episode -> paper -> cluster, with :func:`parse_clusters`' findings
    (a paper outside the episode's future, a cluster outside 0 … k−1), in row order."""
    findings: list[Finding] = []
    t = _read(path, data, CLUSTER_COLUMNS, (), findings)
    if t is None:
        return {}, findings
    eids, pids = t.column("episode_id"), t.column("arxiv_id")
    cluster = _ints(t.column("cluster"))
    inside = index.in_future(index.episodes.codes(eids), index.papers.codes(pids))
    in_range = (cluster >= 0) & (cluster < k)
    eids, pids = eids.to_pylist(), pids.to_pylist()
    for i in np.flatnonzero(~inside | ~in_range).tolist():
        if not inside[i]:
            findings.append(invariant(path, i + 1, f"{pids[i]} is not in the future of {eids[i]}"))
        else:
            findings.append(malformed(path, i + 1, f"cluster {cluster[i]} is outside 0–{k - 1}"))
    out: dict[str, dict[str, int]] = {}
    good = inside & in_range
    for e, pid, c in zip(eids, pids, cluster.tolist()) if good.all() else ((eids[i], pids[i], int(cluster[i])) for i in np.flatnonzero(good)):
        out.setdefault(e, {})[pid] = c
    return out, findings
