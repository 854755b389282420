"""The one statistic form (KINDS.md §4), checked against hand-computed numbers.

The worked examples: SCORING.md §8 (mean form, K = 3 clusters, 5 resamples,
seed 0), IDEAS.md §7's topic bootstrap and INSPIRE.md §5's (mean form with a
view mask, the ratio form with float denominators, a conditional metric).
"""

from __future__ import annotations

import numpy as np
import pytest

from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts
from rapgen.scores.statistics import (
    SplitDraws,
    Statistic,
    cluster_index,
    cluster_sums,
    estimate,
    leaderboard_columns,
    leaderboard_csv,
    pairs_columns,
    pairs_csv,
    score_statistics,
)

NAN = np.nan
# SCORING.md §8: draws [[2,1,1],[0,0,0],[0,0,0],[2,1,2],[1,1,2]] -> this count matrix.
C8 = np.array([[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]], dtype=float)


def replicates(values, clusters, *, denominators=None, mask=None, C=C8):
    A, B = cluster_sums(values, clusters, denominators=denominators, mask=mask)
    res = bootstrap_intervals(C, A, B, 0.95, keep=np.array([0]))
    return res.replicates[0], (res.low[0], res.high[0]), estimate(A, B)[0]


def test_the_draw_matrix_is_scorings_worked_example():
    assert np.array_equal(draw_counts(3, 5, 0), C8)


def test_clusters_are_in_byte_order():
    c = cluster_index(["rlhf", "diffusion", "gnn", "diffusion", "Zeta"])
    assert c.ids == ("Zeta", "diffusion", "gnn", "rlhf")  # "Z" (0x5a) sorts before "d"
    assert c.of_item.tolist() == [3, 1, 2, 1, 0]


def test_scoring_worked_example_mean_form():
    # Clusters a (two items, sum 1.6), b (0.5), c (0.9): S = [1.6, 0.5, 0.9], N = [2, 1, 1].
    clusters = cluster_index(["a", "a", "b", "c"])
    reps, (lo, hi), est = replicates([0.7, 0.9, 0.5, 0.9], clusters)
    assert reps == pytest.approx([1.9 / 3, 0.8, 0.8, 2.3 / 3, 1.9 / 3])  # 0.633333 0.8 0.8 0.766667 0.633333
    assert (lo, hi) == pytest.approx((1.9 / 3, 0.8))
    assert est == pytest.approx(3.0 / 4)


# IDEAS.md §7: topics diffusion, gnn, rlhf (one episode each), default gate.
IDEAS_TOPICS = ["diffusion", "gnn", "rlhf"]


@pytest.mark.parametrize("metric, values, reps, interval", [
    ("hit@5", [1, 0, 1], [1 / 3, 1, 1, 2 / 3, 1 / 3], (1 / 3, 1)),
    # MRR: sorted replicates [1/3, 1/3, 1/2, 1/2, 2/3]; the 97.5th percentile is 1/2 + 0.9 (2/3 - 1/2) = 0.65.
    ("mrr", [0.5, 0, 1], [1 / 3, 0.5, 0.5, 2 / 3, 1 / 3], (1 / 3, 0.65)),
    ("p@5", [0.4, 0, 0.2], [0.2 / 3, 0.4, 0.4, 0.4 / 3, 0.2 / 3], (0.2 / 3, 0.4)),
])
def test_ideas_topic_bootstrap(metric, values, reps, interval):
    got, (lo, hi), _ = replicates(values, cluster_index(IDEAS_TOPICS))
    assert got == pytest.approx(reps, abs=1e-12)
    assert (lo, hi) == pytest.approx(interval, abs=1e-12)


# INSPIRE.md §5: targets insp-0001 (clean), insp-0002 (flagged), insp-0003 (clean).
INSPIRE = cluster_index(["insp-0001", "insp-0002", "insp-0003"])
NDCG = [0.531166, 0, 0]
EXPOSED = [0.913590, 0, 7 / 10.023719]  # insp-0003: the 7 of IDCG 10.023719


@pytest.mark.parametrize("name, values, denominators, mask, reps, interval", [
    ("ndcg all", NDCG, None, None, [0, 0.531166, 0.531166, 0, 0], (0, 0.531166)),
    ("ndcg clean (B = [1,0,1])", NDCG, None, [True, False, True], [0, 0.531166, 0.531166, 0, 0], (0, 0.531166)),
    ("exposed", EXPOSED, None, None, [0.232781, 0.913590, 0.913590, 0.465562, 0.232781], (0.232781, 0.913590)),
    ("gain_kept = ndcg / exposed", NDCG, EXPOSED, None, [0, 0.581405, 0.581405, 0, 0], (0, 0.581405)),
    # hits5 is defined for insp-0001 only: two replicates draw it.
    ("hits5 conditional", [0, NAN, NAN], None, None, [NAN, 0, 0, NAN, NAN], (0, 0)),
])
def test_inspire_worked_example(name, values, denominators, mask, reps, interval):
    got, (lo, hi), _ = replicates(values, INSPIRE, denominators=denominators, mask=mask)
    np.testing.assert_allclose(got, reps, atol=5e-7)
    assert (lo, hi) == pytest.approx(interval, abs=5e-7)


def test_the_ratio_form_drops_items_missing_either_side():
    clusters = cluster_index(["a", "b", "c"])
    A, B = cluster_sums([1.0, 2.0, NAN], clusters, denominators=[2.0, NAN, 4.0])
    assert A.tolist() == [[1.0, 0.0, 0.0]] and B.tolist() == [[2.0, 0.0, 0.0]]
    assert estimate(A, B)[0] == 0.5


def stat(entry, values, *, metric="hit@5", hib=True, condition="summary", denominators=None, axes=("gate-x",)):
    return Statistic("all_cutoff", "all", axes, entry, "model", condition, metric, np.asarray(values, float), hib,
                     n_valid=len(values), denominators=None if denominators is None else np.asarray(denominators, float))


def test_ranks_p_first_and_pairs_by_hand():
    draws = {"all": SplitDraws(cluster_index(IDEAS_TOPICS), C8)}
    stats = [
        stat("strong", [1, 1, 1]),  # every replicate 1
        stat("weak", [0, 0, 0]),  # every replicate 0
        stat("mixed", [1, 0, 1]),  # replicates [1/3, 1, 1, 2/3, 1/3]: interval [1/3, 1]
        stat("novelty", [0.2, 0.4, 0.6], metric="novelty", hib=None),
    ]
    scored = score_statistics(stats, draws, 0.95, axes=("gate",))
    by = {r.stat.entry: r for r in scored.rows}
    # strong [1, 1] is not wholly above mixed [1/3, 1]; weak [0, 0] is below both.
    assert (by["strong"].rank, by["mixed"].rank, by["weak"].rank) == (1, 1, 3)
    # p_first: strong is best in every replicate; mixed ties it (1) in replicates 2 and 3.
    assert by["strong"].p_first == pytest.approx(0.8) and by["mixed"].p_first == pytest.approx(0.2)
    assert by["weak"].p_first == 0
    assert by["novelty"].rank is None and by["novelty"].p_first is None
    assert by["novelty"].estimate == pytest.approx(0.4)
    assert [(scored.rows[p.a].stat.entry, scored.rows[p.b].stat.entry) for p in scored.pairs] == [
        ("strong", "weak"), ("strong", "mixed"), ("weak", "mixed")]
    diff = {(scored.rows[p.a].stat.entry, scored.rows[p.b].stat.entry): p for p in scored.pairs}
    # strong − mixed = [0, 1, 0] per topic: replicates [2/3, 0, 0, 1/3, 2/3] -> estimate 1/3.
    p = diff[("strong", "mixed")]
    assert p.estimate == pytest.approx(1 / 3) and (p.ci_low, p.ci_high) == pytest.approx((0, 2 / 3)) and p.n_items == 3
    assert diff[("weak", "mixed")].estimate == pytest.approx(-2 / 3)


def test_ratio_pairs_difference_replicates():
    draws = {"all": SplitDraws(INSPIRE, C8)}
    stats = [stat("a", NDCG, metric="gain_kept", denominators=EXPOSED),
             stat("b", [0, 0, 0.5], metric="gain_kept", denominators=EXPOSED)]
    scored = score_statistics(stats, draws, 0.95, axes=("gate",))
    (p,) = scored.pairs
    # a − b per replicate: [-0.5/0.698344, 0.581405, 0.581405, -0.5/0.698344, -0.5/0.698344]
    ratio_b = 0.5 / EXPOSED[2]
    assert p.estimate == pytest.approx((0.531166 - 0.5) / sum(EXPOSED), abs=1e-6)
    assert (p.ci_low, p.ci_high) == pytest.approx((-ratio_b, 0.581405), abs=1e-6)


def test_a_statistic_without_defined_items_gets_empty_cells():
    draws = {"all": SplitDraws(cluster_index(IDEAS_TOPICS), C8)}
    scored = score_statistics([stat("x", [NAN, NAN, NAN], metric="coverage"), stat("y", [0, 1, 0], metric="coverage")],
                              draws, 0.95, axes=("gate",))
    x = scored.rows[0]
    assert (x.estimate, x.ci_low, x.ci_high, x.rank, x.p_first, x.n_items) == (None, None, None, None, None, 0)
    assert scored.rows[1].rank == 1
    assert scored.pairs[0].estimate is None and scored.pairs[0].n_items == 0


def test_rank_groups_follow_group_by():
    draws = {"all": SplitDraws(cluster_index(IDEAS_TOPICS), C8)}
    stats = [stat("m", [1, 1, 1], condition="summary"), stat("m", [0, 0, 0], condition="direct")]
    together = score_statistics(stats, draws, 0.95, axes=("gate",))
    apart = score_statistics(stats, draws, 0.95, axes=("gate",), group_by=("track", "split", "gate", "condition", "metric"))
    assert [r.rank for r in together.rows] == [1, 2]
    assert [r.rank for r in apart.rows] == [1, 1] and apart.pairs == []


def test_the_files_have_kinds_columns():
    assert ",".join(leaderboard_columns(("judge", "gate"))) == (
        "track,split,judge,gate,entry,kind,condition,metric,estimate,ci_low,ci_high,rank,p_first,n_items,n_valid,n_invalid")
    assert ",".join(pairs_columns(("view",), ("track", "split", "view", "condition", "metric"))) == (
        "track,split,view,condition,metric,entry_a,kind_a,condition_a,entry_b,kind_b,condition_b,estimate,ci_low,ci_high,n_items")
    draws = {"all": SplitDraws(cluster_index(IDEAS_TOPICS), C8)}
    stats = [stat("a", [1, 0, 1], axes=("lexical-a", "default")), stat("b", [0, 0, 0], axes=("lexical-a", "default"))]
    scored = score_statistics(stats, draws, 0.95, axes=("judge", "gate"))
    lines = leaderboard_csv(scored).decode().splitlines()
    assert lines[1] == "all_cutoff,all,lexical-a,default,a,model,summary,hit@5,0.6666666666666666,0.3333333333333333,1.0,1,1.0,3,3,0"
    assert lines[2] == "all_cutoff,all,lexical-a,default,b,model,summary,hit@5,0.0,0.0,0.0,2,0.0,3,3,0"
    assert pairs_csv(scored).decode().splitlines()[1] == (
        "all_cutoff,all,lexical-a,default,hit@5,a,model,summary,b,model,summary,0.6666666666666666,0.3333333333333333,1.0,3")


def test_the_topic_draws_equal_successive_choices():
    """IDEAS.md §6: integers(0, K, (R, K)) from one default_rng(seed) = R successive rng.choice(K, K)."""
    rng = np.random.default_rng(0)
    choices = np.stack([rng.choice(52, 52) for _ in range(10000)])
    counts = np.stack([np.bincount(row, minlength=52) for row in choices]).astype(float)
    assert np.array_equal(draw_counts(52, 10000, 0), counts)
