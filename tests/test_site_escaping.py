"""Archive text never becomes markup: the escaping rule, unit by unit and on a built site.

The built-site test renders the factory archive twice — once with markup after every
text field (tests/site_hostile.py), once with plain words — runs mkdocs on both and
parses every HTML page: both sites must have the same elements on every page, no
event-handler attribute, no ``javascript:`` address and the markup shown as text.
The same check runs in headless Chromium in tests/test_site_browser_escaping.py.
"""

from __future__ import annotations

import html
import html.parser
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from rapgen.site import escape
from site_hostile import PAYLOAD, PLAIN, PLAIN_URLS, make_hostile_archive

MARKDOWN_EXTENSIONS = ["attr_list", "md_in_html", "tables", "admonition", "pymdownx.details", "pymdownx.superfences",
                       "pymdownx.tabbed", "toc"]


def _markdown(text: str) -> str:
    import markdown

    return markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS)


# ------------------------------------------------------------------ the rule, unit by unit
@pytest.mark.parametrize("text, expected", [
    ("*bold* [x](y) <i>", r"\*bold\* \[x\]\(y\) &lt;i&gt;"),
    ("a\n\n---\nb\tc", r"a \-\-\- b c"),
    ("1986. A year", r"1986\. A year"),
    ("??? note", "&#63;&#63;&#63; note"),
    ('=== "tab"', '&#61;&#61;&#61; "tab"'),
    ("~~~", "&#126;&#126;&#126;"),
    ("x {: onclick=y}", r"x \{: onclick&#61;y\}"),
    ("ctl\x02wzxhzdk:0\x03\x7f\ud800", "ctl\ufffdwzxhzdk:0\ufffd\ufffd\ufffd"),
])
def test_md_text_table(text, expected):
    assert escape.md_text(text) == expected


@pytest.mark.parametrize("text", [
    "*em*{: onclick=\"alert(1)\"}", "[a](javascript:alert(1))", "<img src=x onerror=alert(1)>", "!!! danger \"x\"",
    "??? note", "=== \"t\"", "~~~\ncode\n~~~", "1. item", "- item", "> quote", "# h {: #i onmouseover=x}",
    "| a | b |\n|---|---|", "<div markdown=\"1\">*x*</div>", "&lt;b&gt;", "`code`", "<https://x.example/>", "x  \ny",
])
def test_md_text_renders_as_one_plain_paragraph(text):
    out = _markdown(escape.md_text(text))
    assert re.fullmatch(r"<p>[^<]*</p>", out), out


def test_text_in_a_markdown_table_stays_in_its_cell():
    cell = escape.md_text("a | b </td><td> c")
    out = _markdown(f"| k | v |\n|---|---|\n| x | {cell} |\n")
    assert out.count("<td>") == 2 and "<td> c" not in out


def test_html_text_and_title_text():
    assert escape.html_text('a <b> & "c"\n d') == "a &lt;b&gt; &amp; &quot;c&quot; d"
    title = escape.title_text('</title><script>x</script> "q"\n---')
    assert "\n" not in title and json.loads(title) == '&lt;/title&gt;&lt;script&gt;x&lt;/script&gt; "q" ---'
    import yaml

    assert yaml.safe_load(f"title: {escape.title_text(chr(0x85) + chr(0x7f) + 'x' + chr(0xffff))}")["title"] == "\ufffdx\ufffd"


@pytest.mark.parametrize("value, expected", [
    ("200", "`200`"),
    ('"canonical"', '`"canonical"`'),
    ("a`b|c", "<code>a&#96;b&#124;c</code>"),
])
def test_code_text(value, expected):
    assert escape.code_text(value) == expected


@pytest.mark.parametrize("url, ok", [
    ("https://example.org/m", True), ("http://example.org", True), ("HTTPS://EXAMPLE.ORG/", True),
    ("javascript:alert(1)", False), (" javascript:alert(1)", False), ("JaVaScRiPt:alert(1)", False),
    ("data:text/html,<script>", False), ("//evil.example/", False), ("/relative", False), ("https:///nohost", False),
    ("https://exa mple.org", False), ("https://example.org/\x00", False), ("ftp://example.org", False),
])
def test_safe_url_allows_only_absolute_http(url, ok):
    assert (escape.safe_url(url) is not None) is ok


# ------------------------------------------------------------------ a built site
class _Page(html.parser.HTMLParser):
    """Element counts, event-handler attributes, script-capable addresses and the title; the text of
    executable scripts, and apart from it that of JSON-LD data blocks (never executed)."""

    URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "srcdoc"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter = Counter()
        self.handlers: list[str] = []
        self.bad_urls: list[str] = []
        self.classes: list[str] = []
        self.title = ""
        self._in_title = False
        self._in_script = False
        self.script_text = ""
        self._data: str | None = None
        self.data_blocks: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"<{tag} {name}>")
            if name in self.URL_ATTRS and value and re.match(r"\s*(javascript|vbscript|data):", value, re.I):
                self.bad_urls.append(f"<{tag} {name}={value[:40]}>")
            if name == "class" and value and "pwn" in value:
                self.classes.append(f"<{tag} class={value}>")
        data_block = tag == "script" and dict(attrs).get("type") == "application/ld+json"
        self._in_title, self._in_script = tag == "title", tag == "script" and not data_block
        self._data = "" if data_block else None

    def handle_endtag(self, tag):
        self._in_title = self._in_script = False
        if self._data is not None:
            self.data_blocks.append(self._data)
            self._data = None

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._in_script:
            self.script_text += data
        if self._data is not None:
            self._data += data


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def twin_sites(tmp_path_factory) -> tuple[Path, Path]:
    from rapgen.pipeline import run_build

    base = tmp_path_factory.mktemp("escaping")
    out = []
    for name, payload, urls in (("hostile", PAYLOAD, None), ("plain", PLAIN, PLAIN_URLS)):
        root = make_hostile_archive(base / name, payload, urls) if urls else make_hostile_archive(base / name)
        run_build(root, base / f"{name}-site", resamples=20, work_dir=base / f"{name}-work")
        out.append(base / f"{name}-site")
    return out[0], out[1]


def _html_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def test_hostile_text_adds_no_element_handler_or_address_on_any_page(twin_sites):
    hostile, plain = twin_sites
    pages = _html_pages(hostile)
    assert pages == _html_pages(plain) and len(pages) >= 10
    # both languages: every English page has its Chinese twin, held to the same rule
    assert {p[len("zh/"):] for p in pages if p.startswith("zh/")} >= {p for p in pages if not p.startswith("zh/") and p != "404.html"}
    for rel in pages:
        h, p = _parse(hostile / rel), _parse(plain / rel)
        assert h.handlers == [], (rel, h.handlers)
        assert h.bad_urls == [], (rel, h.bad_urls)
        assert h.classes == [], (rel, h.classes)
        assert "pwned" not in h.script_text, rel
        for block in h.data_blocks:  # the archive's text inside JSON-LD stays JSON string data
            assert "</" not in block and json.loads(block), rel
        assert h.tags == p.tags, (rel, {t: (h.tags[t], p.tags[t]) for t in h.tags | p.tags if h.tags[t] != p.tags[t]})


@pytest.mark.parametrize("lang", ["", "zh/"])
def test_hostile_text_is_shown_as_text(twin_sites, lang):
    hostile, _ = twin_sites
    page = _parse(hostile / lang / "models/model-a/index.html")
    assert page.title.startswith("Model A <script>window.__pwned=1</script><img src=x onerror=")
    assert "</title></span></td></table><iframe" in page.title
    body = (hostile / lang / "models/model-a/index.html").read_text(encoding="utf-8")
    # the javascript: url is text, the https url a link with its quote escaped
    assert "javascript:window.__pwned=11" in html.unescape(body) and not re.search(r"<a\s[^>]*href=.?javascript", body)
    other = (hostile / lang / "models/model-b/index.html").read_text(encoding="utf-8")
    assert '<a href="https://example.org/&quot;onmouseover=&quot;window.__pwned=12" rel="nofollow noopener">' in other
    footer = (hostile / lang / "index.html").read_text(encoding="utf-8")
    assert "tiny test archive &lt;script&gt;" in footer


def test_search_index_holds_escaped_text(twin_sites):
    hostile, _ = twin_sites
    index = json.loads((hostile / "search/search_index.json").read_text(encoding="utf-8"))
    for doc in index["docs"]:
        for key in ("title", "text"):
            assert "<script" not in doc[key] and "<img" not in doc[key], (doc["location"], key)
