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


def norm_all(texts: Sequence[str]):
    """``norm`` of every text, as an Arrow string array: in Arrow for ASCII texts (where NFKC changes
    nothing and casefolding is lower-casing), with :func:`norm` for the others."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(texts, type=pa.string())
    out = pc.utf8_trim(pc.replace_substring_regex(pc.ascii_lower(arr), _OUTSIDE.pattern, " "), " ")
    ascii_ = pc.string_is_ascii(arr).to_numpy(zero_copy_only=False)
    if ascii_.all():
        return out
    values = out.to_pylist()
    for i in (~ascii_).nonzero()[0].tolist():
        values[i] = norm(texts[i])
    return pa.array(values, type=pa.string())
