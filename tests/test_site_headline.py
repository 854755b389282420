"""The headline strip on real score output of an archive with intervention records: the
best model's gap to the posterior-predictive ceiling is diagnostics.json's number, digit
for digit, and a score folder without it keeps the split-half line."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from factory import make_archive, reseal
from intervention_fixture import add_records

from rapgen.archive import open_release
from rapgen.cli import cli
from rapgen.site.filters import fmt_ci, fmt_delta, fmt_score
from rapgen.site.inputs import load_score_outputs
from rapgen.site.model import build_site_model
from rapgen.site.render import render_pages


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    root = tmp_path_factory.mktemp("headline") / "repo"
    make_archive(root)
    add_records(root, root.parent / "cache")
    reseal(root)
    out = root.parent / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(out), "--resamples", "40"])
    assert result.exit_code == 0, result.output
    return root, out


def _strip(page: str, split: str) -> str:
    start = page.index(f'id="headline-{split}"')
    return page[start:page.index("</div>", start)]


def test_strip_shows_the_scored_gap_to_the_ceiling(scored):
    root, out = scored
    site = build_site_model(open_release(root), load_score_outputs(out))
    page = render_pages(site, site_folder=out)["leaderboard.md"]
    body = json.loads((out / "diagnostics.json").read_text(encoding="utf-8"))
    checked = 0
    for split, hl in site.headline.items():
        (row,) = [r for r in body["reliability"]["ceiling_gap"]
                  if (r["split"], r["entry"], r["kind"], r["condition"]) == (split, hl.entry, "model", "A3")]
        assert (hl.gap_to_ceiling.value, hl.gap_to_ceiling.ci_low, hl.gap_to_ceiling.ci_high) == (
            row["estimate"], row["ci_low"], row["ci_high"])
        post = body["reliability"]["posterior"][split]
        strip = _strip(page, split)
        assert (f"Gap to the reliability ceiling (A3 − ceiling): {fmt_delta(row['estimate'])} "
                f"<span class=\"rap-ci\">{fmt_ci(row['ci_low'], row['ci_high'])}</span>") in strip
        assert (f"Reliability ceiling (posterior-predictive): {fmt_score(post['ceiling'])} "
                f"<span class=\"rap-ci\">{fmt_ci(post['ceiling_ci_low'], post['ceiling_ci_high'])}</span>") in strip
        assert "What the ceiling means" in strip
        # the gap is the strip's model estimate minus the ceiling: the site shows it, the scorer made it
        assert row["estimate"] == pytest.approx(hl.estimate.value - post["ceiling"], abs=1e-12)
        checked += 1
    assert checked == 2


def test_without_the_posterior_the_strip_keeps_the_split_half_line(scored, tmp_path):
    root, out = scored
    bare = tmp_path / "scores"
    shutil.copytree(out, bare)
    body = json.loads((bare / "diagnostics.json").read_text(encoding="utf-8"))
    for key in ("posterior", "ceiling_gap", "revision"):
        del body["reliability"][key]
    (bare / "diagnostics.json").write_text(json.dumps(body), encoding="utf-8")
    site = build_site_model(open_release(root), load_score_outputs(bare))
    strip = _strip(render_pages(site, site_folder=bare)["leaderboard.md"], "test")
    split_half = body["reliability"]["splits"]["test"]
    assert f"Reliability ceiling: {fmt_score(split_half['ceiling'])} " in strip
    assert "Gap to the reliability ceiling" not in strip and "What the ceiling means" not in strip
