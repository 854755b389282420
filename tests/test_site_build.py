"""`rapgen build` end to end on the factory archive: verify -> score -> render -> mkdocs --strict."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from rapgen.archive import open_release
from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.errors import SiteError
from rapgen.site import build_site, render_docs
from test_site_support import make_score_outputs, make_site_archive

FIELD_PAGE_LIMIT = 80 * 1024


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from factory import make_archive

    base = tmp_path_factory.mktemp("site-build")
    root = make_archive(base / "repo").root
    site = base / "site"
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(site), "--resamples", "50", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root, site, json.loads(result.stdout)


def test_build_writes_every_page(built):
    root, site, report = built
    assert report["pages"] >= 13 and report["synthetic"] is True
    # the tiny archive's model-a has Search traces, so the build replays them for the model pages
    assert set(report["seconds"]) == {"verify", "score", "replay", "render", "mkdocs"}
    assert (root / "build" / "scores" / "replay.json").is_file()
    archive = Archive(root)
    for page in ["index.html", "leaderboard/index.html", "fields/index.html", "models/index.html", "diagnostics/index.html",
                 "archive/index.html", "submit/index.html", "search/search_index.json", "downloads/leaderboard.csv",
                 "downloads/leaderboard.json", "assets/javascripts/plotly.min.js", "assets/javascripts/tablesort.min.js"]:
        assert (site / page).is_file(), page
    for f in archive.fields:
        assert (site / "fields" / f.field_id / "index.html").is_file()
    for mid in archive.model_ids:
        assert (site / "models" / mid / "index.html").is_file()
    # real ranks.csv ranks baselines inside each condition: the baseline block shows the A3 column's rank
    board = (site / "leaderboard" / "index.html").read_text(encoding="utf-8")
    assert "rank among the Expanding (A3) column" in board and 'id="leaderboard-test-all-origin"' in board
    # scores/ and docs/ land in the work folder, not in the archive
    assert (root / "build" / "scores" / "leaderboard.csv").is_file() and (root / "build" / "docs" / "index.md").is_file()


def test_every_page_carries_banner_digest_and_no_external_assets(built):
    root, site, report = built
    digest = report["manifest_sha256"]
    assert digest == Archive(root).manifest_sha256
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 14
    for page in pages:
        html = page.read_text(encoding="utf-8")
        chinese = page.relative_to(site).parts[0] == "zh"
        assert ("合成档案：" if chinese else "Synthetic archive:") in html, page
        assert (f'<html lang="{"zh" if chinese else "en"}"') in html, page
        assert digest in html, page
        for tag in re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", html):
            if 'rel="canonical"' in tag:
                continue  # the canonical URL is an identifier, not a fetched resource
            for ref in re.findall(r'(?:src|href)="([^"]+)"', tag):
                assert not ref.startswith(("http://", "https://", "//")), (page, tag)
        assert "fonts.googleapis" not in html and "cdn.plot.ly" not in html and "unpkg.com" not in html
    assert len(list(site.rglob("plotly.min.js"))) == 1


def test_field_pages_stay_small_and_out_of_the_sidebar(built):
    _, site, _ = built
    for page in (site / "fields").glob("*/index.html"):
        html = page.read_text(encoding="utf-8")
        assert len(html.encode()) <= FIELD_PAGE_LIMIT, page
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "fields/alpha/" not in home  # field pages are reached from the index table, not the nav


def test_build_refuses_an_archive_that_fails_verification(tmp_path):
    from factory import make_archive

    root = make_archive(tmp_path / "repo").root
    target = root / "archive" / "benchmark" / "fields.jsonl"
    data = bytearray(target.read_bytes())
    data[10] ^= 1
    target.write_bytes(bytes(data))
    site = tmp_path / "site"
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(site)])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and "failed verification" in result.stderr
    assert not site.exists() and not (root / "build").exists()


def test_build_rejects_bad_resamples(tmp_path):
    result = CliRunner().invoke(cli, ["build", "--root", str(tmp_path), "--resamples", "0"])
    assert result.exit_code == 2


def _broken_link_build(tmp_path, page_name: str, line: str) -> str:
    """The SiteError message of building the site archive's pages with ``line`` added to one page."""
    root = make_site_archive(tmp_path / "repo")
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256)
    rendered = render_docs(open_release(root), scores, tmp_path / "work" / "docs")
    page = rendered.docs_dir / page_name
    page.write_text(page.read_text() + line)
    with pytest.raises(SiteError) as info:
        build_site(rendered.docs_dir, tmp_path / "site", synthetic=True, manifest_sha256="0" * 64)
    return str(info.value)


def test_strict_mkdocs_failure_is_a_site_error_with_the_log_tail(tmp_path):
    message = _broken_link_build(tmp_path, "submit.md", "\nSee [nowhere](no-such-page.md).\n")
    assert "mkdocs build --strict failed" in message and "no-such-page.md" in message


def test_build_site_needs_rendered_pages(tmp_path):
    (tmp_path / "docs").mkdir()
    with pytest.raises(SiteError, match=r"no rendered pages \(index\.md missing\); run 'rapgen render' first"):
        build_site(tmp_path / "docs", tmp_path / "site", synthetic=False, manifest_sha256="0" * 64)


def test_real_archive_has_no_synthetic_banner(tmp_path):
    root = make_site_archive(tmp_path / "repo", synthetic=False)
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256)
    rendered = render_docs(open_release(root), scores, tmp_path / "work" / "docs")
    result = build_site(rendered.docs_dir, tmp_path / "site", synthetic=rendered.synthetic,
                        manifest_sha256=rendered.manifest_sha256, archive_name=rendered.archive_name)
    assert result.n_pages >= 13
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Synthetic archive" not in home and rendered.manifest_sha256 in home


def test_build_refuses_to_empty_a_folder_it_did_not_build(tmp_path):
    from factory import make_archive

    root = make_archive(tmp_path / "repo").root
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(precious), "--resamples", "20", "--no-replay"])
    assert result.exit_code == 2, result.output
    assert "refusing to build into a non-empty folder that rapgen did not build" in result.stderr
    assert (precious / "keep.txt").read_text() == "mine"
    assert not (root / "build").exists()  # refused before any work


def test_rebuild_into_its_own_site_folder(built):
    root, site, _ = built
    assert (site / ".rapgen-site").is_file()
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(site), "--resamples", "20", "--no-replay"])
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------ addresses
def test_without_addresses_the_site_names_no_outside_address(built):
    _, site, _ = built
    for page in sorted(site.rglob("*.html")) + [site / "sitemap.xml"]:
        text = page.read_text(encoding="utf-8")
        assert "rap-benchmark" not in text and "github.io" not in text, page
        assert 'rel="canonical"' not in text, page
    submit = (site / "submit" / "index.html").read_text(encoding="utf-8")
    assert "<code>CONTRIBUTING.md</code>" in submit and "github.com" not in submit


def test_site_and_repo_urls_come_from_the_options(tmp_path):
    from factory import make_archive

    root = make_archive(tmp_path / "repo").root
    site = tmp_path / "site"
    args = ["build", "--root", str(root), "--site-dir", str(site), "--resamples", "20",
            "--site-url", "https://owner.example/rap/", "--repo-url", "https://git.example/owner/rapgen/"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    submit = (site / "submit" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://git.example/owner/rapgen/blob/main/CONTRIBUTING.md"' in submit
    assert '<link rel="canonical" href="https://owner.example/rap/submit/">' in submit
    assert 'href="/rap/assets/' in (site / "404.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("option, value", [
    ("--site-url", "javascript:alert(1)"), ("--site-url", "/relative/"), ("--repo-url", "ftp://example.org/x"),
    ("--repo-url", "https://"),
])
def test_an_address_that_is_not_http_is_a_usage_error(tmp_path, option, value):
    result = CliRunner().invoke(cli, ["build", "--root", str(tmp_path), "--site-dir", str(tmp_path / "site"), option, value])
    assert result.exit_code == 2, result.output
    assert f"{option} must be an absolute http:// or https:// address" in result.output
    assert not (tmp_path / "site").exists()


def test_404_page_works_served_from_the_site_folder(built):
    """`python -m http.server -d site`: /404.html and every asset it names load from the server root."""
    import functools
    import http.server
    import threading
    import urllib.request

    _, site, _ = built
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        type("Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        page = urllib.request.urlopen(f"{base}/404.html").read().decode("utf-8")
        refs = set(re.findall(r'<(?:script|link|a|img)\b[^>]*?(?:src|href)="([^"#]+)"', page))
        local = sorted(r for r in refs if not r.startswith(("http://", "https://", "mailto:")))
        assert any(r.endswith(".css") for r in local) and any(r.endswith(".js") for r in local), local
        for ref in local:
            assert ref.startswith("/"), ref  # absolute from the root: the page works at any missing path
            with urllib.request.urlopen(base + ref) as resp:
                assert resp.status == 200, ref
    finally:
        server.shutdown()
        server.server_close()


def test_a_build_parses_each_archive_document_once(tmp_path, monkeypatch):
    """verify parses; score, replay and render use the same release view (parse once per build)."""
    from collections import Counter

    from factory import make_archive
    from rapgen.archive import parse, parse_child
    from rapgen.pipeline import run_build

    root = make_archive(tmp_path / "repo").root
    monkeypatch.setattr(parse_child, "ENABLED", False)  # count this process's parses (no child parsing ahead)
    calls: Counter = Counter()
    for name in [n for n in dir(parse) if n.startswith("parse_")]:
        original = getattr(parse, name)

        def counted(path, *args, _original=original, _name=name, **kwargs):
            calls[(_name, str(path))] += 1
            return _original(path, *args, **kwargs)

        monkeypatch.setattr(parse, name, counted)
    run_build(root, tmp_path / "site", resamples=20, work_dir=tmp_path / "work")
    assert ("parse_predictions", "archive/models/model-a/predictions.jsonl") in calls
    assert ("parse_traces", "archive/models/model-a/traces.jsonl") in calls
    assert {k: n for k, n in calls.items() if n != 1} == {}


def test_the_second_language_built_beside_the_first_gives_the_serial_build_byte_for_byte(tmp_path):
    """templates/hooks/parallel_languages.py forks the Chinese build; without it the i18n
    plugin builds the languages one after the other: every file must be the same."""
    import filecmp
    import shutil

    from rapgen.resources import mkdocs_base_config
    from rapgen.site.build import run_mkdocs, write_config

    root = make_site_archive(tmp_path / "repo")
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256)
    rendered = render_docs(open_release(root), scores, tmp_path / "work" / "docs")
    # static files of one language, and of both with different sources: the child's copies that are not the parent's
    (rendered.docs_dir / "assets" / "note.txt").write_text("English\n", encoding="utf-8")
    (rendered.docs_dir / "assets" / "note.zh.txt").write_text("中文\n", encoding="utf-8")
    (rendered.docs_dir / "assets" / "only.zh.txt").write_text("只有中文\n", encoding="utf-8")
    serial = tmp_path / "templates"
    shutil.copytree(mkdocs_base_config().parent, serial)
    base = serial / "mkdocs.base.yml"
    text = base.read_text(encoding="utf-8")
    assert "hooks/parallel_languages.py" in text
    base.write_text(text.replace("  - hooks/parallel_languages.py", "#  - hooks/parallel_languages.py"), encoding="utf-8")
    sites = {}
    for name, config_base in (("parallel", None), ("serial", base)):
        sites[name] = tmp_path / f"site-{name}"
        config = write_config(rendered.docs_dir, sites[name], synthetic=True, manifest_sha256="0" * 64, archive_name="x",
                              base_config=config_base)
        run_mkdocs(config)
    files = {name: sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) for name, site in sites.items()}
    assert files["parallel"] == files["serial"] and "zh/404.html" in files["serial"] and "search/search_index.json" in files["serial"]
    _, differ, errors = filecmp.cmpfiles(sites["serial"], sites["parallel"], files["serial"], shallow=False)
    assert differ == [] and errors == []
    assert not list(tmp_path.glob(".rapgen-lang-*"))  # the second language's folder is gone


def test_a_failure_in_the_second_language_fails_the_build(tmp_path):
    message = _broken_link_build(tmp_path, "submit.zh.md", "\n见 [无处](no-such-page.md)。\n")
    assert "mkdocs build --strict failed" in message and "no-such-page.md" in message  # the Chinese build's warning
    assert not list(tmp_path.glob(".rapgen-lang-*"))


def test_a_score_folder_whose_diagnostics_were_not_computed_renders(tmp_path):
    """compute_scores(diagnostics=False) writes a diagnostics.json holding its head and the status
    alone: the Diagnostics page renders from it, without the computed-under line."""
    root = make_site_archive(tmp_path / "repo")
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256)
    head = json.loads((scores / "diagnostics.json").read_text(encoding="utf-8"))
    (scores / "diagnostics.json").write_text(json.dumps({k: head[k] for k in ("schema_version", "manifest_sha256") if k in head}
                                                        | {"status": "not computed"}), encoding="utf-8")
    rendered = render_docs(open_release(root), scores, tmp_path / "work" / "docs")
    page = (rendered.docs_dir / "diagnostics.md").read_text(encoding="utf-8")
    assert page.startswith("---\ntitle:") and "# Diagnostics" in page


def test_a_build_in_the_process_started_ahead_gives_the_same_site_and_log(tmp_path):
    """rapgen.site.start_mkdocs: mkdocs imported while the pages render, then handed the build."""
    import filecmp

    from rapgen.site import start_mkdocs

    root = make_site_archive(tmp_path / "repo")
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256)
    started = start_mkdocs()
    rendered = render_docs(open_release(root), scores, tmp_path / "work" / "docs")
    logs, sites = {}, {}
    for name, process in (("started", started), ("fresh", None)):
        sites[name] = tmp_path / f"site-{name}"
        logs[name] = build_site(rendered.docs_dir, sites[name], synthetic=True, manifest_sha256="0" * 64,
                                started=process).log
    assert started.proc is None  # handed over, and ended with its build
    files = {name: sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) for name, site in sites.items()}
    assert files["started"] == files["fresh"] and len(files["fresh"]) > 20
    _, differ, errors = filecmp.cmpfiles(sites["fresh"], sites["started"], files["fresh"], shallow=False)
    assert differ == [] and errors == []
    same = {name: re.sub(r"site-\w+|\.rapgen-lang-\w+|[0-9.]+ seconds", "", log) for name, log in logs.items()}
    assert same["started"] == same["fresh"] and "Documentation built" in same["fresh"]


def test_a_failed_build_in_the_started_process_is_the_same_site_error(tmp_path, monkeypatch):
    import rapgen.site.build as build

    started = build.start_mkdocs()
    monkeypatch.setattr(build, "run_mkdocs", lambda config, _started=None, run=build.run_mkdocs: run(config, started))
    message = _broken_link_build(tmp_path, "submit.md", "\nSee [nowhere](no-such-page.md).\n")
    assert "mkdocs build --strict failed" in message and "no-such-page.md" in message and started.proc is None


def test_a_started_process_no_build_comes_to_ends_when_closed():
    from rapgen.site import start_mkdocs

    started = start_mkdocs()
    proc = started.proc
    started.close()
    assert proc.returncode == 0 and started.proc is None
    started.close()  # a second time: nothing left to end
