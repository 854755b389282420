"""Pseudo-text of the synthetic Ideas archive: words, topics, papers and ideas, all drawn from seeds.

Every word is a made-up syllable string (lower-case ``a–z``, so ``phrase-v1``'s
normalisation leaves it alone). The words are split into disjoint sets: each
topic owns the words of its terms, and everything else (titles, abstracts,
ideas) is written with *filler* words that belong to no term. A paper
therefore matches a topic only where a term was placed on purpose, which makes
the memberships (and the overlaps) exactly those the generator chose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import IDEA_FIELDS
from rapgen.kinds.ideas.archive.topics import Topic

CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"
SYLLABLES = tuple(c + v for c in CONSONANTS for v in VOWELS)  # 70
TERM_WORDS = 6  # words each topic owns: w0 w1 (name), w2 (alias), w3 w4 and w5 w1 (keywords)
FILLER_WORDS = 4000
TERM_WEIGHTS = (0.5, 0.2, 0.15, 0.15)  # which term a paper carries: name, alias, first, second keyword
OPERATORS = ("combine", "extend", "transfer", "scale", "constrain", "invert")


def pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct three-syllable words."""
    codes = rng.choice(len(SYLLABLES) ** 3, size=n, replace=False)
    k = len(SYLLABLES)
    return [SYLLABLES[c // (k * k)] + SYLLABLES[(c // k) % k] + SYLLABLES[c % k] for c in codes.tolist()]


@dataclass(frozen=True)
class Vocabulary:
    topics: tuple[Topic, ...]
    filler: tuple[str, ...]

    def sentence(self, idx: Sequence[int]) -> str:
        return " ".join(self.filler[i] for i in idx)


def vocabulary(rng: np.random.Generator, n_topics: int) -> Vocabulary:
    """Topics with four terms each (name, one alias, two keywords) and the filler words."""
    words = pseudo_words(rng, n_topics * TERM_WORDS + FILLER_WORDS)
    topics = []
    for k in range(n_topics):
        w = words[k * TERM_WORDS:(k + 1) * TERM_WORDS]
        topics.append(Topic(f"{w[0]}-{w[1]}", f"{w[0].capitalize()} {w[1]}", (w[2].upper(),), (f"{w[3]} {w[4]}", f"{w[5]} {w[1]}")))
    return Vocabulary(tuple(topics), tuple(words[n_topics * TERM_WORDS:]))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _with_term(vocab: Vocabulary, fill: np.ndarray, n: int, term: str, at: int) -> str:
    words = [vocab.filler[i] for i in fill[:n].tolist()]
    words.insert(min(at, n), term)
    return " ".join(words)


def papers(rng: np.random.Generator, vocab: Vocabulary, start: date, end: date, sizes: np.ndarray,
           overlap: float) -> list[Paper]:
    """``sizes[k]`` papers carrying a term of topic k, dated in [start, end] with a per-topic growth;
    a share ``overlap`` of them also carry a term of another topic in a key point."""
    n_topics = len(vocab.topics)
    days = (end - start).days + 1
    home = np.repeat(np.arange(n_topics), sizes)
    n = len(home)
    growth = rng.uniform(-0.5, 1.5, n_topics)[home]  # log growth over the whole period
    u = rng.random(n)
    # Inverse CDF of a density ∝ exp(g x) on [0, 1): steady growth (or decline) per topic.
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(np.abs(growth) < 1e-9, u, np.log1p(u * np.expm1(growth)) / growth)
    offset = np.minimum((x * days).astype(np.int64), days - 1)
    term = rng.choice(4, size=n, p=TERM_WEIGHTS)
    second = np.where(rng.random(n) < overlap, (home + rng.integers(1, max(2, n_topics), n)) % n_topics, -1)
    second_term = rng.choice(4, size=n, p=TERM_WEIGHTS)
    title_len = rng.integers(4, 9, n)
    title_at = rng.integers(0, 9, n)
    fill = rng.integers(0, len(vocab.filler), (n, 9 + 24 + 8))
    point = rng.random(n) < 0.3  # a filler key point on some papers
    order = np.lexsort((rng.random(n), offset))  # by date; ids are numbered per month in this order
    out: list[Paper] = []
    month_counts: dict[tuple[int, int], int] = {}
    for i in order.tolist():
        d = start + timedelta(days=int(offset[i]))
        number = month_counts[(d.year, d.month)] = month_counts.get((d.year, d.month), 0) + 1
        pid = f"{d.year % 100:02d}{d.month:02d}.{number:05d}"
        t = vocab.topics[home[i]]
        terms = (t.name, *t.aliases, *t.keywords)
        title = _capital(_with_term(vocab, fill[i], int(title_len[i]), terms[term[i]], int(title_at[i])))
        abstract = (f"We study {terms[0].lower()} and {vocab.sentence(fill[i, 9:21].tolist())}. "
                    f"{_capital(vocab.sentence(fill[i, 21:33].tolist()))}.")
        points: list[str] = []
        if second[i] >= 0:
            s = vocab.topics[second[i]]
            points.append(_with_term(vocab, fill[i, 33:], 4, (s.name, *s.aliases, *s.keywords)[second_term[i]], 2))
        elif point[i]:
            points.append(vocab.sentence(fill[i, 33:39].tolist()))
        out.append(Paper(pid, title, abstract, tuple(points), d))
    return out


def idea_texts(rng: np.random.Generator, vocab: Vocabulary, topic: Topic, n: int) -> list[dict]:
    """``n`` ideas about ``topic``: a title around one of its terms, a rationale, an approach and 0–3 key terms,
    each as the idea fields of predictions.jsonl (``IDEA_FIELDS``, what ``Idea.fields()`` and the adapter give)."""
    terms = topic.terms
    fill = rng.integers(0, len(vocab.filler), (n, 3 + 18 + 4 + 3))
    term = rng.integers(0, len(terms), n)
    op = rng.integers(0, len(OPERATORS), n)
    n_keys = rng.integers(0, 4, n)
    out = []
    for i in range(n):
        f = fill[i].tolist()
        title = _capital(f"{vocab.filler[f[0]]} {terms[term[i]]} {vocab.sentence(f[1:3])}")
        rationale = _capital(vocab.sentence(f[3:21])) + "."
        approach = f"{OPERATORS[op[i]]}: {vocab.sentence(f[21:25])}"
        out.append(dict(zip(IDEA_FIELDS, (title, rationale, approach, [vocab.filler[k] for k in f[25:25 + int(n_keys[i])]]))))
    return out


def raw_proposal(idea: dict) -> dict:
    """A raw proposal (``raw.jsonl``'s four fields) whose adapter-v1 idea has ``idea``'s title:
    a thinking span, a Markdown heading, a body line, a gap, an operator and a base direction."""
    operator, _, base = idea["approach"].partition(": ")
    terms, title = idea["key_terms"], idea["title"]
    return {"text": f"<think>\nweigh {terms[0] if terms else 'options'}\n</think>\n\n## {title}\n{idea['rationale']}",
            "innovation_gap": f"No work yet on {title.lower()}.", "operator": operator, "base_direction": base}
