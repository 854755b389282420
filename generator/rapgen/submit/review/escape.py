"""Text from a submission, made inert for the Markdown report and the terminal.

Every string that comes from a pull request (model.json values, rationales,
reasons, file and folder names, keys quoted in messages) passes through one of
these before it is printed:

- :func:`visible` — control characters (C0, DEL, C1; so every escape
  sequence), bidirectional controls and lone surrogates (undecodable bytes of a
  file name) become ``\\xNN`` / ``\\uNNNN`` text; the result is one line.
- :func:`md_text` — :func:`visible`, then Markdown and HTML shown as text, for
  a position inside a line (never at its start): Markdown metacharacters are
  backslash-escaped, ``<``, ``>`` and ``&`` become entities, and the two
  GitHub autolink triggers (``://`` and ``www.``) are broken, so no heading,
  link, image, table cell, mention, math or HTML can come out of it.
- :func:`md_code` — :func:`visible` inside a code span whose backtick fence is
  longer than any backtick run of the text, so the span cannot be closed early.
"""

from __future__ import annotations

import re

# Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)
# and the implicit marks; shown as escapes so they cannot reorder the report.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_MARKS = "\u200e\u200f\u061c"
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069" + _BIDI_MARKS + "\ud800-\udfff\u2028\u2029\ufeff]")
# Characters that can open or close Markdown (CommonMark + GitHub: tables, strikethrough,
# math, mentions, issue references) or HTML inside a line.
_MD_PUNCT = re.compile(r"[\\`*\[\]|~$@#!{}]")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _escape_char(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` on one line, with every control, bidi and undecodable character written as an escape."""
    return _INVISIBLE.sub(_escape_char, str(text))


def _underscore(text: str) -> str:
    """Escape ``_`` unless it sits between two letters or digits (where it can never be emphasis)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "_" and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    return "".join(out)


def md_text(text: object) -> str:
    """``text`` as inert Markdown for use inside a line (a table cell, after a label)."""
    s = _MD_PUNCT.sub(lambda m: "\\" + m.group(0), visible(text))
    s = _underscore(s)
    s = "".join(_HTML.get(ch, ch) for ch in s)
    s = re.sub(r"(?i)(?<=www)\.", r"\\.", s.replace("://", "\\://"))
    return s


def md_code(text: object, *, in_table: bool = False) -> str:
    """``text`` as a code span that shows it verbatim (``in_table``: also escape ``|``, which GitHub splits cells on)."""
    s = visible(text)
    if not s:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")):
        s = f" {s} "
    if in_table:
        s = s.replace("|", "\\|")
    return f"{fence}{s}{fence}"


def md_fence(lines: list[str]) -> list[str]:
    """Lines as a fenced code block whose fence no line can close."""
    shown = [visible(line) for line in lines]
    longest = max((len(run) for line in shown for run in re.findall(r"`{3,}|~{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *shown, fence]
