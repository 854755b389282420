"""Mechanical baselines (SCORING.md §3) against the §8 table and hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rapgen.errors import ScoringError
from rapgen.scores.baselines import BASELINES, compute_baselines, finish

LEDGER = {"ewma_weights": [0.25, 0.25, 0.5], "arima110": {"phi": -0.4}, "holt": {"alpha": 0.85, "beta": 0.6}, "var_ridge": {"ratio": 133.352}}
H1 = np.array([10, 5, 5, 0, 2, 3, 0, 5]) / 30
H2 = np.array([12, 4, 6, 0, 2, 2, 1, 3]) / 30
H3 = np.array([15, 3, 6, 1, 1, 2, 0, 2]) / 30

# SCORING.md §8, to 6 decimals.
EXPECTED_S8 = {
    "recent": [0.5, 0.1, 0.2, 0.033333, 0.033333, 0.066667, 0, 0.066667],
    "ewma": [0.433333, 0.125, 0.191667, 0.016667, 0.05, 0.075, 0.008333, 0.1],
    "linear_trend": [0.577778, 0.066667, 0.222222, 0.044444, 0.022222, 0.044444, 0.011111, 0.011111],
    "arima110": [0.46, 0.113333, 0.2, 0.02, 0.046667, 0.066667, 0.013333, 0.08],
    "holt": [0.578667, 0.066667, 0.221333, 0.045333, 0.021333, 0.045333, 0.009333, 0.012],
    "var_ridge": [0.505318, 0.09786, 0.200973, 0.034458, 0.0322, 0.065659, 0, 0.063532],
}


@pytest.mark.parametrize("name", BASELINES)
def test_worked_example_to_six_decimals(name):
    out = compute_baselines(H1, H2, H3, LEDGER)[BASELINES.index(name)]
    assert np.round(out, 6).tolist() == pytest.approx(EXPECTED_S8[name], abs=1e-12)
    assert out.sum() == pytest.approx(1.0, abs=1e-12)


E0, E1, E2 = (np.eye(8)[i] for i in range(3))


@pytest.mark.parametrize(
    "name, h1, h2, h3, expected",
    [
        # recent = h3
        ("recent", E0, E1, E2, E2),
        # ewma .25 h1 + .25 h2 + .5 h3
        ("ewma", E0, E1, E2, 0.25 * E0 + 0.25 * E1 + 0.5 * E2),
        # linear_trend: mean(h) + (h3 - h1) = [1/3-1, 1/3, 1/3+1] -> clip [0, 1/3, 4/3] -> [0, .2, .8]
        ("linear_trend", E0, E1, E2, 0.2 * E1 + 0.8 * E2),
        # arima110: h3 + phi (h3 - h2) = E2 - .4 (E2 - E1) = [0, .4, .6] (sums to 1 already)
        ("arima110", E0, E1, E2, 0.4 * E1 + 0.6 * E2),
        # h3 = E1, h2 = (E1 + E2)/2: E1 - .4 (E1/2 - E2/2) = [0, .8, .2]
        ("arima110", E0, (E1 + E2) / 2, E1, 0.8 * E1 + 0.2 * E2),
        # arima110 with h2 = E0, h3 = (E0+E1)/2: [.5,.5] - .4([-.5,.5]) = [.7, .3]
        ("arima110", E2, E0, (E0 + E1) / 2, 0.7 * E0 + 0.3 * E1),
        # holt with a constant history stays put: l = h, b = 0 throughout
        ("holt", (E0 + E1) / 2, (E0 + E1) / 2, (E0 + E1) / 2, (E0 + E1) / 2),
        # var_ridge with a constant history: X = Y, A = I -> forecast h3
        ("var_ridge", (E0 + E1) / 2, (E0 + E1) / 2, (E0 + E1) / 2, (E0 + E1) / 2),
    ],
)
def test_hand_worked_baselines(name, h1, h2, h3, expected):
    out = compute_baselines(h1, h2, h3, LEDGER)[BASELINES.index(name)]
    assert out.tolist() == pytest.approx(np.asarray(expected).tolist(), abs=1e-12)


def test_holt_by_hand():
    # h1 = E0, h2 = E1, h3 = E1; alpha .85, beta .6 (slots 0 and 1 only):
    # l = [1, 0], b = [-1, 1]
    # x = h2: l' = .85[0,1] + .15([1,0]+[-1,1]) = [0, 1];  b = .6([0,1]-[1,0]) + .4[-1,1] = [-1, 1]
    # x = h3: l' = .85[0,1] + .15([0,1]+[-1,1]) = [-.15, 1.15]; b = .6([-.15,.15]) + .4[-1,1] = [-.49, .49]
    # forecast l + b = [-.64, 1.64] -> clip -> [0, 1.64] -> E1
    out = compute_baselines(E0, E1, E1, LEDGER)[BASELINES.index("holt")]
    assert out.tolist() == pytest.approx(E1.tolist(), abs=1e-12)
    # With softer inputs the trend survives clipping: h = (.5,.5), (.4,.6), (.3,.7) is linear,
    # Holt follows the line exactly: forecast (.2, .8)
    h1, h2, h3 = (a * E0 + (1 - a) * E1 for a in (0.5, 0.4, 0.3))
    out = compute_baselines(h1, h2, h3, LEDGER)[BASELINES.index("holt")]
    assert out.tolist() == pytest.approx((0.2 * E0 + 0.8 * E1).tolist(), abs=1e-12)


def test_ledger_constants_are_used():
    h2, h3 = E0, (E0 + E1) / 2
    ledger = {**LEDGER, "arima110": {"phi": 0.0}}
    assert compute_baselines(E2, h2, h3, ledger)[BASELINES.index("arima110")].tolist() == pytest.approx(h3.tolist())
    ledger = {**LEDGER, "ewma_weights": [0.0, 0.0, 1.0]}
    assert compute_baselines(E0, E1, E2, ledger)[BASELINES.index("ewma")].tolist() == pytest.approx(E2.tolist())
    with pytest.raises(ScoringError, match="exactly 3 weights"):
        compute_baselines(E0, E1, E2, {**LEDGER, "ewma_weights": [0.5, 0.5]})


def test_a_missing_history_window_means_no_baseline():
    missing = np.full(8, math.nan)
    for pos in range(3):
        hs = [H1, H2, H3]
        hs[pos] = missing
        out = compute_baselines(*hs, LEDGER)
        assert np.isnan(out).all()


def test_finish_rounds_clips_and_falls_back_to_uniform():
    # Mathematically equal slots that differ in the last bits become exactly equal.
    v = np.array([0.1 + 1e-15, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1])
    out = finish(v)
    assert out[0] == out[1]
    # Nothing left after clipping -> uniform.
    assert finish(-np.ones(8)).tolist() == [0.125] * 8
    assert finish(np.array([1e-13] + [0.0] * 7)).tolist() == [0.125] * 8  # rounds to zero first
    # Batched, with a missing row kept missing.
    batch = finish(np.array([[2.0] + [0.0] * 7, [math.nan] * 8]))
    assert batch[0].tolist() == [1.0] + [0.0] * 7 and np.isnan(batch[1]).all()


def test_vectorised_equals_one_at_a_time():
    rng = np.random.default_rng(3)
    hs = [rng.dirichlet(np.ones(8), size=(4, 5)) for _ in range(3)]
    batch = compute_baselines(*hs, LEDGER)
    for i in range(4):
        for j in range(5):
            single = compute_baselines(hs[0][i, j], hs[1][i, j], hs[2][i, j], LEDGER)
            assert np.allclose(batch[:, i, j], single, atol=1e-13, rtol=0)
