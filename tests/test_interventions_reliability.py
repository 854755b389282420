"""Reliability additions (INTERVENTIONS.md §6): the posterior-predictive ceiling with its
per-replicate EWMA gap, and revision-target reliability under its exact random-number protocol,
each against a plain re-implementation."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from scipy.stats import rankdata

from rapgen.scores.interventions import posterior_ceiling, revision_reliability, revision_section, split_draws

ORIGINS = [date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1), date(2025, 7, 1)]
FIELD_IDS = ["zeta", "alpha", "mid"]  # not in byte order: the protocol sorts them


def _spearman(a, b) -> float:
    """SCORING.md §2 with scipy's ranks: a constant -> 0; else b constant -> undefined."""
    if np.ptp(a) <= 1e-12:
        return 0.0
    if np.ptp(b) <= 1e-12:
        return np.nan
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def _brute_revision(counts, splits, seed):
    rng = np.random.default_rng(seed)
    out = {}
    months = [d.year * 12 + d.month for d in ORIGINS]
    for h in (6, 12, 18):
        for fi in sorted(range(len(FIELD_IDS)), key=lambda i: FIELD_IDS[i]):
            for oi, m in enumerate(months):
                if m + h not in months:
                    continue
                oj = months.index(m + h)
                a, b = counts[fi, oi], counts[fi, oj]
                if a.sum() < 2 or b.sum() < 2:
                    continue
                keys_a = rng.random((splits, a.sum()))
                keys_b = rng.random((splits, b.sum()))
                rhos = []
                for s in range(splits):
                    halves = []
                    for c, keys in ((a, keys_a[s]), (b, keys_b[s])):
                        papers = np.repeat(np.arange(8), c)[np.argsort(keys)]
                        first, second = papers[: c.sum() // 2], papers[c.sum() // 2:]
                        halves.append([np.bincount(x, minlength=8) / x.size for x in (first, second)])
                    (u1, u2), (v1, v2) = halves
                    rhos.append(_spearman(np.round(v1 - u1, 12), np.round(v2 - u2, 12)))
                rhos = [r for r in rhos if not np.isnan(r)]
                value = np.nan
                if rhos:
                    r = float(np.mean(rhos))
                    value = 2 * r / (1 + r) if abs(1 + r) > 1e-12 else np.nan
                out[(h, fi, oi)] = value
    return out


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(11)
    c = rng.integers(0, 6, size=(3, 4, 8))
    c[1, 2] = 0  # alpha's third origin: no papers, its pairs draw nothing
    c[1, 2, 3] = 1  # one paper is not enough
    return c


def test_revision_reliability_matches_protocol(counts):
    pairs = revision_reliability(counts, FIELD_IDS, ORIGINS, splits=25, seed=4)
    brute = _brute_revision(counts, 25, 4)
    assert [(p.horizon, p.field, p.first) for p in pairs] == list(brute)  # same pairs, same draw order
    for p in pairs:
        assert ORIGINS[p.second].toordinal() > ORIGINS[p.first].toordinal()
        want = brute[(p.horizon, p.field, p.first)]
        assert (np.isnan(p.reliability) and np.isnan(want)) or p.reliability == pytest.approx(want, abs=1e-12)
    assert not any(p.field == 1 and 2 in (p.first, p.second) for p in pairs)


def test_revision_section_rows(counts):
    pairs = revision_reliability(counts, FIELD_IDS, ORIGINS, splits=25, seed=4)
    draws = split_draws(FIELD_IDS, ["dev", "test", "dev"], ["b1", "b2", "b1"], 30, 0, 0.95, with_all=True)
    section = revision_section(pairs, 3, draws)
    assert sorted(section) == ["all", "dev", "test"]
    for split, rows in section.items():
        assert [r["horizon"] for r in rows] == [6, 12, 18]
        cols = draws[split].columns.tolist()
        for row in rows:
            mine = [p for p in pairs if p.horizon == row["horizon"] and p.field in cols]
            assert row["n_pairs"] == len(mine)
            assert row["n_defined"] == sum(not np.isnan(p.reliability) for p in mine)
            fv = [np.nanmean([p.reliability for p in mine if p.field == f]) for f in cols
                  if any(p.field == f and not np.isnan(p.reliability) for p in mine)]
            if fv:
                assert row["estimate"] == pytest.approx(np.mean(fv), abs=1e-12)
            assert row["n_fields"] == len(fv)


def test_posterior_ceiling_and_ewma_gap_per_replicate():
    rep = np.array([[0.81, 0.64, np.nan], [0.49, np.nan, np.nan], [0.25, 0.36, 0.16], [0.9, 0.7, 0.8]])
    ewma = np.array([[0.5, 0.4, 0.3], [0.2, 0.1, np.nan], [np.nan, np.nan, np.nan], [0.6, 0.6, 0.6]])
    draws = split_draws(["a", "b", "c", "d"], ["test"] * 4, ["x", "x", "y", "z"], 40, 0, 0.95, with_all=True)
    out = posterior_ceiling(rep, ewma, draws)
    row = out["test"]
    rep_fv = np.array([np.nanmean(r) for r in rep])
    ewma_fv = np.array([np.nanmean(r) if not np.isnan(r).all() else np.nan for r in ewma])
    assert row["estimate"] == pytest.approx(rep_fv.mean())
    assert row["ceiling"] == pytest.approx(np.sqrt(rep_fv.mean()))
    assert row["ceiling_ci_low"] == pytest.approx(np.sqrt(row["ci_low"]))
    assert row["ceiling_ci_high"] == pytest.approx(np.sqrt(row["ci_high"]))
    assert row["ewma_gap"] == pytest.approx(np.sqrt(rep_fv.mean()) - np.nanmean(ewma_fv))
    # Per replicate: sqrt(repeatability replicate) − EWMA replicate, on the same block draws.
    C = draws["test"].block_counts
    unit = np.array([0, 0, 1, 2])
    gaps = []
    for r in range(C.shape[0]):
        w = C[r][unit]
        ok_e = ~np.isnan(ewma_fv)
        num_e, den_e = (w * np.where(ok_e, ewma_fv, 0)).sum(), (w * ok_e).sum()
        if den_e:
            gaps.append(np.sqrt((w * rep_fv).sum() / w.sum()) - num_e / den_e)
    lo, hi = np.percentile(gaps, [2.5, 97.5])
    assert (row["ewma_gap_ci_low"], row["ewma_gap_ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert row["ewma_gap_n_fields"] == 3
    assert row["n_episodes"] == 12 and row["n_defined"] == 9
    assert out["all"]["estimate"] == row["estimate"]  # one split holds every field here


def _brute_gap_interval(rep_fv, entry_fv, unit_of, n_units, resamples, seed, level=0.95):
    """SCORING.md §5 by hand: a fresh default_rng(seed), draws (R, K), then per replicate
    the entry's ΣcS/ΣcN minus √ of the repeatability's ΣcS/ΣcN, on the same row of draws."""
    draws = np.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))
    gaps = []
    for r in range(resamples):
        c = [int((draws[r] == k).sum()) for k in range(n_units)]
        sums = {"rep": [0.0, 0.0], "entry": [0.0, 0.0]}
        for f, k in enumerate(unit_of):
            for name, fv in (("rep", rep_fv), ("entry", entry_fv)):
                if not np.isnan(fv[f]):
                    sums[name][0] += c[k] * fv[f]
                    sums[name][1] += c[k]
        if sums["rep"][1] > 0 and sums["entry"][1] > 0:
            gaps.append(sums["entry"][0] / sums["entry"][1] - np.sqrt(sums["rep"][0] / sums["rep"][1]))
    return tuple(np.percentile(gaps, [100 * (1 - level) / 2, 100 * (1 + level) / 2]))


def test_ceiling_gap_hand_computed_and_paired_on_the_split_draws():
    from rapgen.scores.interventions import ceiling_gaps

    nan = np.nan
    # Four test fields in blocks x, x, y, z (two origins each) and one dev field.
    rep = np.array([[0.81, 0.81], [0.64, nan], [0.49, 0.49], [0.36, 0.36], [0.25, 0.25]])
    entry_a = [[0.5, 0.3], [0.2, nan], [nan, nan], [0.1, 0.1], [0.4, nan]]
    undefined = [[nan, nan]] * 5
    ids, splits, blocks = ["f1", "f2", "f3", "f4", "d1"], ["test"] * 4 + ["dev"], ["x", "x", "y", "z", "w"]
    draws = split_draws(ids, splits, blocks, 200, 7, 0.95)
    rows = ceiling_gaps(rep, np.array([entry_a, undefined]), [("m", "model", "A3"), ("none", "model", "A1")], draws)
    assert [(r["split"], r["entry"]) for r in rows] == [("dev", "m"), ("dev", "none"), ("test", "m"), ("test", "none")]
    dev, dev_none, test, test_none = rows
    # test: repeatability field values .81 .64 .49 .36 -> mean .575, ceiling √.575 = 0.758288 (0.7582875);
    # the entry's field values .4 .2 (undefined) .1 -> mean 0.2333333; gap -0.524954 over 3 fields.
    assert test["estimate"] == pytest.approx(0.7 / 3 - np.sqrt(0.575), abs=1e-12)
    assert round(test["estimate"], 6) == -0.524954 and test["n_fields"] == 3
    assert (test["track"], test["policy"], test["metric"]) == ("all_origin", "canonical", "spearman")
    assert dev["estimate"] == pytest.approx(0.4 - 0.5, abs=1e-12) and dev["n_fields"] == 1
    # Block interval (blocks x y z, byte order) and field interval (f1..f4), each from its own fresh rng.
    rep_fv, entry_fv = np.array([0.81, 0.64, 0.49, 0.36]), np.array([0.4, 0.2, nan, 0.1])
    assert (test["ci_low"], test["ci_high"]) == pytest.approx(
        _brute_gap_interval(rep_fv, entry_fv, [0, 0, 1, 2], 3, 200, 7), abs=1e-9)
    assert (test["fc_low"], test["fc_high"]) == pytest.approx(
        _brute_gap_interval(rep_fv, entry_fv, [0, 1, 2, 3], 4, 200, 7), abs=1e-9)
    assert test["ci_low"] < test["estimate"] < test["ci_high"]
    # The dev split has one block: every replicate is the estimate itself.
    assert dev["ci_low"] == pytest.approx(-0.1, abs=1e-12) and dev["ci_high"] == pytest.approx(-0.1, abs=1e-12)
    for row in (dev_none, test_none):
        assert (row["estimate"], row["ci_low"], row["ci_high"], row["n_fields"]) == (None, None, None, 0)


def test_ceiling_gap_is_minus_the_ewma_gap_for_the_ewma_entry():
    from rapgen.scores.interventions import ceiling_gaps

    rep = np.array([[0.81, 0.64, np.nan], [0.49, np.nan, np.nan], [0.25, 0.36, 0.16], [0.9, 0.7, 0.8]])
    ewma = np.array([[0.5, 0.4, 0.3], [0.2, 0.1, np.nan], [np.nan, np.nan, np.nan], [0.6, 0.6, 0.6]])
    draws = split_draws(["a", "b", "c", "d"], ["test"] * 4, ["x", "x", "y", "z"], 40, 0, 0.95)
    (gap,) = ceiling_gaps(rep, ewma[None], [("ewma", "baseline", "BASE")], draws)
    post = posterior_ceiling(rep, ewma, draws)["test"]
    assert gap["estimate"] == pytest.approx(-post["ewma_gap"], abs=1e-12)
    assert (gap["ci_low"], gap["ci_high"]) == pytest.approx((-post["ewma_gap_ci_high"], -post["ewma_gap_ci_low"]), abs=1e-12)
    assert gap["n_fields"] == post["ewma_gap_n_fields"] == 3
