"""Tracks per release (partial, forecast_strict, live) by hand, and releases.csv on arrays and on the tiny archive."""

from __future__ import annotations

import csv
from datetime import date

import numpy as np
import pytest

from rapgen.archive import open_release
from rapgen.scores import compute_scores, write_scores
from rapgen.scores.bootstrap import draw_counts
from rapgen.scores.releases import ReleaseScope, releases_table, statistic_ranks, track_masks, StatKey
from rapgen.scores.units import Entry

O1, O2, O3 = date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1)
ORIGINS = (O1, O2, O3)
ENTRIES = [
    Entry("full", "model", "A0", date(2023, 6, 1)),  # every origin, early cutoff
    Entry("late", "model", "A0", date(2024, 9, 1)),  # joins at O2 (later-origin files), late cutoff
    Entry("live-only", "model", "A0", None),  # only O3, submitted as a Live entry; unknown cutoff
    Entry("ewma", "baseline", "BASE"),
]
HAS = np.array([[1, 1, 1], [0, 1, 1], [0, 0, 1], [1, 1, 1]], dtype=bool)  # where each entry has units at all


def scope(n, resolved, strict, listed, on_time=(), live=()):
    return ReleaseScope(n, date(2025, 1, n), tuple(resolved), strict, frozenset(listed), frozenset(on_time), tuple(live))


ALL = {(m, o) for m in ("full", "late", "live-only") for o in ORIGINS}
CASES = [
    # release 1: O1, O2 resolved; "late" has O2 only -> partial 1 of 2; strict O2: "full" (cutoff 2023-06) in, "late" cutoff after O2
    (scope(1, (O1, O2), O2, ALL - {("late", O3), ("live-only", O3)}),
     {"all_origin": [1, 0, 0, 1], "forecast_strict": [1, 0, 0, 1]}, {"full": 2, "late": 1, "live-only": 0}, [0, 1, 0, 0], None),
    # release 2: O3 resolved and was open; "late" covers O2 and O3 of three -> partial 2 of 3; "live-only" on time at O3
    (scope(2, (O1, O2, O3), O3, ALL, on_time={("live-only", O3), ("late", O3)}, live=(O3,)),
     {"all_origin": [1, 0, 0, 1], "forecast_strict": [1, 1, 0, 1], "live": [0, 1, 1, 1]}, {"full": 3, "late": 2, "live-only": 1},
     [0, 1, 1, 0], [[0, 0, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]]),
    # same, but the O3 files of "late" not yet listed (merged after the release): late's live entry has no units to score
    (scope(3, (O1, O2, O3), O3, ALL - {("late", O3)}, on_time={("live-only", O3), ("late", O3)}, live=(O3,)),
     {"all_origin": [1, 0, 0, 1], "forecast_strict": [1, 0, 0, 1], "live": [0, 0, 1, 1]}, {"full": 3, "late": 1, "live-only": 1},
     [0, 1, 1, 0], [[0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 1]]),
    # an entry received late (not on time) takes no part in live; "full" was on time at both live origins
    (scope(4, (O1, O2, O3), O3, ALL, on_time={("full", O2), ("full", O3)}, live=(O2, O3)),
     {"all_origin": [1, 0, 0, 1], "forecast_strict": [1, 1, 0, 1], "live": [1, 0, 0, 1]}, {"full": 3, "late": 2, "live-only": 1},
     [0, 1, 1, 0], [[0, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 1]]),
]


@pytest.mark.parametrize("sc,participates,n_covered,partial,live_mask", CASES, ids=[f"release{c[0].number}" for c in CASES])
def test_participation_by_hand(sc, participates, n_covered, partial, live_mask):
    masks = track_masks(sc, ENTRIES, ORIGINS, HAS)
    assert sorted(masks) == sorted(participates)
    for track, expected in participates.items():
        assert masks[track].participates.astype(int).tolist() == expected, track
    assert {e.entry: int(n) for e, n in zip(ENTRIES, masks["all_origin"].n_origins) if e.kind == "model"} == n_covered
    assert masks["all_origin"].partial.astype(int).tolist() == partial
    # all_origin and forecast_strict take every participant over the same origins
    assert (masks["all_origin"].origin_mask == np.array([o in sc.resolved for o in ORIGINS])).all()
    assert (masks["forecast_strict"].origin_mask == np.array([o == sc.strict_origin for o in ORIGINS])).all()
    if live_mask is not None:
        assert masks["live"].origin_mask.astype(int).tolist() == live_mask


def _values(seed=0):
    """(E, P=1, M=6, F=4, O=3) unit values; NaN marks units an entry does not have."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, size=(len(ENTRIES), 1, 6, 4, 3))
    values[~HAS[:, None, None, None, :].repeat(4, axis=3).repeat(6, axis=2)] = np.nan
    return values


FIELD_SPLIT = np.array(["test"] * 4, dtype=object)
UNITS_OF = {("test", "block"): (("b0", "b1"), np.array([0, 0, 1, 1]))}
DRAWS = {("test", "block"): (("b0", "b1"), draw_counts(2, 50, 0))}


def test_live_scores_a_model_over_its_own_origins_and_ranks_within_its_origin_set():
    sc = CASES[3][0]
    values = _values()
    applicable = np.zeros((len(ENTRIES), 6), dtype=bool)
    applicable[:, 0] = True  # spearman only
    table = releases_table([sc], ENTRIES, ORIGINS, values, applicable, HAS, FIELD_SPLIT, ["test"], UNITS_OF, DRAWS, 0.95)
    rows = {(r[2], r[5]): r for r in table.rows()}
    # "full" in live: the field means over O2 and O3 only, then the field-macro
    expected = np.nanmean(values[0, 0, 0][:, 1:], axis=1).mean()
    assert rows[("live", "full")][8] == pytest.approx(expected, abs=1e-15)
    # all_origin over O1..O3; "late" is partial there: no row
    assert rows[("all_origin", "full")][8] == pytest.approx(values[0, 0, 0].mean(axis=1).mean(), abs=1e-15)
    assert ("all_origin", "late") not in rows and ("live", "late") not in rows
    assert [r[0] for r in table.rows()] == [4] * len(table) and table.rows()[0][1] == "2025-01-04"


def test_baselines_rank_against_each_origin_set():
    keys = [
        StatKey(1, "live", 0, 0, 0, (2,)), StatKey(1, "live", 1, 0, 0, (1, 2)),
        StatKey(1, "live", 3, 0, 0, (1, 2)),  # the baseline's own row: every live origin
        StatKey(1, "live", 3, 0, 0, (2,), own=False),  # the baseline over the first model's origin set
    ]
    entries = [Entry("a", "model", "A3"), Entry("b", "model", "A3"), Entry("c", "model", "A3"), Entry("ewma", "baseline", "BASE")]
    low = np.array([0.5, 0.1, 0.2, 0.6])
    high = np.array([0.55, 0.15, 0.3, 0.7])
    rank = statistic_ranks(keys, entries, low, high)
    # "a" is beaten by the baseline over {O3} (0.6 > 0.55); "b" by the baseline's own row (0.2 > 0.15),
    # and the baseline's own rank comes from the group of every live origin (b's group): first.
    assert rank.tolist()[:3] == [2.0, 2.0, 1.0] and np.isnan(rank[3])


@pytest.fixture(scope="module")
def scored(_tiny_template, tmp_path_factory):
    result = compute_scores(open_release(_tiny_template.root), resamples=200, diagnostics=False)
    out = tmp_path_factory.mktemp("releases")
    write_scores(result, out)
    return result, out


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_format1_is_one_implicit_release_equal_to_the_leaderboard(scored):
    _, out = scored
    releases = read_csv(out / "releases.csv")
    assert list(releases[0]) == ["release", "date", "track", "split", "policy", "entry", "condition", "metric", "estimate", "ci_low",
                                 "ci_high", "rank"]
    assert {r["release"] for r in releases} == {"1"}
    lb = {(r["track"], r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): r for r in read_csv(out / "leaderboard.csv")}
    got = {(r["track"], r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): r for r in releases}
    assert set(got) == set(lb)
    for key, r in got.items():
        assert (r["estimate"], r["ci_low"], r["ci_high"]) == (lb[key]["estimate"], lb[key]["ci_low"], lb[key]["ci_high"]), key
    ranks = {(r["track"], r["split"], r["policy"], r["condition"], r["metric"], r["entry"]): r["rank"] for r in read_csv(out / "ranks.csv")}
    for (track, split, policy, entry, condition, metric), r in got.items():
        group = "A3" if condition == "BASE" else condition
        assert r["rank"] == ranks.get((track, split, policy, group, metric, entry), ""), (track, entry, condition, metric)


def test_format1_has_an_empty_live_csv(scored):
    _, out = scored
    assert (out / "live.csv").read_text() == (
        "split,policy,entry,kind,condition,metric,origins,n_origins,estimate,ci_low,ci_high,n_fields,rank\n")
