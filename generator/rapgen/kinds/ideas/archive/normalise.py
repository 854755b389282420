"""The text normalisation of the ``phrase-v1`` assignment (IDEAS.md §2).

norm(x) = NFKC, then casefold, then every run of characters outside
``[0-9a-z]`` becomes one space, then trim. A term matches a text when
``" " + norm(term) + " "`` is a substring of ``" " + norm(text) + " "``: the
term's words occur in the text as consecutive whole words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_OUTSIDE = re.compile(r"[^0-9a-z]+")


def norm(text: str) -> str:
    return _OUTSIDE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def paper_text(title: str, key_points: Sequence[str]) -> str:
    """text(p): the title and the key points joined by newlines."""
    return "\n".join([title, *key_points])
