"""SCORING.md §6 diagnostics: worked example, brute-force equivalence, edge cases, output."""

from __future__ import annotations

import itertools
import json
from datetime import date

import numpy as np
import pytest
from scipy.stats import rankdata

from rapgen.scores.bootstrap import draw_counts
from rapgen.scores.diagnostics.core import median_codes, median_rows
from rapgen.scores.kernels import ranks as average_ranks
from rapgen.scores.kernels import spearman as spearman_rows
from rapgen.scores.diagnostics.episodes import (
    change_rich_episodes,
    revision_alignment,
    revision_pairs,
    split_half_reliability,
)
from rapgen.scores.diagnostics.residual import (
    _arrangements,
    all_permutations,
    direct_alignment,
    direct_permutations,
    partial_residual,
)
from rapgen.scores.diagnostics import (
    UNIT_COLUMNS,
    DiagnosticArrays,
    SplitAggregator,
    compute_diagnostics,
    compute_unit_diagnostics,
)

# ----------------------------------------------------------------------------- §8 worked example

H1 = np.array([10, 5, 5, 0, 2, 3, 0, 5.0])
H2 = np.array([12, 4, 6, 0, 2, 2, 1, 3.0])
H3 = np.array([15, 3, 6, 1, 1, 2, 0, 2.0])
EWMA = np.round(0.25 * H1 / 30 + 0.25 * H2 / 30 + 0.5 * H3 / 30, 12)
EWMA = EWMA / EWMA.sum()
Y = np.array([16, 2, 7, 1, 1, 2, 0, 1.0]) / 30
P = np.array([40, 10, 20, 5, 5, 10, 0, 10.0]) / 100


def test_worked_example_ewma_row():
    assert np.round(EWMA, 6).tolist() == [0.433333, 0.125, 0.191667, 0.016667, 0.05, 0.075, 0.008333, 0.1]


def test_worked_example_direct_permutations():
    perms = direct_permutations(2048, 0)
    assert perms.shape == (2048, 8)
    assert perms[0].tolist() == [2, 4, 3, 6, 5, 0, 1, 7]
    assert perms[1].tolist() == [6, 2, 7, 4, 5, 1, 0, 3]


def test_worked_example_direct_alignment():
    d = direct_alignment(P[None], EWMA[None], Y[None], direct_permutations(2048, 0))
    assert d.cos_corrected[0] == pytest.approx(0.359547, abs=5e-7)
    # y - e ties exactly at D5 and D6 (-1/120 each): with the 12-decimal tie rule the
    # spearman alignment is 0.419601, the figure SCORING.md §8 gives (see the next test).
    assert d.spearman[0] == pytest.approx(0.0722892, abs=5e-7)
    assert d.spearman_null[0] == pytest.approx(-0.3473116, abs=5e-7)
    assert d.spearman_corrected[0] == pytest.approx(0.419601, abs=5e-7)


def test_worked_example_spearman_figure_comes_from_an_unrounded_tie():
    # Without the tie rule, float noise ranking y-e at D5 above D6 would give 0.455098
    # (the figure an earlier version of §8 printed): the rounding is what makes it 0.419601.
    y_noisy = Y.copy()
    y_noisy[5] += 1e-9
    y_noisy /= y_noisy.sum()
    d = direct_alignment(P[None], EWMA[None], y_noisy[None], direct_permutations(2048, 0))
    assert d.spearman_corrected[0] == pytest.approx(0.455098, abs=5e-7)


def test_worked_example_partial_residual():
    r = partial_residual(P[None], EWMA[None], Y[None])
    assert r.c[0] == pytest.approx(0.546606, abs=5e-7)
    assert r.null[0] == pytest.approx(0.001543, abs=5e-7)
    assert r.corrected[0] == pytest.approx(0.545063, abs=5e-7)


# ----------------------------------------------------------------------------- brute-force references


def sp_ref(a, b):
    if np.ptp(a) <= 1e-12:
        return 0.0
    if np.ptp(b) <= 1e-12:
        return np.nan
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def direct_ref(p, e, y, perms):
    dp, dy = p - e, y - e
    if np.abs(dp).max() <= 1e-12 or np.abs(dy).max() <= 1e-12:
        return [np.nan] * 4
    cos = lambda a, b: a @ b / np.sqrt((a @ a) * (b @ b))  # noqa: E731
    cs, ss = [], []
    for m in perms:
        a = p[m] - e
        if np.abs(a).max() <= 1e-12:
            continue
        cs.append(cos(a, dy))
        ss.append(sp_ref(np.round(a, 12), np.round(dy, 12)))
    return [cos(dp, dy), np.median(cs), sp_ref(np.round(dp, 12), np.round(dy, 12)), np.median(ss)]


def partial_ref(p, e, y):
    X = np.column_stack([np.ones(8), rankdata(e)])
    R = np.eye(8) - X @ np.linalg.pinv(X)
    rp, ry = R @ rankdata(p), R @ rankdata(y)
    if rp @ rp <= 1e-12 or ry @ ry <= 1e-12:
        return [np.nan, np.nan]
    qp = rankdata(p)
    vals = []
    for m in itertools.permutations(range(8)):
        r = R @ qp[list(m)]
        if r @ r > 1e-12:
            vals.append(r @ ry / np.sqrt((r @ r) * (ry @ ry)))
    return [rp @ ry / np.sqrt((rp @ rp) * (ry @ ry)), np.median(vals)]


def _comp(rng, kind):
    if kind == 0:
        v = rng.random(8)
    elif kind == 1:
        v = rng.integers(0, 5, 8).astype(float)
    else:
        v = rng.choice([0.0, 5.0, 10.0, 20.0], 8)
    if v.sum() == 0:
        v[0] = 1.0
    return v / v.sum()


def _random_units(n, seed):
    rng = np.random.default_rng(seed)
    p = np.array([_comp(rng, i % 3) for i in range(n)])
    e = np.array([_comp(rng, (i // 3) % 3) for i in range(n)])
    y = np.array([_comp(rng, (i // 2) % 3) for i in range(n)])
    return p, e, y


def test_direct_alignment_matches_brute_force_with_ties_and_edge_cases():
    p, e, y = _random_units(36, 5)
    p[3] = e[3]  # p - e zero: undefined
    y[5] = e[5]  # y - e zero: undefined
    p[7] = e[7][::-1]  # relabellings that reproduce e exist: left out of the medians
    p[8] = np.full(8, 1 / 8)  # uniform prediction
    e[9] = np.full(8, 1 / 8)  # uniform EWMA
    e[10] = np.array([0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])  # tied EWMA: many tied relabellings
    p[10] = np.array([0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    p[11] = np.nan  # invalid unit
    perms = direct_permutations(128, 3)
    d = direct_alignment(p, e, y, perms)
    got = np.column_stack([d.cos, d.cos_null, d.spearman, d.spearman_null])
    want = np.array([direct_ref(p[u], e[u], y[u], perms) if not np.isnan(p[u]).any() else [np.nan] * 4 for u in range(len(p))])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], atol=1e-12)
    assert np.isnan(got[[3, 5, 11]]).all()
    assert not np.isnan(got[[7, 8, 9, 10]]).any()
    np.testing.assert_allclose(d.cos_corrected, d.cos - d.cos_null)


def test_partial_residual_matches_brute_force():
    p, e, y = _random_units(8, 11)
    p[0] = np.array([0.3, 0.3, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0])  # asymmetric tie multiset
    e[1] = np.full(8, 1 / 8)  # X = [1, q(e)] of rank 1: R = I - 11'/8
    p[2] = e[2]  # R q(p) = R q(e) = 0: undefined
    p[3] = np.full(8, 1 / 8)  # q(p) constant: undefined
    y[4] = e[4]  # R q(y) = 0: undefined
    y[5] = np.full(8, 1 / 8)
    r = partial_residual(p, e, y)
    want = np.array([partial_ref(p[u], e[u], y[u]) for u in range(len(p))])
    got = np.column_stack([r.c, r.null])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], atol=1e-12)
    assert np.isnan(got[[2, 3, 4, 5]]).all()


def test_partial_residual_untied_prediction_has_zero_null_median():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(8), size=5)
    e = rng.dirichlet(np.ones(8), size=5)
    y = rng.dirichlet(np.ones(8), size=5)
    r = partial_residual(p, e, y)
    assert (r.null == 0.0).all()
    np.testing.assert_allclose(r.null[0], partial_ref(p[0], e[0], y[0])[1], atol=1e-12)


def test_partial_residual_shares_the_null_across_units_of_an_episode():
    rng = np.random.default_rng(4)
    e = np.tile(rng.dirichlet(np.ones(8)), (3, 1))
    y = np.tile(rng.dirichlet(np.ones(8)), (3, 1))
    # Same rank multiset {1.5, 1.5, 3, ..., 8}, different arrangements.
    p = np.array([[0.05, 0.05, 0.1, 0.11, 0.12, 0.13, 0.2, 0.24], [0.24, 0.2, 0.13, 0.12, 0.11, 0.1, 0.05, 0.05],
                  [0.1, 0.05, 0.2, 0.05, 0.12, 0.24, 0.13, 0.11]])
    r = partial_residual(p, e, y)
    assert r.null[0] == r.null[1] == r.null[2]
    assert len({float(v) for v in r.c}) == 3


def test_arrangements_are_the_distinct_relabellings():
    ms = (1.5, 1.5, 3.0, 5.0, 5.0, 5.0, 7.0, 8.0)
    arr = _arrangements(ms) + 4.5
    brute = {tuple(np.asarray(ms)[list(m)]) for m in itertools.permutations(range(8))}
    assert arr.shape == (40320 // (2 * 6), 8)
    assert {tuple(r) for r in arr} == brute
    assert all_permutations().shape == (40320, 8)


# ----------------------------------------------------------------------------- core helpers


def test_average_ranks_match_scipy():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=(200, 8)).astype(float)
    np.testing.assert_array_equal(average_ranks(a), rankdata(a, axis=1))
    # Eight slots take the packed-comparison path; other lengths the plain one.
    b = rng.normal(size=(3, 5, 8))
    b[0, 0] = 0.25  # all tied
    np.testing.assert_array_equal(average_ranks(b), rankdata(b, axis=-1))
    c = rng.integers(0, 3, size=(50, 5)).astype(float)
    np.testing.assert_array_equal(average_ranks(c), rankdata(c, axis=1))


@pytest.mark.parametrize(
    "a, b, want",
    [
        ([1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], 1.0),
        ([1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1], -1.0),
        ([1] * 8, [1, 2, 3, 4, 5, 6, 7, 8], 0.0),  # a constant -> 0
        ([1, 2, 3, 4, 5, 6, 7, 8], [3] * 8, np.nan),  # b constant -> undefined
        ([1] * 8, [3] * 8, 0.0),  # a constant wins
        ([np.nan] + [1] * 7, [1, 2, 3, 4, 5, 6, 7, 8], np.nan),  # missing
        # ranks a = [1.5,1.5,3..8], b = 1..8: corr = 41.5 / sqrt(41.5 * 42)
        ([0, 0, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 8], np.sqrt(41.5 / 42)),
    ],
)
def test_spearman_rows_rules(a, b, want):
    got = spearman_rows(np.array([a], dtype=float), np.array([b], dtype=float))[0]
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def test_median_helpers():
    rng = np.random.default_rng(1)
    for m in (1, 2, 7, 2048):
        codes = rng.integers(0, 9, (20, m))
        lo, hi = median_codes(codes, 9)
        np.testing.assert_array_equal((lo + hi) / 2, np.median(codes, axis=1))
        x = rng.random((5, m))
        np.testing.assert_array_equal(median_rows(x.copy()), np.median(x, axis=1))
    x = rng.random((3, 6))
    keep = np.ones((3, 6), dtype=bool)
    keep[1, :2] = False
    keep[2] = False
    got = median_rows(x.copy(), keep)
    assert got[0] == np.median(x[0]) and got[1] == np.median(x[1, 2:]) and np.isnan(got[2])


# ----------------------------------------------------------------------------- reliability


def reliability_ref(counts, splits, seed):
    rng = np.random.default_rng(seed)
    out = []
    for c in counts:
        n = int(c.sum())
        if n < 2:
            out.append(np.nan)
            continue
        labels = np.repeat(np.arange(8), c)
        keys = rng.random((splits, n))
        rs = []
        for s in range(splits):
            first = np.bincount(labels[np.argsort(keys[s], kind="stable")[: n // 2]], minlength=8)
            v = sp_ref(first, c - first)
            if not np.isnan(v):
                rs.append(v)
        r = np.mean(rs) if rs else np.nan
        out.append(2 * r / (1 + r) if rs and r != -1 else np.nan)
    return np.array(out)


def test_reliability_matches_loop():
    rng = np.random.default_rng(3)
    counts = rng.poisson(rng.dirichlet(np.ones(8), size=6) * 60)
    counts[2] = 0  # empty target window: undefined, draws nothing
    counts[3] = [1, 0, 0, 0, 0, 0, 0, 0]  # a single paper: undefined, draws nothing
    got = split_half_reliability(counts, 25, 7)
    want = reliability_ref(counts, 25, 7)
    np.testing.assert_array_equal(np.isnan(got.reliability), np.isnan(want))
    np.testing.assert_allclose(got.reliability[~np.isnan(want)], want[~np.isnan(want)], atol=1e-12)
    assert got.n_papers.tolist() == counts.sum(axis=1).tolist()


@pytest.mark.parametrize(
    "counts, r_bar, rel",
    [
        # Every paper in D0: both halves are [5,0,...,0] -> spearman 1 -> reliability 1.
        ([10, 0, 0, 0, 0, 0, 0, 0], 1.0, 1.0),
        # One paper per slot: each half is a 0/1 vector and the other its complement -> -1.
        ([1, 1, 1, 1, 1, 1, 1, 1], -1.0, np.nan),
    ],
)
def test_reliability_hand_cases(counts, r_bar, rel):
    got = split_half_reliability(np.array([counts]), 10, 0)
    assert got.r_bar[0] == pytest.approx(r_bar)
    assert got.n_defined[0] == 10
    if np.isnan(rel):
        assert np.isnan(got.reliability[0])
    else:
        assert got.reliability[0] == pytest.approx(rel)


def test_reliability_rejects_fractional_counts():
    with pytest.raises(ValueError, match="whole-number"):
        split_half_reliability(np.array([[0.5, 1, 1, 1, 1, 1, 1, 1]]), 10, 0)


# ----------------------------------------------------------------------------- change-rich


def change_ref(r, f, D, seed):
    """Per-draw loop with the documented consumption order."""
    rng = np.random.default_rng(seed)
    out = []
    for rr, ff in zip(r, f):
        nr, nf = int(rr.sum()), int(ff.sum())
        if nr == 0 or nf == 0:
            out.append((np.nan, np.nan))
            continue
        pi = (rr + ff + 0.5) / (nr + nf + 4)
        nulls_r = [rng.multinomial(nr, pi) for _ in range(D)]
        nulls_f = [rng.multinomial(nf, pi) for _ in range(D)]

        def jsd(a, b):
            m = (a + b) / 2
            kl = lambda x: sum(x[d] * np.log(x[d] / m[d]) for d in range(8) if x[d] > 0)  # noqa: E731
            return 0.5 * kl(a) + 0.5 * kl(b)

        obs = jsd(rr / nr, ff / nf)
        p = (1 + sum(jsd(a / nr, b / nf) >= obs - 1e-12 for a, b in zip(nulls_r, nulls_f))) / (1 + D)
        thetas = [rng.dirichlet(ff + 0.5) for _ in range(D)]
        rep_a = [rng.multinomial(nf, t) for t in thetas]
        rep_b = [rng.multinomial(nf, t) for t in thetas]
        rhos = [sp_ref(a, b) for a, b in zip(rep_a, rep_b)]
        rhos = [v for v in rhos if not np.isnan(v)]
        out.append((p, np.mean(rhos) if rhos else np.nan))
    return np.array(out)


def test_change_rich_matches_loop_and_skips_undefined_episodes():
    rng = np.random.default_rng(8)
    r = rng.poisson(rng.dirichlet(np.ones(8), size=4) * 40)
    f = rng.poisson(rng.dirichlet(np.ones(8), size=4) * 40)
    f[1] = 0  # no target papers: undefined, draws nothing
    got = change_rich_episodes(r, f, p_max=0.05, repeatability_min=0.5, null_draws=60, seed=3)
    want = change_ref(r, f, 60, 3)
    np.testing.assert_allclose(np.column_stack([got.p_value, got.repeatability]), want, atol=1e-12)
    assert np.isnan(got.jsd[1]) and not got.change_rich[1]
    # Dropping the undefined episode changes nothing for the others.
    again = change_rich_episodes(r[[0, 2, 3]], f[[0, 2, 3]], p_max=0.05, repeatability_min=0.5, null_draws=60, seed=3)
    np.testing.assert_array_equal(again.p_value, got.p_value[[0, 2, 3]])


def test_change_rich_hand_cases():
    stable = np.array([100, 80, 60, 40, 30, 20, 10, 5])
    moved = np.array([5, 10, 20, 30, 40, 60, 80, 100])
    got = change_rich_episodes(
        np.array([stable, stable]), np.array([stable, moved]), p_max=0.05, repeatability_min=0.5, null_draws=200, seed=0
    )
    assert got.jsd[0] == 0.0
    assert got.p_value[0] == 1.0  # every null draw is >= 0
    assert not got.change_rich[0]
    assert got.p_value[1] == pytest.approx(1 / 201)  # no null draw comes near a reversal
    assert got.repeatability[1] > 0.9
    assert got.change_rich[1]


# ----------------------------------------------------------------------------- revision


def test_revision_pairs_and_values():
    month = np.array([0, 6, 12, 18, 24] * 2)
    series = np.repeat([0, 1], 5)
    i, j = revision_pairs(series, month, 12)
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 2), (1, 3), (2, 4), (5, 7), (6, 8), (7, 9)]
    p = np.tile(np.linspace(0.05, 0.2, 8) / np.linspace(0.05, 0.2, 8).sum(), (10, 1))
    y = p.copy()
    y[2] = y[2][::-1]
    p[7] = p[7][::-1]
    rev = revision_alignment(p, y, series, month, 12)
    first = {(a, b): k for k, (a, b) in enumerate(zip(rev.first.tolist(), rev.second.tolist()))}
    k = first[(0, 2)]
    assert rev.adapt[k] == 0.0  # the prediction did not move: no ordering
    assert rev.prediction_stability[k] == pytest.approx(1.0)
    assert rev.truth_stability[k] == pytest.approx(-1.0)
    assert np.isnan(rev.adapt[first[(5, 7)]])  # the prediction moved, the truth did not: undefined
    assert rev.prediction_stability[first[(5, 7)]] == pytest.approx(-1.0)


# ----------------------------------------------------------------------------- aggregation and output


def tiny_arrays(seed=0, draws=None) -> DiagnosticArrays:
    rng = np.random.default_rng(seed)
    F, O = 6, 4
    origins = [date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1), date(2025, 7, 1)]
    target = rng.poisson(rng.dirichlet(np.ones(8), size=(F, 1)) * 40, size=(F, O, 8))
    target[0, 1] = 0
    recent = rng.poisson(rng.dirichlet(np.ones(8), size=(F, 1)) * 40, size=(F, O, 8))
    with np.errstate(invalid="ignore"):
        y = np.where(target.sum(-1, keepdims=True) > 0, target / target.sum(-1, keepdims=True), np.nan)
    ewma = rng.dirichlet(np.ones(8), size=(F, O))
    entries = [("m", "model", "A0"), ("m", "model", "A2"), ("ewma", "baseline", "BASE")]
    preds = np.stack([rng.dirichlet(np.ones(8), size=(F, O)), rng.dirichlet(np.ones(8), size=(F, O)), ewma])
    preds[0, 2, 3] = np.nan
    metrics = ("spearman", "tv", "pred_recent", "state_recent", "tv_gain")
    values = rng.normal(size=(3, 2, len(metrics), F, O))
    return DiagnosticArrays(
        field_ids=[f"f{i}" for i in range(F)], field_split=np.array(["dev", "dev", "test", "test", "test", "test"], dtype=object),
        field_block=np.array(["b1", "b1", "b2", "b3", "b3", "b4"], dtype=object),
        eligible_pre2024=np.array([True, False, True, True, False, True]), origins=origins, entries=entries,
        target_counts=target, recent_counts=recent, y=y, ewma=ewma, predictions=preds, policies=("canonical", "flip"),
        metric_names=metrics, values=values, draws=draws, resamples=200, seed=0, level=0.95,
    )


LEDGER = {
    "residual": {"direct_permutations": 64, "seed": 0},
    "change_rich": {"p_max": 0.05, "repeatability_min": 0.5, "null_draws": 50, "seed": 0},
    "reliability": {"splits": 20, "seed": 0},
}


def test_bootstrap_worked_example():
    # §8: K = 3 blocks, 5 resamples, seed 0; S = [1.6, 0.5, 0.9], N = [2, 1, 1] -> [0.633333, 0.8].
    C = draw_counts(3, 5, 0)
    assert C.tolist() == [[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]]
    a = tiny_arrays()
    a = DiagnosticArrays(**{**a.__dict__, "field_split": np.array(["x"] * 4 + ["y"] * 2, dtype=object),
                            "field_block": np.array(["k0", "k0", "k1", "k2", "z", "z"], dtype=object),
                            "resamples": 5})
    row = SplitAggregator(a, "x").summarise(np.array([[0.7, 0.9, 0.5, 0.9, 9.0, 9.0]]))[0]
    assert row["estimate"] == pytest.approx(3.0 / 4)
    assert row["ci_low"] == pytest.approx(0.633333, abs=5e-7)
    assert row["ci_high"] == pytest.approx(0.8)
    assert row["n_fields"] == 4


def test_compute_diagnostics_is_json_ready_deterministic_and_consistent():
    a = tiny_arrays()
    out = compute_diagnostics(a, LEDGER)
    text = json.dumps(out, allow_nan=False, sort_keys=True)
    assert text == json.dumps(compute_diagnostics(tiny_arrays(), LEDGER), allow_nan=False, sort_keys=True)
    assert set(out) >= {"reliability", "change_rich", "residual_alignment", "revision_alignment",
                        "policy_sensitivity", "sampling_frame", "parameters"}
    assert [e["field_id"] for e in out["reliability"]["episodes"]][:4] == ["f0"] * 4
    assert out["reliability"]["episodes"][1]["reliability"] is None  # empty target window
    # pred_recent only for forecasts, state_recent only for State answers.
    pairs = {(r["condition"], r["metric"]) for r in out["change_rich"]["scores"]}
    assert ("A0", "pred_recent") in pairs and ("A0", "state_recent") not in pairs
    assert ("A2", "state_recent") in pairs and ("A2", "pred_recent") not in pairs
    # The EWMA baseline has no residual: every alignment undefined.
    ewma_rows = [r for r in out["residual_alignment"]["rows"] if r["entry"] == "ewma" and r["statistic"] != "tv_gain"]
    assert ewma_rows and all(r["estimate"] is None and r["n_defined"] == 0 for r in ewma_rows)
    # Sampling frame: the plain mean of the eligible fields' scores.
    fs = np.nanmean(a.values[0, 0, 0], axis=-1)
    row = next(r for r in out["sampling_frame"]["rows"]
               if (r["split"], r["policy"], r["entry"], r["condition"], r["metric"]) == ("test", "canonical", "m", "A0", "spearman"))
    assert row["estimate"] == pytest.approx(fs[[2, 3, 5]].mean())
    assert row["estimate_all_fields"] == pytest.approx(fs[2:].mean())
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_given_draws_equal_the_protocol():
    a = tiny_arrays()
    draws = {"dev": (("b1",), draw_counts(1, 200, 0)), "test": (("b2", "b3", "b4"), draw_counts(3, 200, 0))}
    assert compute_diagnostics(a, LEDGER) == compute_diagnostics(tiny_arrays(draws=draws), LEDGER)


def test_unit_diagnostics_shapes_and_reuse():
    a = tiny_arrays()
    cols = compute_unit_diagnostics(a, LEDGER)
    assert tuple(cols) == UNIT_COLUMNS
    assert all(v.shape == (3, 6, 4) for v in cols.values())
    assert np.isnan(cols["partial_residual"][2]).all()  # the EWMA baseline itself
    assert np.isnan(cols["direct_cos"][0, 2, 3])  # invalid unit
    assert compute_diagnostics(a, LEDGER, unit_diagnostics=cols) == compute_diagnostics(a, LEDGER)


def test_ledger_required_for_plain_arrays():
    with pytest.raises(ValueError, match="ledger"):
        compute_diagnostics(tiny_arrays())


def test_scoring_pipeline_writes_the_diagnostics(tiny_archive):
    from rapgen.archive import open_release
    from rapgen.scores import compute_scores

    archive = open_release(tiny_archive.root)
    diag = compute_scores(archive, resamples=50).diagnostics
    json.dumps(diag, allow_nan=False)
    assert diag["diagnostics_version"] == 1
    assert diag["manifest_sha256"] == archive.manifest_sha256
    n_episodes = len(archive.fields) * len(archive.origins.origins)
    assert len(diag["reliability"]["episodes"]) == n_episodes
    assert len(diag["change_rich"]["episodes"]) == n_episodes
    assert diag["residual_alignment"]["rows"]


def test_empty_and_missing_inputs():
    z = np.zeros((0, 8))
    perms = direct_permutations(16, 0)
    assert direct_alignment(z, z, z, perms).cos.shape == (0,)
    assert partial_residual(z, z, z).c.shape == (0,)
    assert split_half_reliability(z, 10, 0).reliability.shape == (0,)
    assert change_rich_episodes(z, z, p_max=0.05, repeatability_min=0.5, null_draws=10, seed=0).p_value.shape == (0,)
    missing = np.full((2, 8), np.nan)
    d = direct_alignment(missing, missing, missing, perms)
    assert np.isnan(d.cos).all() and np.isnan(d.spearman_corrected).all()
    assert np.isnan(partial_residual(missing, missing, missing).corrected).all()
