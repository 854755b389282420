"""The evaluator: a model's ``eval/<judge>/`` files from its predictions (IDEAS.md §4).

1. **Retrieval.** Per resolved episode, the embedder is fitted (``tfidf-sample-v1``
   fits on the episode's history and future; an endpoint ignores it), every
   idea is embedded and its ``depth`` nearest future papers become its
   candidates; ``nn_distance`` to the nearest history paper is its novelty
   feature.
2. **Judgments.** Each (idea, candidate) is judged unless the journal already
   holds its ``cache_key``: a rerun costs nothing, an interrupted run resumes
   where it stopped, and a changed idea, paper text or judge line makes a new
   key (so a new judgment) by construction. Judgments already in an existing
   ``judgments.parquet`` are reused the same way.
3. **Output.** The files are written whole, each through a temporary file and
   a rename (:func:`rapgen.io.write_folder`): a crash leaves the old files or
   the new ones, and the journal keeps every verdict paid for.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rapgen.io import write_folder
from rapgen.kinds.ideas.archive.episodes import Pools
from rapgen.kinds.ideas.archive.evaluation import Candidate, Judgment, judgment_key
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import Predictions
from rapgen.kinds.ideas.archive.writers import candidates_bytes, features_bytes, judgments_bytes
from rapgen.kinds.ideas.kit.embedding import Embedder, idea_text, paper_document
from rapgen.kinds.ideas.kit.journal import Journal
from rapgen.kinds.ideas.kit.judges import Judge, Verdict, judge_line
from rapgen.kinds.ideas.kit.retrieval import nearest, nn_distance


@dataclass
class Retrieval:
    candidates: list[Candidate] = field(default_factory=list)
    nn_distance: dict[tuple[str, str, int], float] = field(default_factory=dict)


@dataclass(frozen=True)
class Space:
    """One episode's fitted embedder and its future and history paper vectors (ids as in the pools)."""

    embedder: Embedder
    future: object
    history: object


def episode_space(papers: Mapping[str, Paper], pools: Pools, eid: str, embedder: Embedder,
                  spaces: dict[str, Space] | None = None) -> Space:
    """The episode's space, fitted on its history and future papers (cached in ``spaces``)."""
    if spaces is not None and eid in spaces:
        return spaces[eid]
    history, future = pools.history[eid], pools.future[eid]
    docs = {pid: paper_document(papers[pid].title, papers[pid].abstract) for pid in (*history, *future)}
    embedder.fit([docs[p] for p in sorted(docs)])
    space = Space(copy.copy(embedder), embedder.embed([docs[p] for p in future]), embedder.embed([docs[p] for p in history]))
    if spaces is not None:
        spaces[eid] = space
    return space


def retrieve(papers: Mapping[str, Paper], pools: Pools, predictions: Predictions, embedder: Embedder, depth: int,
             spaces: dict[str, Space] | None = None, tick: Callable[[int], None] | None = None) -> Retrieval:
    """Candidates and novelty of every idea of a resolved episode, episode by episode
    (``spaces``: a cache shared by the models of one run; ``tick(1)`` after each episode)."""
    out = Retrieval()
    by_episode: dict[str, list] = {}
    for idea in predictions.all_ideas():
        if idea.episode_id in pools.future:
            by_episode.setdefault(idea.episode_id, []).append(idea)
    for eid in sorted(by_episode):
        space = episode_space(papers, pools, eid, embedder, spaces)
        fv, hv, future = space.future, space.history, pools.future[eid]
        ideas = by_episode[eid]
        iv = space.embedder.embed([idea_text(i.fields()) for i in ideas])
        iv = iv.toarray() if hasattr(iv, "toarray") else iv
        for idea, q in zip(ideas, iv):
            for k, (pid, cos) in enumerate(nearest(q, fv, future, depth), start=1):
                out.candidates.append(Candidate(idea.episode_id, idea.condition, idea.rank, k, pid, cos))
            out.nn_distance[idea.key] = nn_distance(q, hv)
        if tick is not None:
            tick(1)
    return out


def episodes_to_retrieve(pools: Pools, predictions: Predictions) -> int:
    """How many episodes :func:`retrieve` visits (resolved episodes with at least one idea)."""
    return len({i.episode_id for i in predictions.all_ideas() if i.episode_id in pools.future})


@dataclass
class JudgeRun:
    judgments: list[Judgment]
    judged: int = 0  # new verdicts (paid for now)
    reused: int = 0  # taken from the journal or an earlier judgments.parquet


def judge_candidates(candidates: list[Candidate], predictions: Predictions, papers: Mapping[str, Paper], judge: Judge,
                     journal: Journal | None = None, earlier: list[Judgment] | None = None, *, line: bytes | None = None,
                     tick: Callable[[int], None] | None = None, reuse_journal: bool = True) -> JudgeRun:
    """A judgment per candidate, in candidates order, reusing every known cache key. ``line``: the
    judge's recorded judges.jsonl line (default: the line its record makes); ``tick(1)`` after each;
    ``reuse_journal`` False: the journal only records (every pair not in ``earlier`` is judged)."""
    ideas = {i.key: i for i in predictions.all_ideas()}
    line = judge_line(judge.record()) if line is None else line
    known = {j.cache_key: Verdict(j.P, j.M, j.S) for j in earlier or [] if j.judge_id == judge.judge_id}
    run = JudgeRun([])
    for c in candidates:
        idea, paper = ideas[c.idea], papers[c.arxiv_id]
        key = judgment_key(idea, paper, line)
        verdict = known.get(key)
        if verdict is None and journal is not None and reuse_journal and (entry := journal.get(key)) is not None:
            verdict = Verdict(entry.get("P"), entry.get("M"), entry.get("S"))
        if verdict is None:
            verdict = judge.judge(idea.fields(), paper.title, paper.abstract)
            run.judged += 1
            if journal is not None:
                journal.add(key, {"P": verdict.P, "M": verdict.M, "S": verdict.S})
        else:
            run.reused += 1
        if tick is not None:
            tick(1)
        run.judgments.append(Judgment(c.episode_id, c.condition, c.rank, c.cand_rank, c.arxiv_id, judge.judge_id,
                                      verdict.P, verdict.M, verdict.S, verdict.status, key))
    return run


def eval_files(judge_id: str, candidates: list[Candidate], judgments: list[Judgment]) -> dict[str, bytes]:
    """``eval/<judge_id>/{candidates,judgments}.parquet`` by path relative to the model folder."""
    return {f"eval/{judge_id}/candidates.parquet": candidates_bytes(candidates),
            f"eval/{judge_id}/judgments.parquet": judgments_bytes(judgments)}


def features_file(retrieval: Retrieval) -> dict[str, bytes]:
    rows = [(*key, d) for key, d in sorted(retrieval.nn_distance.items())]
    return {"features.parquet": features_bytes(rows)}


def evaluate_model(model_dir: str | Path, papers: Mapping[str, Paper], pools: Pools, predictions: Predictions, judge: Judge,
                   embedder: Embedder, depth: int, *, journal: str | Path | None = None, earlier: list[Judgment] | None = None,
                   features: bool = True) -> JudgeRun:
    """Retrieve, judge (resuming from ``journal``) and write the model's evaluator files."""
    retrieval = retrieve(papers, pools, predictions, embedder, depth)
    run = judge_candidates(retrieval.candidates, predictions, papers, judge, Journal(journal) if journal else None, earlier)
    files = eval_files(judge.judge_id, retrieval.candidates, run.judgments)
    if features:
        files.update(features_file(retrieval))
    write_folder(model_dir, files, prefix=".rapgen-eval-")
    return run


__all__ = ["Retrieval", "Space", "episode_space", "JudgeRun", "retrieve", "episodes_to_retrieve", "judge_candidates", "eval_files", "features_file", "evaluate_model"]
