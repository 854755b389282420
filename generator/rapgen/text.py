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
