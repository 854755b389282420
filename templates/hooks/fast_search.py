"""mkdocs hook: the same search index and anchor checks with less work per page.

Two parts of every page's build parse HTML with Python's ``html.parser`` only to collect
things, never to report a position: Material's search plugin (``Parser``, the text of each
section of the rendered page) and mkdocs' scan of the Markdown's raw HTML for anchor ids
(``_HTMLHandler``). ``HTMLParser`` counts the lines and columns of every token it passes
(``updatepos``) for ``getpos()``, which neither of them calls: here they skip the count.
``HTMLParser`` itself never reads the position either, so each sees the same tokens.

The search plugin segments every run of Chinese characters of every section with jieba,
the same runs on page after page (the labels, the column names): each distinct run is cut
once and its segmentation remembered (jieba's cut of a string depends on the string and the
dictionary alone), and a text with no character outside ASCII, which holds no Chinese, is
returned as it is, as the plugin's substitution would return it.
"""

from __future__ import annotations


def _no_position(self, i, j):  # HTMLParser.updatepos without the line and column count
    return j


def _install() -> None:
    try:
        from material.plugins.search import plugin as search
    except ImportError:  # pragma: no cover - the theme is a dependency
        search = None
    if search is not None and not getattr(search.SearchIndex, "_rapgen_fast", False):
        search.Parser.updatepos = _no_position
        jieba, bre = search.jieba, search.bre
        if jieba is not None:
            han = bre.compile(r"(\p{script: Han}+)", bre.UNICODE)
            cuts: dict[str, str] = {}

            def replace(match):
                value = match.group(0)
                cut = cuts.get(value)
                if cut is None:
                    cut = cuts[value] = "".join(["\u200b", "\u200b".join(jieba.cut(value.encode("utf-8"))), "\u200b"])
                return cut

            def _segment_chinese(self, data):
                if data.isascii():  # no Han character: the substitution changes nothing, strip("\u200b") neither
                    return data
                return han.sub(replace, data).strip("\u200b")

            search.SearchIndex._segment_chinese = _segment_chinese
        search.SearchIndex._rapgen_fast = True
    from mkdocs.structure import pages

    handler = getattr(pages, "_HTMLHandler", None)
    if handler is not None:
        handler.updatepos = _no_position


_install()  # when mkdocs loads the hooks, before any page is built
