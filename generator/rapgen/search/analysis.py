"""The frozen analyzer, schema constants and Whoosh's field-length quantiser.

SEARCH.md fixes Whoosh's ``StandardAnalyzer`` with its defaults. Rather than
copying its regular expression and stoplist, this module reads them from a
``StandardAnalyzer()`` instance of the pinned whoosh-reloaded 2.7.5, and
:func:`tokenize` applies them in the same order the analyzer does (regex
tokens -> lowercase -> drop tokens shorter than ``minsize`` or in the
stoplist). ``tests/test_search_analysis.py`` checks token-for-token equality
with the analyzer itself on real arXiv abstracts.
"""

from __future__ import annotations

import re
from importlib import metadata

import numpy as np

WHOOSH_DISTRIBUTION = "whoosh-reloaded"
WHOOSH_VERSION = "2.7.5"
FIELDS: tuple[str, ...] = ("title", "abstract")  # scored fields, in query-clause order
SORTS: tuple[str, ...] = ("relevance", "date")
CALL_KEYS: tuple[str, ...] = ("query", "sort", "date_from", "date_to")
# Bumped whenever the index layout or any scoring rule changes: part of the cache key.
ENGINE_VERSION = "rapgen-search-1"


def check_whoosh_version() -> str:
    """The installed whoosh-reloaded version; raises if another Whoosh is installed."""
    from rapgen.errors import SearchError

    try:
        found = metadata.version(WHOOSH_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise SearchError(f"{WHOOSH_DISTRIBUTION} is not installed; install {WHOOSH_DISTRIBUTION}=={WHOOSH_VERSION}") from None
    if found != WHOOSH_VERSION:
        raise SearchError(f"{WHOOSH_DISTRIBUTION} {found} is installed; the frozen backend needs {WHOOSH_VERSION}")
    return found


def _standard_analyzer_parts() -> tuple[re.Pattern, frozenset[str], int]:
    from whoosh.analysis import StandardAnalyzer
    from whoosh.analysis.filters import LowercaseFilter, StopFilter
    from whoosh.analysis.tokenizers import RegexTokenizer

    analyzer = StandardAnalyzer()
    tokenizer, lower, stop = analyzer.items
    assert isinstance(tokenizer, RegexTokenizer) and not tokenizer.gaps
    assert isinstance(lower, LowercaseFilter) and isinstance(stop, StopFilter)
    assert stop.max is None and stop.renumber
    return tokenizer.expression, frozenset(stop.stops), int(stop.min)


TOKEN_RE, STOPWORDS, MIN_TOKEN_SIZE = _standard_analyzer_parts()
# RegexTokenizer yields match.group(0); findall needs a pattern without capturing
# groups to return whole matches. Turning "(" into "(?:" changes no match.
assert TOKEN_RE.groups == 1 and "(?" not in TOKEN_RE.pattern and "\\(" not in TOKEN_RE.pattern
_FINDALL_RE = re.compile(TOKEN_RE.pattern.replace("(", "(?:"), TOKEN_RE.flags)


def tokenize(text: str | None) -> list[str]:
    """All index tokens of ``text``, in order (duplicates kept): StandardAnalyzer defaults
    (regex tokens, then lowercase, then drop short tokens and stopwords)."""
    if not text:
        return []
    stops, minsize = STOPWORDS, MIN_TOKEN_SIZE
    return [t for t in map(str.lower, _FINDALL_RE.findall(text)) if len(t) >= minsize and t not in stops]


def query_terms(query: str) -> list[str]:
    """The query's analysed tokens, de-duplicated, first occurrence first (SEARCH.md)."""
    return list(dict.fromkeys(tokenize(query)))


def _length_table() -> np.ndarray:
    from whoosh.util import numeric

    return np.asarray(numeric._length_byte_cache, dtype=np.int64)


_LENGTH_TABLE = _length_table()
_LENGTH_SATURATION = 106374  # whoosh.util.numeric.length_to_byte: lengths >= this map to byte 255


def quantise_lengths(lengths: np.ndarray) -> np.ndarray:
    """Whoosh's stored field length: ``byte_to_length(length_to_byte(n))``.

    ``length_to_byte`` is ``bisect_left`` on the 256-entry table (so a length
    rounds *up* to the next table value) and saturates at byte 255.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    byte = np.searchsorted(_LENGTH_TABLE, lengths, side="left")
    byte = np.where(lengths >= _LENGTH_SATURATION, 255, np.minimum(byte, 255))
    return _LENGTH_TABLE[byte]
