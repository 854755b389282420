"""Text that came from an archive or a submission, made safe for a terminal.

File names, model.json fields, rationales and reasons may carry control
characters: an ANSI escape sequence can recolour or rewrite a terminal, a bare
carriage return can hide what came before it on the line. :func:`escape_terminal`
shows every such character as a visible escape; :func:`has_bidi_override` finds
the bidirectional overrides that make text display in a different order from
the one it is stored in (the "Trojan Source" trick), which the pull-request
check rejects outright.
"""

from __future__ import annotations

# U+202A..U+202E (LRE, RLE, PDF, LRO, RLO) and U+2066..U+2069 (LRI, RLI, FSI, PDI).
BIDI_OVERRIDES = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a non-UTF-8 name, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:  # C0, DEL, C1 (ESC and CSI among them)
        return f"\\x{code:02x}"
    if ch in BIDI_OVERRIDES or 0xD800 <= code <= 0xDFFF:  # overrides and lone surrogates
        return f"\\u{code:04x}"
    return ch


def escape_terminal(text: str, *, backslash: bool = False) -> str:
    """``text`` with every C0/C1 control, DEL, lone surrogate and bidi override as a
    visible ``\\xNN`` / ``\\uNNNN`` escape, so printing it cannot move the cursor,
    change colours or reorder the line. An escape sequence (ESC ``[``…) becomes
    ``\\x1b[``…, i.e. inert text. With ``backslash``, a literal backslash is doubled
    so that the escaped form is unambiguous (used for file names)."""
    out = []
    for ch in text:
        if ch == "\\" and backslash:
            out.append("\\\\")
        else:
            out.append(_escape_char(ch))
    return "".join(out)


def has_bidi_override(text: str) -> bool:
    """True if ``text`` holds a bidirectional embedding, override or isolate
    (U+202A–U+202E, U+2066–U+2069)."""
    return any(ch in BIDI_OVERRIDES for ch in text)


# ---------------------------------------------------------------- Markdown (the pull-request report)
# Characters that can open or close Markdown inside a line (CommonMark plus GitHub's
# tables, strikethrough, math, mentions and issue references); ``_`` is handled apart.
_MARKDOWN_PUNCTUATION = frozenset("\\`*[]|~$@#!{}")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape_markdown(text: str) -> str:
    """``text`` as inert Markdown for a position inside a line (a table cell, after a
    label; never the start of a line): controls escaped as by :func:`escape_terminal`
    (so the result is one line), Markdown metacharacters backslash-escaped, ``<``,
    ``>`` and ``&`` as entities, and GitHub's two autolink triggers (``://``,
    ``www.``) broken. No heading, emphasis, link, image, table cell, mention, math
    or HTML can come out of it; the rendered text reads as the original."""
    s = escape_terminal(text)
    out = []
    for i, ch in enumerate(s):
        if ch in _MARKDOWN_PUNCTUATION:
            out.append("\\" + ch)
        elif ch == "_":  # between two letters or digits an underscore can never be emphasis
            inner = 0 < i < len(s) - 1 and s[i - 1].isalnum() and s[i + 1].isalnum()
            out.append("_" if inner else "\\_")
        elif ch == "." and s[max(0, i - 3):i].lower() == "www":
            out.append("\\.")
        elif ch == ":" and s.startswith("//", i + 1):
            out.append("\\:")
        else:
            out.append(_HTML_ENTITIES.get(ch, ch))
    return "".join(out)


def markdown_code(text: str, *, in_table: bool = False) -> str:
    """``text`` (controls escaped) as a Markdown code span that shows it verbatim: the
    backtick fence is longer than any run of backticks inside, so the span cannot be
    closed early. ``in_table``: ``|`` is escaped too, as GitHub splits cells on it
    even inside code."""
    s = escape_terminal(text)
    if not s:
        return "` `"
    longest, run = 0, 0
    for ch in s:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")):
        s = f" {s} "
    if in_table:
        s = s.replace("|", "\\|")
    return f"{fence}{s}{fence}"
