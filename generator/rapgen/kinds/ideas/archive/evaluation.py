"""The evaluator files of a model (IDEAS.md §4): candidates, judgments, features, clusters.

``eval/<judge_id>/candidates.parquet``: for every idea of a resolved episode,
its min(depth, |F|) nearest future papers, ``cand_rank`` 1 … n, ``cosine``
non-increasing, ties by ``arxiv_id`` ascending. ``judgments.parquet``: one
row per candidate with P, M, S (0–3, or all null with ``status`` ``failed``)
and its ``cache_key``:

    cache_key = SHA-256(pred "\\n" cand "\\n" judge)
    pred  = H({"title", "rationale", "approach", "key_terms"})   (INTERVENTIONS.md §0's H)
    cand  = SHA-256(title "\\n" abstract) of the candidate paper
    judge = SHA-256 of the judge's judges.jsonl line, without its newline

all three as lowercase hex. Verify recomputes every key: a judgment whose
idea, paper text or judge changed since it was made is stale, an INVARIANT.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapgen.archive import Finding, ProblemKind, canonical_hash
from rapgen.kinds.ideas.archive.lines import invariant, malformed
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import Idea, Predictions
from rapgen.kinds.ideas.archive.tables import DOUBLE, INT, STRING, null_rows, read_table

CANDIDATE_COLUMNS = (("episode_id", STRING), ("condition", STRING), ("rank", INT), ("cand_rank", INT), ("arxiv_id", STRING), ("cosine", DOUBLE))
JUDGMENT_COLUMNS = (("episode_id", STRING), ("condition", STRING), ("rank", INT), ("cand_rank", INT), ("arxiv_id", STRING),
                    ("judge_id", STRING), ("P", INT), ("M", INT), ("S", INT), ("status", STRING), ("cache_key", STRING))
FEATURE_COLUMNS = (("episode_id", STRING), ("condition", STRING), ("rank", INT), ("nn_distance", DOUBLE))
CLUSTER_COLUMNS = (("episode_id", STRING), ("arxiv_id", STRING), ("cluster", INT))
STATUSES = ("ok", "failed")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prediction_digest(fields: Mapping) -> str:
    """``pred``: H of {"title", "rationale", "approach", "key_terms"} in that order."""
    return canonical_hash({k: fields[k] for k in ("title", "rationale", "approach", "key_terms")})


def candidate_digest(title: str, abstract: str) -> str:
    return sha256_text(f"{title}\n{abstract}")


def judge_digest(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def cache_key(pred: str, cand: str, judge: str) -> str:
    return sha256_text(f"{pred}\n{cand}\n{judge}")


def judgment_key(idea: Idea, paper: Paper, judge_line: bytes) -> str:
    """The cache key of one (idea, candidate paper, judge) judgment."""
    return cache_key(prediction_digest(idea.fields()), candidate_digest(paper.title, paper.abstract), judge_digest(judge_line))


@dataclass(frozen=True)
class _IdeaCandidate:
    """One candidate paper of one idea: the idea (episode, condition, rank), the paper's rank and id."""

    episode_id: str
    condition: str
    rank: int
    cand_rank: int
    arxiv_id: str

    @property
    def idea(self) -> tuple[str, str, int]:
        return (self.episode_id, self.condition, self.rank)


@dataclass(frozen=True)
class Candidate(_IdeaCandidate):
    cosine: float
    row: int = 0


@dataclass(frozen=True)
class Judgment(_IdeaCandidate):
    judge_id: str
    P: int | None
    M: int | None
    S: int | None
    status: str
    cache_key: str
    row: int = 0


def _rows(path: str, data: bytes, columns, findings: list[Finding], nullable: Sequence[str] = ()) -> list[tuple] | None:
    table = read_table(path, data, columns, findings)
    if table is None:
        return None
    nulls = null_rows(table, [c for c, _ in columns if c not in nullable])
    if nulls:
        findings.append(malformed(path, nulls[0][0], f"{nulls[0][1]} is null"))
        return None
    return [tuple(v) for v in zip(*(table[c] for c, _ in columns))]


def parse_candidates(path: str, data: bytes) -> tuple[list[Candidate], list[Finding]]:
    findings: list[Finding] = []
    rows = _rows(path, data, CANDIDATE_COLUMNS, findings)
    return [Candidate(*r, row=i + 1) for i, r in enumerate(rows or [])], findings


def parse_judgments(path: str, data: bytes) -> tuple[list[Judgment], list[Finding]]:
    findings: list[Finding] = []
    rows = _rows(path, data, JUDGMENT_COLUMNS, findings, nullable=("P", "M", "S"))
    out = []
    for i, r in enumerate(rows or []):
        j = Judgment(*r, row=i + 1)
        scores = (j.P, j.M, j.S)
        if j.status not in STATUSES:
            findings.append(malformed(path, j.row, f"status {j.status!r} is not one of {', '.join(STATUSES)}"))
        elif j.status == "failed" and any(s is not None for s in scores):
            findings.append(malformed(path, j.row, "a 'failed' judgment has P, M and S null"))
        elif j.status == "ok" and any(s is None or not 0 <= s <= 3 for s in scores):
            findings.append(malformed(path, j.row, "P, M and S of an 'ok' judgment are integers 0–3"))
        else:
            out.append(j)
    return out, findings


def check_candidates(path: str, candidates: Sequence[Candidate], predictions: Predictions,
                     future: Mapping[str, Sequence[str]], depth: int) -> list[Finding]:
    """Each idea of a resolved episode has min(depth, |F|) candidates in F, ranked 1 … n by
    non-increasing cosine (ties by arxiv_id), and no other idea has any."""
    out: list[Finding] = []
    ideas = {i.key: i for i in predictions.all_ideas() if i.episode_id in future}
    by_idea: dict[tuple, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.idea not in ideas:
            out.append(invariant(path, c.row, f"{' '.join(map(str, c.idea))} is not an idea of a resolved episode in predictions.jsonl"))
            continue
        by_idea[c.idea].append(c)
    for key, idea in ideas.items():
        pool = set(future[idea.episode_id])
        rows = sorted(by_idea.get(key, []), key=lambda c: c.cand_rank)
        name = " ".join(map(str, key))
        want = min(depth, len(pool))
        if [c.cand_rank for c in rows] != list(range(1, want + 1)):
            out.append(invariant(path, rows[0].row if rows else None, f"{name}: cand_rank {', '.join(str(c.cand_rank) for c in rows) or 'none'}, "
                                                                     f"expected 1 … {want} (min({depth}, |F| = {len(pool)}))"))
            continue
        for c in rows:
            if c.arxiv_id not in pool:
                out.append(invariant(path, c.row, f"{name}: candidate {c.arxiv_id} is not in the episode's future"))
                break
        else:
            if len({c.arxiv_id for c in rows}) != len(rows):
                out.append(invariant(path, rows[0].row, f"{name}: a paper is a candidate twice"))
            for a, b in zip(rows, rows[1:]):
                if b.cosine > a.cosine or (b.cosine == a.cosine and b.arxiv_id.encode() < a.arxiv_id.encode()):
                    out.append(invariant(path, b.row, f"{name}: cand_rank {b.cand_rank} breaks the order (cosine non-increasing, ties by arxiv_id)"))
                    break
    return out


def check_judgments(path: str, judgments: Sequence[Judgment], candidates: Sequence[Candidate], predictions: Predictions,
                    papers: Mapping[str, Paper], future: Mapping[str, Sequence[str]], judge_id: str, judge_line: bytes) -> list[Finding]:
    """One judgment per candidate, by this folder's judge, of a paper in the episode's future,
    with the cache key recomputed from the idea, the paper's text and the judge's line."""
    out: list[Finding] = []
    ideas = {i.key: i for i in predictions.all_ideas()}
    wanted = {(c.idea, c.cand_rank): c for c in candidates}
    seen: dict[tuple, int] = {}
    judge = judge_digest(judge_line)
    pools = {e: set(ids) for e, ids in future.items()}
    preds: dict[tuple, str] = {}
    cands: dict[str, str] = {}
    for j in judgments:
        name = f"{' '.join(map(str, j.idea))} cand_rank {j.cand_rank}"
        key = (j.idea, j.cand_rank)
        if key in seen:
            out.append(malformed(path, j.row, f"{name} is judged twice (first on row {seen[key]})", ProblemKind.DUPLICATE_UNIT))
            continue
        seen[key] = j.row
        if j.judge_id != judge_id:
            out.append(invariant(path, j.row, f"{name}: judge_id {j.judge_id!r} in the folder of judge {judge_id!r}"))
            continue
        if j.arxiv_id not in pools.get(j.episode_id, ()):
            out.append(invariant(path, j.row, f"{name}: {j.arxiv_id} is outside the episode's future; a judgment is only for a paper of F"))
            continue
        cand = wanted.get(key)
        if cand is None or cand.arxiv_id != j.arxiv_id:
            out.append(invariant(path, j.row, f"{name}: {j.arxiv_id} is not that candidate in candidates.parquet"))
            continue
        if j.idea not in preds:
            preds[j.idea] = prediction_digest(ideas[j.idea].fields())
        if j.arxiv_id not in cands:
            cands[j.arxiv_id] = candidate_digest(papers[j.arxiv_id].title, papers[j.arxiv_id].abstract)
        expected = cache_key(preds[j.idea], cands[j.arxiv_id], judge)
        if j.cache_key != expected:
            out.append(invariant(path, j.row, f"{name}: stale cache_key (the idea, the paper's text or the judge changed since it was judged)",
                                 expected=expected, actual=j.cache_key))
    for key, c in wanted.items():
        if key not in seen:
            out.append(invariant(path, None, f"{' '.join(map(str, c.idea))} cand_rank {c.cand_rank} ({c.arxiv_id}) has no judgment"))
    return out


def parse_features(path: str, data: bytes) -> tuple[dict[tuple[str, str, int], float], list[Finding]]:
    """``features.parquet``: each idea's ``nn_distance`` (cosine distance to its nearest history paper)."""
    findings: list[Finding] = []
    rows = _rows(path, data, FEATURE_COLUMNS, findings)
    return {(e, c, r): d for e, c, r, d in rows or []}, findings


def parse_clusters(path: str, data: bytes, future: Mapping[str, Sequence[str]], k: int) -> tuple[dict[tuple[str, str], int], list[Finding]]:
    """``future_clusters.parquet``: (episode, paper) -> cluster 0 … k−1, for papers of F."""
    findings: list[Finding] = []
    rows = _rows(path, data, CLUSTER_COLUMNS, findings)
    out: dict[tuple[str, str], int] = {}
    pools = {e: set(ids) for e, ids in future.items()}
    for i, (e, pid, cluster) in enumerate(rows or []):
        if pid not in pools.get(e, ()):
            findings.append(invariant(path, i + 1, f"{pid} is not in the future of {e}"))
        elif not 0 <= cluster < k:
            findings.append(malformed(path, i + 1, f"cluster {cluster} is outside 0–{k - 1}"))
        else:
            out[(e, pid)] = cluster
    return out, findings
