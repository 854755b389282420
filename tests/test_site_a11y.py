"""Accessibility: axe-core (tests/a11y/scan.mjs, driving Debian's chromium with
puppeteer-core) finds no serious or critical violation on any page type of the
built sample site.

Skipped only when node or chromium is missing. The npm packages are pinned in
tests/a11y/package.json and package-lock.json; install them with
``npm ci --prefix tests/a11y`` (CI does). A missing install is a failure, not a skip.
"""

from __future__ import annotations

import functools
import http.server
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


def _scan(base: str, paths: list[str]) -> subprocess.CompletedProcess:
    if not (A11Y / "node_modules" / "axe-core").is_dir() or not (A11Y / "node_modules" / "puppeteer-core").is_dir():
        pytest.fail("axe-core/puppeteer-core are not installed: run `npm ci --prefix tests/a11y`")
    return subprocess.run([NODE, str(A11Y / "scan.mjs"), base, *paths], capture_output=True, text=True, timeout=900)


def page_types(site: Path) -> list[str]:
    """One page of every type the site has: the fixed pages, the first field page, the
    first model page; the same again under zh/ when built."""
    def first(folder: Path, keep) -> list[str]:
        pages = sorted(p.parent.name for p in folder.glob("*/index.html") if keep(p.parent.name)) if folder.is_dir() else []
        return pages[:1]

    out: list[str] = []
    for lang in ("", "zh/"):
        root = site / lang
        if not (root / "index.html").is_file():
            continue
        for name in ("", "leaderboard/", "fields/", "models/", "compare/", "releases/", "live/", "diagnostics/",
                     "archive/", "submit/"):
            if (root / name / "index.html").is_file():
                out.append(lang + name)
        out += [f"{lang}fields/{p}/" for p in first(root / "fields", lambda n: True)]
        out += [f"{lang}models/{p}/" for p in first(root / "models", lambda n: True)]
    return out


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory) -> Path:
    from rapgen.pipeline import run_build

    base = tmp_path_factory.mktemp("a11y")
    site = base / "site"
    run_build(REPO, site, resamples=20, work_dir=base / "work")
    return site


def test_every_page_type_has_no_serious_or_critical_violation(sample_site: Path) -> None:
    paths = page_types(sample_site)
    assert {"", "leaderboard/", "fields/", "models/", "diagnostics/"} <= set(paths)
    assert any(p.startswith("fields/") and p != "fields/" for p in paths)
    server = _serve(sample_site)
    try:
        result = _scan(f"http://127.0.0.1:{server.server_address[1]}/", paths)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode != 2, result.stderr
    assert result.returncode == 0, "serious/critical axe violations (page rule target):\n" + result.stdout[:6000]
    assert result.stderr.count("0 serious/critical") == len(paths), result.stderr


def test_the_scan_reports_a_bad_page(tmp_path: Path) -> None:
    """The scan can fail: low-contrast text, an unnamed dialog and a button inside an
    img are reported with their rule ids and targets, exit 1."""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "index.html").write_text(
        '<!doctype html><html lang="en"><head><title>bad</title></head><body><main>'
        '<p id="faint" style="color:#bbb;background:#fff">faint text</p>'
        '<div role="dialog" id="nameless"><p>x</p></div>'
        '<div role="img" aria-label="chart" id="nested"><button>zoom</button></div>'
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
