"""One site, several benchmarks (KINDS.md §8): ``rapgen build`` on the repository's rapgen.toml.

The portal at / (a card per benchmark: kind, unit, latest release, leader with its interval),
RAP under /rap/, Inspire under /inspire/ and Ideas under /ideas/, both languages, one strict mkdocs
build; every page of RAP's old site has a stub at its old address. Which site a build makes
(the portal, or one benchmark alone at /) is decided by its options and rapgen.toml. The
accessibility scan of the portal is tests/test_site_a11y.py's.
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
def portal(portal_build):
    """The README's ``rapgen build`` (conftest.py): (folder with work/ and site/, the command's result)."""
    repo, result = portal_build
    base = repo.parent / "view"
    if not base.exists():
        base.mkdir()
        (base / "site").symlink_to(repo / "site")
        (base / "work").symlink_to(repo / "build")
    return base, result


def _html(base: Path, path: str) -> str:
    return (base / "site" / path / "index.html").read_text(encoding="utf-8")


def test_one_build_holds_the_portal_and_each_benchmark(portal):
    base, result = portal
    assert re.search(r"Built \d+ pages of 3 benchmarks \(rap, inspire, ideas\) and \d+ redirect stubs into site \("
                     r"verify [\d.]+ s, score [\d.]+ s, replay [\d.]+ s, render [\d.]+ s, mkdocs [\d.]+ s\)", result.stdout), result.stdout
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


def test_the_search_index_holds_every_benchmark(portal):
    base, _ = portal
    docs = json.loads((base / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    locations = {d["location"].split("#")[0] for d in docs}
    for page in ("", "rap/", "rap/leaderboard/", "zh/rap/leaderboard/", "inspire/leaderboard/", "ideas/leaderboard/"):
        assert page in locations, page


class _Called(Exception):
    pass


@pytest.fixture
def calls(monkeypatch):
    """Which pipeline a build runs, and with what: each call recorded, then stopped (nothing is built)."""
    seen = []

    def record(name):
        def run(*args, **kwargs):
            seen.append((name, args, kwargs))
            raise _Called

        return run

    monkeypatch.setattr("rapgen.pipeline.run_build", record("one"))
    monkeypatch.setattr("rapgen.pipeline.run_portal", record("portal"))
    return seen


def _invoke(args):
    return CliRunner().invoke(cli, ["build", *args], catch_exceptions=True)


def test_the_default_build_is_the_portal_and_one_benchmark_is_asked_for(calls, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    for args in ([], ["--all"], ["--resamples", "5", "--no-replay", "--site-url", "https://example.org/"]):
        _invoke(args)
        name, (sites, site_dir), kwargs = calls.pop()
        assert name == "portal" and [b.slug for b in sites] == ["rap", "inspire", "ideas"], args
        assert kwargs["redirect"] == "rap" and kwargs["work_dir"] == Path("build") and site_dir == Path("site")
    # one benchmark alone, at /
    for args, root, work in ((["--benchmark", "ideas"], REPO / "benchmarks" / "ideas", Path("build/ideas")),
                             (["--root", "."], Path("."), None), (["--release", "1"], REPO, None),
                             (["--scores", str(tmp_path)], REPO, None)):
        _invoke(args)
        name, (got_root, _site), kwargs = calls.pop()
        assert name == "one" and Path(got_root).resolve() == root.resolve() and kwargs["work_dir"] == work, args
    assert calls == []


def test_a_bare_archive_root_or_one_listed_benchmark_builds_it_alone(calls, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no rapgen.toml: the archive at . alone, as before
    _invoke([])
    assert [(c[0], c[1][0]) for c in calls] == [("one", Path("."))]
    (tmp_path / "rapgen.toml").write_text('[[benchmark]]\nslug = "solo"\nroot = "solo"\n', encoding="utf-8")
    (tmp_path / "solo").mkdir()
    _invoke([])
    assert calls[-1][0] == "one" and Path(calls[-1][1][0]).resolve() == (tmp_path / "solo").resolve()
    _invoke(["--all"])  # --all: the portal even for one benchmark
    assert calls[-1][0] == "portal" and [b.slug for b in calls[-1][1][0]] == ["solo"]


def test_all_takes_no_single_benchmark(calls, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    for extra in (["--benchmark", "ideas"], ["--root", "."], ["--release", "1"], ["--scores", str(tmp_path)]):
        result = _invoke(["--all", *extra, "--site-dir", str(tmp_path / "s")])
        assert result.exit_code == 2 and result.stderr == ("Error: --all builds every benchmark as it stands: it takes no "
                                                           "--benchmark, --root, --release or --scores\n"), extra
    monkeypatch.chdir(tmp_path)
    result = _invoke(["--all", "--site-dir", str(tmp_path / "s")])
    assert result.exit_code == 2 and result.stderr == "Error: --all: there is no rapgen.toml in the current folder to list benchmarks\n"
    assert calls == [] and not (tmp_path / "s").exists()


def test_the_help_says_what_is_built():
    text = " ".join(CliRunner().invoke(cli, ["build", "--help"]).output.split())
    assert "where ./rapgen.toml lists several benchmarks, the portal" in text
    assert "that benchmark alone, at /" in text and "--all" in text
