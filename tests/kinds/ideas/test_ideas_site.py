"""The Ideas pages: one strict mkdocs build of the committed sample (English and Chinese), every number
taken from the score folder, the synthetic banner on every page, and no serious or critical axe finding."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.errors import SiteError
from rapgen.site.filters import fmt_score

REPO = Path(__file__).resolve().parents[3]
PAGES = ["", "leaderboard/", "topics/", "topics/rag/", "models/", "diagnostics/", "releases/", "archive/", "submit/"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("ideas-site")
    result = CliRunner().invoke(cli, ["build", "--root", str(REPO / "benchmarks/ideas"), "--site-dir", str(base / "site"),
                                      "--work-dir", str(base / "work"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "Built 40 pages" in result.output  # 8 pages + 12 topics, in two languages
    return base


def _page(built: Path, path: str) -> str:
    return (built / "site" / path / "index.html").read_text(encoding="utf-8")


def test_every_page_in_both_languages_with_the_synthetic_banner(built):
    for lang in ("", "zh/"):
        for path in PAGES:
            html = _page(built, lang + path)
            assert "rap-synthetic" in html, lang + path
    assert "Ideas leaderboard" in _page(built, "") and "Ideas 排行榜" in _page(built, "zh/")
    assert "排行榜" in _page(built, "zh/leaderboard/") and "Leaderboard" in _page(built, "leaderboard/")
    assert len(list((built / "site" / "topics").glob("*/index.html"))) == 12
    for name in ("leaderboard.csv", "pairs.csv", "units.parquet", "releases.csv", "diagnostics.json"):
        assert (built / "site" / "downloads" / name).read_bytes() == (built / "work" / "scores" / name).read_bytes()


def test_the_leaderboard_shows_the_score_files_numbers(built):
    rows = list(csv.DictReader(io.StringIO((built / "work" / "scores" / "leaderboard.csv").read_text())))
    for lang in ("", "zh/"):
        html = _page(built, lang + "leaderboard/")
        for judge in ("lexical-a", "lexical-b"):
            for gate in ("default", "strict"):
                table = html.split(f'id="lb-all_cutoff-{judge}-{gate}"', 1)[1].split("</table>", 1)[0]
                for r in rows:
                    if (r["track"], r["judge"], r["gate"]) == ("all_cutoff", judge, gate) and r["metric"] in ("hit@5", "p@5", "mrr"):
                        cell = f"{fmt_score(float(r['estimate']))}<br><small>[{fmt_score(float(r['ci_low']))}, {fmt_score(float(r['ci_high']))}]"
                        assert cell in table, (lang, r)
                        assert f"P(first) {fmt_score(float(r['p_first']), 2)}" in table or "P(第一)" in table
        assert html.count('class="tabbed-set') == 1 + 3  # the track tabs, then judge x gate tabs in each track with entries
        assert 'id="lb-live-lexical-a-default"' in html  # the sample's history has three resolved Live cutoffs


def test_the_releases_page_shows_the_history(built):
    rows = [r for r in csv.DictReader(io.StringIO((built / "work" / "scores" / "releases.csv").read_text()))
            if (r["track"], r["judge"], r["gate"], r["metric"]) == ("all_cutoff", "lexical-a", "default", "hit@5")]
    # rows only where an entry is complete: release 1 and the models releases (a roll's new cutoff awaits evaluation)
    assert sorted({int(r["release"]) for r in rows}) == [1, *range(2, 15, 2)]
    for lang in ("", "zh/"):
        html = _page(built, lang + "releases/")
        listed = re.findall(r"<tr>\s*<td>(\d+)</td>\s*<td>(\d{4}-\d{2}-\d{2})</td>\s*<td>(initial|roll|models)</td>", html)
        assert [int(n) for n, _d, _k in listed] == list(range(1, 15)), lang
        assert [k for _n, _d, k in listed] == ["initial", "models"] + ["roll", "models"] * 6
        table = html.split('id="ideas-releases"', 1)[1].split("</table>", 1)[0]
        for r in rows:
            assert f"<tr><td>{r['release']}</td><td>{r['date']}</td>" in table and fmt_score(float(r["estimate"])) in table, (lang, r)
        # every release is in the table: a roll, with no complete entry, as a note naming the cutoff it resolved
        assert sorted({int(n) for n in re.findall(r"<tr><td>(\d+)</td>", table)}) == list(range(1, 15)), lang
        notes = re.findall(r'<tr><td>(\d+)</td><td>[\d-]+</td><td colspan="3" class="rap-dim">([^<]*)</td></tr>', table)
        assert [int(n) for n, _ in notes] == list(range(3, 14, 2)), lang
        assert all(("awaits evaluation" if not lang else "尚待评审") in x for _, x in notes), lang
        assert "2024-10-01" in notes[0][1] and "2025-03-01" in notes[-1][1], lang


def test_a_topic_page_shows_hit_at_5_by_cutoff(built):
    units = [u for u in pq.read_table(built / "work" / "scores" / "units.parquet").to_pylist()
             if (u["topic_id"], u["judge"], u["gate"], u["entry"]) == ("rag", "lexical-a", "default", "rising-terms")]
    html = _page(built, "topics/rag/")
    body = html.split('id="topic-rag"', 1)[1].split("</table>", 1)[0]
    shown = re.findall(r"<tr><td>(\d{4}-\d{2}-\d{2})</td><td>[\d,]+</td><td>[\d,]+</td><td>([^<]*)</td><td>([^<]*)</td></tr>", body)
    assert [(c, b) for c, _a, b in shown] == [(u["cutoff"].isoformat(), fmt_score(u["hit@5"])) for u in units]


def test_a_kind_catalogue_may_not_redefine_an_engine_label(tmp_path):
    from rapgen.site.i18n import LANGUAGES, load_catalogues, merge_catalogues

    (tmp_path / "i18n").mkdir()
    for lang in LANGUAGES:
        (tmp_path / "i18n" / f"{lang}.yml").write_text("nav:\n  home: Start\n")
    with pytest.raises(SiteError, match=r"en.yml: line 2: label 'nav.home' is the engine's already"):
        merge_catalogues(load_catalogues(), tmp_path)
    (tmp_path / "i18n" / "en.yml").write_text("toy:\n  a: A\n  b: B\n")
    (tmp_path / "i18n" / "zh.yml").write_text("toy:\n  a: 甲\n")
    with pytest.raises(SiteError, match=r"label 'toy.b' .* has no zh translation"):
        merge_catalogues(load_catalogues(), tmp_path)


def test_no_serious_or_critical_accessibility_finding(built):
    from test_site_a11y import scan_folder

    paths = [lang + p for lang in ("", "zh/") for p in PAGES]
    result = scan_folder(built / "site", paths)
    assert result.returncode == 0, result.stdout[:4000] + result.stderr[-2000:]
    assert result.stderr.count("0 serious/critical") == len(paths), result.stderr
    assert "\nleaderboard/: 0 serious/critical (4 tab states)" in "\n" + result.stderr
