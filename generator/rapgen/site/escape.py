"""The one escaping rule for text that comes from an archive or a submission.

Every string a page shows that rapgen did not write itself (model.json fields,
invalid-unit reasons, field and codebook text, ARCHIVE.json, file names) goes
through exactly one of these functions, chosen by where it lands. The rule is
the same everywhere: the reader sees the characters, never markup. So

* the text is first *cleaned* (:func:`clean`): lone surrogates and control
  characters (C0, DEL, C1 — which Python-Markdown also uses as its internal
  placeholders) become U+FFFD and every run of whitespace, line breaks
  included, becomes one space, so no value can start a new Markdown block, end
  a front-matter line or break a table row;
* then ``&``, ``<`` and ``>`` become HTML entities, so no tag or entity of the
  author's survives;
* then, where Markdown will read the text, every character Markdown or one of
  the site's extensions gives a meaning (emphasis, links, attribute lists
  ``{: …}``, tables, admonitions ``!!!``/``???``, tabs ``===``, fences ``~~~``,
  list numbers ``1.``) is neutralised by a backslash escape or a numeric
  character reference.

Links are the one exception to "text only": a model's ``url`` becomes a link
only when it is an absolute ``http``/``https`` address (:func:`safe_url`).
Jinja syntax needs nothing special: rendered values are never rendered again,
and the braces are escaped for attr_list anyway.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import urlsplit

REPLACEMENT = "\ufffd"
# C0 controls other than whitespace (str.split folds those), DEL, C1, lone
# surrogates, and the two non-characters YAML refuses.
_UNSAFE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
# Markdown's own escapable characters: a backslash makes them literal.
_MD_BACKSLASH = re.compile(r"([\\`*_{}\[\]()#+!|>-])")
# Characters only an extension reads, which Markdown cannot backslash-escape:
# a numeric reference shows the character and means nothing to the parser.
_MD_ENTITY = {"~": "&#126;", "?": "&#63;", "=": "&#61;"}
_MD_ENTITY_RE = re.compile("[" + re.escape("".join(_MD_ENTITY)) + "]")
_LIST_NUMBER = re.compile(r"^(\d+)\.(?=\s|$)")
_CODE_SAFE = re.compile(r"^[A-Za-z0-9 ._,:;/@+=()\[\]{}\"'-]*$")


def clean(value: Any) -> str:
    """``str(value)`` with unsafe code points replaced and whitespace folded to single spaces."""
    return " ".join(_UNSAFE.sub(REPLACEMENT, str(value)).split())


def md_text(value: Any) -> str:
    """Text in Markdown prose, headings, list items and table cells (also text
    between inline HTML tags inside a Markdown paragraph)."""
    text = html.escape(clean(value), quote=False)
    text = _MD_BACKSLASH.sub(r"\\\1", text)
    text = _MD_ENTITY_RE.sub(lambda m: _MD_ENTITY[m.group()], text)
    return _LIST_NUMBER.sub(r"\1\\.", text)


def html_text(value: Any) -> str:
    """Text inside a raw HTML block or an attribute value (Markdown never reads either)."""
    return html.escape(clean(value), quote=True)


def title_text(value: Any) -> str:
    """A page title for Markdown front matter: a one-line YAML (JSON) string holding
    HTML-escaped text. mkdocs-material writes ``page.meta.title`` into ``<title>`` and
    the header without escaping, so the escaping has to be in the value itself."""
    return json.dumps(html.escape(clean(value), quote=False), ensure_ascii=False)


def code_text(value: Any) -> str:
    """A value shown as inline code inside a Markdown table: a plain code span when
    the value is harmless there, else a ``<code>`` element with every special character
    as a numeric reference (a backtick or ``|`` would end the span or the cell)."""
    text = clean(value)
    if _CODE_SAFE.match(text):
        return f"`{text}`"
    return "<code>" + "".join(ch if ch.isalnum() or ch == " " else f"&#{ord(ch)};" for ch in text) + "</code>"


def element_text(value: Any) -> str:
    """Text content of an HTML element written by a template outside Markdown (the
    footer's copyright line): ``&``, ``<`` and ``>`` as entities, quotes kept."""
    return html.escape(clean(value), quote=False)


def chart_text(value: Any) -> str:
    """A label inside a plotly figure: plotly reads a few HTML tags in labels, so
    ``&``, ``<`` and ``>`` become entities, which plotly shows as the characters."""
    return element_text(value)


def safe_url(value: Any) -> str | None:
    """An absolute http(s) URL with a host, else None (``javascript:``, ``data:``,
    relative and protocol-relative addresses never become links)."""
    text = str(value).strip()
    if _UNSAFE.search(text) or any(ch.isspace() for ch in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return text
