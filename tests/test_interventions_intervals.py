"""Interval rows (INTERVENTIONS.md, "Interval row"): the split's block and field draws of
SCORING.md §5, checked against plain loops on small inputs and the §8 bootstrap example."""

from __future__ import annotations

import numpy as np
import pytest

from rapgen.scores.interventions import INTERVAL_COLUMNS, Statistic, split_draws, summarise


def _brute_interval(values: np.ndarray, unit_of: list[int], draws: np.ndarray, level: float) -> tuple[float, float]:
    """SCORING.md §5 written out: for each replicate, Σ c·S / Σ c·N over the drawn units."""
    K = draws.shape[1]
    stats = []
    for r in range(draws.shape[0]):
        num = den = 0.0
        for k in range(K):
            c = int((draws[r] == k).sum())
            for v, u in zip(values, unit_of):
                if u == k and not np.isnan(v):
                    num += c * v
                    den += c
        if den:
            stats.append(num / den)
    if not stats:
        return np.nan, np.nan
    low, high = np.percentile(stats, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(low), float(high)


def test_scoring_worked_bootstrap_example():
    # K = 3 blocks, 5 resamples, seed 0; S = [1.6, 0.5, 0.9], N = [2, 1, 1].
    draws = split_draws(["f1", "f2", "f3", "f4"], ["test"] * 4, ["b0", "b0", "b1", "b2"], resamples=5, seed=0, level=0.95)
    assert draws["test"].block_counts.tolist() == [[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]]
    row = summarise([Statistic({"x": "s"}, np.array([0.7, 0.9, 0.5, 0.9]))], draws)[0]
    assert round(row["estimate"], 6) == 0.75  # the plain field-macro mean, not the bootstrap mean
    assert (round(row["ci_low"], 6), round(row["ci_high"], 6)) == (0.633333, 0.8)
    assert row["n_fields"] == 4 and row["split"] == "test"


CASES = [
    # field ids, splits, blocks, values of two statistics
    (["a", "b", "c", "d", "e"], ["dev", "test", "dev", "test", "dev"], ["x", "y", "x", "z", "w"],
     [[0.1, 0.5, np.nan, 0.3, 0.9], [0.2, np.nan, 0.4, -0.1, 0.0]]),
    (["q", "p", "r"], ["dev", "dev", "dev"], ["k2", "k1", "k1"], [[1.0, np.nan, np.nan], [np.nan, np.nan, np.nan]]),
    (["f0", "f1", "f2", "f3", "f4", "f5"], ["test"] * 6, ["b1", "b1", "b0", "b2", "b2", "b2"],
     [[0.3, -0.2, 0.8, 0.1, np.nan, 0.4], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]),
]


@pytest.mark.parametrize("field_ids,splits,blocks,values", CASES)
def test_interval_rows_match_brute_force(field_ids, splits, blocks, values):
    R, seed, level = 37, 3, 0.9
    draws = split_draws(field_ids, splits, blocks, R, seed, level)
    stats = [Statistic({"stat": str(i)}, np.array(v, dtype=float), {"n_units": np.arange(len(field_ids))}) for i, v in enumerate(values)]
    rows = summarise(stats, draws)
    assert [r["split"] for r in rows] == [s for s in sorted(set(splits)) for _ in stats]
    for row in rows:
        split = row["split"]
        cols = [i for i, s in enumerate(splits) if s == split]
        v = np.array(values[int(row["stat"])], dtype=float)[cols]
        block_ids = sorted({blocks[i] for i in cols}, key=str.encode)
        field_sorted = sorted({field_ids[i] for i in cols}, key=str.encode)
        block_draws = np.random.default_rng(seed).integers(0, len(block_ids), size=(R, len(block_ids)))
        field_draws = np.random.default_rng(seed).integers(0, len(field_sorted), size=(R, len(field_sorted)))
        ci = _brute_interval(v, [block_ids.index(blocks[i]) for i in cols], block_draws, level)
        fc = _brute_interval(v, [field_sorted.index(field_ids[i]) for i in cols], field_draws, level)
        defined = v[~np.isnan(v)]
        assert row["n_fields"] == defined.size
        assert row["n_units"] == sum(cols)
        if defined.size == 0:
            assert all(row[c] is None for c in INTERVAL_COLUMNS if c != "n_fields")
            continue
        assert row["estimate"] == pytest.approx(defined.mean(), abs=1e-15)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(ci, abs=1e-12)
        assert (row["fc_low"], row["fc_high"]) == pytest.approx(fc, abs=1e-12)


def test_all_split_has_fresh_draws_over_every_block():
    draws = split_draws(["a", "b", "c"], ["dev", "test", "test"], ["x", "y", "z"], 10, 0, 0.95, with_all=True)
    assert sorted(draws) == ["all", "dev", "test"]
    assert draws["all"].columns.tolist() == [0, 1, 2]
    expected = np.random.default_rng(0).integers(0, 3, size=(10, 3))
    counts = np.stack([np.bincount(row, minlength=3) for row in expected])
    assert draws["all"].block_counts.tolist() == counts.tolist()
    assert summarise([Statistic({}, np.array([1.0, 2.0, 3.0]))], draws)[0]["split"] == "dev"  # "all" only on request
    assert [r["split"] for r in summarise([Statistic({}, np.array([1.0, 2.0, 3.0]))], draws, ["all"])] == ["all"]


def test_common_random_numbers_make_a_contrast_its_parts_difference():
    """A contrast and its two sides are resampled together: with the same fields defined,
    each replicate of left − right is the difference of the sides' replicates."""
    from rapgen.scores.interventions.core import replicates

    draws = split_draws(["a", "b", "c", "d"], ["test"] * 4, ["x", "x", "y", "z"], 200, 0, 0.95)["test"]
    left, right = np.array([0.5, 0.7, 0.2, 0.9]), np.array([0.1, 0.3, 0.4, 0.2])
    reps = replicates(np.stack([left, right, left - right]), draws)
    assert np.allclose(reps[0] - reps[1], reps[2], atol=1e-14)


def test_scorer_draws_give_the_same_rows():
    from rapgen.scores.bootstrap import draw_counts
    from rapgen.scores.interventions.core import draws_from_scorer

    ids, splits, blocks = ["b", "a", "c"], ["dev", "dev", "test"], ["y", "x", "x2"]
    scorer = {("dev", "block"): (("x", "y"), draw_counts(2, 30, 0)), ("dev", "field"): (("a", "b"), draw_counts(2, 30, 0)),
              ("test", "block"): (("x2",), draw_counts(1, 30, 0)), ("test", "field"): (("c",), draw_counts(1, 30, 0))}
    mine = split_draws(ids, splits, blocks, 30, 0, 0.95)
    theirs = draws_from_scorer(scorer, ids, splits, blocks, 0.95)
    stats = [Statistic({"s": "x"}, np.array([0.2, 0.9, 0.4]))]
    assert summarise(stats, mine) == summarise(stats, theirs)
