"""A synthetic Ideas archive at the paper's size (``--scale full``) or a small one for tests.

Full size: 52 topics × 12 monthly cutoffs = 624 episodes, one model running the
six strategies of the paper, five ideas each, ten candidates per idea, two
judges (374,400 judgments). Nothing in it is real: topics, papers, ideas,
retrieval and verdicts are drawn from ``numpy.random.default_rng`` seeded by
``(seed, part)``, so a scale and a seed always give the same bytes, and
``ARCHIVE.json`` says ``synthetic: true``. It exists to measure verification
and scoring at full size and to give tests a complete archive; it is IDEAS.md
§1's file set, format 1 (every cutoff resolved), with ``SHA256SUMS``, and
:func:`~rapgen.kinds.ideas.archive.check.check_archive` finds nothing in it.

How it is drawn:

* Papers: each topic has a corpus size (log-normal around the scale's median,
  as the paper's 209–6,158), dates in [start, last future end] with a
  per-topic growth, one term of the topic in the title; a tenth also carry a
  second topic's term in a key point (topics overlap). ``phrase-v1`` then
  gives the assignment, and the pools the episodes and futures.
* Ideas: per (model, strategy, episode) five ideas, fewer now and then, and a
  few empty episodes; the ``mdf`` strategy writes raw proposals that go through
  adapter v1 (``raw.jsonl``), as the paper's MDF configuration does.
* Retrieval: ten distinct future papers per idea with descending cosines
  (a few exact ties, ordered by arXiv id); clusters and ``nn_distance`` drawn.
* Verdicts: a latent match per (idea, candidate) from the strategy's skill, the
  topic and the candidate's rank; each judge reads it with its own bias and
  noise (the second is harsher and fails 1.5 % of its calls), so passing pairs
  are rare (1.3 % and 0.6 % of the pairs at seed 0), as in the paper.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from rapgen.archive import add_months, canonical_hash, format_sums, sha256_bytes
from rapgen.errors import UsageProblem
from rapgen.kinds.ideas.archive.adapter import RawIdea, adapt, raw_sha256
from rapgen.kinds.ideas.archive.assignment import assign
from rapgen.kinds.ideas.archive.check import (
    ASSIGNMENTS_PARQUET,
    CLUSTERS_PARQUET,
    CONFIG_JSON,
    EPISODES_JSONL,
    FUTURES_JSONL,
    JUDGES_JSONL,
    LEDGER_JSON,
    PAPERS_PARQUET,
    TOPICS_JSONL,
)
from rapgen.kinds.ideas.archive.config import Config, future_end
from rapgen.kinds.ideas.archive.episodes import Pools, build_pools
from rapgen.kinds.ideas.archive.evaluation import (
    CANDIDATE_COLUMNS,
    CLUSTER_COLUMNS,
    FEATURE_COLUMNS,
    JUDGMENT_COLUMNS,
    cache_key,
    candidate_digest,
    judge_digest,
)
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import STRATEGIES
from rapgen.kinds.ideas.archive.writers import assignments_bytes, columns_parquet_bytes, json_bytes, jsonl_bytes, papers_bytes
from rapgen.kinds.ideas.kit.judges import judge_line
from rapgen.kinds.ideas.sample import synth_text as text
from rapgen.kinds.ideas.sample.build import (
    archive_document,
    check_sample_folder,
    config_document,
    ledger_document,
    write_archive_folder,
)

START = date(2024, 4, 1)
FIRST_CUTOFF = date(2024, 7, 1)
HORIZON_MONTHS = 3
MIN_HISTORY = 2
CREATED = "2025-10-01"
JUDGE_IDS = ("synth-judge-a", "synth-judge-b", "synth-judge-c", "synth-judge-d")
# Per judge: the bias of its reading of the latent match, its noise and its share of failed calls.
JUDGE_READING = ((0.0, 0.5, 0.002), (-0.35, 0.6, 0.015), (-0.2, 0.7, 0.01), (0.1, 0.8, 0.0))


@dataclass(frozen=True)
class IdeasScale:
    topics: int
    cutoffs: int
    models: int
    strategies: int  # per model; the last one is always mdf (raw proposals through adapter v1)
    top_k: int
    depth: int  # candidates per idea
    judges: int
    papers_per_topic: int  # the median topic's corpus size

    @property
    def judgments(self) -> int:
        """The judgments at full budget (every idea emitted), for the summary line."""
        return self.topics * self.cutoffs * self.models * self.strategies * self.top_k * self.depth * self.judges


IDEAS_SCALES: dict[str, IdeasScale] = {
    # IDEAS.md's benchmark size: 52 topics × 12 cutoffs × 6 strategies × 5 ideas × 10 candidates × 2 judges.
    "full": IdeasScale(topics=52, cutoffs=12, models=1, strategies=6, top_k=5, depth=10, judges=2, papers_per_topic=1000),
    # The same structure for tests: two models (one outside forecast_strict), two strategies.
    "small": IdeasScale(topics=4, cutoffs=3, models=2, strategies=2, top_k=5, depth=10, judges=2, papers_per_topic=90),
}


def strategies(n: int) -> tuple[str, ...]:
    return (*STRATEGIES[: n - 1], "mdf") if n > 1 else ("direct",)


def synthetic_config(scale: IdeasScale) -> Config:
    cutoffs = tuple(add_months(FIRST_CUTOFF, k) for k in range(scale.cutoffs))
    return Config(START, FIRST_CUTOFF, cutoffs, HORIZON_MONTHS, scale.top_k, MIN_HISTORY, cutoffs[len(cutoffs) // 2])


def _rng(seed: int, part: int) -> np.random.Generator:
    return np.random.default_rng([seed, part])


def _judge_record(k: int) -> dict:
    bias, noise, failed = JUDGE_READING[k]
    prompt = f"synthetic judge {JUDGE_IDS[k]}: latent match read with bias {bias}, noise {noise}, failure rate {failed}"
    return {"judge_id": JUDGE_IDS[k], "serving_model": f"synthetic-{JUDGE_IDS[k]}", "alias": JUDGE_IDS[k],
            "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(), "temperature": 0,
            "server_version": "rapgen-ideas-synth-1"}


def _model_json(model_id: str, k: int) -> dict:
    """The first model declares a knowledge cut-off before the data (it takes part in forecast_strict);
    the others declare none (they do not)."""
    return {"model_id": model_id, "display_name": f"Synthetic model {k + 1}", "provider": "rapgen (synthetic)", "proprietary": False,
            "knowledge_cutoff": "2024-03-31" if k == 0 else None, "release_date": None,
            "cutoff_source": "synthetic" if k == 0 else None, "diagnostic": False, "submitted": CREATED, "contact": "maintainers",
            "notes": "Drawn by rapgen's synthetic Ideas generator; not a forecast."}


@dataclass
class _Ideas:
    """One model's ideas, sorted by (episode_id, condition, rank), with their episode indices."""

    lines: list[dict]  # predictions.jsonl, in the same order
    raws: list[dict]
    keys: list[tuple[str, str, int]]
    episode: np.ndarray  # index into pools.episodes
    strategy: np.ndarray
    pred_digest: list[str]


def _ideas(rng: np.random.Generator, vocab: text.Vocabulary, pools: Pools, conditions: Sequence[str], top_k: int) -> _Ideas:
    topics = {t.topic_id: t for t in vocab.topics}
    n_ep = len(pools.episodes)
    counts = np.where(rng.random((n_ep, len(conditions))) < 0.08, rng.integers(1, top_k, (n_ep, len(conditions))), top_k)
    counts[rng.random((n_ep, len(conditions))) < 0.01] = 0  # empty episodes
    if "mdf" in conditions:  # MDF fills its budget (the paper: all 624 windows), unless empty
        m = list(conditions).index("mdf")
        counts[:, m] = np.where(counts[:, m] > 0, top_k, 0)
    order = sorted(range(n_ep), key=lambda e: pools.episodes[e].episode_id)
    out = _Ideas([], [], [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
    episode, strategy = [], []
    for e in order:
        ep = pools.episodes[e]
        for s, condition in sorted(enumerate(conditions), key=lambda x: x[1]):
            n = int(counts[e, s])
            if n == 0:
                out.lines.append({"episode_id": ep.episode_id, "condition": condition, "rank": None, "status": "empty"})
                continue
            for rank, idea in enumerate(text.idea_texts(rng, vocab, topics[ep.topic_id], n), start=1):
                raw_digest = None
                if condition == "mdf":
                    raw = text.raw_proposal(idea)
                    fields = adapt(**raw)
                    raw_digest = raw_sha256(RawIdea(ep.episode_id, condition, rank, **raw))
                    out.raws.append({"episode_id": ep.episode_id, "condition": condition, "rank": rank, **raw})
                else:
                    fields = idea
                out.lines.append({"episode_id": ep.episode_id, "condition": condition, "rank": rank, **fields, "raw_sha256": raw_digest})
                out.keys.append((ep.episode_id, condition, rank))
                out.pred_digest.append(canonical_hash(fields))
                episode.append(e)
                strategy.append(s)
    out.episode, out.strategy = np.array(episode, dtype=np.int64), np.array(strategy, dtype=np.int64)
    return out


def _retrieval(rng: np.random.Generator, pools: Pools, ideas: _Ideas, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per idea min(depth, |F|) distinct future papers with non-increasing cosines, a few exact ties
    ordered by arXiv id (the future is in byte order): (count per idea, index into the episode's
    future, cosine), the last two flat in idea order."""
    n = len(ideas.keys)
    size = np.array([len(pools.future[pools.episodes[e].episode_id]) for e in ideas.episode.tolist()], dtype=np.int64)
    count = np.minimum(depth, size)
    cos = np.round(np.sort(rng.uniform(0.25, 0.85, (n, depth)), axis=1)[:, ::-1], 12)
    tie = (rng.random(n) < 0.02) & (count >= 3)
    cos[tie, 2] = cos[tie, 1]
    pick = np.zeros((n, depth), dtype=np.int64)
    for e in np.unique(ideas.episode).tolist():
        rows = np.flatnonzero(ideas.episode == e)
        m = len(pools.future[pools.episodes[e].episode_id])
        k = min(depth, m)
        if k:
            pick[rows, :k] = np.argpartition(rng.random((len(rows), m)), k - 1, axis=1)[:, :k]
    for i in np.flatnonzero(tie).tolist():  # the tied pair in arXiv id order
        if pick[i, 2] < pick[i, 1]:
            pick[i, 1], pick[i, 2] = pick[i, 2], pick[i, 1]
    kept = np.arange(depth)[None, :] < count[:, None]
    return count, pick[kept], cos[kept]


def _verdicts(rng: np.random.Generator, latent: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """P, M, S (int64, 0–3) and a failed mask from the latent match, as judge k reads it."""
    bias, noise, failed = JUDGE_READING[k]
    shape = latent.shape

    def score(centre: float) -> np.ndarray:
        return np.clip(np.rint(centre + 0.9 * (latent + bias) + noise * rng.standard_normal(shape)), 0, 3).astype(np.int64)

    return score(0.9), score(0.8), score(0.6), rng.random(shape) < failed


def _model_files(rng: np.random.Generator, vocab: text.Vocabulary, papers: Mapping[str, Paper], pools: Pools, scale: IdeasScale,
                 model_id: str, k: int) -> tuple[dict[str, bytes], int, int]:
    """The model folder's files (every judge's eval/ folder included), its number of ideas and of judgments."""
    folder = f"archive/models/{model_id}"
    conditions = strategies(scale.strategies)
    ideas = _ideas(rng, vocab, pools, conditions, scale.top_k)
    count, pick, cos = _retrieval(rng, pools, ideas, scale.depth)
    n = len(ideas.keys)
    of = np.repeat(np.arange(n), count)  # the idea of each candidate row
    cand_rank = np.arange(len(of), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count) + 1
    futures = [pools.future[e.episode_id] for e in pools.episodes]
    arxiv = np.array([futures[e][j] for e, j in zip(ideas.episode[of].tolist(), pick.tolist())], dtype=object)
    eid = np.array([key[0] for key in ideas.keys], dtype=object)[of]
    cond = np.array([key[1] for key in ideas.keys], dtype=object)[of]
    rank = np.array([key[2] for key in ideas.keys], dtype=np.int64)[of]
    files: dict[str, bytes] = {
        f"{folder}/model.json": json_bytes(_model_json(model_id, k)),
        f"{folder}/predictions.jsonl": jsonl_bytes(ideas.lines),
        f"{folder}/raw.jsonl": jsonl_bytes(ideas.raws),
        f"{folder}/features.parquet": columns_parquet_bytes(FEATURE_COLUMNS, [
            [key[0] for key in ideas.keys], [key[1] for key in ideas.keys], [key[2] for key in ideas.keys],
            np.round(rng.uniform(0.15, 0.75, n), 12)]),
    }
    candidates = columns_parquet_bytes(CANDIDATE_COLUMNS, [eid, cond, rank, cand_rank, arxiv, cos])
    skill = rng.normal(-0.2 * k, 0.35, len(conditions))
    topic_effect = dict(zip((t.topic_id for t in vocab.topics), rng.normal(0.0, 0.4, len(vocab.topics))))
    base = skill[ideas.strategy] + np.array([topic_effect[pools.episodes[e].topic_id] for e in ideas.episode.tolist()])
    latent = base[of] - 0.06 * (cand_rank - 1) + rng.standard_normal(len(of)) - 0.45
    cand = {pid: candidate_digest(papers[pid].title, papers[pid].abstract) for pid in set(arxiv.tolist())}
    pred = np.array(ideas.pred_digest, dtype=object)[of]
    for j in range(scale.judges):
        judge = judge_digest(judge_line(_judge_record(j)))
        keys = [cache_key(p, cand[a], judge) for p, a in zip(pred.tolist(), arxiv.tolist())]
        P, M, S, failed = _verdicts(rng, latent, j)
        scores = [np.where(failed, None, x).tolist() for x in (P, M, S)]  # a failed judgment has P, M, S null
        status = np.where(failed, "failed", "ok").astype(object)
        base_path = f"{folder}/eval/{JUDGE_IDS[j]}"
        files[f"{base_path}/candidates.parquet"] = candidates
        files[f"{base_path}/judgments.parquet"] = columns_parquet_bytes(JUDGMENT_COLUMNS, [
            eid, cond, rank, cand_rank, arxiv, [JUDGE_IDS[j]] * len(keys), *scores, status, keys])
    return files, n, len(of) * scale.judges


@dataclass(frozen=True)
class SynthSummary:
    scale: str
    seed: int
    papers: int
    memberships: int
    episodes: int
    ideas: int
    judgments: int
    files: dict[str, int]  # path -> bytes

    @property
    def size(self) -> int:
        return sum(self.files.values())


def synthetic_ideas_files(scale: str | IdeasScale = "full", seed: int = 0) -> tuple[dict[str, bytes], SynthSummary]:
    """Every file of the synthetic archive (path under the root -> bytes, ``SHA256SUMS`` included).

    ``scale``: a name of :data:`IDEAS_SCALES`, or an :class:`IdeasScale` of one's own (``custom``; its
    episodes are the (topic, cutoff) pairs whose history reaches ``min_history``)."""
    if isinstance(scale, IdeasScale):
        s, scale = scale, "custom"
    elif scale in IDEAS_SCALES:
        s = IDEAS_SCALES[scale]
    else:
        raise ValueError(f"unknown scale {scale!r}: one of {', '.join(IDEAS_SCALES)}")
    if s.judges > len(JUDGE_IDS):
        raise ValueError(f"at most {len(JUDGE_IDS)} synthetic judges")
    config = synthetic_config(s)
    vocab = text.vocabulary(_rng(seed, 1), s.topics)
    sizes = np.clip(np.rint(s.papers_per_topic * np.exp(_rng(seed, 2).normal(0.0, 0.7, s.topics))),
                    s.papers_per_topic // 4, s.papers_per_topic * 6).astype(np.int64)
    end = future_end(config.cutoffs[-1], config.horizon_months)
    paper_list = text.papers(_rng(seed, 3), vocab, config.start, end, sizes, overlap=0.1)
    papers = {p.arxiv_id: p for p in paper_list}
    rows = assign(papers, vocab.topics)
    pools = build_pools(rows, [t.topic_id for t in vocab.topics], config, config.cutoffs, config.cutoffs)
    if not pools.episodes or (scale != "custom" and len(pools.episodes) != s.topics * s.cutoffs):
        raise ValueError(f"synthetic archive has {len(pools.episodes)} episodes, not {s.topics * s.cutoffs}")
    clusters = _rng(seed, 4)
    cluster_rows = [(eid, pid, c) for eid in sorted(pools.future)
                    for pid, c in zip(pools.future[eid], clusters.integers(0, 5, len(pools.future[eid])).tolist())]
    ledger = ledger_document()
    ledger["primary"]["judge"] = JUDGE_IDS[0]
    ledger["embedding"] = {"name": "synthetic-cosine", "dimensions": None}
    document = archive_document() | {
        "name": f"Synthetic Ideas archive ({scale}, seed {seed})", "created": CREATED,
        "description": "Drawn entirely by a seeded generator: topics, papers, ideas, retrieval and verdicts are synthetic. "
                       "For measuring rapgen and for tests; no number in it means anything.",
        "source": f"rapgen synth --kind ideas --scale {scale} --seed {seed}", "license": "CC0-1.0"}
    files: dict[str, bytes] = {
        "archive/ARCHIVE.json": json_bytes(document),
        CONFIG_JSON: json_bytes(config_document(config)),
        LEDGER_JSON: json_bytes(ledger),
        TOPICS_JSONL: jsonl_bytes({"topic_id": t.topic_id, "name": t.name, "aliases": list(t.aliases), "keywords": list(t.keywords)}
                                  for t in vocab.topics),
        JUDGES_JSONL: b"".join(judge_line(_judge_record(j)) + b"\n" for j in range(s.judges)),
        PAPERS_PARQUET: papers_bytes(paper_list, {p.arxiv_id: "synthetic" for p in paper_list}),
        ASSIGNMENTS_PARQUET: assignments_bytes(rows),
        EPISODES_JSONL: jsonl_bytes(e.__dict__ | {"cutoff": e.cutoff.isoformat()} for e in pools.episodes),
        FUTURES_JSONL: jsonl_bytes(f.__dict__ | {"future_to": f.future_to.isoformat()} for f in pools.futures),
        CLUSTERS_PARQUET: columns_parquet_bytes(CLUSTER_COLUMNS, [list(c) for c in zip(*cluster_rows)]),
    }
    n_ideas = n_judgments = 0
    for k in range(s.models):
        model, n, m = _model_files(_rng(seed, 10 + k), vocab, papers, pools, s, f"synthetic-{chr(ord('a') + k)}", k)
        files.update(model)
        n_ideas, n_judgments = n_ideas + n, n_judgments + m
    files["SHA256SUMS"] = format_sums({p: sha256_bytes(b) for p, b in files.items() if p.startswith("archive/")})
    summary = SynthSummary(scale, seed, len(papers), len(rows), len(pools.episodes), n_ideas, n_judgments,
                           {p: len(b) for p, b in files.items()})
    return files, summary


def write_synthetic_ideas(out: str | Path, scale: str = "full", seed: int = 0) -> SynthSummary:
    """Write the synthetic archive into ``out`` (replaced whole, atomically)."""
    files, summary = synthetic_ideas_files(scale, seed)
    write_archive_folder(out, files)
    return summary


def synth(out: str | Path, *, scale: str = "full", seed: int = 0, force: bool = False) -> dict:
    """The kind's ``synth`` step (``rapgen synth --kind ideas``): write the archive, then a summary. A
    folder that holds anything is refused, unless ``force`` and it holds an earlier Ideas archive only."""
    if scale not in IDEAS_SCALES:
        raise UsageProblem(f"--scale {scale!r}: the Ideas kind has the scales {', '.join(IDEAS_SCALES)}")
    check_sample_folder(Path(out), force)
    start = time.perf_counter()
    s = write_synthetic_ideas(out, scale, seed)
    seconds = time.perf_counter() - start
    return {"out": str(out), "scale": s.scale, "seed": s.seed, "papers": s.papers, "memberships": s.memberships,
            "episodes": s.episodes, "ideas": s.ideas, "judgments": s.judgments, "files": len(s.files), "bytes": s.size,
            "seconds": round(seconds, 2),
            "text": f"{s.episodes:,} episodes, {s.papers:,} papers ({s.memberships:,} memberships), {s.ideas:,} ideas, "
                    f"{s.judgments:,} judgments, {len(s.files)} files, {s.size / 1e6:.1f} MB in {seconds:.1f} s"}
