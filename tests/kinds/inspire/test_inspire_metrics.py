"""Inspire's metric functions, table-driven against hand-computed values."""

from __future__ import annotations

import math
import random
from datetime import date

import numpy as np
import pytest

from inspire_fixture import LEDGER, calls, corpus, instances, judgements, predictions
from rapgen.kinds.inspire.archive import Call, Judgement
from rapgen.kinds.inspire.scores import (
    DIAGNOSTICS, METRICS, REGISTRY, clean_ranking, dcg, diagnostic_sums, exposure_of, ideal_dcg, label_gains, phi,
    progress_sums, recovered_histogram, score_item, score_units, slot_outcomes,
)

L3 = math.log2(3)  # the discount of slot 2


@pytest.mark.parametrize("gains, K, want", [
    ([], 10, 0.0),
    ([1], 10, 1.0),
    ([0, 1], 10, 1 / L3),  # 0.630930
    ([3, 2], 10, 3 + 2 / L3),  # 4.261860
    ([0, 0, 4], 10, 4 / 2),  # log2(4) = 2
    ([1] * 12, 10, sum(1 / math.log2(j + 1) for j in range(1, 11))),  # only the first K slots count
    ([5, 5], 1, 5.0),
])
def test_dcg(gains, K, want):
    assert dcg(gains, K) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("submitted, keys, canonical, counts", [
    ([], (), (), (0, 0, 0, 0)),
    (["2301.00011v1", "2301.00011v2", "2301.00011"], ("2301.00011",), (True,), (3, 2, 2, 0)),
    (["x", "x", "2301.00011"], ("x", "2301.00011"), (False, True), (3, 0, 1, 0)),
    ([f"2400.{n:05d}" for n in range(12)], tuple(f"2400.{n:05d}" for n in range(10)), (True,) * 10, (12, 0, 0, 2)),
    # cut after de-duplication: 11 strings, one a copy, make exactly 10 slots
    ([f"2400.{n:05d}" for n in range(10)] + ["2400.00003v4"], tuple(f"2400.{n:05d}" for n in range(10)), (True,) * 10, (11, 1, 1, 0)),
])
def test_clean_ranking(submitted, keys, canonical, counts):
    c = clean_ranking(submitted, 10)
    assert (c.keys, c.canonical) == (keys, canonical)
    assert (c.n_submitted, c.n_versioned, c.n_duplicate, c.n_over_limit) == counts


IDCG_31 = 3 + 1 / L3  # labels {a: 3, b: 1}: 3.630930
LABELS = {"2301.00001": 3.0, "2301.00002": 1.0}
a, b, z = "2301.00001", "2301.00002", "2301.00009"


@pytest.mark.parametrize("ranking, exposed, want", [
    # perfect list
    ([a, b], {a, b}, dict(ndcg=1.0, recall=1.0, rr=1.0, hits=2, exposed=1.0, selected=1.0)),
    # reversed: DCG = 1 + 3/log2 3
    ([b, a], {a, b}, dict(ndcg=(1 + 3 / L3) / IDCG_31, recall=1.0, rr=1.0, hits=2, exposed=1.0, selected=1.0)),
    # a submitted but never returned: slot 1 stays at 0
    ([a, b], {b}, dict(ndcg=(1 / L3) / IDCG_31, recall=0.5, rr=0.5, hits=1, exposed=1 / IDCG_31, selected=1 / IDCG_31)),
    # nothing submitted, a exposed
    ([], {a}, dict(ndcg=0.0, recall=0.0, rr=0.0, hits=0, exposed=3 / IDCG_31, selected=0.0)),
    # an unlabelled id first, then a: gains [0, 3]; b never exposed
    ([z, a], {a, z}, dict(ndcg=(3 / L3) / IDCG_31, recall=0.5, rr=0.5, hits=1, exposed=3 / IDCG_31, selected=3 / IDCG_31)),
    # malformed and version-suffixed strings: "zz" keeps slot 1 at 0, a's v2 counts
    (["zz", a + "v2"], {a}, dict(ndcg=(3 / L3) / IDCG_31, recall=0.5, rr=0.5, hits=1, exposed=3 / IDCG_31, selected=3 / IDCG_31)),
])
def test_score_item(ranking, exposed, want):
    s = score_item(clean_ranking(ranking, 10), LABELS, frozenset(exposed), 2, 10)
    got = dict(ndcg=s.ndcg, recall=s.recall, rr=s.rr, hits=s.hits, exposed=s.exposed, selected=s.selected)
    assert got == pytest.approx(want, abs=1e-12)
    assert s.hits_at_least(3) is None and s.n_calls == 2


def test_hits_thresholds_and_the_cap():
    labels = {f"2400.{n:05d}": 1.0 for n in range(12)}
    s = score_item(clean_ranking(list(labels), 10), labels, frozenset(labels), 1, 10)
    assert (s.hits, s.recall, s.hits_at_least(3), s.hits_at_least(5), s.ndcg, s.exposed) == (10, 10 / 12, 1.0, 1.0, 1.0, 1.0)
    s = score_item(clean_ranking(list(labels)[:4], 10), labels, frozenset(labels), 1, 10)
    assert (s.hits_at_least(3), s.hits_at_least(5)) == (1.0, 0.0)


def test_a_target_without_positive_gain_is_excluded():
    assert score_item(clean_ranking([a], 10), {}, frozenset({a}), 1, 10) is None


def _j(aid, tier, role, gain):
    return Judgement("insp-0001", aid, tier, role, gain, 3, 3, "")


@pytest.mark.parametrize("gain_map, want", [
    ("declared", {a: 7.0, b: 0.5}),
    ("binary", {a: 1.0, b: 1.0}),
    ("t2t3", {a: 7.0}),
])
def test_gain_maps(gain_map, want):
    js = [_j(a, "T3", "conceptual", 7.0), _j(b, "T1", "infrastructural", 0.5)]
    assert label_gains(js, gain_map) == want
    with pytest.raises(ValueError, match="unknown gain map"):
        label_gains(js, "squared")


def test_t2t3_excludes_an_all_t1_target_and_counts_it():
    only_t1 = [j for j in judgements() if j.instance_id != "insp-0002"] + [
        Judgement("insp-0002", x, "T1", "conceptual", 1.0, 3, 3, "") for x in ("2306.00066", "2307.00077")]
    table = score_units("m", "detailed", instances(), only_t1, predictions(), calls(), corpus(), K=10,
                        gain_maps=("declared", "t2t3"))
    from rapgen.kinds.inspire.scores import item_sums, n_excluded

    assert n_excluded(table, "t2t3") == 1 and n_excluded(table, "declared") == 0
    A, B = item_sums(table, "t2t3")
    assert B[:, 1].tolist() == [0.0] * len(METRICS)  # insp-0002 is out of every t2t3 row


def test_slot_outcomes_cover_every_case():
    dates = {a: date(2024, 1, 1), b: date(2024, 1, 1), z: date(2024, 1, 1), "2502.00001": date(2025, 2, 1)}
    c = clean_ranking(["bad", "2999.99999", "2502.00001", a, z, b], 10)
    got = slot_outcomes(c, {a: 3.0, b: 1.0}, frozenset({z, b}), dates.get, date(2025, 1, 1))
    assert got == ("malformed", "unknown", "post_cutoff", "unsurfaced", "unlabelled", "scored")


# ---------------------------------------------------------------- every metric on the edge cases
EDGES = {
    "failed": score_item(clean_ranking([], 10), LABELS, frozenset(), 0, 10),
    "perfect": score_item(clean_ranking([a, b], 10), LABELS, frozenset({a, b}), 3, 10),
    "exposed only": score_item(clean_ranking([z], 10), LABELS, frozenset({a, z}), 1, 10),
    "single label": score_item(clean_ranking([a], 10), {a: 0.5}, frozenset({a}), 1, 10),
}


@pytest.mark.parametrize("metric", sorted(REGISTRY))
@pytest.mark.parametrize("case", sorted(EDGES))
def test_every_metric_on_the_edge_cases(metric, case):
    A, B = REGISTRY[metric].fn(EDGES[case])
    assert math.isfinite(A) and math.isfinite(B) and B >= 0
    if REGISTRY[metric].form == "mean":
        assert B in (0.0, 1.0)
        if metric not in ("total_calls",) and B:
            assert 0.0 <= A <= 1.0


def test_the_funnel_nests_on_random_units():
    """Final <= selected <= exposed <= 1 and every loss >= 0, whatever the list."""
    rng = random.Random(7)
    pool = [f"2400.{n:05d}" for n in range(30)]
    for _ in range(300):
        labels = {i: rng.choice([0.5, 1, 2, 3, 4, 7]) for i in rng.sample(pool, rng.randint(1, 12))}
        exposed = frozenset(rng.sample(pool, rng.randint(0, 30)))
        ranking = [rng.choice(pool + ["junk"]) for _ in range(rng.randint(0, 14))]
        s = score_item(clean_ranking(ranking, 10), labels, exposed, 1, 10)
        assert -1e-12 <= s.ndcg <= s.selected + 1e-12 <= s.exposed + 2e-12 <= 1 + 3e-12


# ---------------------------------------------------------------- diagnostics
def test_exposure_order_and_progress():
    cs = [Call("insp-0001", "detailed", k, "q", "relevance", None, None, 9, ids) for k, ids in
          enumerate([(b, z), (a, "2400.00001v1"), (), (b,)])]
    e = exposure_of(list(reversed(cs)))
    assert e.order == (b, z, a, "2400.00001") and e.n_calls == 4
    assert e.first(2) == {b, z}
    # p = 0, .1, …, 1 with 4 calls: floor(4p) = 0,0,0,1,1,2,2,2,3,3,4
    assert [len(x) for x in e.progress(10)] == [0, 0, 0, 2, 2, 4, 4, 4, 4, 4, 4]


def test_diagnostic_sums_and_histogram():
    table = score_units("m", "detailed", instances(), judgements(), predictions(), calls(), corpus(), K=10)
    A, B = diagnostic_sums(table, judgements(), prefix=2)
    assert DIAGNOSTICS == ("exposure_recall@50", "exposure_recall", "retention")
    # insp-0001: first two exposed ids B, X1 -> 1/5; E ∩ Y = {A, B, D, E} -> 4/5; kept {A, B, E} -> 3/4
    assert A[:, 0].tolist() == pytest.approx([0.2, 0.8, 0.75]) and B[:, 0].tolist() == [1, 1, 1]
    # insp-0002: nothing labelled exposed, retention undefined; insp-0003: 1 of 3 exposed, none kept
    assert A[:, 1].tolist() == [0, 0, 0] and B[:, 1].tolist() == [1, 1, 0]
    assert A[:, 2].tolist() == pytest.approx([1 / 3, 1 / 3, 0.0]) and B[:, 2].tolist() == [1, 1, 1]
    assert recovered_histogram(table, 10) == [2, 0, 0, 1] + [0] * 7
    G_A, G_B = progress_sums(table, judgements(), K=10, steps=10)
    # insp-0001 (3 calls): floor(3p) = 0,0,0,0,1,1,1,2,2,2,3 -> φ of {}, {B, D}, {A, B, D}, +E
    idcg = ideal_dcg({"a": 7, "b": 3, "c": 2, "d": 1, "e": 0.5}, 10)
    want = [0, 0, 0, 0] + [(3 + 1 / L3) / idcg] * 3 + [(7 + 3 / L3 + 0.5) / idcg] * 3 + [(7 + 3 / L3 + 1 / 2 + 0.5 / math.log2(5)) / idcg]
    assert G_A[:, 0].tolist() == pytest.approx(want)
    assert G_A[-1].tolist() == pytest.approx([table.units[i].scores["declared"].exposed for i in range(3)])
    assert np.all(G_B == 1)


def test_phi_ignores_unlabelled_and_repeated_ids():
    assert phi([z, a, a], LABELS, 10, IDCG_31) == pytest.approx(3 / IDCG_31)
    assert LEDGER.K == 10
