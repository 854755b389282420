"""The leaderboard's metric/policy data, its headline strip and the Compare page's data,
checked against the score files they copy (no number is computed by the site)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from rapgen.archive import open_release
from rapgen.archive import Archive
from rapgen.site.inputs import load_score_outputs
from rapgen.site.model import build_site_model
from rapgen.site.render import render_pages

from test_site_support import make_score_outputs, make_site_archive

PAIRS = [  # track, split, policy, condition, metric, entry_a, kind_a, entry_b, kind_b, estimate, ci_low, ci_high, n_fields
    ("all_origin", "test", "canonical", "A3", "spearman", "m-open", "model", "ewma", "baseline", 0.125, 0.02, 0.25, 3),
    ("all_origin", "test", "canonical", "A3", "spearman", "ewma", "baseline", "m-prop", "model", -0.0625, -0.125, 0.0, 3),
    ("all_origin", "test", "split", "A3", "spearman", "m-open", "model", "ewma", "baseline", 0.5, 0.4, 0.6, 3),
]


@pytest.fixture(scope="module")
def site_and_scores(tmp_path_factory):
    base = tmp_path_factory.mktemp("choices")
    root = make_site_archive(base / "repo")
    scores = make_score_outputs(base / "scores", Archive(root).manifest_sha256)
    cols = "track,split,policy,condition,metric,entry_a,kind_a,entry_b,kind_b,estimate,ci_low,ci_high,n_fields".split(",")
    pd.DataFrame(PAIRS, columns=cols).to_csv(scores / "pairs.csv", index=False)
    outputs = load_score_outputs(scores)
    return build_site_model(open_release(root), outputs), outputs, root, scores


def test_switch_data_copies_every_policy_and_metric_with_its_rank(site_and_scores):
    site, out, _, _ = site_and_scores
    doc = json.loads(site.leader_switch)
    assert sorted(doc["metrics"]) == ["jsd", "spearman", "tv", "tv_gain"]
    assert doc["metrics"]["tv"]["higher"] is False and doc["metrics"]["spearman"]["higher"] is True
    panel = doc["panels"]["leaderboard-test-all-origin"]
    lb, rk = out.leaderboard, out.ranks
    for policy in ("canonical", "flip"):
        for metric in ("tv", "tv_gain"):
            for i, entry in enumerate(panel["models"]):
                row = lb[(lb.track == "all_origin") & (lb.split == "test") & (lb.policy == policy) & (lb.entry == entry)
                         & (lb.condition == "A1") & (lb.metric == metric)].iloc[0]
                r = rk[(rk.track == "all_origin") & (rk.split == "test") & (rk.policy == policy) & (rk.condition == "A1")
                       & (rk.metric == metric) & (rk.entry == entry)]
                got = panel["values"][f"{policy}/{metric}"]["A1"][i]
                assert got[:3] == [round(row.estimate, 4), round(row.ci_low, 4), round(row.ci_high, 4)]
                assert got[3] == (float(r.iloc[0]["rank"]) if len(r) else None)
    assert len(panel["values"]["split/jsd"]["BASE"]) == len(panel["baselines"]) == 6


def test_headline_reads_the_contrast_and_the_ceiling(site_and_scores):
    site, out, _, _ = site_and_scores
    hl = site.headline["test"]
    panel = next(p for p in site.panels["test"] if p.track == "all_origin")
    assert hl.entry == panel.rows[0].entry
    ct = out.contrasts
    row = ct[(ct.track == "all_origin") & (ct.split == "test") & (ct.policy == "canonical") & (ct.metric == "spearman")
             & (ct.entry == hl.entry) & (ct.contrast == "A3-ewma")].iloc[0]
    assert (hl.gap_to_ewma.value, hl.gap_to_ewma.ci_low, hl.gap_to_ewma.ci_high) == (row.estimate, row.ci_low, row.ci_high)
    assert (hl.ceiling.value, hl.ceiling.ci_low, hl.ceiling.ci_high) == (0.9013, 0.88, 0.92)
    page = render_pages(site, site_folder=out.folder)["leaderboard.md"]
    assert "Reliability ceiling: 0.901 <span class=\"rap-ci\">[0.880, 0.920]</span>" in page
    assert "Exposure caveat" in page and 'id="lb-metric"' in page and "data-switch='" in page


def test_compare_data_is_the_pairs_of_the_headline_policy(site_and_scores):
    site, _, _, _ = site_and_scores
    doc = json.loads(site.compare.data)
    names = [e[0] for e in doc["entries"]]
    assert names[:2] == ["m-open", "m-prop"] and "ewma" in names
    rows = doc["pairs"]["all_origin/test"]["A3/spearman"]
    assert [names[rows[0][0]], names[rows[0][1]], *rows[0][2:]] == ["m-open", "ewma", 0.125, 0.02, 0.25, 3]
    assert len(rows) == 2  # the split-policy row stays in the download only
    pages = render_pages(site, site_folder=site_and_scores[1].folder)
    assert "compare.md" in pages and "data-compare='" in pages["compare.md"]


def test_no_pairs_file_no_compare_page(site_and_scores, tmp_path):
    _, _, root, scores = site_and_scores
    bare = tmp_path / "scores"
    shutil.copytree(scores, bare)
    (bare / "pairs.csv").unlink()
    site = build_site_model(open_release(root), load_score_outputs(bare))
    assert site.compare is None
    assert "compare.md" not in render_pages(site, site_folder=bare)


def test_downloads_offer_every_table_as_csv_and_parquet(site_and_scores, tmp_path):
    from rapgen.site.render import render_docs

    _, _, root, scores = site_and_scores
    docs = render_docs(open_release(root), scores, tmp_path / "docs").docs_dir
    for name in ("leaderboard", "contrasts", "ranks", "pairs", "field_scores", "origin_scores", "compositions"):
        csv = docs / "downloads" / f"{name}.csv"
        assert csv.read_bytes() == (scores / f"{name}.csv").read_bytes()
        back = pd.read_parquet(docs / "downloads" / f"{name}.parquet")
        assert list(back.columns) == list(pd.read_csv(csv, nrows=0).columns) and len(back) == len(pd.read_csv(csv))
    assert (docs / "downloads" / "units.parquet").is_file() == (scores / "units.parquet").is_file()
    page = (docs / "leaderboard.md").read_text(encoding="utf-8")
    assert "[Parquet](downloads/pairs.parquet)" in page


def test_field_forecasts_copy_units_predictions_against_the_realised_window(site_and_scores):
    site, out, _, _ = site_and_scores
    page = next(p for p in site.field_pages if p.forecasts)
    doc = json.loads(page.forecasts)
    assert ["ewma/BASE", "ewma (baseline)"] in doc["options"] and doc["options"][0][0].startswith("m-")
    u = out.units
    origin = doc["origins"][0]
    row = u[(u.policy == "canonical") & (u.entry == "m-open") & (u.condition == "A3") & (u.field_id == page.field_id)
            & (u.origin == origin)].iloc[0]
    assert doc["points"]["m-open/A3"]["D2"][0] == round(float(row["p_D2"]), 3)
    comp = out.compositions
    c = comp[(comp.policy == "canonical") & (comp.field_id == page.field_id) & (comp.window_start == origin)].iloc[0]
    total = sum(float(c[f"D{i}"]) for i in range(8))
    assert doc["realised"]["D2"][0] == round(float(c["D2"]) / total, 3)
