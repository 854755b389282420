"""The Chinese edition: the label catalogue is complete and used, no English UI text
reaches a Chinese page, the build stops on a missing label or page translation, and
the built /zh/ pages (language, switch, plots, downloads) are Chinese and link back."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from rapgen.archive import open_release
from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.errors import SiteError
from rapgen.scores import DIAGNOSTIC_SECTIONS, METRICS
from rapgen.site import i18n, load_score_outputs
from rapgen.site.i18n import LANGUAGES, load_catalogues, read_catalogue, speaking
from rapgen.site.model import build_site_model
from rapgen.site.render import render_pages
from test_site_support import make_score_outputs, make_site_archive

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "templates"
SITE_CODE = REPO / "generator" / "rapgen" / "site"
# t("key"...), term("text") in templates and builders; the first literal of a t( call.
T_CALL = re.compile(r"""\bt\(\s*["']([A-Za-z0-9_.]+)["']""")
T_ALT = re.compile(r"""\bt\(\s*["'][A-Za-z0-9_.]+["']\s+if\s+[^)]*?\s+else\s+["']([A-Za-z0-9_.]+)["']""")
FIGURE = re.compile(r"data-figure='([^']*)'")
ARIA = re.compile(r'class="rap-chart"[^>]*aria-label="([^"]*)"')


@pytest.fixture(scope="module")
def catalogues():
    return load_catalogues(TEMPLATES)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("site-i18n")
    root = make_site_archive(base / "repo")
    scores = make_score_outputs(base / "scores", Archive(root).manifest_sha256)
    return root, scores


def _render(small, catalogue, templates=TEMPLATES) -> dict[str, str]:
    root, scores = small
    with speaking(catalogue):
        site = build_site_model(open_release(root), load_score_outputs(scores))
        return render_pages(site, templates, lang=catalogue.lang)


# ------------------------------------------------------------------ the catalogue
def test_both_catalogues_hold_the_same_keys_and_placeholders(catalogues):
    en, zh = catalogues["en"], catalogues["zh"]
    assert set(en.labels) == set(zh.labels) and len(en.labels) > 300
    for key in en.labels:
        assert i18n.placeholders(en.labels[key]) == i18n.placeholders(zh.labels[key]), key
        assert zh.labels[key].strip(), key


def test_every_key_a_template_or_builder_asks_for_exists(catalogues):
    sources = [*TEMPLATES.joinpath("pages").glob("*.j2"), *TEMPLATES.joinpath("partials").glob("*.j2"),
               *SITE_CODE.rglob("*.py")]
    asked = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        asked |= set(T_CALL.findall(text)) | set(T_ALT.findall(text))
    assert len(asked) > 250
    missing = sorted(k for k in asked if k not in catalogues["en"].labels)
    assert missing == []


def test_every_label_is_used(catalogues):
    """No dead labels: each key is asked for by name, or belongs to a group the code reads
    whole (the vocabulary maps, the scripts' groups, the declared terms, the navigation)."""
    code = "".join(p.read_text(encoding="utf-8") for p in [*TEMPLATES.rglob("*.j2"), *SITE_CODE.rglob("*.py")])
    whole = ("split.", "track.", "condition.", "metric.", "terms.", "nav.", "iv.", "pm.what.", "pm.sem.", "pm.page.")
    unused = [k for k in catalogues["en"].labels
              if not k.startswith(whole) and ".js." not in k and f'"{k}"' not in code and f"'{k}'" not in code]
    assert unused == []


def test_every_declared_vocabulary_word_has_a_label(catalogues):
    """Splits, tracks, conditions, metrics and the diagnostics layout's titles and columns."""
    from rapgen.site.cells import CONDITION_LABEL, SPLIT_LABEL, TRACK_LABEL

    en = catalogues["en"]
    for prefix, ids in (("split", SPLIT_LABEL), ("track", TRACK_LABEL), ("condition", CONDITION_LABEL),
                        ("metric", [m.name for m in METRICS])):
        for i in ids:
            assert f"{prefix}.{i}" in en.labels, (prefix, i)
    with speaking(en):
        for section in DIAGNOSTIC_SECTIONS:
            i18n.term(section.title), i18n.term(section.intro)
            for table in section.tables:
                i18n.term_title(table.title)
                for c in table.columns:
                    if not c.key.startswith("estimates."):
                        i18n.term(c.label)


def test_the_scripts_get_their_strings_in_both_languages(catalogues):
    for prefix in ("lb.js", "cmp.js", "fd.js"):
        en, zh = catalogues["en"].js(prefix), catalogues["zh"].js(prefix)
        assert en and set(en) == set(zh) and en != zh, prefix
    assert not re.search(r"\"(Showing|higher is better|Pick two|rank)[^\"]*\"",
                         "".join((TEMPLATES / "assets/javascripts" / n).read_text() for n in ("leaderboard.js", "compare.js",
                                                                                             "field.js")))


# ------------------------------------------------------------------ no English UI text in Chinese pages
def english_ui_phrases(catalogue) -> list[str]:
    """Every English label of three words or more (placeholders cut out): the UI text a
    Chinese page must never show. Terms are left out: their English is score-file vocabulary."""
    out = set()
    for key, text in catalogue.labels.items():
        if key.startswith(i18n.TERMS + "."):
            continue
        prose = re.sub(r"`[^`]*`|<[^>]*>", "|", text)  # code (commands, file names) is not UI text
        for piece in re.split(r"(?<!%)\{\w+\}|\*\*|[|*\[\]()]", prose):
            piece = piece.strip(" .,:;—-")
            if len(piece.split()) >= 3 and re.fullmatch(r"[A-Za-z ,'’\-–/]+", piece):
                out.add(piece)
    return sorted(out)


def english_found(pages: dict[str, str], phrases: list[str]) -> list[tuple[str, str]]:
    found = []
    for rel, text in pages.items():
        visible = html.unescape(text)
        for phrase in phrases:
            if phrase in visible:
                found.append((rel, phrase))
    return found


def test_no_chinese_page_shows_an_english_ui_phrase(small, catalogues):
    pages = _render(small, catalogues["zh"])
    assert pages and all(rel.endswith(".zh.md") for rel in pages)
    phrases = english_ui_phrases(catalogues["en"])
    assert len(phrases) > 150 and "Click a column header to sort" in phrases
    assert english_found(pages, phrases) == []


def test_an_english_only_string_in_a_template_is_caught(small, catalogues, tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    page = templates / "pages" / "leaderboard.md.j2"
    page.write_text(page.read_text(encoding="utf-8") + "\nClick a column header to sort.\n", encoding="utf-8")
    found = english_found(_render(small, catalogues["zh"], templates), english_ui_phrases(catalogues["en"]))
    assert ("leaderboard.zh.md", "Click a column header to sort") in found


# ------------------------------------------------------------------ the build stops
def _catalogue_copy(tmp_path: Path, drop: str) -> Path:
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    zh = templates / "i18n" / "zh.yml"
    data = zh.read_text(encoding="utf-8").splitlines(keepends=True)
    zh.write_text("".join(line for line in data if not line.startswith(f"  {drop}:")), encoding="utf-8")
    return templates


@pytest.fixture(scope="module")
def verified(tmp_path_factory) -> tuple[Path, Path]:
    """A verifiable archive and its scores, so `rapgen build --scores` gets as far as rendering."""
    from factory import make_archive

    base = tmp_path_factory.mktemp("site-i18n-verified")
    root = make_archive(base / "repo").root
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(base / "scores"), "--resamples", "20"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root, base / "scores"


def test_a_label_without_translation_stops_render_and_build(verified, tmp_path, monkeypatch):
    root, scores = verified
    templates = _catalogue_copy(tmp_path, "col_cutoff")  # lb.col_cutoff (and mi.col_cutoff)
    monkeypatch.setattr("rapgen.site.render.packaged_templates", lambda: templates)
    en = read_catalogue(TEMPLATES / "i18n" / "en.yml", "en")
    result = CliRunner().invoke(cli, ["render", "--root", str(root), "--scores", str(scores), "--out", str(tmp_path / "d")])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {templates / 'i18n' / 'zh.yml'}: label 'lb.col_cutoff' (en.yml line "
                             f"{en.lines['lb.col_cutoff']}) has no zh translation\n")
    assert not (tmp_path / "d").exists()
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--scores", str(scores), "--site-dir", str(tmp_path / "s"),
                                      "--no-replay"])
    assert result.exit_code == 1, result.output
    assert "label 'lb.col_cutoff'" in result.stderr and "has no zh translation" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "s").exists()


def test_a_label_no_catalogue_has_names_the_template_line_and_page(small, catalogues, tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    page = templates / "pages" / "submit.md.j2"
    page.write_text(page.read_text(encoding="utf-8") + '\n{{ t("sb.no_such_label") }}\n', encoding="utf-8")
    with pytest.raises(SiteError, match=r"^pages/submit\.md\.j2:\d+: while rendering submit\.zh\.md: .*zh\.yml: "
                                        r"label 'sb\.no_such_label' is not in the zh catalogue$"):
        _render(small, catalogues["zh"], templates)


def test_a_placeholder_the_translation_lost_is_named(tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    zh = templates / "i18n" / "zh.yml"
    zh.write_text(zh.read_text(encoding="utf-8").replace('  forest_title: "森林图，{split}，{track}"',
                                                         '  forest_title: "森林图，{split}"'), encoding="utf-8")
    with pytest.raises(SiteError, match=r"zh\.yml: line \d+: label 'lb\.forest_title' \(zh\) has placeholders \['split'\], "
                                        r"the en text has \['split', 'track'\]"):
        load_catalogues(templates)


def test_a_page_without_translation_stops_render_and_build(verified, tmp_path, monkeypatch):
    root, scores = verified
    real = render_pages

    def english_only_leaderboard(site, *args, lang="en", **kwargs):
        pages = real(site, *args, lang=lang, **kwargs)
        pages.pop("leaderboard.zh.md", None)
        return pages

    monkeypatch.setattr("rapgen.site.render.render_pages", english_only_leaderboard)
    for args in (["render", "--out", str(tmp_path / "d")], ["build", "--site-dir", str(tmp_path / "s"), "--no-replay"]):
        result = CliRunner().invoke(cli, [*args, "--root", str(root), "--scores", str(scores)])
        assert result.exit_code == 1, result.output
        assert result.stderr == "Error: leaderboard.md: page has no zh translation (leaderboard.zh.md was not rendered)\n"
    assert not (tmp_path / "d").exists() and not (tmp_path / "s").exists()


def test_a_docs_folder_missing_a_translation_is_not_built(small, tmp_path):
    from rapgen.site import build_site, render_docs

    root, scores = small
    docs = render_docs(open_release(root), scores, tmp_path / "docs").docs_dir
    (docs / "models" / "m-open.zh.md").unlink()
    with pytest.raises(SiteError, match=r"docs/models/m-open\.md: page has no zh translation"):
        build_site(docs, tmp_path / "site", synthetic=True, manifest_sha256="0" * 64)
    assert not (tmp_path / "site").exists()


# ------------------------------------------------------------------ the built site
@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from factory import make_archive

    base = tmp_path_factory.mktemp("site-i18n-build")
    root = make_archive(base / "repo").root
    site = base / "site"
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(site), "--resamples", "20", "--no-replay"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return site


def _figures(page: Path) -> list[dict]:
    return [json.loads(html.unescape(spec)) for spec in FIGURE.findall(page.read_text(encoding="utf-8"))]


def test_every_page_has_a_chinese_twin_with_lang_zh_and_a_switch(built):
    english = sorted(p.relative_to(built) for p in built.rglob("index.html") if not p.relative_to(built).parts[0] == "zh")
    assert len(english) >= 13
    for rel in english:
        zh = built / "zh" / rel
        assert zh.is_file(), rel
        text, back = zh.read_text(encoding="utf-8"), (built / rel).read_text(encoding="utf-8")
        assert '<html lang="zh"' in text and '<html lang="en"' in back, rel
        depth = len(rel.parts) - 1
        here = "/".join(rel.parts[:-1])
        # the zh page links to its English original, and the English page to the zh twin, relatively
        to_en = "../" * (depth + 1) + (here + "/" if here else "")
        to_zh = "../" * depth + "zh/" + (here + "/" if here else "")
        assert f'<a href="{to_en or "./"}" hreflang="en" class="md-select__link">' in text, (rel, to_en)
        assert f'<a href="{to_zh}" hreflang="zh" class="md-select__link">' in back, (rel, to_zh)


def test_chinese_pages_carry_material_and_site_labels_in_chinese(built):
    board = (built / "zh" / "leaderboard" / "index.html").read_text(encoding="utf-8")
    for label in ("<h1", "排行榜", "指标", "计数策略", "测试集", "开发集", "全部起点", "暴露风险提示", "搜索",
                  "RAP 排行榜", "合成档案"):
        assert label in board, label
    assert 'placeholder="搜索"' in board  # Material's own strings (theme language zh)
    assert "Leaderboard</h1>" not in board and "Click a column header" not in board
    nav = re.findall(r'class="md-tabs__link">\s*([^<]+?)\s*<', board)
    assert nav[:3] == ["首页", "排行榜", "比较"] or nav[:2] == ["首页", "排行榜"], nav


def test_plot_titles_axes_legends_and_text_alternatives_are_chinese(built):
    board = built / "zh" / "leaderboard" / "index.html"
    figs = _figures(board)
    assert figs
    assert {f["layout"]["xaxis"]["title"]["text"] for f in figs} == {"斯皮尔曼秩相关"}
    assert {t["name"] for f in figs for t in f["data"]} >= {"封闭 (A0)", "扩展窗口 (A3)"}
    assert all(label.startswith("森林图，") for label in ARIA.findall(board.read_text(encoding="utf-8")))
    switch = json.loads(html.unescape(re.search(r"data-switch='([^']*)'", board.read_text(encoding="utf-8")).group(1)))
    assert switch["metrics"]["tv"]["label"] == "总变差距离" and switch["text"]["higher"] == "越高越好"
    field = next(p for p in (built / "zh" / "fields").glob("*/index.html"))
    titles = {f["layout"]["xaxis"]["title"]["text"] for f in _figures(field)} | {f["layout"]["yaxis"]["title"]["text"]
                                                                                 for f in _figures(field)}
    assert {"窗口起始", "份额", "实际份额", "EWMA 预测份额"} <= titles
    english = (built / "leaderboard" / "index.html")
    assert {f["layout"]["xaxis"]["title"]["text"] for f in _figures(english)} == {"Spearman"}


def test_downloads_are_one_copy_linked_from_both_languages(built):
    assert not (built / "zh" / "downloads").exists() and (built / "downloads" / "leaderboard.csv").is_file()
    board = (built / "zh" / "leaderboard" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../downloads/leaderboard.csv"' in board
    assert not (built / "zh" / "assets").exists()


def test_one_search_index_segments_chinese(built):
    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    zh = [d for d in index["docs"] if d["location"].startswith("zh/")]
    assert zh and any(d["location"].startswith("leaderboard/") for d in index["docs"])
    assert "\u200b" in index["config"]["separator"] or "u200b" in index["config"]["separator"]
    assert any("排行榜" in d["title"].split("\u200b") or "排行榜" in d["text"].split("\u200b") for d in zh)


def test_base_configuration_declares_both_languages():
    config = yaml.safe_load((TEMPLATES / "mkdocs.base.yml").read_text(encoding="utf-8"))
    i18n_conf = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    assert i18n_conf["docs_structure"] == "suffix" and i18n_conf["reconfigure_material"] is False
    assert LANGUAGES == ("en", "zh")
