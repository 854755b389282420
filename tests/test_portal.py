"""One site, several benchmarks (KINDS.md §8): ``rapgen build --all`` on the repository's rapgen.toml.

The portal at / (a card per benchmark: kind, unit, latest release, leader with its interval),
RAP under /rap/, Inspire under /inspire/ and Ideas under /ideas/, both languages, one strict mkdocs
build; every page of RAP's old site has a stub at its old
address; no serious or critical axe finding on the new pages.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.site.filters import fmt_score

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def portal(tmp_path_factory):
    base = tmp_path_factory.mktemp("portal")
    mp = pytest.MonkeyPatch()
    mp.chdir(REPO)
    try:
        result = CliRunner().invoke(cli, ["build", "--all", "--site-dir", str(base / "site"), "--work-dir", str(base / "work"),
                                          "--resamples", "100", "--no-replay"])
    finally:
        mp.undo()
    assert result.exit_code == 0, result.output
    return base, result


def _html(base: Path, path: str) -> str:
    return (base / "site" / path / "index.html").read_text(encoding="utf-8")


def test_one_build_holds_the_portal_and_each_benchmark(portal):
    base, result = portal
    assert re.search(r"Built \d+ pages of 3 benchmarks \(rap, inspire, ideas\) and \d+ redirect stubs", result.stdout), result.stdout
    for lang in ("", "zh/"):
        for page in ("", "rap/", "rap/leaderboard/", "rap/fields/", "inspire/", "inspire/leaderboard/", "ideas/", "ideas/leaderboard/",
                     "ideas/topics/rag/"):
            assert (base / "site" / lang / page / "index.html").is_file(), lang + page
    home = _html(base, "")
    tabs = re.findall(r'class="md-tabs__link[^"]*"[^>]*>\s*([^<]+?)\s*<', home)
    assert tabs == ["Home", "RAP", "Inspire", "Ideas", "Submit"], tabs
    assert "首页" in _html(base, "zh/") and "rap-synthetic" in home
    # each benchmark's scores are its own, in build/<slug>/scores/
    assert (base / "work" / "rap" / "scores" / "leaderboard.csv").is_file()
    assert (base / "work" / "ideas" / "scores" / "scores.json").is_file()


def test_the_cards_show_each_benchmarks_own_leader(portal):
    base, _ = portal
    home = _html(base, "")
    ideas = json.loads((base / "work" / "ideas" / "scores" / "scores.json").read_text())["headline"]
    assert f"{fmt_score(ideas['estimate'])} [{fmt_score(ideas['ci_low'])}, {fmt_score(ideas['ci_high'])}]" in home
    with open(base / "work" / "rap" / "scores" / "leaderboard.csv", encoding="utf-8") as handle:
        rap = [r for r in csv.DictReader(handle) if (r["track"], r["split"], r["policy"], r["kind"], r["condition"], r["metric"])
               == ("all_origin", "test", "canonical", "model", "A3", "spearman")]
    best = max(rap, key=lambda r: float(r["estimate"]))
    assert f"{fmt_score(float(best['estimate']))} [{fmt_score(float(best['ci_low']))}, {fmt_score(float(best['ci_high']))}]" in home
    assert home.count("Latest release") == 3 and all(f"Open {b}" in home for b in ("RAP", "Inspire", "Ideas"))


def test_raps_old_addresses_redirect(portal):
    base, _ = portal
    site = base / "site"
    moved = sorted(p.parent.relative_to(site / "rap").as_posix() for p in (site / "rap").rglob("index.html") if p.parent != site / "rap")
    assert "leaderboard" in moved and any(m.startswith("fields/") for m in moved)
    for lang, source in (("", site / "rap"), ("zh/", site / "zh" / "rap")):
        for rel in sorted(p.parent.relative_to(source).as_posix() for p in source.rglob("index.html") if p.parent != source):
            stub = (site / lang / rel / "index.html").read_text(encoding="utf-8")
            target = re.search(r'content="0; url=([^"]+)"', stub).group(1)
            assert (site / lang / rel / target / "index.html").resolve() == (source / rel / "index.html").resolve(), (lang, rel)
    assert 'url=../rap/leaderboard/' in _html(base, "leaderboard/")
    assert 'url=../../zh/rap/leaderboard/' in _html(base, "zh/leaderboard/")


def test_all_takes_no_single_benchmark(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, ["build", "--all", "--benchmark", "ideas", "--site-dir", str(tmp_path / "s")])
    assert result.exit_code == 2 and "--all builds every benchmark as it stands" in result.stderr
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["build", "--all", "--site-dir", str(tmp_path / "s")])
    assert result.exit_code == 2 and "--all: there is no rapgen.toml in the current folder" in result.stderr
    assert not (tmp_path / "s").exists()


def test_the_portal_pages_have_no_serious_or_critical_accessibility_finding(portal):
    from test_site_a11y import scan_folder

    base, _ = portal
    paths = ["", "zh/", "rap/", "rap/leaderboard/", "zh/rap/leaderboard/", "ideas/", "ideas/leaderboard/", "zh/ideas/leaderboard/"]
    result = scan_folder(base / "site", paths)
    assert result.returncode == 0, result.stdout[:4000] + result.stderr[-2000:]
    assert result.stderr.count("0 serious/critical") == len(paths), result.stderr
