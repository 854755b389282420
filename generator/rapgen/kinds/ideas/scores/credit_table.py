"""Greedy credit and the episode metrics of every unit at once, from a whole judgment table (IDEAS.md §5).

:func:`unit_table_values` gives exactly the numbers of
:func:`~rapgen.kinds.ideas.scores.units.unit_values` (which states the rules
one episode at a time, and stays the reference the tests compare with), for
every gate of the ledger in one pass over the table:

* rows are placed on their unit (item, condition) and rank, then sorted by
  unit, rank, ``cand_rank`` and file order — the order the greedy rule visits
  them;
* credit runs rank by rank over all units together: at rank r each unit's
  first passing row whose paper is not among the unit's (at most r − 1)
  credited papers earns c_r;
* every sum is taken in rank order, as the per-episode functions add, so the
  floating-point results are the same bits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rapgen.kinds.ideas.archive.codes import Interner
from rapgen.kinds.ideas.archive.config import Gate
from rapgen.kinds.ideas.archive.episodes import Episode
from rapgen.kinds.ideas.archive.eval_tables import JudgmentTable
from rapgen.kinds.ideas.archive.predictions import Predictions
from rapgen.kinds.ideas.scores.metrics import METRICS
from rapgen.kinds.ideas.scores.units import UnitValues

NAN = np.nan


def _layout(items: Sequence[Episode], predictions: Predictions, top_k: int,
            features: Mapping[tuple[str, str, int], float] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit (condition-major: u = condition × n_items + item): emitted ideas, which ranks are
    emitted (units × top_k) and the novelty (NaN without features)."""
    n_units = len(predictions.conditions) * len(items)
    emitted = np.zeros((n_units, top_k), dtype=bool)
    n_ideas = np.zeros(n_units, dtype=np.int64)
    novelty = np.full(n_units, NAN)
    u = 0
    for condition in predictions.conditions:
        for ep in items:
            ideas = predictions.ideas.get((ep.episode_id, condition), ())
            n_ideas[u] = len(ideas)
            for idea in ideas:
                emitted[u, idea.rank - 1] = True
            if features is not None:
                d = [features[idea.key] for idea in ideas]
                novelty[u] = sum(d) / len(d) if d else 0.0  # as metrics.novelty adds: left to right, in rank order
            u += 1
    return n_ideas, emitted, novelty


def unit_table_values(items: Sequence[Episode], predictions: Predictions, judgments: JudgmentTable | None, gates: Sequence[Gate],
                      top_k: int, *, clusters: Mapping[str, Mapping[str, int]] | None = None, n_clusters: int = 5,
                      features: Mapping[tuple[str, str, int], float] | None = None) -> dict[str, UnitValues]:
    """:func:`~rapgen.kinds.ideas.scores.units.unit_values` for each gate (gate name -> values), from columns."""
    conditions = predictions.conditions
    n_items = len(items)
    n_ideas, emitted, novelty = _layout(items, predictions, top_k, features)
    counts = {c: n_ideas[k * n_items:(k + 1) * n_items] for k, c in enumerate(conditions)}
    if judgments is None:  # awaiting evaluation: no value, but the units are there
        empty = {c: {m.name: np.full(n_items, NAN) for m in METRICS} for c in conditions}
        return {g.name: UnitValues({c: {m: v.copy() for m, v in t.items()} for c, t in empty.items()}, 0, counts) for g in gates}
    e = Interner(ep.episode_id for ep in items).codes(judgments.episode_id)
    c = Interner(conditions).codes(judgments.condition)
    r = judgments.rank
    ok = (e < n_items) & (c < len(conditions)) & (r >= 1) & (r <= top_k)
    unit = np.where(ok, c * n_items + e, 0)
    ok &= emitted[unit, np.where(ok, r - 1, 0)]
    rows = np.flatnonzero(ok)
    rows = rows[np.lexsort((rows, judgments.cand_rank[rows], r[rows], unit[rows]))]  # unit, rank, cand_rank, file order
    papers = Interner()
    paper = papers.codes(judgments.arxiv_id)
    total_score = judgments.P + judgments.M + judgments.S
    out = {}
    for gate in gates:
        passing = rows[judgments.scored[rows] & (judgments.P[rows] + judgments.M[rows] >= gate.problem_method_min)
                       & (judgments.S[rows] >= gate.realisation_min)]
        out[gate.name] = _gate_values(items, conditions, top_k, n_ideas, novelty, passing, unit, r, paper, papers, total_score,
                                      clusters, n_clusters, judgments.failed(), counts)
    return out


def _gate_values(items, conditions, top_k: int, n_ideas: np.ndarray, novelty: np.ndarray, passing: np.ndarray, unit: np.ndarray,
                 rank: np.ndarray, paper: np.ndarray, papers: Interner, total_score: np.ndarray, clusters, n_clusters: int, failed: int,
                 counts: dict[str, np.ndarray]) -> UnitValues:
    n_units = len(n_ideas)
    per_rank = np.bincount(unit[passing] * top_k + rank[passing] - 1, minlength=n_units * top_k).reshape(n_units, top_k)
    taken = np.full((n_units, top_k), -1, dtype=np.int64)
    credited = np.full((n_units, top_k), -1, dtype=np.int64)  # the row that earned c_r
    for r in range(1, top_k + 1):
        at = passing[rank[passing] == r]
        if not len(at):
            continue
        free = ~(taken[unit[at]] == paper[at][:, None]).any(axis=1)
        at = at[free]
        units, first = np.unique(unit[at], return_index=True)  # rows are sorted by cand_rank within a unit
        taken[units, r - 1] = paper[at[first]]
        credited[units, r - 1] = at[first]
    c = credited >= 0
    n_credited = c.sum(axis=1)
    first_rank = np.argmax(c, axis=1) + 1
    score_of = np.append(total_score, 0)[credited]  # P + M + S of each credited row (index −1: the appended 0)
    soft_sum = np.zeros(n_units)
    for r in range(top_k):  # rank order, as soft() adds
        soft_sum = soft_sum + np.where(c[:, r], score_of[:, r] / 9, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = {
            "hit@5": np.where(n_credited >= 1, 1.0, 0.0),
            "p@5": n_credited / top_k,
            "mrr": np.where(n_credited > 0, 1.0 / first_rank, 0.0),
            "soft": np.where(n_credited > 0, soft_sum / np.maximum(n_credited, 1), 0.0),
            "coverage": _coverage(items, len(conditions), credited, paper, papers, clusters, n_clusters),
            "novelty": novelty,
            "budget": n_ideas / top_k,
            "multiplicity": np.where(n_ideas > 0, per_rank.sum(axis=1) / np.maximum(n_ideas, 1), NAN),
        }
    n_items = len(items)
    values = {cond: {m.name: table[m.name][k * n_items:(k + 1) * n_items].astype(np.float64) for m in METRICS}
              for k, cond in enumerate(conditions)}
    return UnitValues(values, failed, counts)


def _coverage(items, n_conditions: int, credited: np.ndarray, paper: np.ndarray, papers: Interner, clusters, n_clusters: int) -> np.ndarray:
    """Share of the episode's clusters holding a credited paper; NaN without a clustering of the episode
    (no file, or a file without its rows: a cutoff resolved by a later release than the file's)."""
    n_units = credited.shape[0]
    if clusters is None:
        return np.full(n_units, NAN)
    out = np.array([0.0 if items[u % len(items)].episode_id in clusters else NAN for u in range(n_units)])
    ids = list(papers.index)
    for u in np.flatnonzero((credited >= 0).any(axis=1)).tolist():
        cluster_of = clusters.get(items[u % len(items)].episode_id)
        if cluster_of is None:
            continue
        found = {cluster_of[p] for p in (ids[paper[row]] for row in credited[u].tolist() if row >= 0) if p in cluster_of}
        out[u] = len(found) / n_clusters
    return out
