"""The reference agents' policies: deterministic, no language model.

Every policy sees what a benchmark agent sees — the field's codebook, the
origin T, and (for A1–A4) the Search tool on its shard — and answers with
weights over D0…D7. Search policies estimate direction shares from the
``total_hits`` of one query per direction inside date windows they choose.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Callable

from rapgen.archive import add_months
from rapgen.search import query_terms, tokenize

SMOOTHING = 0.5  # added to every direction's hit count before normalising
MAX_QUERY_TERMS = 8
GENERIC_SHARE = 0.5  # a word in at least half of a field's directions says nothing about any one of them
# Function words the analyzer keeps (its stoplist is short) that would make a direction query match anything.
FILLER = frozenset(
    "about across also among based between both but do does each especially etc how including into its like many "
    "more most much new other others our over paper papers such than their them then there these they those through "
    "thus under use used uses using very via was were what where which while who whose within without work works".split()
)


class CapReached(RuntimeError):
    """The unit has used all of its Search calls."""


@dataclass
class Unit:
    """One episode of one condition, with the Search tool bound to its shard."""

    field_id: str
    origin: date
    condition: str
    window_months: int
    search: Callable[[dict], object] | None  # args -> SearchResult; None for A0
    texts: Callable[[tuple[str, ...]], list[tuple[str, str]]] | None = None  # ids -> (title, abstract)

    def hits(self, query: str, date_from: date | None, date_to: date | None) -> int:
        if self.search is None:
            raise CapReached("no Search access in this condition")
        args = {
            "query": query,
            "sort": "relevance",
            "date_from": date_from.isoformat() if date_from else None,
            "date_to": date_to.isoformat() if date_to else None,
        }
        return int(self.search(args).total_hits)

    def newest(self, query: str, date_from: date, date_to: date) -> list[tuple[str, str]]:
        """Title and abstract of the newest matches in [date_from, date_to) (a date-sorted call)."""
        if self.search is None or self.texts is None:
            raise CapReached("no Search access in this condition")
        args = {"query": query, "sort": "date", "date_from": date_from.isoformat(), "date_to": date_to.isoformat()}
        return self.texts(self.search(args).ids)


def direction_queries(directions) -> list[str]:
    """One query per direction: its name's words, then its include-list words,
    without the words shared by at least half of the field's directions."""
    words = [query_terms(" ".join((d.name, d.definition, d.include))) for d in directions]
    spread = Counter(w for ws in words for w in set(ws))
    generic = {w for w, n in spread.items() if n >= max(2, GENERIC_SHARE * len(directions))} | FILLER
    queries = []
    for d in directions:
        ordered = [w for w in query_terms(" ".join((d.name, d.include))) if w not in generic]
        if not ordered:
            ordered = query_terms(d.name) or ["research"]
        queries.append(" ".join(ordered[:MAX_QUERY_TERMS]))
    return queries


def _normalise(values: list[float]) -> list[float]:
    total = sum(values)
    return [v / total for v in values]


def codebook_prior(directions) -> list[float]:
    """Closed book: a near-uniform prior tilted towards directions whose codebook
    entries are broader (more distinct words in name, definition and include)."""
    breadth = [len(set(query_terms(" ".join((d.name, d.definition, d.include))))) for d in directions]
    mean = sum(breadth) / len(breadth) or 1.0
    return _normalise([0.5 + 0.5 * b / mean for b in breadth])


def window_shares(unit: Unit, queries: list[str], date_from: date | None, date_to: date | None) -> list[float]:
    """Direction shares ∝ total_hits of each direction's query in [date_from, date_to)."""
    return _normalise([unit.hits(q, date_from, date_to) + SMOOTHING for q in queries])


def extrapolate(older: list[float], newer: list[float], damping: float) -> list[float]:
    """Continue the change from ``older`` to ``newer`` one damped step; floor at a small share."""
    out = [max(n + damping * (n - o), 0.002) for o, n in zip(older, newer)]
    return _normalise(out)


# ---------------------------------------------------------------- policies
# A policy maps (unit, directions) to (shares, rationale).

def closed_book(unit: Unit, directions) -> tuple[list[float], str]:
    return codebook_prior(directions), "codebook prior: near-uniform, tilted to broader directions; no Search"


def recent_hits(unit: Unit, directions) -> tuple[list[float], str]:
    lo = add_months(unit.origin, -unit.window_months)
    shares = window_shares(unit, direction_queries(directions), lo, unit.origin)
    return shares, f"shares of total_hits of 8 direction queries in [{lo}, {unit.origin})"


def half_window_trend(unit: Unit, directions) -> tuple[list[float], str]:
    """Fixed window: compare the two halves of the recent window and extrapolate."""
    queries = direction_queries(directions)
    half = max(1, unit.window_months // 2)
    lo, mid = add_months(unit.origin, -unit.window_months), add_months(unit.origin, -half)
    older = window_shares(unit, queries, lo, mid)
    newer = window_shares(unit, queries, mid, unit.origin)
    return extrapolate(older, newer, 0.5), f"damped trend from [{lo}, {mid}) to [{mid}, {unit.origin}), 16 calls"


def history_trend(unit: Unit, directions) -> tuple[list[float], str]:
    """Expanding history: the whole history before the recent window against the
    recent window, extrapolated one damped step."""
    queries = direction_queries(directions)
    lo = add_months(unit.origin, -unit.window_months)
    history = window_shares(unit, queries, None, lo)
    recent = window_shares(unit, queries, lo, unit.origin)
    return extrapolate(history, recent, 0.5), f"damped trend from all history before {lo} to [{lo}, {unit.origin}), 16 calls"


# ---------------------------------------------------------------- sample and classify
BROAD_QUERY_TERMS = 200  # the broad query: the field's codebook words, most specific first
CLASSIFY_SMOOTHING = 2.0  # pseudo-count per direction
CLASSIFY_SHRINK = 0.5  # weight of the uniform composition in the answer


class DirectionClassifier:
    """Assigns a paper to the direction whose codebook words it covers best.

    A direction's words are those of its name, definition and include list
    (filler words removed); a word used by k directions weighs 1/k. A paper's
    score for a direction is the weight of the direction's words it contains,
    divided by the square root of the direction's total weight (so long word
    lists do not win by size alone). Papers with no codebook word are skipped.
    """

    def __init__(self, directions):
        words = [set(query_terms(" ".join((d.name, d.definition, d.include)))) - FILLER for d in directions]
        spread = Counter(w for ws in words for w in ws)
        self.weights = [{w: 1.0 / spread[w] for w in sorted(ws)} for ws in words]
        self.norms = [sum(ws.values()) ** 0.5 or 1.0 for ws in self.weights]
        ranked = sorted(spread, key=lambda w: (spread[w], w))
        self.broad_query = " ".join(ranked[:BROAD_QUERY_TERMS]) or "research"

    def label(self, title: str, abstract: str) -> int | None:
        tokens = set(tokenize(title)) | set(tokenize(abstract))
        scores = [sum(v for w, v in ws.items() if w in tokens) / n for ws, n in zip(self.weights, self.norms)]
        best = max(scores)
        return scores.index(best) if best > 0 else None

    def composition(self, papers: list[tuple[str, str]]) -> list[float]:
        counts = [CLASSIFY_SMOOTHING] * 8
        for title, abstract in papers:
            k = self.label(title, abstract)
            if k is not None:
                counts[k] += 1
        shares = _normalise(counts)
        return [(1 - CLASSIFY_SHRINK) * s + CLASSIFY_SHRINK / 8 for s in shares]


def sample_window(unit: Unit, query: str, date_from: date, date_to: date, slices: int) -> list[tuple[str, str]]:
    """The newest matches of ``query`` in each of ``slices`` equal slices of the window:
    a sample of up to ``slices × top_k`` papers spread over the whole window."""
    days = (date_to - date_from).days
    papers: list[tuple[str, str]] = []
    for i in range(slices):
        lo = date_from + timedelta(days=days * i // slices)
        hi = date_from + timedelta(days=days * (i + 1) // slices)
        if lo < hi:
            papers.extend(unit.newest(query, lo, hi))
    return papers


def sample_recent(unit: Unit, directions) -> tuple[list[float], str]:
    """Sample the recent window (20 date-sorted calls) and classify what comes back."""
    clf = DirectionClassifier(directions)
    lo = add_months(unit.origin, -unit.window_months)
    papers = sample_window(unit, clf.broad_query, lo, unit.origin, 20)
    return clf.composition(papers), f"{len(papers)} papers sampled across [{lo}, {unit.origin}) and classified by codebook words"


def sample_trend(unit: Unit, directions) -> tuple[list[float], str]:
    """Sample the previous and the recent window (10 calls each), classify, continue the change a quarter step."""
    clf = DirectionClassifier(directions)
    lo = add_months(unit.origin, -unit.window_months)
    before = add_months(unit.origin, -2 * unit.window_months)
    older = clf.composition(sample_window(unit, clf.broad_query, before, lo, 10))
    newer = clf.composition(sample_window(unit, clf.broad_query, lo, unit.origin, 10))
    return extrapolate(older, newer, 0.25), f"classified samples of [{before}, {lo}) and [{lo}, {unit.origin}), damped trend"


# ---------------------------------------------------------------- tuned trends (the panel model)
def damped_half_window_trend(damping: float) -> Callable[[Unit, tuple], tuple[list[float], str]]:
    """:func:`half_window_trend` with another damping (a "tuned" parameter)."""
    def policy(unit: Unit, directions) -> tuple[list[float], str]:
        queries = direction_queries(directions)
        half = max(1, unit.window_months // 2)
        lo, mid = add_months(unit.origin, -unit.window_months), add_months(unit.origin, -half)
        shares = extrapolate(window_shares(unit, queries, lo, mid), window_shares(unit, queries, mid, unit.origin), damping)
        return shares, f"trend from [{lo}, {mid}) to [{mid}, {unit.origin}) damped by {damping}, 16 calls"

    return policy


def damped_history_trend(damping: float) -> Callable[[Unit, tuple], tuple[list[float], str]]:
    """:func:`history_trend` with another damping (a "tuned" parameter)."""
    def policy(unit: Unit, directions) -> tuple[list[float], str]:
        queries = direction_queries(directions)
        lo = add_months(unit.origin, -unit.window_months)
        shares = extrapolate(window_shares(unit, queries, None, lo), window_shares(unit, queries, lo, unit.origin), damping)
        return shares, f"trend from all history before {lo} to [{lo}, {unit.origin}) damped by {damping}, 16 calls"

    return policy


# ---------------------------------------------------------------- readouts (frozen evidence)
READOUT_DAMPING = 0.25  # a forecast readout continues the older -> recent change this far


def read_evidence(evidence: list[dict], directions, origin: date, window_months: int, readout: str) -> tuple[list[float] | None, str]:
    """Answer from a frozen evidence list alone (INTERVENTIONS.md §1): the distinct
    returned papers are labelled by codebook words. A ``state`` readout is the
    composition of the papers in the recent window; a ``forecast`` readout
    continues the change from the older papers to the recent ones a quarter
    step. No paper in the evidence: no answer (an invalid readout)."""
    papers: dict[str, dict] = {}
    for call in evidence:
        for paper in call.get("papers", ()):
            papers.setdefault(paper["arxiv_id"], paper)
    if not papers:
        return None, "the evidence holds no paper"
    clf = DirectionClassifier(directions)
    lo = add_months(origin, -window_months).isoformat()
    recent = [(p["title"], p["abstract"]) for p in papers.values() if p["first_submitted"] >= lo]
    older = [(p["title"], p["abstract"]) for p in papers.values() if p["first_submitted"] < lo]
    if readout == "state" or not (recent and older):
        chosen = recent if readout == "state" and recent else recent + older
        return clf.composition(chosen), f"{len(chosen)} evidence papers labelled by codebook words"
    shares = extrapolate(clf.composition(older), clf.composition(recent), READOUT_DAMPING)
    return shares, f"{len(older)} older and {len(recent)} recent evidence papers labelled, trend damped by {READOUT_DAMPING}"


# ---------------------------------------------------------------- exact history (O1-O3)
def history_shares(block: dict, damping: float) -> list[float]:
    """From an exact-history block: one window gives its smoothed shares; several
    continue the change from the mean of the older windows to the newest one."""
    rows = [_normalise([w["counts"][f"D{i}"] + SMOOTHING for i in range(8)]) for w in block["windows"]]
    if len(rows) == 1:
        return rows[0]
    older = [sum(r[i] for r in rows[:-1]) / (len(rows) - 1) for i in range(8)]
    return extrapolate(older, rows[-1], damping)


def exact_history_search(unit: Unit, directions, block: dict, damping: float) -> tuple[list[float], str]:
    """O3: the exact-history answer averaged with recent-window hit shares (8 calls on the Expanding shard)."""
    lo = add_months(unit.origin, -unit.window_months)
    hits = window_shares(unit, direction_queries(directions), lo, unit.origin)
    shares = _normalise([0.5 * a + 0.5 * b for a, b in zip(history_shares(block, damping), hits)])
    return shares, f"exact counts (trend damped by {damping}) averaged with hit shares in [{lo}, {unit.origin}), 8 calls"
