"""Accessibility: axe-core (tests/a11y/scan.mjs, driving Debian's chromium with
puppeteer-core) finds no serious or critical violation on any page type of the
site ``rapgen build`` makes of this repository: the portal's home and every page type
of RAP (a release history: its Releases page and the leaderboard's Live panels
included), Inspire and Ideas, English and Chinese, each page in every tab state.

Skipped when node or chromium is missing. The npm packages are pinned in
tests/a11y/package.json and package-lock.json; install them with
``npm ci --prefix tests/a11y``. Outside CI a missing install skips with that advice;
under CI (``CI=true``, as ``.ci/run`` runs) it is a failure, so the scan can never be
silently skipped where it counts.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
A11Y = REPO / "tests" / "a11y"
CHROMIUM = Path("/usr/bin/chromium")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None or not CHROMIUM.exists(), reason="needs node and /usr/bin/chromium")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _require_npm_packages(*names: str) -> None:
    if all((A11Y / "node_modules" / n).is_dir() for n in names):
        return
    advice = f"{'/'.join(names)} not installed: run `npm ci --prefix tests/a11y`"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(advice)
    pytest.skip(advice)


def _scan(base: str, paths: list[str]) -> subprocess.CompletedProcess:
    _require_npm_packages("axe-core", "puppeteer-core")
    return subprocess.run([NODE, str(A11Y / "scan.mjs"), base, *paths], capture_output=True, text=True, timeout=900)


def scan_folder(folder: Path, paths: list[str]) -> subprocess.CompletedProcess:
    """Serve ``folder`` on 127.0.0.1 and scan ``paths`` (skips without node or chromium)."""
    if NODE is None or not CHROMIUM.exists():
        pytest.skip("needs node and /usr/bin/chromium")
    server = _serve(folder)
    try:
        return _scan(f"http://127.0.0.1:{server.server_address[1]}/", paths)
    finally:
        server.shutdown()
        server.server_close()


def page_types(site: Path, prefix: str = "") -> list[str]:
    """One page of every type the site (or its benchmark under ``prefix``, such as ``rap/``) has: each
    page folder of the benchmark's home and the first page inside each; the same again under zh/."""
    def first(folder: Path) -> list[str]:
        return sorted(p.parent.name for p in folder.glob("*/index.html"))[:1]

    out: list[str] = []
    for lang in ("", "zh/"):
        root = site / lang / prefix
        if not (root / "index.html").is_file():
            continue
        out.append(lang + prefix)
        for folder in sorted(p.parent for p in root.glob("*/index.html")):
            if lang == "" and folder.name == "zh" or not prefix and folder.name in PORTAL_BENCHMARKS:
                continue
            out.append(f"{lang}{prefix}{folder.name}/")
            out += [f"{lang}{prefix}{folder.name}/{p}/" for p in first(folder)]
    return out


PORTAL_BENCHMARKS = ("rap", "inspire", "ideas")  # rapgen.toml's, under /<slug>/


@pytest.fixture(scope="module")
def sample_site(portal_build) -> Path:
    """The portal ``rapgen build`` makes of this repository (conftest.py)."""
    repo, _ = portal_build
    return repo / "site"


def test_every_page_type_has_no_serious_or_critical_violation(sample_site: Path) -> None:
    rap = page_types(sample_site, "rap/")
    assert {"rap/", "rap/leaderboard/", "rap/fields/", "rap/models/", "rap/diagnostics/"} <= set(rap)
    assert any(p.startswith("rap/fields/") and p != "rap/fields/" for p in rap)
    # the Chinese edition: home, leaderboard, a field, a model, compare, diagnostics, releases
    assert {"zh/rap/", "zh/rap/leaderboard/", "zh/rap/compare/", "zh/rap/diagnostics/", "zh/rap/releases/", "zh/rap/fields/",
            "zh/rap/models/"} <= set(rap)
    assert any(p.startswith("zh/rap/fields/") and p != "zh/rap/fields/" for p in rap)
    assert any(p.startswith("zh/rap/models/") and p != "zh/rap/models/" for p in rap)
    # The committed sample is a release history (format 2): its Releases page, and the Live
    # panel under each split tab of the leaderboard, are scanned too.
    assert "rap/releases/" in rap
    board = (sample_site / "rap" / "leaderboard" / "index.html").read_text(encoding="utf-8")
    assert 'id="leaderboard-test-live-title"' in board and 'id="leaderboard-dev-live-title"' in board
    inspire, ideas = page_types(sample_site, "inspire/"), page_types(sample_site, "ideas/")
    assert {"inspire/leaderboard/", "zh/inspire/leaderboard/", "ideas/leaderboard/", "zh/ideas/leaderboard/"} <= {*inspire, *ideas}
    assert any(p.startswith("ideas/topics/") and p != "ideas/topics/" for p in ideas)
    assert any(p.startswith("zh/inspire/targets/") and p != "zh/inspire/targets/" for p in inspire)
    paths = ["", "zh/", *rap, *inspire, *ideas]
    server = _serve(sample_site)
    try:
        result = _scan(f"http://127.0.0.1:{server.server_address[1]}/", paths)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode != 2, result.stderr
    assert result.returncode == 0, "serious/critical axe violations (page rule target):\n" + result.stdout[:6000]
    assert result.stderr.count("0 serious/critical") == len(paths), result.stderr
    # Tabbed pages are scanned in every tab state (axe skips hidden content): Test and Dev.
    for page in ("rap/leaderboard/", "rap/releases/", "rap/diagnostics/"):
        assert f"\n{page}: 0 serious/critical (2 tab states)" in "\n" + result.stderr, result.stderr


def test_the_scan_reports_a_bad_page(tmp_path: Path) -> None:
    """The scan can fail: low-contrast text, an unnamed dialog and a button inside an
    img are reported with their rule ids and targets, exit 1."""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "index.html").write_text(
        '<!doctype html><html lang="en"><head><title>bad</title></head><body><main>'
        '<p id="faint" style="color:#bbb;background:#fff">faint text</p>'
        '<div role="dialog" id="nameless"><p>x</p></div>'
        '<div role="img" aria-label="chart" id="nested"><button>zoom</button></div>'
        # a second tab, hidden until its label is clicked (the site's tab markup and rule)
        '<style>.tabbed-block{display:none}.tabbed-set>input:nth-child(1):checked~.tabbed-content>:nth-child(1),'
        '.tabbed-set>input:nth-child(2):checked~.tabbed-content>:nth-child(2){display:block}'
        '.tabbed-set>input{position:absolute;opacity:0}</style>'
        '<div class="tabbed-set"><input checked id="t-1" name="t" type="radio"><input id="t-2" name="t" type="radio">'
        '<div class="tabbed-labels"><label for="t-1">Test</label><label for="t-2">Dev</label></div>'
        '<div class="tabbed-content"><div class="tabbed-block"><p>shown</p></div>'
        '<div class="tabbed-block"><p id="tabfaint" style="color:#bbb;background:#fff">hidden faint text</p></div></div></div>'
        '</main></body></html>', encoding="utf-8")
    server = _serve(tmp_path)
    try:
        result = _scan(f"http://127.0.0.1:{server.server_address[1]}/", ["bad/"])
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "bad/ color-contrast #faint" in lines
    assert "bad/ aria-dialog-name #nameless" in lines
    assert "bad/ nested-interactive #nested" in lines
    assert "bad/ color-contrast #tabfaint" in lines  # found only once the second tab is shown
    assert "bad/: 4 serious/critical (2 tab states)" in result.stderr


def test_leaderboard_switch_and_compare_url(sample_site: Path) -> None:
    """In chromium: choosing TV distance and the split policy rewrites the cells, the
    forest plot and the URL without a reload, and the URL restores the choice; a
    header sorts with Enter; /compare/?a=…&b=… opens with those entries and shows the
    paired differences of pairs.csv; a field page's picker redraws its forecast chart; nothing is requested from another origin."""
    import json

    pairs = (sample_site / "rap" / "downloads" / "pairs.csv").read_text(encoding="utf-8").splitlines()
    first = pairs[1].split(",")  # track,split,policy,condition,metric,entry_a,kind_a,entry_b,...
    a, b = first[5], first[7]
    server = _serve(sample_site)
    try:
        _require_npm_packages("puppeteer-core")
        result = subprocess.run([NODE, str(A11Y / "behaviour.mjs"), f"http://127.0.0.1:{server.server_address[1]}/rap/", a, b],
                                capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["errors"] == [] and seen["requests"] == []
    assert seen["lb_tv"] != seen["lb_before"] and seen["chart_tv"] != seen["chart_before"]
    assert seen["lb_axis"] == "TV distance"
    assert seen["lb_url"].endswith("/leaderboard/?metric=tv&policy=split")
    assert seen["lb_status"] == "Showing TV distance (lower is better), split policy."
    assert seen["lb_reloaded_choice"] == "tv/split"
    assert seen["sorted"] in ("ascending", "descending")
    assert seen["cmp_choice"] == [a, b]
    # the page opens on All-Origin, Test: every pairs.csv row of that pair there is shown, digit for digit
    shown = {(r[0], r[1].rstrip(" ↑↓")): r for r in seen["cmp_rows"]}
    assert shown, seen
    for line in pairs[1:]:
        f = line.split(",")
        if (f[0], f[1], f[2], f[5], f[7]) == ("all_origin", "test", "canonical", a, b):
            from rapgen.site.cells import CONDITION_LABEL, METRIC_LABEL
            from rapgen.site.filters import fmt_ci, fmt_delta
            row = shown[(CONDITION_LABEL[f[3]], METRIC_LABEL[f[4]])]
            assert row[4] == fmt_delta(float(f[9])) + fmt_ci(float(f[10]), float(f[11]))
            assert row[5] == f[12]
    assert seen["cmp_same"] == "Pick two different entries."
    assert f"a={a}&b={a}" in seen["cmp_url"]
    # a field page: the picker lists models and baselines (EWMA first shown) and redraws the chart
    assert "ewma/BASE" in seen["fc_options"] and any(not o.endswith("/BASE") for o in seen["fc_options"])
    assert seen["fc_after"] != seen["fc_before"] and seen["fc_status"].startswith("Showing ")
