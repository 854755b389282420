"""Markdown's raw-HTML extraction with ``templates/hooks/fast_html.py`` against ``md_in_html``'s own.

The hook's extractor stores each plain top-level raw block after one scan of its tags; the text
left for the block parser and every stash entry must be what the original extractor gives, on
every Markdown page of the sample build and on hand-written blocks for each case it declines
(then the original handlers run) or takes.
"""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as etree
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXTENSIONS = ["attr_list", "md_in_html", "tables", "admonition", "pymdownx.details", "pymdownx.superfences",
              "pymdownx.tabbed", "toc"]


@pytest.fixture(scope="module")
def md_in_html():
    spec = importlib.util.spec_from_file_location("rapgen_fast_html_hook", REPO / "templates" / "hooks" / "fast_html.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # installs the fast extractor (once per process)
    from markdown.extensions import md_in_html

    assert md_in_html.HTMLExtractorExtra is not md_in_html.OriginalHTMLExtractorExtra
    return md_in_html


def extract(cls, text: str) -> tuple[str, list[str]]:
    import markdown

    md = markdown.Markdown(extensions=EXTENSIONS)
    parser = cls(md)
    parser.feed(text)
    parser.close()
    stash = [b if isinstance(b, str) else etree.tostring(b, encoding="unicode") for b in md.htmlStash.rawHtmlBlocks]
    return "".join(parser.cleandoc), stash


HAND = [
    "# T\n\n<table>\n<tr><td>1<br>x</td><td><small>s</small></td></tr>\n</table>\n\nafter\n",
    "<div class='a' data-x=\"{&quot;k&quot;: 1, &quot;s&quot;: \"a>b\"}\" hidden>\n<p>x &amp; y &lt;z&gt;</p></div>\ntail right after\n",
    "<figure class=\"f\">\n<div>in</div>\n<figcaption>c <a href=\"../x/\">l</a></figcaption>\n</figure>\n\n<div>two</div>\n\n",
    "   <div>three spaces</div>\n\n    <div>four: code</div>\n",
    "text <div>not at a line start</div>\n\n<div>then one</div><div>in its tail</div>\n\n",
    "<div>a comment <!-- c --> inside</div>\n\n<div>a &#39; numeric</div>\n\n<div>a bare & sign</div>\n",
    "<div>unclosed <span>block\n\nstill open",
    "<div><script>var a = '<p>';</script></div>\n\n<div><style>p{}</style></div>\n",
    "<div markdown=\"1\">\n*md* <div>inner</div>\n</div>\n\n<div><hr markdown=\"1\"><hr/><p>x</p></div>\n",
    "<div><p>stray end</span></p></div>\n\n<div><br/><img src=x><input checked></div>\n\n<DIV Class=\"u\">UPPER</DIV>\n",
    "<div a=1 b='2'>bare</div>\n\n<div a=\"1\"b=\"2\">glued</div>\n\n<div>< 3 and </ x></div>\n\n<div>end tag </div >x</div>\n",
    "<p>a paragraph block</p>\n<hr>\n<div>\n\n</div>\n<details><summary>s</summary>d</details>\n",
    "<div>\n<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>d</td></tr></tbody></table>\n</div>",
]


def differing(md_in_html, texts: dict[str, str]) -> list[str]:
    """The names of the texts the two extractors leave differently."""
    return [name for name, text in texts.items()
            if extract(md_in_html.HTMLExtractorExtra, text) != extract(md_in_html.OriginalHTMLExtractorExtra, text)]


@pytest.mark.parametrize("text", HAND)
def test_fast_extractor_equals_md_in_html_on_hand_written_blocks(md_in_html, text):
    assert differing(md_in_html, {"hand-written": text}) == []


def test_fast_extractor_equals_md_in_html_on_every_page_of_the_sample_build(md_in_html, portal_build):
    repo, _ = portal_build
    pages = {str(p.relative_to(repo)): p.read_text(encoding="utf-8") for p in sorted((repo / "build").rglob("*.md"))}
    assert len(pages) > 20 and differing(md_in_html, pages) == []


def test_a_plain_block_is_stored_without_the_handlers(md_in_html, monkeypatch):
    calls = []
    original = md_in_html.OriginalHTMLExtractorExtra.handle_starttag
    monkeypatch.setattr(md_in_html.OriginalHTMLExtractorExtra, "handle_starttag",
                        lambda self, tag, attrs: calls.append(tag) or original(self, tag, attrs))
    text = "<table>\n<tr><td>1</td><td>2</td></tr>\n</table>\n\n<div>a <!-- c --></div>\n"
    assert extract(md_in_html.HTMLExtractorExtra, text)[1] == ["<table>\n<tr><td>1</td><td>2</td></tr>\n</table>\n",
                                                              "<div>a <!-- c --></div>"]
    assert calls == ["div"]  # the table in one scan; the block with a comment by the handlers
