"""``redact-v1``: the sample's briefs and their lexical audit (INSPIRE.md §6).

The brief is the target's abstract with the target's own coined name and its
named antecedents' names replaced by ``[method]``, followed by the paper's
closing question; the terse brief is the redacted abstract's first two
sentences and the same question. The auditor is lexical: ``title_overlap`` is
the share of the target title's distinct adjacent token pairs (the frozen
analyzer's tokens) that the brief also holds; ``audit_confidence`` equals it
and the target counts as named at >= 0.5. Pairs, not single tokens: a brief
made from the abstract shares most single title words with any title (85 of
the 90 sample targets would be flagged), while a reproduced title phrase is
what gives the target away.
"""

from __future__ import annotations

import re
from typing import Iterable

from rapgen.search import tokenize

GENERATOR = "redact-v1"
CLOSING = "What prior work should we read to make progress on this problem?"
PLACEHOLDER = "[method]"
NAMED_AT = 0.5
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(])")


def redact(text: str, names: Iterable[str]) -> str:
    """``text`` with every whole-token occurrence of a name replaced (longest names first), whitespace normalised."""
    out = " ".join(text.split())
    for name in sorted(set(names), key=lambda n: (-len(n), n)):
        out = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", PLACEHOLDER, out)
    return out


def briefs(abstract: str, names: Iterable[str]) -> tuple[str, str]:
    """(brief, terse brief)."""
    body = redact(abstract, names)
    first_two = " ".join(_SENTENCE.split(body)[:2])
    return f"{body} {CLOSING}", f"{first_two} {CLOSING}"


def _grams(text: str) -> tuple[set, set]:
    tokens = tokenize(text)
    return set(tokens), set(zip(tokens, tokens[1:]))


def title_overlap(title: str, brief: str) -> float:
    """Share of the title's distinct adjacent token pairs found in the brief (a one-token
    title: its token; no tokens: 0), rounded to six decimals."""
    words, pairs = _grams(title)
    brief_words, brief_pairs = _grams(brief)
    if pairs:
        return round(len(pairs & brief_pairs) / len(pairs), 6)
    return round(len(words & brief_words) / len(words), 6) if words else 0.0
