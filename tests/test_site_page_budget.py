"""The Diagnostics page (with Figure 3) stays within issue 16's 400 KB of HTML: on a
synthetic release history with the same seven models and intervention records as the
full-scale synth, and with per-episode detail in downloads, so that more episodes do not
make the page longer."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from rapgen.archive import open_release
from rapgen.archive import open_verified
from rapgen.scores import compute_scores, write_scores
from rapgen.search import call_is_malformed, validate_call
from rapgen.site import build_site, render_docs
from rapgen.site.inputs import load_score_outputs
from rapgen.site.model import build_site_model
from rapgen.site.render import render_pages

PAGE_BUDGET = 400 * 1000  # bytes of HTML, embedded data included (bench/site.py's GOAL_PAGE)


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> tuple[Path, Path]:
    from rapgen.cli.sample_cmds import synth_records
    from rapgen.sample import write_synthetic_archive

    base = tmp_path_factory.mktemp("budget")
    write_synthetic_archive(base / "repo", "small", 0, records=synth_records, history=True)
    archive = open_verified(base / "repo", validate_call=validate_call).release()
    write_scores(compute_scores(archive, resamples=50, malformed=call_is_malformed), base / "scores")
    return base / "repo", base / "scores"


def test_the_diagnostics_page_is_within_the_budget(synth, tmp_path):
    root, scores = synth
    rendered = render_docs(open_release(root), scores, tmp_path / "docs")
    build_site(rendered.docs_dir, tmp_path / "site", synthetic=rendered.synthetic, manifest_sha256=rendered.manifest_sha256,
               archive_name=rendered.archive_name)
    models = {m for m in json.loads((scores / "scores.json").read_text())["tracks"]["all_origin"]["models"]}
    assert len(models) >= 6  # as many entries as the full-scale synth: the page's length is set by them
    for lang in ("", "zh/"):  # both editions; the downloads are one copy at the root
        page = tmp_path / "site" / lang / "diagnostics" / "index.html"
        text = page.read_text(encoding="utf-8")
        assert 'id="figure-3"' in text and 'id="reliability"' in text  # the page with Figure 3 and every section
        assert page.stat().st_size <= PAGE_BUDGET, (lang, page.stat().st_size)
        for name in ("reliability-by-episode.csv", "change-rich-tests-by-episode.csv"):
            assert (tmp_path / "site" / "downloads" / "diagnostics" / name).is_file()
            assert f'href="{"../" * (1 + lang.count("/"))}downloads/diagnostics/{name}"' in text


def test_more_episodes_do_not_lengthen_the_page(synth, tmp_path):
    root, scores = synth
    grown = tmp_path / "scores"
    shutil.copytree(scores, grown)
    body = json.loads((grown / "diagnostics.json").read_text(encoding="utf-8"))
    episodes = body["reliability"]["episodes"]
    body["reliability"]["episodes"] = [{**e, "field_id": f"{e['field_id']}-{k}"} for k in range(20) for e in episodes]
    (grown / "diagnostics.json").write_text(json.dumps(body), encoding="utf-8")

    def page_and_csv(folder: Path) -> tuple[str, str]:
        site = build_site_model(open_release(root), load_score_outputs(folder))
        table = next(t for s in site.diagnostics if s.key == "reliability" for t in s.tables if t.title == "Reliability by episode")
        return render_pages(site, site_folder=folder)["diagnostics.md"], table.download_csv

    before, _ = page_and_csv(scores)
    after, table_csv = page_and_csv(grown)
    assert abs(len(after) - len(before)) < 1000  # a histogram of 40 bins and a row count, whatever the episodes
    rows = list(csv.DictReader(io.StringIO(table_csv)))
    assert len(rows) == 20 * len(episodes)
    assert rows[0]["field_id"] == f"{episodes[0]['field_id']}-0" and float(rows[0]["reliability"]) == episodes[0]["reliability"]
    assert f"*One row per episode ({20 * len(episodes):,} rows): [reliability-by-episode.csv]" in after
