"""mkdocs hook: Markdown's raw-HTML extraction with the same result and less work per block.

Before the block parser runs, ``md_in_html`` feeds each page's whole Markdown source through
``HTMLExtractorExtra`` (``html.parser``), which calls its Python handlers for every tag and
every piece of text of every raw HTML block only to copy them, verbatim, into one stash entry
per top-level block. The score tables and figures are such blocks: most of a page's tags.

Here the extractor is a subclass (put in the module, where ``HtmlBlockPreprocessor`` looks it
up per page) that, where a top-level raw block starts (a block-level start tag at the start
of a line, outside any ``markdown="1"`` element, not in a tail), finds the block's end with one
regular-expression scan over its tags, keeping the extractor's own stack rule (every start tag
is pushed but ``hr`` and self-closed ones; an end tag pops to its match; the block ends when
the stack is empty), and stores the same text the handlers would have stored. It does so only
when every ``<`` and ``&`` in the block is one the handlers copy verbatim: well-formed start and
end tags, named character references; a block with anything else (a comment, a numeric
reference, ``<script>``/``<style>``, a ``markdown`` attribute, a malformed or unclosed tag) is
left to the extractor as before, from its first tag. ``tests/test_site_fast_html.py``
compares the two on every page of the sample build and on such blocks.
"""

from __future__ import annotations

import re

# What the handlers copy verbatim inside a raw block (html.parser's tokens, the well-formed forms only).
_TOKEN = re.compile(r"""<(?:
      (?P<start>[a-zA-Z][-a-zA-Z0-9]*)                                  # start tag name
      (?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*  # attributes
      \s*(?P<close>/?)>
    | /(?P<end>[a-zA-Z][-.a-zA-Z0-9:_]*)\s*>                              # end tag
    )
    | &[a-zA-Z][-.a-zA-Z0-9]*;                                          # named reference
    | (?P<other>[<&])                                                   # anything else: not here
""", re.VERBOSE)
_BLANK_AFTER = re.compile(r"([ ]*\n){2}")  # htmlparser.blank_line_re, matched at a position
_CDATA = frozenset({"script", "style"})


def _block_end(text: str, start: int, tag: str) -> tuple[int, str] | None:
    """The end of the raw block whose first start tag ``tag`` ends at ``start``, and its last start
    tag's name; None when the block holds anything the handlers would not copy verbatim, or has
    no end."""
    stack = [tag]
    last = tag
    for m in _TOKEN.finditer(text, start):
        name = m.group("start")
        if name is not None:
            name = name.lower()
            if name in _CDATA or "markdown" in m.group(0).lower():
                return None
            last = name
            if not m.group("close") and name != "hr":
                stack.append(name)
            continue
        name = m.group("end")
        if name is not None:
            name = name.lower()
            if name in stack:
                while stack.pop() != name:
                    pass
                if not stack:
                    return m.end(), last
            continue
        if m.group("other") is not None:
            return None
    return None


def _fast_extractor(md_in_html):
    base = md_in_html.HTMLExtractorExtra

    class FastExtractor(base):
        def parse_starttag(self, i: int) -> int:
            if not (self.inraw or self.intail or self.mdstack or self.cdata_elem):
                m = _TOKEN.match(self.rawdata, i)
                if m is not None and m.group("start") and not m.group("close"):
                    tag = m.group("start").lower()
                    if (tag not in self.empty_tags and tag not in _CDATA and self.md.is_block_level(tag)
                            and "markdown" not in m.group(0).lower() and self.at_line_start()):
                        found = _block_end(self.rawdata, m.end(), tag)
                        if found is not None:
                            return self._stash_block(i, *found)
            return super().parse_starttag(i)

        def _stash_block(self, i: int, end: int, last: str) -> int:
            # what handle_starttag, handle_data and handle_endtag leave after the block's last end tag
            rawdata = self.rawdata
            self.lasttag = last
            self.cleandoc.append("\n")
            block = rawdata[i:end]
            if _BLANK_AFTER.match(rawdata, end):
                block += "\n"
            else:
                self.intail = True
            self.cleandoc.append(self.md.htmlStash.store(block))
            self.cleandoc.append("\n\n")
            return end

    FastExtractor.__name__ = base.__name__
    FastExtractor._rapgen_fast = True
    return FastExtractor


def _install() -> None:
    try:
        from markdown.extensions import md_in_html
    except ImportError:  # pragma: no cover - Markdown is a dependency
        return
    if not getattr(md_in_html.HTMLExtractorExtra, "_rapgen_fast", False):
        md_in_html.OriginalHTMLExtractorExtra = md_in_html.HTMLExtractorExtra  # what the test compares against
        md_in_html.HTMLExtractorExtra = _fast_extractor(md_in_html)


_install()  # when mkdocs loads the hooks, before any page is converted
