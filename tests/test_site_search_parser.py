"""The search index's fast parser (``templates/hooks/fast_search.py``) against Material's own.

The hook replaces Material's ``Parser`` with a subclass whose callbacks test the open tags as
strings; the search index is made only of the sections it returns, so the two must return the
same sections (tag, attributes, depth, id, title and text) on every page. Checked here on every
HTML page of the sample portal build (the article alone, as the plugin sees it, and the whole
file) and on hand-written markup for each branch of the callbacks.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def search():
    spec = importlib.util.spec_from_file_location("rapgen_fast_search_hook", REPO / "templates" / "hooks" / "fast_search.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # installs the fast parser (once per process)
    from material.plugins.search import plugin

    assert plugin.Parser is not plugin.OriginalParser and issubclass(plugin.Parser, plugin.OriginalParser)
    return plugin


def sections(cls, html: str) -> list[tuple]:
    parser = cls()
    parser.feed(html)
    parser.close()
    return [(s.el.tag, s.el.attrs, s.depth, s.id, s.title, s.text, s.is_excluded()) for s in parser.data]


HAND = [
    "plain text before any tag <p>then a paragraph</p>",
    "<h2 id='a'>Two <a class='headerlink' href='#a'>¶</a></h2><p>x</p><h3 id='b'>Three</h3><p>\n y \n</p>",
    "<h1 id='t'>Title <code>c</code></h1><p> </p><p>  <code> </code> </p><ul><li>one</li><li> </li></ul>",
    "<div data-search-exclude><p>hidden</p><div>inner</div> shown after the inner div closes</div><p>after</p>",
    "<section><h2 id='n'>Nested</h2><p>in</p></section><p>back in the first section</p>",
    "<div class='linenodiv'><pre>1\n2</pre></div><pre><code>a  \n\n  b</code></pre><p>x &amp; &lt;y&gt;</p>",
    "<script>var a = '<p>not text</p>';</script><style>p{}</style><object>o</object><p>t</p>",
    "<p>open <sub>s</sub><sup> </sup> <br/> <img src=x> <hr> end</p></p></div><h4 id='z'>No preface</h4>",
    "<table><tr><td>1</td><td><strong>2</strong><br><small>s</small></td></tr></table><h2>no id</h2><p>q</p>",
    "<h2 id='x' data-search-exclude>Excluded</h2><p>body</p><h2 id='y'>Kept</h2><p>more</p>",
    "<pre>  </pre><pre>a\n</pre> <p>\n</p>\n\n<p>中文 text</p>",
]


@pytest.mark.parametrize("html", HAND)
def test_fast_parser_equals_materials_on_hand_written_markup(search, html):
    assert sections(search.Parser, html) == sections(search.OriginalParser, html)


def test_fast_parser_equals_materials_on_every_page_of_the_sample_build(search, portal_build):
    repo, _ = portal_build
    pages = sorted((repo / "site").rglob("*.html"))
    assert len(pages) > 20
    differ = []
    for path in pages:
        html = path.read_text(encoding="utf-8")
        article = re.search(r"<article[^>]*>(.*)</article>", html, re.S)
        for part in ([article.group(1)] if article else []) + [html]:
            if sections(search.Parser, part) != sections(search.OriginalParser, part):
                differ.append(str(path.relative_to(repo)))
    assert not differ, differ


def _eager_anchor_ids(text: str) -> set[str]:
    from mkdocs.structure.pages import _HTMLHandler

    parser = _HTMLHandler()
    parser.feed(text)
    parser.close()
    return parser.present_anchor_ids


ANCHOR_MARKUP = [
    "# Title\n\n<div id='a'><a name='b'>x</a><span name='not-an-anchor'></span></div>\n",
    "<!-- <p id='in-a-comment'> -->\n<script>var s = '<p id=\"in-a-script\">';</script><p ID=upper></p>",
    "no html at all\n\n* a list\n",
]


@pytest.mark.parametrize("text", ANCHOR_MARKUP)
def test_deferred_anchor_scan_finds_the_ids_the_eager_one_does(search, text):
    """The hook defers mkdocs' raw-HTML anchor scan (``_RawHTMLPreprocessor``) to the first question
    asked of the set; the set, and ``Page.render``'s union with the heading ids, hold the same ids."""
    from mkdocs.structure.pages import _RawHTMLPreprocessor

    pre = _RawHTMLPreprocessor()
    lines = text.split("\n")
    assert pre.run(lines) == lines
    lazy, eager = pre.present_anchor_ids, _eager_anchor_ids(text)
    headings = {"title", "a"}
    union = headings | lazy
    assert set(lazy) == eager and len(lazy) == len(eager)
    assert set(union) == headings | eager and all(i in union for i in headings | eager) and "absent" not in union


def test_a_link_to_a_missing_anchor_is_still_reported(tmp_path):
    """mkdocs checks the links into a page's anchors against the deferred set: a link to an id that
    the raw HTML holds passes, one to an id nowhere on the page is still logged."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[ok](other.md#kept) [bad](other.md#missing)\n", encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\n<div id=\"kept\"><p>raw</p></div>\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nhooks:\n  - " + str(REPO / "templates" / "hooks" / "fast_search.py") + "\n"
        "validation:\n  anchors: warn\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(tmp_path / "mkdocs.yml")],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "other.md#missing" in proc.stderr and "other.md#kept" not in proc.stderr


def test_kept_jieba_cuts_are_jiebas_and_are_read_back(search, tmp_path, monkeypatch):
    """The Chinese runs' segmentations kept between builds (``_Cuts``): the first build cuts with
    jieba and writes them; a later one answers from the file without jieba; a damaged file or one
    of another key is not read; nothing is written when keeping is off."""
    import jieba

    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path))
    spec = importlib.util.spec_from_file_location("rapgen_fast_search_cuts", REPO / "templates" / "hooks" / "fast_search.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    runs = ["中文", "领域的最佳模型", "扩展窗口检索条件"]
    first = hook._Cuts(jieba)
    cuts = [first.cut(r) for r in runs]
    assert cuts == ["\u200b" + "\u200b".join(jieba.cut(r.encode("utf-8"))) + "\u200b" for r in runs]
    first.save()
    files = list((tmp_path / "site").glob("jieba-cuts-*.json"))
    assert len(files) == 1 and first.new == {}

    class NoJieba:  # the same version and dictionary, but cutting is an error
        __version__, dt = jieba.__version__, jieba.dt

        @staticmethod
        def cut(value):
            raise AssertionError("cut again")

    later = hook._Cuts(NoJieba)
    assert [later.cut(r) for r in runs] == cuts
    files[0].write_text("[1, 2]", encoding="utf-8")
    assert hook._Cuts(jieba).cut(runs[1]) == cuts[1]  # a damaged file: cut again
    with pytest.raises(AssertionError):
        hook._Cuts(NoJieba).cut(runs[1])
    off = hook._Cuts(jieba)
    off.enabled = False
    off.cut(runs[0])
    files[0].unlink()
    off.save()
    assert not list((tmp_path / "site").glob("jieba-cuts-*.json"))


def test_kept_sections_are_the_parsers_and_are_read_back(search, tmp_path, monkeypatch):
    """Each page's sections kept between builds (``_Sections``): the first build parses and writes
    them; a later one of the same language answers from the file without parsing, with new lists
    each time; a damaged file is not read; a build that changed nothing does not write."""
    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path))
    spec = importlib.util.spec_from_file_location("rapgen_fast_search_sections", REPO / "templates" / "hooks" / "fast_search.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    def parsed(html):
        return [(s.id, s.title, s.text) for s in sections_of(search.Parser, html) if not s.is_excluded()]

    def sections_of(cls, html):
        parser = cls()
        parser.feed(html)
        parser.close()
        return parser.data

    first = hook._Sections(search, "k")
    first.part = "en"
    got = [[(s.id, s.title, s.text) for s in first.of(html)] for html in HAND]
    assert got == [parsed(html) for html in HAND] and any(got)
    first.of(HAND[1])[0].title.append("changed by create_entry_for_section")
    assert [(s.id, s.title, s.text) for s in first.of(HAND[1])] == parsed(HAND[1])  # new lists each time
    first.save()
    assert [p.name for p in (tmp_path / "site").glob("search-sections-*")] == ["search-sections-k-en.json"]

    class NoParser(search.Parser):
        def feed(self, data):
            raise AssertionError("parsed again")

    monkeypatch.setattr(search, "Parser", NoParser)
    later = hook._Sections(search, "k")
    later.part = "en"
    assert [[(s.id, s.title, s.text) for s in later.of(html)] for html in HAND] == got
    path = tmp_path / "site" / "search-sections-k-en.json"
    stamp = path.stat().st_mtime_ns
    later.save()
    assert path.stat().st_mtime_ns == stamp  # the same pages: not written again
    other = hook._Sections(search, "k")
    other.part = "zh"  # another language's file: parsed
    with pytest.raises(AssertionError):
        other.of(HAND[0])
    path.write_text('{"x": [[1, [], []]]}', encoding="utf-8")
    damaged = hook._Sections(search, "k")
    damaged.part = "en"
    with pytest.raises(AssertionError):
        damaged.of(HAND[0])
