"""pairs.csv against a brute loop over units, and ranks.csv per metric (issue 16)."""

from __future__ import annotations

import csv


import numpy as np
import pytest

from rapgen.archive import open_release
from rapgen.scores import compute_scores, write_scores
from rapgen.scores.bootstrap import draw_counts
from rapgen.scores.pairs import build_pairs
from rapgen.scores.units import Entry

RESAMPLES = 200
BASELINES = {"recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge"}


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def scored(_tiny_template, tmp_path_factory):
    archive = open_release(_tiny_template.root)
    result = compute_scores(archive, resamples=RESAMPLES, diagnostics=False)
    out = tmp_path_factory.mktemp("pairs")
    write_scores(result, out)
    return archive, result, out


def test_build_pairs_by_condition_models_before_baselines():
    entries = [Entry("m2", "model", "A0"), Entry("m1", "model", "A0"), Entry("m1", "model", "A2"),
               Entry("ewma", "baseline", "BASE"), Entry("recent", "baseline", "BASE")]
    got = [(p.condition, entries[p.a].entry, entries[p.b].entry) for p in build_pairs(entries)]
    assert got == [
        ("A0", "m1", "m2"), ("A0", "m1", "ewma"), ("A0", "m1", "recent"), ("A0", "m2", "ewma"), ("A0", "m2", "recent"),
        ("A2", "m1", "ewma"), ("A2", "m1", "recent"),
        ("BASE", "ewma", "recent"),
    ]
    a2_ewma = [p for p in build_pairs(entries) if p.condition == "A2" and entries[p.b].entry == "ewma"][0]
    # A State answer and a baseline share spearman, tv, jsd, tv_gain; never pred_recent or state_recent.
    assert [["spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain"][m] for m in a2_ewma.metrics] == [
        "spearman", "tv", "jsd", "tv_gain"]


def _brute(result, track_origins, split, policy, a, b, metric, low_high=False):
    """The paired field-macro difference by plain loops over the units table."""
    inputs = result.inputs
    entries = inputs.entries
    ia = next(i for i, e in enumerate(entries) if (e.entry, e.kind, e.condition) == a)
    ib = next(i for i, e in enumerate(entries) if (e.entry, e.kind, e.condition) == b)
    m = ["spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain"].index(metric)
    p = ["canonical", "split", "single", "flip"].index(policy)
    field_scores = {}
    for f, fid in enumerate(inputs.field_ids):
        if inputs.field_split[f] != split:
            continue
        diffs = [inputs.values[ia, p, m, f, o] - inputs.values[ib, p, m, f, o] for o in track_origins]
        diffs = [d for d in diffs if not np.isnan(d)]
        if diffs:
            field_scores[fid] = sum(diffs) / len(diffs)
    if not field_scores:
        return None, None, None
    estimate = sum(field_scores.values()) / len(field_scores)
    # The §5 bootstrap by hand: per block, the sum and count of its fields' scores.
    blocks = sorted({inputs.field_block[f] for f in range(len(inputs.field_ids)) if inputs.field_split[f] == split},
                    key=lambda s: s.encode())
    all_blocks = inputs.draws[(split, "block")][0]
    C = draw_counts(len(all_blocks), RESAMPLES, 0)
    S = np.zeros(len(all_blocks))
    N = np.zeros(len(all_blocks))
    for f, fid in enumerate(inputs.field_ids):
        if fid in field_scores:
            k = all_blocks.index(inputs.field_block[f])
            S[k] += field_scores[fid]
            N[k] += 1
    assert set(blocks) <= set(all_blocks)
    den = C @ N
    reps = (C @ S)[den > 0] / den[den > 0]
    low, high = np.percentile(reps, [2.5, 97.5])
    return estimate, low, high


def test_pairs_match_a_brute_loop(scored):
    archive, result, out = scored
    rows = read_csv(out / "pairs.csv")
    assert rows and list(rows[0]) == ["track", "split", "policy", "condition", "metric", "entry_a", "kind_a", "entry_b", "kind_b",
                                      "estimate", "ci_low", "ci_high", "n_fields"]
    strict = archive.origins.strict_origin
    origins = list(archive.origins.origins)
    track_origins = {"all_origin": list(range(len(origins))), "forecast_strict": [origins.index(strict)]}
    rng = np.random.default_rng(5)
    sample = [rows[i] for i in rng.choice(len(rows), size=40, replace=False)]
    sample += [r for r in rows if r["kind_b"] == "baseline" and r["kind_a"] == "model"][:5]
    for r in sample:
        a = (r["entry_a"], r["kind_a"], r["condition"] if r["kind_a"] == "model" else "BASE")
        b = (r["entry_b"], r["kind_b"], r["condition"] if r["kind_b"] == "model" else "BASE")
        est, low, high = _brute(result, track_origins[r["track"]], r["split"], r["policy"], a, b, r["metric"])
        if est is None:
            assert r["estimate"] == "" and r["n_fields"] == "0"
            continue
        assert float(r["estimate"]) == pytest.approx(est, abs=1e-12), r
        assert float(r["ci_low"]) == pytest.approx(low, abs=1e-9) and float(r["ci_high"]) == pytest.approx(high, abs=1e-9), r


def test_a_pair_with_ewma_is_the_contrast(scored):
    """pairs.csv is a − b for every metric; the Ak-ewma contrast is the same for a higher-is-better
    metric and reference minus candidate (EWMA − model) for the distances tv and jsd."""
    _, _, out = scored
    contrasts = {(r["track"], r["split"], r["policy"], r["entry"], r["contrast"], r["metric"]): r
                 for r in read_csv(out / "contrasts.csv")}
    checked = flipped = 0
    for r in read_csv(out / "pairs.csv"):
        if r["entry_b"] == "ewma" and r["kind_a"] == "model" and r["condition"] in ("A0", "A1", "A3"):
            c = contrasts[(r["track"], r["split"], r["policy"], r["entry_a"], f"{r['condition']}-ewma", r["metric"])]
            assert r["n_fields"] == c["n_fields"]
            if r["metric"] not in ("tv", "jsd"):
                assert (r["estimate"], r["ci_low"], r["ci_high"]) == (c["estimate"], c["ci_low"], c["ci_high"])
            elif r["estimate"]:
                assert float(c["estimate"]) == pytest.approx(-float(r["estimate"]), abs=1e-15)
                assert float(c["ci_low"]) == pytest.approx(-float(r["ci_high"]), abs=1e-12)
                assert float(c["ci_high"]) == pytest.approx(-float(r["ci_low"]), abs=1e-12)
                flipped += 1
            checked += 1
    assert checked > 50 and flipped > 10


def test_every_pair_appears_once_per_track_split_policy_metric(scored):
    _, result, out = scored
    rows = read_csv(out / "pairs.csv")
    keys = [(r["track"], r["split"], r["policy"], r["condition"], r["metric"], r["entry_a"], r["entry_b"]) for r in rows]
    assert len(keys) == len(set(keys))
    # model-a and model-b share A0, A1, A3; model-b is outside forecast_strict, so strict has no such pair.
    pairs = {(r["track"], r["condition"], r["entry_a"], r["entry_b"]) for r in rows}
    assert ("all_origin", "A0", "model-a", "model-b") in pairs
    assert ("forecast_strict", "A0", "model-a", "model-b") not in pairs
    assert ("all_origin", "A2", "model-a", "ewma") in pairs and ("all_origin", "BASE", "arima110", "ewma") in pairs
    # a pair of two baselines appears under BASE only
    assert not [k for k in pairs if k[2] in BASELINES and k[1] != "BASE"]


def test_ranks_per_metric_follow_the_direction(scored):
    _, _, out = scored
    rows = read_csv(out / "ranks.csv")
    assert {r["metric"] for r in rows} == {"spearman", "tv", "jsd", "tv_gain"}  # descriptive metrics are not ranked
    lb = {(r["track"], r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): r for r in read_csv(out / "leaderboard.csv")}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["track"], r["split"], r["policy"], r["condition"], r["metric"]), []).append(r)
    for (track, split, policy, condition, metric), members in groups.items():
        def row(r):
            return lb[(track, split, policy, r["entry"], "BASE" if r["entry"] in BASELINES else condition, metric)]
        for r in members:
            if r["rank"] == "":
                continue
            me = row(r)
            if metric == "tv" or metric == "jsd":  # lower is better: beaten by intervals entirely below
                better = sum(1 for o in members if o is not r and row(o)["ci_high"] != "" and float(row(o)["ci_high"]) < float(me["ci_low"]))
            else:
                better = sum(1 for o in members if o is not r and row(o)["ci_low"] != "" and float(row(o)["ci_low"]) > float(me["ci_high"]))
            assert int(r["rank"]) == 1 + better, (track, split, policy, condition, metric, r["entry"])
    state = groups[("all_origin", "test", "canonical", "A2", "spearman")]
    assert [r["entry"] for r in state][0] == "model-a" and len(state) == 7

