"""arXiv ids as Inspire reads them: canonical form, version suffixes dropped (INSPIRE.md §2)."""

from __future__ import annotations

import re
from typing import NamedTuple

# New-style (2301.00011, optional v2) and old-style (hep-th/9901001, math.AG/0101001).
# INSPIRE.md's two patterns, matched with fullmatch (``$`` alone would accept a trailing
# newline) and with ASCII classes (``\d`` would accept any Unicode digit).
_NEW = re.compile(r"([0-9]{4}\.[0-9]{4,5})(v[0-9]+)?", re.ASCII)
_OLD = re.compile(r"([a-z-]+(\.[A-Z]{2})?/[0-9]{7})(v[0-9]+)?", re.ASCII)


class Canon(NamedTuple):
    """A submitted id read: ``key`` is the canonical id, or the raw string when malformed."""

    key: str
    canonical: bool
    versioned: bool  # a version suffix was dropped


def canon(raw: str) -> Canon:
    """The canonical form of one submitted string (no ``arXiv:`` prefix, no trimming)."""
    m = _NEW.fullmatch(raw)
    if m:
        return Canon(m.group(1), True, m.group(2) is not None)
    m = _OLD.fullmatch(raw)
    if m:
        return Canon(m.group(1), True, m.group(3) is not None)
    return Canon(raw, False, False)


def is_canonical(value: str) -> bool:
    """True for an id already in canonical form (a corpus or label id)."""
    c = canon(value)
    return c.canonical and not c.versioned
