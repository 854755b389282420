"""INSPIRE.md §5, the worked example, as a golden test: every number to 6 decimals."""

from __future__ import annotations

import numpy as np
import pytest

from inspire_fixture import A, B, C, E, LEDGER, X, calls, corpus, instances, judgements, predictions, targets
from rapgen.kinds.inspire.scores import (
    METRIC_NAMES, cluster_of, cluster_sums, clusters_of, draws, estimate, intervals, item_sums, score_units, view_mask,
)


@pytest.fixture(scope="module")
def table():
    return score_units("m", "detailed", instances(), judgements(), predictions(), calls(), corpus(), K=LEDGER.K,
                       gain_maps=LEDGER.gain_maps)


def _unit(table, iid):
    return next(u for u in table.units if u.instance_id == iid)


def test_insp_0001_cleaned_list_and_slot_outcomes(table):
    u = _unit(table, "insp-0001")
    assert u.cleaned.keys == (X(1), B, A, C, E, "not-an-id")
    assert u.outcomes == ("unlabelled", "scored", "scored", "unsurfaced", "scored", "malformed")
    counts = u.counts
    assert (counts["n_unsurfaced"], counts["n_malformed"], counts["n_duplicate"], counts["n_versioned"]) == (1, 1, 1, 3)
    s = u.scores["declared"]
    assert round(s.ndcg * s.idcg, 6) == 5.586216  # DCG
    assert round(s.idcg, 6) == 10.516892
    assert (round(s.ndcg, 6), s.recall, s.rr, s.hits_at_least(3), s.hits_at_least(5)) == (0.531166, 0.6, 0.5, 1.0, 0.0)
    assert (round(s.selected, 6), round(s.exposed, 6)) == (0.869343, 0.913590)


def test_insp_0002_and_0003(table):
    s2 = _unit(table, "insp-0002").scores["declared"]
    assert (s2.ndcg, s2.exposed, s2.selected, s2.zero_exposure) == (0.0, 0.0, 0.0, 1.0)
    u3 = _unit(table, "insp-0003")
    assert u3.status == "failed" and u3.counts["n_failed"] == 1 and u3.cleaned.keys == ()
    s3 = u3.scores["declared"]
    assert (s3.ndcg, round(s3.idcg, 6), round(s3.exposed, 6), s3.selected) == (0.0, 10.023719, 0.698344, 0.0)


# §5's table: view -> metric -> (estimate, n items with B > 0); None: undefined
TABLE = {
    "all": {"ndcg@10": 0.177055, "selected_gain": 0.289781, "exposed_gain": 0.537311, "zero_exposure": 0.333333,
            "recall@10": 0.2, "mrr@10": 0.166667, "anyhit@10": 0.333333, "hits3": (0.333333, 3), "hits5": (0, 1),
            "gain_kept": 0.329521, "rank_quality": 0.610997,
            "exposure_loss": 0.462689, "selection_loss": 0.247530, "ranking_loss": 0.112726},
    "clean": {"ndcg@10": 0.265583, "selected_gain": 0.434672, "exposed_gain": 0.805967, "zero_exposure": 0, "recall@10": 0.3,
              "mrr@10": 0.25, "anyhit@10": 0.5, "hits3": (0.5, 2), "hits5": (0, 1), "gain_kept": 0.329521, "rank_quality": 0.610997},
    "flagged": {"ndcg@10": 0, "selected_gain": 0, "exposed_gain": 0, "zero_exposure": 1, "recall@10": 0, "mrr@10": 0,
                "anyhit@10": 0, "hits3": (0, 1), "hits5": (None, 0), "gain_kept": None, "rank_quality": None},
}


@pytest.mark.parametrize("view", sorted(TABLE))
def test_views_match_the_table(table, view):
    A_, B_ = item_sums(table)
    mask = view_mask(table.items, targets(), view)
    clusters = clusters_of(cluster_of(table.items, targets(), "target"))
    A_k, B_k = cluster_sums(A_, B_, clusters, mask)
    est = estimate(A_k, B_k)
    for metric, want in TABLE[view].items():
        value, n = want if isinstance(want, tuple) else (want, None)
        m = METRIC_NAMES.index(metric)
        got = None if np.isnan(est[m]) else round(float(est[m]), 6)
        assert got == value, (view, metric, got, value)
        if n is not None:
            assert int(B_k[m].sum()) == n, (view, metric)


def test_total_calls_counts_every_trace_line(table):
    A_, B_ = item_sums(table)
    m = METRIC_NAMES.index("total_calls")
    assert list(A_[m]) == [3.0, 1.0, 1.0] and list(B_[m]) == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------- bootstrap, N = 3, 5 resamples, seed 0
def _replicates(table, metric, view):
    A_, B_ = item_sums(table)
    clusters = clusters_of(cluster_of(table.items, targets(), "target"))
    A_k, B_k = cluster_sums(A_, B_, clusters, view_mask(table.items, targets(), view))
    C = draws(clusters.size, 5, 0)
    assert C.tolist() == [[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]]
    m = METRIC_NAMES.index(metric)
    return intervals(C, A_k[m], B_k[m], 0.95)[0], B_k[m]


@pytest.mark.parametrize("metric, view, reps, interval, B_want", [
    ("ndcg@10", "all", [0, 0.531166, 0.531166, 0, 0], (0, 0.531166), [1, 1, 1]),
    ("ndcg@10", "clean", [0, 0.531166, 0.531166, 0, 0], (0, 0.531166), [1, 0, 1]),
    ("exposed_gain", "all", [0.232781, 0.913590, 0.913590, 0.465562, 0.232781], (0.232781, 0.913590), [1, 1, 1]),
    ("gain_kept", "all", [0, 0.581405, 0.581405, 0, 0], (0, 0.581405), None),
    ("hits5", "all", [None, 0, 0, None, None], (0, 0), [1, 0, 0]),
])
def test_bootstrap_replicates(table, metric, view, reps, interval, B_want):
    got, B_k = _replicates(table, metric, view)
    assert [None if np.isnan(r) else round(float(r), 6) for r in got.replicates] == reps
    assert (round(got.low, 6), round(got.high, 6)) == interval
    if B_want is not None:
        assert B_k.tolist() == B_want


def test_bootstrap_agrees_with_a_resample_loop(table):
    """A plain loop over the 5 resamples of the target draws gives the same replicates."""
    A_, B_ = item_sums(table)
    m = METRIC_NAMES.index("gain_kept")
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 3, size=(5, 3))
    loop = [A_[m, r].sum() / B_[m, r].sum() if B_[m, r].sum() > 0 else np.nan for r in idx]
    got, _ = _replicates(table, "gain_kept", "all")
    assert np.allclose(got.replicates, loop, equal_nan=True)


# ---------------------------------------------------------------- cross-check with ir_measures
def test_ir_measures_agrees():
    ir = pytest.importorskip("ir_measures")
    from ir_measures import NumRelRet, R, RR, Success, nDCG

    qrels = [ir.Qrel(j.instance_id, j.arxiv_id, int(j.gain * 2)) for j in judgements()]
    # insp-0001's cleaned list with the unsurfaced C and the malformed slot as ids outside the qrels
    run_lists = {"insp-0001": [X(1), B, A, "unsurfaced-C", E, "malformed"], "insp-0002": [X(4)]}
    run = [ir.ScoredDoc(q, d, 100.0 - k) for q, docs in run_lists.items() for k, d in enumerate(docs)]
    measures = [nDCG @ 10, RR @ 10, R @ 10, Success @ 10, NumRelRet]
    per = {(m.query_id, str(m.measure)): m.value for m in ir.iter_calc(measures, qrels, run)}
    assert round(per[("insp-0001", "nDCG@10")], 6) == 0.531166
    assert (per[("insp-0001", "RR@10")], per[("insp-0001", "R@10")], per[("insp-0001", str(NumRelRet))]) == (0.5, 0.6, 3)
    assert per[("insp-0002", "nDCG@10")] == 0.0
    agg = ir.calc_aggregate(measures, qrels, run)  # the failed insp-0003 is filled with 0 by ir_measures
    assert (round(agg[nDCG @ 10], 6), round(agg[RR @ 10], 6), round(agg[R @ 10], 6), round(agg[Success @ 10], 6)) == (
        0.177055, 0.166667, 0.2, 0.333333)
    # gain-ordered runs of the exposed labelled ids
    exposed = {"insp-0001": [A, B, "2304.00044", E], "insp-0003": ["2309.00099"]}
    run = [ir.ScoredDoc(q, d, 100.0 - k) for q, docs in exposed.items() for k, d in enumerate(docs)]
    per = {m.query_id: m.value for m in ir.iter_calc([nDCG @ 10], qrels, run)}
    assert (round(per["insp-0001"], 6), round(per["insp-0003"], 6)) == (0.913590, 0.698344)


def test_metric_values_in_the_nan_convention_give_the_same_estimates(table):
    """metric_values feeds scores.statistics (NaN = undefined); reduced by hand it gives §5's numbers."""
    from rapgen.kinds.inspire.scores import metric_values

    values = metric_values(table)
    v, d = values["hits5"]
    assert d is None and v[0] == 0.0 and np.isnan(v[1]) and np.isnan(v[2])
    v, d = values["gain_kept"]
    assert round(float(np.nansum(v) / np.nansum(d)), 6) == 0.329521
    v, _ = values["ndcg@10"]
    assert round(float(np.nanmean(v)), 6) == 0.177055


def test_topic_clusters_are_numbered_in_byte_order(table):
    clusters = clusters_of(cluster_of(table.items, targets(), "topic"))
    assert clusters.ids == ("topic-a", "topic-b") and clusters.of_item.tolist() == [0, 1, 0]
    A_, B_ = item_sums(table)
    A_k, B_k = cluster_sums(A_, B_, clusters)
    m = METRIC_NAMES.index("ndcg@10")
    assert B_k[m].tolist() == [2.0, 1.0] and round(float(A_k[m, 0]), 6) == 0.531166
    with pytest.raises(ValueError, match="unknown cluster kind"):
        cluster_of(table.items, targets(), "field")


# ---------------------------------------------------------------- the whole board on the example
@pytest.fixture(scope="module")
def board():
    from rapgen.kinds.inspire.scores.board import COLUMNS, Entry, score_board

    rows = score_board(instances(), targets(), judgements(), corpus(), LEDGER, [Entry("m", "model", predictions(), calls())],
                       resamples=5).rows
    return {(r[0], r[7]): dict(zip(COLUMNS, r)) for r in rows if (r[1], r[2], r[3]) == ("eval", "declared", "target")}


@pytest.mark.parametrize("view", sorted(TABLE))
def test_the_board_matches_the_table(board, view):
    for metric, want in TABLE[view].items():
        value, n = want if isinstance(want, tuple) else (want, None)
        row = board[(view, metric)]
        assert (None if row["estimate"] is None else round(row["estimate"], 6)) == value, (view, metric)
        if n is not None:
            assert row["n_items"] == n, (view, metric)


@pytest.mark.parametrize("metric, view, interval", [
    ("ndcg@10", "all", (0, 0.531166)), ("ndcg@10", "clean", (0, 0.531166)), ("exposed_gain", "all", (0.232781, 0.913590)),
    ("gain_kept", "all", (0, 0.581405)), ("hits5", "all", (0, 0)),
])
def test_the_board_gives_the_bootstrap_intervals(board, metric, view, interval):
    row = board[(view, metric)]
    assert (round(row["ci_low"], 6), round(row["ci_high"], 6)) == interval
    assert (row["n_valid"], row["n_invalid"]) == ((2, 1) if view == "all" else (1, 1))
