"""The Inspire pages: 'rapgen build --benchmark inspire' on the committed sample (one strict mkdocs
build, English and Chinese), every number taken from the score folder, the funnel figures drawn
by the local plotly.js, no label id on a target page, the synthetic banner on every page, and no
serious or critical axe finding."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.site.filters import fmt_score

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks" / "inspire"
FIXED = ["", "leaderboard/", "funnel/", "targets/", "models/", "diagnostics/", "releases/", "archive/", "submit/"]
VERSION = re.compile(r"v\d+$")
NAMES = {"bm25-brief": "BM25 brief (reference)", "keyword-loop": "Keyword loop (reference)"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("inspire-site")
    mp = pytest.MonkeyPatch()
    mp.chdir(REPO)  # rapgen.toml names the benchmark
    try:
        result = CliRunner().invoke(cli, ["build", "--benchmark", "inspire", "--site-dir", str(base / "site"),
                                          "--work-dir", str(base / "work"), "--resamples", "200"])
    finally:
        mp.undo()
    assert result.exit_code == 0, result.output
    # 9 pages, 90 targets and 2 models, in two languages
    assert result.output.startswith("Built 202 pages into "), result.output
    assert "The archive is synthetic; every page says so." in result.output
    return base


def _page(built: Path, path: str) -> str:
    return (built / "site" / path / "index.html").read_text(encoding="utf-8")


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_every_page_in_both_languages_with_the_synthetic_banner(built):
    targets = sorted(p.parent.name for p in (built / "site" / "targets").glob("insp-*/index.html"))
    assert len(targets) == 90
    pages = FIXED + [f"targets/{t}/" for t in targets] + ["models/bm25-brief/", "models/keyword-loop/"]
    for lang in ("", "zh/"):
        for path in pages:
            page = _page(built, lang + path)
            assert 'class="rap-synthetic"' in page, lang + path
            assert f'lang="{"zh" if lang else "en"}"' in page, lang + path
    assert "Inspire leaderboard" in _page(built, "") and "Inspire 排行榜" in _page(built, "zh/")
    assert "<h1" in _page(built, "zh/funnel/") and "漏斗" in _page(built, "zh/funnel/")
    for name in ("leaderboard.csv", "pairs.csv", "diagnostics.csv", "diagnostics.json", "units.parquet", "releases.csv", "replay.json"):
        assert (built / "site" / "downloads" / name).read_bytes() == (built / "work" / "scores" / name).read_bytes(), name


def test_the_leaderboard_shows_the_score_files_numbers(built):
    rows = _rows(built / "work" / "scores" / "leaderboard.csv")
    assert {r["gains"] for r in rows} == {"declared", "binary", "t2t3"} and {r["track"] for r in rows} == {"clean", "all", "flagged"}
    for lang in ("", "zh/"):
        page = _page(built, lang + "leaderboard/")
        checked = 0
        for r in rows:
            if r["cluster"] != "target" or r["metric"] not in ("ndcg@10", "recall@10", "mrr@10", "anyhit@10"):
                continue
            table = page.split(f'id="lb-{r["split"]}-{r["track"]}-{r["gains"]}-{r["condition"]}"', 1)[1].split("</table>", 1)[0]
            row = next(tr for tr in table.split("<tr>") if f'href="../models/{r["entry"]}/"' in tr)
            cell = f"{fmt_score(float(r['estimate']))}<br><small>[{fmt_score(float(r['ci_low']))}, {fmt_score(float(r['ci_high']))}]"
            assert cell in row, (lang, r)
            if r["gains"] == "declared":  # the rank groups: declared gains, target clusters
                assert f"{'排名' if lang else 'rank'} {r['rank']} · P({'第一' if lang else 'first'}) {fmt_score(float(r['p_first']), 2)}" in row
            else:
                assert "rap-rank" not in row
            checked += 1
        assert checked == 2 * 3 * 3 * 2 * 2 * 4  # splits x views x gain maps x conditions x entries x metrics
        # three levels of tabs: split, then view, then gain map
        assert page.count('class="tabbed-set') == 1 + 2 + 2 * 3


def test_the_funnel_figures_carry_the_three_stages_and_g_of_p(built):
    rows = {(r["track"], r["entry"], r["condition"], r["metric"]): float(r["estimate"])
            for f in ("leaderboard.csv", "diagnostics.csv") for r in _rows(built / "work" / "scores" / f)
            if (r["split"], r["gains"], r["cluster"]) == ("eval", "declared", "target")}
    page = _page(built, "funnel/")
    figures = [json.loads(html.unescape(m)) for m in re.findall(r"data-figure='([^']*)'", page)]
    assert len(figures) == 3 * 2  # per view: the stages and G(p)
    stages, curve = figures[0], figures[1]  # the clean view first
    first = stages["data"][0]
    assert first["name"] == "BM25 brief (reference) · Detailed brief" and first["type"] == "bar"
    assert first["y"] == [round(rows[("clean", "bm25-brief", "detailed", m)], 4) for m in ("exposed_gain", "selected_gain", "ndcg@10")]
    assert first["error_y"]["array"][2] is not None
    loop = next(s for s in curve["data"] if s["name"] == "Keyword loop (reference) · Detailed brief")
    assert loop["y"] == [round(rows[("clean", "keyword-loop", "detailed", f"progress@{k / 10:g}")], 4) for k in range(11)]
    assert loop["x"][0] == "0 %" and loop["x"][-1] == "100 %"
    # the figures' script is the site's own copy; no page loads anything from another origin
    assert (built / "site" / "assets" / "javascripts" / "plotly.min.js").stat().st_size > 1_000_000
    assert 'src="../assets/javascripts/plotly.min.js"' in page and 'src="../assets/javascripts/charts.js"' in page
    for path in FIXED:
        assert not re.search(r'<script[^>]+src="(https?:)?//', _page(built, path)), path
    model = _page(built, "models/keyword-loop/")
    assert len(re.findall(r"data-figure='", model)) == 3 * 2 and "Keyword loop (reference) · Terse brief" in model


def _fates(name: str, instance_id: str, labels: list[str]) -> list[str]:
    """What the entry did with each label, from its raw files (INSPIRE.md §2)."""
    folder = SAMPLE / "archive" / "models" / name
    line = next(p for p in _jsonl(folder / "predictions.jsonl") if (p["instance_id"], p["condition"]) == (instance_id, "detailed"))
    ranked: list[str] = []
    for entry in line["ranking"] or []:
        key = VERSION.sub("", entry["arxiv_id"])
        if key not in ranked:
            ranked.append(key)
    ranked = ranked[:10]
    seen = {i for c in _jsonl(folder / "traces.jsonl") if (c["instance_id"], c["condition"]) == (instance_id, "detailed")
            for i in c["returned_ids"]}
    out = []
    for a in labels:
        if a in ranked:
            out.append(f"ranked {ranked.index(a) + 1}" if a in seen else f"listed {ranked.index(a) + 1}, never returned")
        else:
            out.append("returned, left out" if a in seen else "not returned")
    return out


def test_a_target_page_shows_its_brief_tiers_and_fates_without_label_ids(built):
    judgements = pq.read_table(SAMPLE / "archive" / "benchmark" / "judgements.parquet").to_pylist()
    by_target = defaultdict(list)
    for j in judgements:
        by_target[j["instance_id"]].append(j)
    instances = {i["instance_id"]: i for i in _jsonl(SAMPLE / "archive" / "benchmark" / "instances.jsonl")}
    units = pq.read_table(built / "work" / "scores" / "units.parquet").to_pylist()
    fates_seen = set()
    for instance_id in sorted(by_target):
        page = _page(built, f"targets/{instance_id}/")
        labels = sorted(by_target[instance_id], key=lambda j: (-j["gain"], j["arxiv_id"]))
        for j in judgements:  # no label id of any target, nor its title
            assert j["arxiv_id"] not in page, (instance_id, j["arxiv_id"])
        text = " ".join(_text(page).replace("\u2019", "'").split())
        for brief in (instances[instance_id]["brief"], instances[instance_id]["brief_terse"]):
            assert " ".join(brief.split()[:12]) in text and " ".join(brief.split()[-12:]) in text, instance_id
        fates = _text(page.split(f'id="fates-{instance_id}"', 1)[1].split("</table>", 1)[0])
        expected = {name: _fates(name, instance_id, [j["arxiv_id"] for j in labels]) for name in ("bm25-brief", "keyword-loop")}
        rows = [r for r in fates.split("\n") if re.match(r"\s*A\d+ ", r)]
        assert len(rows) == len(labels)
        for n, (row, j) in enumerate(zip(rows, labels)):
            assert row.split()[:2] == [f"A{n + 1}", j["tier"]]
            for name in expected:
                assert expected[name][n] in row
                fates_seen.add(expected[name][n].split()[0])
        tiers = _text(page.split(f'id="tiers-{instance_id}"', 1)[1].split("</table>", 1)[0]).split()
        assert tiers[-1] == str(len(labels))
        scores = page.split(f'id="scores-{instance_id}"', 1)[1].split("</table>", 1)[0]
        for u in units:
            if u["instance_id"] == instance_id:
                row = next(tr for tr in scores.split("<tr>") if tr.startswith(f"<td>{NAMES[u['entry']]} · {u['condition'].capitalize()} brief</td>"))
                shown = [fmt_score(u[m]) for m in ("ndcg@10", "recall@10", "mrr@10", "exposed_gain", "selected_gain", "total_calls")]
                assert re.findall(r'<td data-sort="[^"]*">([^<]*)</td>', row) == shown, (instance_id, u["entry"])
    assert {"ranked", "returned,", "not"} <= fates_seen  # the sample exercises every common fate


def test_the_models_and_diagnostics_pages(built):
    replay = json.loads((built / "work" / "scores" / "replay.json").read_text())
    assert replay["ok"] and replay["n_calls"] == 1080
    models = _text(_page(built, "models/"))
    assert "180 of 180 calls reproduced" in models and "900 of 900 calls reproduced" in models
    assert "900 次调用中 900 次复现" in _text(_page(built, "zh/models/"))
    diagnostics = _text(_page(built, "diagnostics/"))
    assert "1,080 of 1,080 returned the same papers in the same order" in diagnostics
    hist = json.loads((built / "work" / "scores" / "diagnostics.json").read_text())["recovered_histogram"]
    first = next(h for h in hist if (h["entry"], h["condition"], h["split"], h["track"]) == ("bm25-brief", "detailed", "eval", "clean"))
    table = _text(_page(built, "diagnostics/").split('id="inspire-histogram"', 1)[1].split("</table>", 1)[0])
    assert " ".join(str(n) for n in first["counts"]) in " ".join(table.split())


def test_scores_of_another_benchmark_are_refused(built, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    ideas = tmp_path / "ideas-scores"
    assert CliRunner().invoke(cli, ["score", "--benchmark", "ideas", "--out", str(ideas), "--resamples", "20"]).exit_code == 0
    result = CliRunner().invoke(cli, ["render", "--benchmark", "inspire", "--scores", str(ideas), "--out", str(tmp_path / "docs")])
    assert result.exit_code == 1 and result.stderr == f"Error: {ideas / 'scores.json'}: not the scores of an Inspire archive\n"
    assert not (tmp_path / "docs").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("mine\n")
    refused = CliRunner().invoke(cli, ["render", "--benchmark", "inspire", "--scores", str(built / "work" / "scores"),
                                       "--out", str(tmp_path / "mine")])
    assert refused.exit_code == 2 and "refusing to build into a non-empty folder that rapgen did not build" in refused.stderr
    assert (tmp_path / "mine" / "notes.md").read_text() == "mine\n"
    again = [CliRunner().invoke(cli, ["render", "--benchmark", "inspire", "--scores", str(built / "work" / "scores"),
                                      "--out", str(tmp_path / "docs")]) for _ in range(2)]  # a rendered folder is replaced
    assert [r.exit_code for r in again] == [0, 0] and again[1].output.startswith("Rendered 202 pages (101 in each of en, zh)")


def test_no_serious_or_critical_accessibility_finding(built):
    from test_site_a11y import scan_folder  # skips without node or chromium

    paths = [lang + p for lang in ("", "zh/") for p in (*FIXED, "targets/insp-0001/", "models/keyword-loop/")]
    result = scan_folder(built / "site", paths)
    assert result.returncode == 0, result.stdout[:4000] + result.stderr[-2000:]
    assert result.stderr.count("0 serious/critical") == len(paths), result.stderr
    assert "\nleaderboard/: 0 serious/critical (3 tab states)" in "\n" + result.stderr
