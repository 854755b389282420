"""The benchmark half of a synthetic Inspire archive: corpus, instances, labels, references.

Nothing here is real. Each topic has its own pseudo-word vocabulary drawn with
Zipf-like frequencies, and a paper's title and abstract mix its topic's words
with words common to every topic, so BM25 separates topics. Targets are late
corpus papers; their graded antecedents are earlier papers of the same topic
inside [shift(t_P, -48), cutoff), and every reference's status follows from
:func:`rapgen.kinds.inspire.archive.expected_statuses`, so the files satisfy
the kind's invariants by construction. A brief repeats words of the target and
of its antecedents' titles; one in eight also repeats the target's title, which
the lexical audit then flags.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import date
from typing import Sequence

import numpy as np

from rapgen.search import tokenize

from rapgen.kinds.inspire.archive import (
    CorpusPaper, Instance, Ledger, Reference, Target, brief_digest, cutoff_of, expected_statuses, expected_view, recency_floor,
)
from rapgen.kinds.inspire.sample.redact import CLOSING, NAMED_AT, title_overlap

START, END = date(2019, 1, 1), date(2026, 1, 1)  # corpus dates, END exclusive
TARGETS_FROM = date(2024, 7, 1)  # targets are corpus papers dated on or after this
N_COMMON = 200  # words shared by every topic
TOPIC_WORDS = 120  # words of each topic
ZIPF = 0.9  # word frequency ∝ 1 / rank^ZIPF within a vocabulary
SPLIT_SHARES = (("eval", 0.6), ("dev", 0.15), ("train", 0.25))
TIERS = (("T1", 0.45), ("T2", 0.35), ("T3", 0.2))
INFRASTRUCTURAL = 0.25  # share of labels with that role
FLAG_SHARE = 0.125  # briefs that repeat the target's title
BRIEF_SOURCES = (0.25, 0.85)  # a brief word: the target's title (25 %), its abstract (60 %), its labels' titles (15 %)
_CONSONANTS, _VOWELS = "bcdfgklmnprstvz", "aeiou"


@dataclass(frozen=True)
class Bench:
    """What the generator drew for the benchmark files (all lists in instance order)."""

    corpus: dict[str, CorpusPaper]
    topic_of: dict[str, int]  # corpus paper -> topic index
    title_terms: dict[str, tuple[str, ...]]  # corpus paper -> its title's index tokens
    instances: list[Instance]
    targets: list[dict]  # targets.parquet rows
    judgements: list[dict]
    references: list[dict]


def pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct three-syllable pseudo-words (consonant + vowel syllables)."""
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    s = len(syllables)
    picks = rng.choice(s ** 3, size=n, replace=False)
    words = [syllables[i // (s * s)] + syllables[(i // s) % s] + syllables[i % s] for i in picks.tolist()]
    assert all(tokenize(w) == [w] for w in words)  # each is one index token (no stopword)
    return words


def _zipf(n: int) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** ZIPF
    return np.cumsum(w / w.sum())


def _texts(rng: np.random.Generator, topics: np.ndarray, vocab: list[list[str]], common: list[str],
           length: tuple[int, int], topic_share: float, sentence: int | None) -> list[str]:
    """One text per paper: ``length`` words (uniform), each a topic word with probability
    ``topic_share`` else a common word; sentences of about ``sentence`` words."""
    n, longest = len(topics), length[1]
    sizes = rng.integers(length[0], length[1] + 1, n)
    topic_cdf, common_cdf = _zipf(TOPIC_WORDS), _zipf(N_COMMON)
    own = np.searchsorted(topic_cdf, rng.random((n, longest)), side="right").clip(0, TOPIC_WORDS - 1)
    shared = np.searchsorted(common_cdf, rng.random((n, longest)), side="right").clip(0, N_COMMON - 1)
    use_topic = rng.random((n, longest)) < topic_share
    out = []
    for k in range(n):
        words = [vocab[topics[k]][own[k, j]] if use_topic[k, j] else common[shared[k, j]] for j in range(sizes[k])]
        if sentence is None:
            out.append(" ".join(words).capitalize())
            continue
        parts = [" ".join(words[i:i + sentence]).capitalize() + "." for i in range(0, len(words), sentence)]
        out.append(" ".join(parts))
    return out


def _ids(days: np.ndarray, rng: np.random.Generator) -> list[str]:
    """arXiv-style ids ``YYMM.NNNNN``: numbered within each month by date (ties at random)."""
    order = np.lexsort((rng.random(len(days)), days))
    out = [""] * len(days)
    month_seq: dict[tuple[int, int], int] = {}
    for k in order.tolist():
        d = date.fromordinal(int(days[k]))
        key = (d.year, d.month)
        month_seq[key] = month_seq.get(key, 0) + 1
        out[k] = f"{d.year % 100:02d}{d.month:02d}.{month_seq[key]:05d}"
    return out


def draw_corpus(rng: np.random.Generator, n_papers: int, n_topics: int) -> tuple[dict[str, CorpusPaper], dict[str, int], list[list[str]]]:
    """The corpus (ids ascending), each paper's topic and the topic vocabularies."""
    words = pseudo_words(rng, N_COMMON + n_topics * TOPIC_WORDS)
    common = words[:N_COMMON]
    vocab = [words[N_COMMON + t * TOPIC_WORDS:N_COMMON + (t + 1) * TOPIC_WORDS] for t in range(n_topics)]
    topics = rng.integers(0, n_topics, n_papers)
    days = rng.integers(START.toordinal(), END.toordinal(), n_papers)
    titles = _texts(rng, topics, vocab, common, (5, 9), 0.8, None)
    abstracts = _texts(rng, topics, vocab, common, (30, 60), 0.5, 12)
    ids = _ids(days, rng)
    corpus, topic_of = {}, {}
    for k in sorted(range(n_papers), key=ids.__getitem__):
        corpus[ids[k]] = CorpusPaper(ids[k], titles[k], abstracts[k], date.fromordinal(int(days[k])), "synthetic")
        topic_of[ids[k]] = int(topics[k])
    return corpus, topic_of, vocab


class _ByTopic:
    """Each topic's papers in date order, for 'papers of topic t dated in [lo, hi)'."""

    def __init__(self, corpus: dict[str, CorpusPaper], topic_of: dict[str, int]):
        rows: dict[int, list[tuple[date, str]]] = {}
        for aid, p in corpus.items():
            rows.setdefault(topic_of[aid], []).append((p.first_submitted, aid))
        self.days = {t: [d for d, _ in sorted(r)] for t, r in rows.items()}
        self.ids = {t: [i for _, i in sorted(r)] for t, r in rows.items()}

    def between(self, topic: int, lo: date | None, hi: date | None) -> list[str]:
        days = self.days.get(topic, [])
        a = 0 if lo is None else bisect.bisect_left(days, lo)
        b = len(days) if hi is None else bisect.bisect_left(days, hi)
        return self.ids.get(topic, [])[a:b]


def _pick(rng: np.random.Generator, pool: Sequence[str], n: int, taken: set[str]) -> list[str]:
    free = [i for i in pool if i not in taken]
    chosen = [free[k] for k in sorted(rng.choice(len(free), size=min(n, len(free)), replace=False).tolist())] if free else []
    taken.update(chosen)
    return chosen


def _choice(rng: np.random.Generator, table: tuple[tuple[str, float], ...]) -> str:
    return table[int(np.searchsorted(np.cumsum([p for _, p in table]), rng.random(), side="right").clip(0, len(table) - 1))][0]


def _references(rng: np.random.Generator, iid: str, target: CorpusPaper, topic: int, by_topic: _ByTopic,
                ledger: Ledger) -> list[Reference]:
    """An instance's cited papers: 2–13 eligible (graded, and past ten overflow), up to two
    each of t0, concurrent and older."""
    t_p, cutoff, floor = target.first_submitted, cutoff_of(target.first_submitted, ledger.cutoff_months), \
        recency_floor(target.first_submitted, ledger.recency_months)
    window = by_topic.between(topic, floor, cutoff)
    taken = {target.arxiv_id}
    n_eligible = int(rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13], p=[.1, .12, .12, .12, .1, .1, .08, .08, .08, .05, .05]))
    refs = []
    for aid in _pick(rng, window, n_eligible, taken):
        role = "infrastructural" if rng.random() < INFRASTRUCTURAL else "conceptual"
        refs.append(Reference(iid, aid, None, "", _choice(rng, TIERS), role))
    for aid in _pick(rng, window, int(rng.integers(0, 3)), taken):
        refs.append(Reference(iid, aid, None, "", "T0", "conceptual"))
    later = [i for i in by_topic.between(topic, cutoff, None) if i != target.arxiv_id]
    for aid in _pick(rng, later, int(rng.integers(0, 3)), taken) + _pick(rng, by_topic.between(topic, None, floor), int(rng.integers(0, 3)), taken):
        refs.append(Reference(iid, aid, None, "", None, None))
    return refs


def _brief(rng: np.random.Generator, target: CorpusPaper, label_words: list[str], flag: bool) -> tuple[str, str]:
    """(brief, terse brief): 3–5 sentences of the target's and its labels' words, then the closing question."""
    pool = [tokenize(target.title), tokenize(target.abstract), label_words or tokenize(target.abstract)]
    sentences = []
    for _ in range(int(rng.integers(3, 6))):
        words = []
        for _ in range(int(rng.integers(8, 15))):
            source = pool[int(np.searchsorted(BRIEF_SOURCES, rng.random(), side="right"))]
            words.append(source[int(rng.integers(0, len(source)))])
        sentences.append(" ".join(words).capitalize() + ".")
    if flag:
        sentences.insert(1, f"We revisit {target.title.lower()}.")
    return " ".join([*sentences, CLOSING]), " ".join([*sentences[:2], CLOSING])


def _splits(rng: np.random.Generator, n: int) -> list[str]:
    counts = [int(round(share * n)) for _, share in SPLIT_SHARES[:-1]]
    names = [s for (s, _), c in zip(SPLIT_SHARES, counts) for _ in range(c)]
    names += [SPLIT_SHARES[-1][0]] * (n - len(names))
    return [names[k] for k in rng.permutation(n).tolist()]


def draw_bench(rng: np.random.Generator, *, n_papers: int, n_topics: int, n_instances: int, ledger: Ledger) -> Bench:
    """Corpus, instances (``insp-NNNN`` in target-id order), targets, judgements and references."""
    corpus, topic_of, _ = draw_corpus(rng, n_papers, n_topics)
    by_topic = _ByTopic(corpus, topic_of)
    late = [aid for aid, p in corpus.items() if p.first_submitted >= TARGETS_FROM]
    if len(late) < n_instances:
        raise ValueError(f"only {len(late)} corpus papers can be targets; {n_instances} instances asked for")
    chosen = sorted(late[k] for k in rng.choice(len(late), size=n_instances, replace=False).tolist())
    splits = _splits(rng, n_instances)
    width = max(4, len(str(n_instances)))
    title_terms = {aid: tuple(tokenize(p.title)) for aid, p in corpus.items()}
    instances, targets, judgements, references = [], [], [], []
    for n, aid in enumerate(chosen, start=1):
        iid, target, topic = f"insp-{n:0{width}d}", corpus[aid], topic_of[aid]
        refs = _references(rng, iid, target, topic, by_topic, ledger)
        refs = [Reference(r.instance_id, r.arxiv_id, corpus[r.arxiv_id].first_submitted, "", r.tier, r.role) for r in refs]
        status, problems = expected_statuses(refs, target.first_submitted, ledger)
        assert not problems, problems
        graded = [r for r in refs if status[r.arxiv_id] == "graded"]
        brief, terse = _brief(rng, target, [w for r in graded for w in title_terms[r.arxiv_id]], rng.random() < FLAG_SHARE)
        instances.append(Instance(iid, splits[n - 1], cutoff_of(target.first_submitted, ledger.cutoff_months), brief, terse,
                                  brief_digest(brief), n))
        overlap = title_overlap(target.title, brief)
        row = Target(iid, aid, target.title, target.abstract, target.first_submitted, f"topic-{topic:02d}", overlap >= NAMED_AT,
                     overlap, overlap, "")
        targets.append({**row.__dict__, "view": expected_view(row, ledger.flag_confidence)})
        for r in sorted(refs, key=lambda r: r.arxiv_id):
            references.append({**r.__dict__, "status": status[r.arxiv_id]})
            if status[r.arxiv_id] == "graded":
                agree = int(rng.integers(2, 4))
                judgements.append({"instance_id": iid, "arxiv_id": r.arxiv_id, "tier": r.tier, "role": r.role,
                                   "gain": ledger.gain(r.role, r.tier), "n_votes": 3, "agreement": agree,
                                   "rationale": f"synthetic label ({r.tier}, {r.role})"})
    return Bench(corpus, topic_of, title_terms, instances, targets, judgements, references)
