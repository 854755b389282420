"""Dependency-block bootstrap (SCORING.md §5) against §8 and a direct resampling loop;
interval ranks and first-place probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rapgen.scores.aggregate import probability_first, rank_by_intervals
from rapgen.scores.bootstrap import _percentile_rows, bootstrap_intervals, draw_counts, percentiles, unit_sums


def test_worked_example():
    rng = np.random.default_rng(0)
    assert rng.integers(0, 3, size=(5, 3)).tolist() == [[2, 1, 1], [0, 0, 0], [0, 0, 0], [2, 1, 2], [1, 1, 2]]
    C = draw_counts(3, 5, 0)
    assert C.tolist() == [[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]]
    result = bootstrap_intervals(C, np.array([[1.6, 0.5, 0.9]]), np.array([[2.0, 1.0, 1.0]]), 0.95, keep=[0])
    assert result.replicates[0].tolist() == pytest.approx([0.633333, 0.8, 0.8, 0.766667, 0.633333], abs=5e-7)
    assert (result.low[0], result.high[0]) == pytest.approx((0.633333, 0.8), abs=5e-7)


def _direct(S: np.ndarray, N: np.ndarray, K: int, R: int, seed: int, level: float):
    """One statistic at a time, one replicate at a time, straight from the draws."""
    draws = np.random.default_rng(seed).integers(0, K, size=(R, K))
    lows, highs, reps = [], [], []
    for s, n in zip(S, N):
        values = []
        for r in range(R):
            num = sum(s[k] for k in draws[r])
            den = sum(n[k] for k in draws[r])
            values.append(num / den if den != 0 else math.nan)
        arr = np.array(values)
        ok = arr[~np.isnan(arr)]
        lo, hi = np.percentile(ok, [100 * (1 - level) / 2, 100 * (1 + level) / 2]) if len(ok) else (math.nan, math.nan)
        lows.append(lo)
        highs.append(hi)
        reps.append(arr)
    return np.array(lows), np.array(highs), reps


@pytest.mark.parametrize("K, R, level", [(5, 200, 0.95), (7, 301, 0.9), (1, 50, 0.95)])
def test_matches_a_direct_resampling_loop(K, R, level):
    rng = np.random.default_rng(K)
    values = rng.normal(size=(9, 3 * K))
    values[values > 1.2] = np.nan  # undefined field scores
    values[0, :] = np.nan  # a statistic with nothing defined
    values[1, 3:] = np.nan  # defined in unit 0 only: many zero denominators
    unit_of = np.arange(3 * K) % K
    S, N = unit_sums(values, unit_of, K)
    C = draw_counts(K, R, 42)
    result = bootstrap_intervals(C, S, N, level, keep=np.arange(9))
    lo, hi, reps = _direct(S, N, K, R, 42, level)
    np.testing.assert_allclose(result.low, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.high, hi, rtol=0, atol=1e-12)
    assert np.isnan(result.low[0]) and np.isnan(result.high[0])
    for i in range(9):
        np.testing.assert_allclose(result.replicates[i], reps[i], rtol=0, atol=1e-12)


def test_chunking_does_not_change_results(monkeypatch):
    import rapgen.scores.bootstrap as module

    rng = np.random.default_rng(5)
    S, N = rng.random((40, 6)), rng.integers(0, 3, (40, 6)).astype(float)
    C = draw_counts(6, 100, 0)
    whole = bootstrap_intervals(C, S, N, 0.95)
    monkeypatch.setattr(module, "CHUNK", 7)
    parts = bootstrap_intervals(C, S, N, 0.95)
    assert np.array_equal(whole.low, parts.low, equal_nan=True) and np.array_equal(whole.high, parts.high, equal_nan=True)


def test_duplicate_statistics_share_their_replicates_and_keep_their_own_keys():
    """Identical (S, N) rows are resampled once; every row still gets its interval
    and, if kept, its replicate vector, equal to resampling it on its own."""
    rng = np.random.default_rng(9)
    K, R = 6, 4000  # long rows: the percentile path of the real scorer
    S, N = rng.random((5, K)), rng.integers(0, 3, (5, K)).astype(float)
    N[2, :] = 0  # nothing defined
    S2 = np.concatenate([S, S[[1, 3, 2]], S[:1]])
    N2 = np.concatenate([N, N[[1, 3, 2]], N[:1]])
    C = draw_counts(K, R, 3)
    both = bootstrap_intervals(C, S2, N2, 0.95, keep=np.array([1, 5, 6, 8]))
    for i, j in ((1, 5), (3, 6), (2, 7), (0, 8)):
        assert np.array_equal(both.low[[i, j]], both.low[[i, i]], equal_nan=True)
        assert np.array_equal(both.high[[i, j]], both.high[[i, i]], equal_nan=True)
    assert sorted(both.replicates) == [1, 5, 6, 8]
    assert np.array_equal(both.replicates[1], both.replicates[5], equal_nan=True)
    lo, hi, reps = _direct(S2, N2, K, R, 3, 0.95)
    np.testing.assert_allclose(both.low, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(both.high, hi, rtol=0, atol=1e-12)
    assert np.isnan(both.low[[2, 7]]).all()
    for k in (1, 5, 6, 8):
        np.testing.assert_allclose(both.replicates[k], reps[k], rtol=0, atol=1e-12)


def test_unit_sums_count_only_defined_values():
    values = np.array([[1.0, 2.0, np.nan, 4.0]])
    S, N = unit_sums(values, np.array([0, 0, 1, 1]), 3)
    assert S.tolist() == [[3.0, 4.0, 0.0]] and N.tolist() == [[2.0, 1.0, 0.0]]


def test_draw_counts_is_a_bincount_of_each_row():
    draws = np.random.default_rng(9).integers(0, 4, size=(6, 4))
    expected = [np.bincount(row, minlength=4).tolist() for row in draws]
    assert draw_counts(4, 6, 9).tolist() == expected
    assert (draw_counts(4, 6, 9).sum(axis=1) == 4).all()


@pytest.mark.parametrize("n", [1, 2, 5, 40, 10000])
def test_percentiles_match_numpy_bit_for_bit(n):
    x = np.random.default_rng(n).random((6, n))
    x[0] = np.round(x[0], 1)  # ties
    for level in (0.95, 0.9, 0.5):
        q = percentiles(level)
        lo, hi = _percentile_rows(x.copy(), q)
        ref = np.percentile(x, q, axis=1)
        assert np.array_equal(lo, ref[0]) and np.array_equal(hi, ref[1])


def test_percentiles_from_level():
    assert percentiles(0.95) == pytest.approx((2.5, 97.5))
    assert percentiles(0.9) == pytest.approx((5.0, 95.0))


@pytest.mark.parametrize(
    "low, high, higher, expected",
    [
        # higher is better: B and C lie entirely above A (A ranks 3); B and C overlap (both 1).
        ([0.1, 0.5, 0.4], [0.3, 0.7, 0.6], True, [3, 1, 1]),
        # touching intervals are not "entirely above"
        ([0.1, 0.3], [0.3, 0.5], True, [1, 1]),
        # lower is better: "above" means a lower interval
        ([0.1, 0.5], [0.3, 0.7], False, [1, 2]),
        # an entry without an interval has no rank and beats nobody
        ([0.1, math.nan], [0.3, math.nan], True, [1, math.nan]),
    ],
)
def test_rank_by_intervals(low, high, higher, expected):
    out = rank_by_intervals(np.array(low), np.array(high), higher)
    assert np.array_equal(out, np.array(expected, dtype=float), equal_nan=True)


def test_probability_first_splits_ties_and_skips_undefined():
    reps = np.array([
        [0.9, 0.1, 0.5],  # entry 0 best
        [0.2, 0.8, 0.8],  # tie between 1 and 2: half each
        [np.nan, 0.1, 0.3],  # entry 0 undefined: 2 best
        [np.nan, np.nan, np.nan],  # nobody: not counted
    ])
    assert probability_first(reps, True).tolist() == pytest.approx([1 / 3, 0.5 / 3, 1.5 / 3])
    # lower is better
    assert probability_first(reps[:1], False).tolist() == [0.0, 1.0, 0.0]


def test_the_diagnostics_use_the_same_bootstrap_on_the_worked_example():
    # §8: K = 3 blocks, 5 resamples, seed 0, S = [1.6, 0.5, 0.9], N = [2, 1, 1]; block b0 holds
    # two fields (0.7 + 0.9), b1 and b2 one each. The diagnostics' per-split summary must give
    # the interval [0.633333, 0.8] and the plain field-macro mean 0.75 as its estimate.
    from types import SimpleNamespace

    from rapgen.scores.diagnostics import SplitAggregator

    arrays = SimpleNamespace(field_split=np.array(["test"] * 4, dtype=object), field_block=np.array(["b0", "b0", "b1", "b2"], dtype=object),
                             draws=None, resamples=5, seed=0, level=0.95)
    (row,) = SplitAggregator(arrays, "test").summarise(np.array([[0.7, 0.9, 0.5, 0.9]]))
    assert row["estimate"] == pytest.approx(0.75) and row["n_fields"] == 4
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.633333, 0.8), abs=5e-7)
