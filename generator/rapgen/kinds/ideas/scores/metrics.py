"""The eight episode metrics of IDEAS.md §5, each a small pure function, and their registry.

E is the set of emitted ideas, c the greedy credit vector (unfilled slots 0),
k = top_k. Every manifest episode counts: an empty episode scores zeros,
except ``multiplicity``, undefined without an idea; ``coverage`` and
``novelty`` are undefined (NaN) when the archive lacks the file they need.

| metric | value | direction |
| --- | --- | --- |
| ``hit@5`` | 1[Σ c ≥ 1] | ↑ (primary) |
| ``p@5`` | Σ c / k — a fixed budget: unfilled slots count 0 | ↑ |
| ``mrr`` | 1 / (first credited rank), else 0 | ↑ |
| ``soft`` | mean (P+M+S)/9 over credited pairs, else 0 | ↑, unranked |
| ``coverage`` | clusters of F holding a credited paper / k-means k | ↑, unranked |
| ``novelty`` | mean ``nn_distance`` over E; 0 if E = ∅ | none |
| ``budget`` | \\|E\\| / k | none |
| ``multiplicity`` | mean passing candidates per emitted idea (never "precision") | none |
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapgen.kinds.ideas.scores.credit import Credit, Judged
from rapgen.scores import MetricSpec

NAN = math.nan


def hit(c: Sequence[int]) -> float:
    return 1.0 if sum(c) >= 1 else 0.0


def precision(c: Sequence[int], k: int) -> float:
    return sum(c) / k


def reciprocal_rank(c: Sequence[int]) -> float:
    return next((1.0 / r for r, v in enumerate(c, start=1) if v), 0.0)


def soft(credited: Sequence[Judged]) -> float:
    if not credited:
        return 0.0
    return sum((j.P + j.M + j.S) / 9 for j in credited) / len(credited)  # type: ignore[operator]


def coverage(credited_papers: Sequence[str], cluster_of: Mapping[str, int] | None, n_clusters: int) -> float:
    """Share of the future's clusters that hold a credited paper; NaN without a clustering of this future."""
    if cluster_of is None:
        return NAN
    return len({cluster_of[p] for p in credited_papers if p in cluster_of}) / n_clusters


def novelty(nn_distances: Sequence[float] | None) -> float:
    """Mean nearest-history distance over the emitted ideas; 0 for none (the paper's convention); NaN without features."""
    if nn_distances is None:
        return NAN
    return sum(nn_distances) / len(nn_distances) if nn_distances else 0.0


def budget(n_emitted: int, k: int) -> float:
    return n_emitted / k


def multiplicity(passing: Sequence[int]) -> float:
    """Mean number of passing candidates per emitted idea; NaN without one."""
    return sum(passing) / len(passing) if passing else NAN


@dataclass(frozen=True)
class EpisodeInputs:
    """What one (episode, condition) contributes under one judge and gate."""

    credit: Credit
    n_emitted: int
    k: int
    cluster_of: Mapping[str, int] | None = None  # F's paper -> cluster, if future_clusters.parquet exists
    n_clusters: int = 5
    nn_distances: Sequence[float] | None = None  # per emitted idea, if features.parquet exists


def _credited(x: EpisodeInputs) -> list[Judged]:
    return [x.credit.credited[r] for r in sorted(x.credit.credited)]


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("hit@5", "Hit@5", True, "mean", "zero", "1 if any of the five ideas is credited with a future paper.",
               lambda x: hit(x.credit.c)),
    MetricSpec("p@5", "P@5", True, "mean", "zero", "Credited ideas divided by five (unfilled slots count zero).",
               lambda x: precision(x.credit.c, x.k)),
    MetricSpec("mrr", "MRR", True, "mean", "zero", "1 / rank of the first credited idea, 0 without one.",
               lambda x: reciprocal_rank(x.credit.c)),
    MetricSpec("soft", "Soft", True, "mean", "zero", "Mean (P+M+S)/9 over credited pairs, 0 without one.",
               lambda x: soft(_credited(x)), ranked=False),
    MetricSpec("coverage", "Coverage", True, "mean", "zero", "Share of the future's five clusters holding a credited paper.",
               lambda x: coverage([j.arxiv_id for j in _credited(x)], x.cluster_of, x.n_clusters), ranked=False),
    MetricSpec("novelty", "Novelty", None, "mean", "zero", "Mean cosine distance of the ideas to their nearest history paper.",
               lambda x: novelty(x.nn_distances), ranked=False),
    MetricSpec("budget", "Budget", None, "mean", "zero", "Emitted ideas divided by five.",
               lambda x: budget(x.n_emitted, x.k), ranked=False),
    MetricSpec("multiplicity", "Multiplicity", None, "mean", "exclude", "Mean passing candidates per emitted idea.",
               lambda x: multiplicity([x.credit.passing.get(r, 0) for r in sorted(x.credit.passing)]), ranked=False),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
PRIMARY_METRIC = "hit@5"


def episode_metrics(x: EpisodeInputs) -> dict[str, float]:
    """Every metric of one episode (NaN where undefined)."""
    return {m.name: m.fn(x) for m in METRICS}
