"""Scoring a checked Ideas archive: tracks, axes, awaiting evaluation, and an independent recomputation."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from rapgen.kinds.ideas.archive.check import check_archive
from rapgen.kinds.ideas.scores.score import score_archive, score_files

RS = "archive/models/rising-terms"


def scored(files, **kw):
    archive, found = check_archive(files)
    assert found == []
    return archive, score_archive(archive, resamples=200, **kw)


def test_rows_cover_tracks_axes_entries_and_metrics(ideas_files):
    _, s = scored(ideas_files)
    keys = {(r.stat.track, *r.stat.axes, r.stat.entry) for r in s.rows}
    assert {k[0] for k in keys} == {"all_cutoff", "forecast_strict"}  # the reference models know nothing after 2024-03-31
    assert {(k[1], k[2]) for k in keys} == {(j, g) for j in ("lexical-a", "lexical-b") for g in ("default", "strict")}
    assert len(s.rows) == 2 * 4 * 2 * 8  # tracks x judge-gate x models x metrics
    first = s.rows[0].stat
    assert (first.track, first.axes, first.entry, first.metric) == ("all_cutoff", ("lexical-a", "default"), "recent-titles", "hit@5")
    strict = [r for r in s.rows if r.stat.track == "forecast_strict" and r.stat.metric == "hit@5"]
    assert {r.n_items for r in strict} == {3}  # the 2024-07-01 cutoff of three topics
    groups = {g.key for g in s.groups}
    assert ("all_cutoff", "all", "lexical-a", "default", "hit@5", "") in groups and len(groups) == 2 * 4 * 3  # "": not a Live cutoff set


def test_a_judge_without_evaluator_files_is_awaiting_evaluation(ideas_files):
    for name in ("candidates", "judgments"):
        del ideas_files[f"{RS}/eval/lexical-b/{name}.parquet"]
    _, s = scored(ideas_files)
    waiting = [r for r in s.rows if r.stat.entry == "rising-terms" and r.stat.axes[0] == "lexical-b"]
    assert waiting and all(r.estimate is None and r.n_items == 0 and r.rank is None for r in waiting)
    assert all(r.stat.n_valid == 6 or r.stat.track == "forecast_strict" for r in waiting)


def _independent_means(files: dict, model: str, judge: str, pm: int, s_min: int) -> dict[str, float]:
    """Hit@5, P@5 and MRR per episode from the parquet files with pandas, then the episode mean."""
    j = pd.read_parquet(io.BytesIO(files[f"archive/models/{model}/eval/{judge}/judgments.parquet"]))
    j["ok"] = (j["P"].fillna(-9) + j["M"].fillna(-9) >= pm) & (j["S"].fillna(-9) >= s_min)
    episodes = pd.read_json(io.BytesIO(files["archive/benchmark/episodes.jsonl"]), lines=True)["episode_id"]
    rows = []
    for eid in episodes:
        taken, c = set(), []
        sub = j[j["episode_id"] == eid].sort_values(["rank", "cand_rank"])
        for r in range(1, 6):
            hit = sub[(sub["rank"] == r) & sub["ok"] & ~sub["arxiv_id"].isin(taken)].head(1)
            c.append(len(hit))
            taken.update(hit["arxiv_id"])
        rows.append({"hit@5": float(sum(c) > 0), "p@5": sum(c) / 5, "mrr": next((1 / (k + 1) for k, v in enumerate(c) if v), 0.0)})
    return pd.DataFrame(rows).mean().to_dict()


@pytest.mark.parametrize("model", ["recent-titles", "rising-terms"])
@pytest.mark.parametrize("judge, gate, pm, s_min", [("lexical-a", "default", 5, 2), ("lexical-b", "strict", 5, 3)])
def test_scores_equal_an_independent_recomputation(ideas_files, model, judge, gate, pm, s_min):
    _, s = scored(ideas_files)
    want = _independent_means(ideas_files, model, judge, pm, s_min)
    got = {r.stat.metric: r.estimate for r in s.rows
           if r.stat.track == "all_cutoff" and r.stat.axes == (judge, gate) and r.stat.entry == model}
    for metric, value in want.items():
        assert abs(got[metric] - value) <= 1e-9, metric


def test_the_files_are_deterministic(ideas_files):
    archive, _ = check_archive(ideas_files)
    a = score_files(archive, resamples=200)
    b = score_files(archive, resamples=200)
    assert a == b
    header = a["leaderboard.csv"].decode().splitlines()[0]
    assert header == "track,split,judge,gate,entry,kind,condition,metric,estimate,ci_low,ci_high,rank,p_first,n_items,n_valid,n_invalid"
    pairs = a["pairs.csv"].decode().splitlines()
    assert pairs[0].startswith("track,split,judge,gate,metric,entry_a,kind_a,condition_a,entry_b")
    assert len(pairs) == 1 + 2 * 4 * 3  # one pair (the two models) per rank group


def test_coverage_and_novelty_are_defined_with_their_files(ideas_files):
    _, s = scored(ideas_files)
    for r in s.rows:
        if r.stat.metric in ("coverage", "novelty", "budget"):
            assert r.estimate is not None and 0 <= r.estimate <= 1
    del ideas_files["archive/benchmark/future_clusters.parquet"]
    _, s = scored(ideas_files)
    assert all(r.estimate is None for r in s.rows if r.stat.metric == "coverage")
    assert not np.isnan([r.estimate for r in s.rows if r.stat.metric == "novelty"]).any()


def test_judge_agreement_pairs_the_same_candidates_whatever_the_row_order(ideas_files):
    from rapgen.kinds.ideas.archive.eval_tables import JudgmentTable
    from rapgen.kinds.ideas.scores.diagnostics import _kappa, _shared, passes

    archive, found = check_archive(ideas_files)
    assert found == []
    mf = archive.models["rising-terms"]
    ta, tb = mf.evals["lexical-a"][1], mf.evals["lexical-b"][1]
    ra, rb = _shared(ta, tb)  # rows aligned: the same candidate list judged twice
    shuffled = JudgmentTable.from_records(list(reversed(tb.records())))
    ra2, rb2 = _shared(ta, shuffled)  # the join
    gate = archive.ledger.gates[0]
    assert np.array_equal(ra, ra2) and len(ra) == int((ta.scored & tb.scored).sum())
    assert np.array_equal(passes(tb, gate)[rb], passes(shuffled, gate)[rb2])
    assert _kappa(10, 10, 10, 10) is None and _kappa(4, 2, 2, 4) == pytest.approx(1.0) and _kappa(0, 0, 0, 0) is None
