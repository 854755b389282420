"""Unit metrics (SCORING.md §2): hand-computed tables and the edge-case matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rapgen.errors import ScoringError
from rapgen.scores.metrics import REGISTRY, MetricSpec, cosc, get_metric, jsd, register, spearman, tv, unit_metric_values

NAN8 = [math.nan] * 8
UNIFORM = [1 / 8] * 8
# SCORING.md §8: target counts and prediction weights.
Y8 = [c / 30 for c in (16, 2, 7, 1, 1, 2, 0, 1)]
P8 = [w / 100 for w in (40, 10, 20, 5, 5, 10, 0, 10)]
ONE_TO_EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # identical orderings -> 1; reversed -> -1
        (ONE_TO_EIGHT, ONE_TO_EIGHT, 1.0),
        (ONE_TO_EIGHT, ONE_TO_EIGHT[::-1], -1.0),
        # §8 worked example
        (P8, Y8, 0.936709),
        # ties: ranks a = 1.5,1.5,3.5,3.5,5.5,5.5,7.5,7.5; b = 1..8; centred dot 40,
        # sums of squares 40 and 42 -> 40 / sqrt(1680) = 0.975900
        ([1, 1, 2, 2, 3, 3, 4, 4], ONE_TO_EIGHT, 40 / math.sqrt(40 * 42)),
        # a constant (uniform prediction) -> 0, whatever b is
        (UNIFORM, Y8, 0.0),
        (UNIFORM, UNIFORM, 0.0),
        # "constant" is max - min <= 1e-12: still 0
        ([0.125 + 1e-13] + [0.125] * 7, Y8, 0.0),
        # just above the tolerance the ordering counts: one top slot, seven tied
        # (worked by hand in test_spearman_single_top_slot_by_hand): 14 / sqrt(14 * 42)
        ([0.125 + 1e-11] + [0.125] * 7, ONE_TO_EIGHT[::-1], 14 / math.sqrt(14 * 42)),
        # b constant (and a not) -> undefined
        (P8, UNIFORM, math.nan),
        # a missing composition on either side -> undefined, even for a uniform a
        (NAN8, Y8, math.nan),
        (UNIFORM, NAN8, math.nan),
    ],
)
def test_spearman_table(a, b, expected):
    value = float(spearman(np.array(a, dtype=float), np.array(b, dtype=float)))
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=5e-7)


def test_spearman_single_top_slot_by_hand():
    # a = [x, c, c, ..., c] with x > c: ranks [8, 4, 4, 4, 4, 4, 4, 4] (mean 4.5),
    # centred [3.5, -0.5 x7]; b = 8..1 centred [3.5, 2.5, ..., -3.5].
    # dot = 3.5*3.5 - 0.5*(2.5+1.5+0.5-0.5-1.5-2.5-3.5) = 12.25 + 1.75 = 14
    # ss_a = 12.25 + 7*0.25 = 14; ss_b = 42 -> 14 / sqrt(14*42) = 0.577350
    a = np.array([0.2] + [0.1] * 7)
    b = np.array(ONE_TO_EIGHT[::-1], dtype=float)
    assert float(spearman(a, b)) == pytest.approx(14 / math.sqrt(14 * 42), abs=1e-12)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (Y8, Y8, 0.0),
        ([1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0], 1.0),
        # |p - y| = 4/30, 1/30, 1/30, 1/60, 1/60, 1/30, 0, 2/30 -> sum 1/3 -> tv 1/6
        (P8, Y8, 1 / 6),
        ([0.5, 0.5, 0, 0, 0, 0, 0, 0], [0.25] * 4 + [0] * 4, 0.5),
    ],
)
def test_tv_table(a, b, expected):
    assert float(tv(np.array(a, dtype=float), np.array(b, dtype=float))) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (Y8, Y8, 0.0),
        # disjoint supports: each KL to the midpoint is ln 2 -> jsd ln 2
        ([1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0], math.log(2)),
        # m = [.5, .25, .25, 0...]; KL(a||m) = .5 ln 2 = KL(b||m) -> .5 ln 2
        ([0.5, 0.5, 0, 0, 0, 0, 0, 0], [0.5, 0, 0.5, 0, 0, 0, 0, 0], 0.5 * math.log(2)),
        # §8 worked example
        (P8, Y8, 0.019175),
        (NAN8, Y8, math.nan),
    ],
)
def test_jsd_table(a, b, expected):
    value = float(jsd(np.array(a, dtype=float), np.array(b, dtype=float)))
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=5e-7)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (ONE_TO_EIGHT, ONE_TO_EIGHT, 1.0),
        (ONE_TO_EIGHT, ONE_TO_EIGHT[::-1], -1.0),
        # centred a = [1, -1, 0...]/..., b = [1, 1, -2, 0...]: dot 0 -> 0
        ([2, 0, 1, 1, 1, 1, 1, 1], [2, 2, -1, 1, 1, 1, 1, 1], 0.0),
        (UNIFORM, Y8, math.nan),
        (Y8, UNIFORM, math.nan),
        (NAN8, Y8, math.nan),
    ],
)
def test_cosc_table(a, b, expected):
    value = float(cosc(np.array(a, dtype=float), np.array(b, dtype=float)))
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_metric_is_undefined_on_a_missing_side_and_vectorises(name):
    fn = get_metric(name).fn
    assert np.isnan(fn(np.array(NAN8), np.array(Y8)))
    batch = fn(np.array([P8, Y8, NAN8]), np.array(Y8))
    assert batch.shape == (3,)
    assert float(batch[0]) == pytest.approx(float(fn(np.array(P8), np.array(Y8))), abs=1e-15)
    assert np.isnan(batch[2])


def test_registry_refuses_duplicates_and_lists_known_names():
    with pytest.raises(ScoringError, match="already registered"):
        register(MetricSpec("tv", "TV", False, "dup", tv))
    with pytest.raises(ScoringError, match="unknown metric 'nope'; known metrics: cosc, jsd, spearman, tv"):
        get_metric("nope")


def test_unit_values_follow_the_missing_rules():
    p = np.array([P8, UNIFORM, NAN8])
    y, x, e = np.array(Y8), np.array(UNIFORM), np.array(P8)
    out = unit_metric_values(p, y, x, e)
    assert out["spearman"][0] == pytest.approx(0.936709, abs=5e-7)
    assert out["spearman"][1] == 0.0  # uniform prediction: 0, not undefined
    assert np.isnan(out["spearman"][2]) and np.isnan(out["tv"][2]) and np.isnan(out["tv_gain"][2])
    assert np.isnan(out["recent"][0])  # x constant, p not -> undefined
    assert out["recent"][1] == 0.0  # p constant -> 0
    assert out["tv_gain"][0] == pytest.approx(0.0, abs=1e-15)  # e == p
    # An episode without y: everything undefined, the recent-window agreement included.
    gone = unit_metric_values(np.array(P8), np.array(NAN8), np.array(Y8), np.array(P8))
    assert all(np.isnan(v) for v in gone.values())
    # No EWMA: only tv_gain is undefined.
    no_e = unit_metric_values(np.array(P8), np.array(Y8), np.array(Y8), np.array(NAN8))
    assert np.isnan(no_e["tv_gain"]) and not np.isnan(no_e["tv"])


def test_ranks_equal_scipy_average_ranks():
    from scipy.stats import rankdata

    from rapgen.scores.metrics import ranks

    rng = np.random.default_rng(0)
    x = np.round(rng.random((500, 8)), 1)  # many ties
    x[:3] = 0.125
    assert np.array_equal(ranks(x), rankdata(x, method="average", axis=-1))
    # by hand: [0.3, 0.1, 0.3, 0.2] -> 0.1 is 1st, 0.2 2nd, the two 0.3 share 3.5
    assert ranks(np.array([0.3, 0.1, 0.3, 0.2])).tolist() == [3.5, 1.0, 3.5, 2.0]
