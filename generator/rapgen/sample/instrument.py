"""The labelling instrument of the sample archive: TF-IDF cosine similarity.

Everything here is deterministic and local (no network, no model download):

* ``tokenize``: lower-case ``[a-z0-9]+`` runs, English stop words dropped, a
  light plural stemmer (``models`` -> ``model``, ``queries`` -> ``query``),
  plus adjacent-token bigrams (``machine translation``), so phrases count.
* ``TfidfSpace``: sublinear term frequency ``1 + ln(tf)`` times smoothed
  inverse document frequency ``ln((N + 1) / (df + 1)) + 1`` computed over the
  papers, each vector L2-normalised, so a score is a cosine in [0, 1].
* ``calibrate``: divides raw cosines by a quantile over the papers first
  submitted before the first origin, so thresholds mean the same for every
  field and direction (1.0 = that quantile).
* ``assign``: turns the eight direction scores of one (paper, field)
  membership into ``primary``, ``secondary`` and ``assignment_type`` following
  the thresholds in :data:`THRESHOLDS` and the ledger rules of ARCHIVE.md.

Scores are rounded to six decimals before any comparison so that the last bits
of a floating-point sum cannot flip a label between two machines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

_TOKEN_RE = re.compile(r"[a-z0-9]+")

STOP_WORDS = frozenset(
    """
    a about above after again against all also an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers him
    his how i if in into is it its itself just may me might more most must my no nor not now of off on once only or
    other our ours out over own same she should so some such than that the their theirs them then there these they
    this those through to too under until up upon very was we were what when where which while who whom why will with
    would you your yours via using use used based propose proposed show shows shown paper approach method methods
    results result however new novel work study existing well within without across among towards toward often thus
    therefore furthermore moreover e g et al etc one two three first second several many much even still yet whether
    """.split()
)


def _stem(token: str) -> str:
    """A light plural stemmer: enough to merge ``models``/``model`` without
    conflating distinct words (``bias`` and ``class`` stay as they are)."""
    if len(token) <= 3 or token.isdigit():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "ss", "us", "is", "ys", "as", "os")):
        return token
    if token.endswith("s"):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Unigrams and adjacent bigrams (after stop-word removal) of ``text``."""
    words = [_stem(t) for t in _TOKEN_RE.findall(text.lower()) if t not in STOP_WORDS and (len(t) > 1 or t.isdigit())]
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


@dataclass
class TfidfSpace:
    """Vocabulary and idf fitted on a corpus of documents (the papers).

    Term ids are given in first-seen order over the corpus, so the space is a
    pure function of the ordered documents."""

    vocab: dict[str, int]
    idf: np.ndarray

    @classmethod
    def fit(cls, token_lists: Sequence[Sequence[str]]) -> "TfidfSpace":
        vocab: dict[str, int] = {}
        doc_ids, term_ids = _encode(token_lists, vocab, grow=True)
        pairs = np.unique(doc_ids * np.int64(len(vocab)) + term_ids)
        df = np.bincount(pairs % np.int64(len(vocab)), minlength=len(vocab))
        n = len(token_lists)
        idf = np.log((n + 1) / (df + 1)) + 1.0
        return cls(vocab, idf)

    def transform(self, token_lists: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """L2-normalised sublinear TF-IDF rows; tokens outside the vocabulary are ignored."""
        doc_ids, term_ids = _encode(token_lists, self.vocab, grow=False)
        v = np.int64(max(len(self.vocab), 1))
        keys, counts = np.unique(doc_ids * v + term_ids, return_counts=True)
        rows, cols = keys // v, keys % v
        data = (1.0 + np.log(counts)) * self.idf[cols]
        m = sp.csr_matrix((data, (rows, cols)), shape=(len(token_lists), len(self.vocab)))
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ m)


def _encode(token_lists: Sequence[Sequence[str]], vocab: dict[str, int], grow: bool) -> tuple[np.ndarray, np.ndarray]:
    docs: list[int] = []
    terms: list[int] = []
    for i, tokens in enumerate(token_lists):
        if grow:
            ids = [vocab.setdefault(t, len(vocab)) for t in tokens]
        else:
            ids = [j for j in map(vocab.get, tokens) if j is not None]
        terms.extend(ids)
        docs.extend([i] * len(ids))
    return np.asarray(docs, dtype=np.int64), np.asarray(terms, dtype=np.int64)


def cosine_scores(docs: sp.csr_matrix, queries: sp.csr_matrix) -> np.ndarray:
    """Dense (n_docs, n_queries) cosine matrix, rounded to 6 decimals."""
    return np.round(np.asarray((docs @ queries.T).todense(), dtype=np.float64), 6)


# ---------------------------------------------------------------- thresholds
@dataclass(frozen=True)
class Thresholds:
    """The documented cut-offs of the instrument (docs/sample-archive.md)."""

    # Scores are calibrated (see ``calibrate``): a direction score of 1.0 equals the
    # 95th percentile of that direction's raw cosine over the calibration papers.
    other: float = 1.1  # best direction score below this: primary "other", type "other"
    low: float = 1.3  # best direction score below this (but >= other): type "low_evidence"
    boundary_ratio: float = 0.85  # runner-up within this ratio of the best: "boundary"
    bridge_ratio: float = 0.70  # runner-up within this ratio of the best ...
    bridge_abs: float = 2.5  # ... and itself at least this strong: "bridge"


THRESHOLDS = Thresholds()
SLOT_NAMES = tuple(f"D{i}" for i in range(8))


def assign(scores: Sequence[float], t: Thresholds = THRESHOLDS) -> tuple[str, str | None, str]:
    """``(primary, secondary, assignment_type)`` for one membership.

    Rules, in order (ties between directions go to the lower slot):

    1. best < ``other``                 -> ("other", None, "other")
    2. best < ``low``                   -> (best, None, "low_evidence")
    3. runner-up >= ``bridge_abs`` and runner-up/best >= ``bridge_ratio``
                                        -> (best, runner-up, "bridge")
       (the paper is strongly about two directions at once)
    4. runner-up/best >= ``boundary_ratio`` -> (best, runner-up, "boundary")
       (the paper sits on the line between two directions)
    5. otherwise                        -> (best, None, "single")

    So a ``secondary`` exists only for boundary/bridge rows and is never the
    primary; ``other`` rows have no secondary (ARCHIVE.md, assignments).
    """
    s = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(s)), -s))  # descending score, then slot
    i1, i2 = int(order[0]), int(order[1])
    best, second = float(s[i1]), float(s[i2])
    if best < t.other:
        return "other", None, "other"
    if best < t.low:
        return SLOT_NAMES[i1], None, "low_evidence"
    ratio = second / best
    if second >= t.bridge_abs and ratio >= t.bridge_ratio:
        return SLOT_NAMES[i1], SLOT_NAMES[i2], "bridge"
    if ratio >= t.boundary_ratio:
        return SLOT_NAMES[i1], SLOT_NAMES[i2], "boundary"
    return SLOT_NAMES[i1], None, "single"


def assign_many(scores: np.ndarray, t: Thresholds = THRESHOLDS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`assign` over rows of an (n, 8) score matrix.

    Returns integer arrays: primary slot (-1 = other), secondary slot (-1 = none),
    and type code (index into ``TYPES``)."""
    n = scores.shape[0]
    idx = np.arange(scores.shape[1])
    order = np.lexsort((np.broadcast_to(idx, scores.shape), -scores), axis=1)
    i1, i2 = order[:, 0], order[:, 1]
    best = scores[np.arange(n), i1]
    second = scores[np.arange(n), i2]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(best > 0, second / np.where(best > 0, best, 1.0), 0.0)
    primary = i1.astype(np.int64).copy()
    secondary = np.full(n, -1, dtype=np.int64)
    kind = np.full(n, TYPES.index("single"), dtype=np.int64)
    bridge = (second >= t.bridge_abs) & (ratio >= t.bridge_ratio)
    boundary = ~bridge & (ratio >= t.boundary_ratio)
    kind[boundary] = TYPES.index("boundary")
    kind[bridge] = TYPES.index("bridge")
    secondary[bridge | boundary] = i2[bridge | boundary]
    low = best < t.low
    kind[low] = TYPES.index("low_evidence")
    secondary[low] = -1
    oth = best < t.other
    kind[oth] = TYPES.index("other")
    primary[oth] = -1
    secondary[oth] = -1
    return primary, secondary, kind


TYPES: tuple[str, ...] = ("single", "boundary", "bridge", "other", "low_evidence")


# ---------------------------------------------------------------- calibration
DIRECTION_QUANTILE = 0.95  # a calibrated direction score of 1.0 = this quantile of its raw cosine


def calibrate(raw: np.ndarray, calibration: np.ndarray, quantiles: Sequence[float] | float) -> np.ndarray:
    """Divide each column of ``raw`` by its quantile over the calibration rows.

    ``quantiles`` is one level for all columns or one per column. The result is
    rounded to six decimals; a column whose quantile is zero is divided by 1e-6.
    """
    levels = np.broadcast_to(np.asarray(quantiles, dtype=np.float64), (raw.shape[1],))
    cal = raw[calibration]
    if cal.shape[0] == 0:
        raise ValueError("no calibration papers (none first submitted before the first origin)")
    scale = np.array([np.quantile(cal[:, j], levels[j]) for j in range(raw.shape[1])])
    scale = np.maximum(scale, 1e-6)
    return np.round(raw / scale, 6)
