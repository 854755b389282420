"""rapgen.text: archive text is inert on a terminal."""

from __future__ import annotations

import pytest

from rapgen.text import escape_terminal, has_bidi_override


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("plain café 中文 🙂", "plain café 中文 🙂"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),  # ANSI colour: ESC shown, sequence inert
        ("over\rwrite", "over\\x0dwrite"),
        ("tab\there\nnew", "tab\\x09here\\x0anew"),
        ("del\x7f", "del\\x7f"),
        ("c1\x9b2J", "c1\\x9b2J"),  # 8-bit CSI
        ("nul\x00", "nul\\x00"),
        ("a\u202eevil", "a\\u202eevil"),  # right-to-left override
        ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
        ("bad\udcff", "bad\\xff"),  # a non-UTF-8 byte kept by surrogateescape
        ("lone\ud800", "lone\\ud800"),
        ("back\\slash", "back\\slash"),
    ],
)
def test_escape_terminal(raw, shown):
    assert escape_terminal(raw) == shown
    assert all(c.isprintable() for c in escape_terminal(raw))


def test_backslashes_doubled_on_request():
    assert escape_terminal("a\\b\n", backslash=True) == "a\\\\b\\x0a"


@pytest.mark.parametrize("code", [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
def test_every_bidi_override_found(code):
    assert has_bidi_override(f"x{chr(code)}y")


@pytest.mark.parametrize("text", ["", "plain", "\u200f rtl mark is not an override", "\u2069"[:0]])
def test_no_bidi_override(text):
    assert not has_bidi_override(text)
