"""The ``phrase-v1`` topic assignment (IDEAS.md §2), rebuilt and compared row for row.

A paper p belongs to topic τ iff one of τ's terms (name, aliases, keywords,
in that order) occurs in text(p) as consecutive whole words after ``norm``;
the first such term is the row's ``matched_term``. No stemming ("ddpms" is
not "ddpm"); topics may overlap.

Both sides are normalised to single-space-separated words of ``[0-9a-z]``,
so " term " ⊂ " text " holds exactly when the term's word sequence is a run
of the text's words. The rebuild therefore looks up each word of a paper in a
table of the terms that start with it, instead of scanning every term.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from rapgen.archive import Finding, ProblemKind
from rapgen.kinds.ideas.archive.lines import invariant, malformed
from rapgen.kinds.ideas.archive.normalise import norm, paper_text
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.phrase import assign_rows
from rapgen.kinds.ideas.archive.tables import DATE, STRING, days, first_null, read_arrow
from rapgen.kinds.ideas.archive.topics import Topic

RULE = "phrase-v1"
ASSIGNMENT_COLUMNS = (("arxiv_id", STRING), ("topic_id", STRING), ("first_submitted", DATE), ("matched_term", STRING))
SHOWN = 20  # findings listed one by one before a summary line


@dataclass(frozen=True, order=True)
class Assignment:
    topic_id: str
    arxiv_id: str
    first_submitted: date
    matched_term: str


def _term_table(topics: Sequence[Topic]) -> dict[str, list[tuple[tuple[str, ...], int, int, str]]]:
    """First word of norm(term) -> [(its words, topic index, term position, term as written)]."""
    table: dict[str, list[tuple[tuple[str, ...], int, int, str]]] = {}
    for t, topic in enumerate(topics):
        for k, term in enumerate(topic.terms):
            words = tuple(norm(term).split(" "))
            table.setdefault(words[0], []).append((words, t, k, term))
    return table


def matched_terms(text: str, topics: Sequence[Topic], table=None) -> dict[str, str]:
    """topic_id -> the first of its terms found in ``text`` (topics without a match left out)."""
    table = table if table is not None else _term_table(topics)
    words = norm(text).split(" ")
    best: dict[int, tuple[int, str]] = {}
    for i, w in enumerate(words):
        for term_words, t, k, term in table.get(w, ()):
            if (t not in best or k < best[t][0]) and tuple(words[i:i + len(term_words)]) == term_words:
                best[t] = (k, term)
    return {topics[t].topic_id: best[t][1] for t in sorted(best)}


def assign(papers: Mapping[str, Paper] | Iterable[Paper], topics: Sequence[Topic]) -> list[Assignment]:
    """Every ``phrase-v1`` membership, sorted by (topic_id, arxiv_id) in byte order."""
    table = _term_table(topics)
    items = papers.values() if isinstance(papers, Mapping) else papers
    rows = [
        Assignment(topic_id, p.arxiv_id, p.first_submitted, term)
        for p in items
        for topic_id, term in matched_terms(paper_text(p.title, p.key_points), topics, table).items()
    ]
    rows.sort(key=lambda a: (a.topic_id.encode("utf-8"), a.arxiv_id.encode("utf-8")))
    return rows


def assign_all(papers: Mapping[str, Paper], topics: Sequence[Topic]) -> list[Assignment]:
    """:func:`assign`'s rows, computed over whole columns (:mod:`~rapgen.kinds.ideas.archive.phrase`)."""
    return [Assignment(*row) for row in assign_rows(papers, topics)]


def parse_assignments(path: str, data: bytes) -> tuple[list[tuple[int, Assignment]], list[Finding]]:
    """(row, assignment) for every row of ``assignments.parquet``."""
    findings: list[Finding] = []
    table = read_arrow(path, data, ASSIGNMENT_COLUMNS, findings)
    if table is None:
        return [], findings
    null = first_null(table, [c for c, _ in ASSIGNMENT_COLUMNS])
    if null:
        return [], [malformed(path, null[0], f"{null[1]} is null")]
    col = table.column
    rows = [(i + 1, Assignment(t, a, d, m)) for i, (a, t, d, m) in
            enumerate(zip(col("arxiv_id").to_pylist(), col("topic_id").to_pylist(), days(col("first_submitted")), col("matched_term").to_pylist()))]
    return rows, findings


def check_assignments(path: str, rows: Sequence[tuple[int, Assignment]], papers: Mapping[str, Paper],
                      topics: Sequence[Topic]) -> list[Finding]:
    """The file equals the rebuilt ``phrase-v1`` membership exactly: an ``INVARIANT`` for every
    row that is not one (or repeats one, or carries another term or date) and every one missing."""
    rebuilt = assign_rows(papers, topics)  # the same rows as assign(), from columns
    if [(a.topic_id, a.arxiv_id, a.first_submitted, a.matched_term) for _, a in rows] == rebuilt:
        return []  # the usual file: the rebuilt rows, in their order (no repeat, none missing)
    expected = {(a, t): (d, m) for t, a, d, m in rebuilt}  # (arxiv_id, topic_id) -> (date, term)
    problems: list[Finding] = []
    seen: dict[tuple[str, str], int] = {}
    for row, a in rows:
        key = (a.arxiv_id, a.topic_id)
        if key in seen:
            problems.append(malformed(path, row, f"{a.arxiv_id} → {a.topic_id} is there twice (first on row {seen[key]})",
                                      ProblemKind.DUPLICATE_RECORD))
            continue
        seen[key] = row
        want = expected.get(key)
        if want is None:
            why = "is not a paper of the snapshot" if a.arxiv_id not in papers else f"matches none of {a.topic_id}'s terms under {RULE}"
            problems.append(invariant(path, row, f"{a.arxiv_id} → {a.topic_id}: {why}"))
        elif a.matched_term != want[1]:
            problems.append(invariant(path, row, f"{a.arxiv_id} → {a.topic_id}: matched_term {a.matched_term!r}, {RULE} gives {want[1]!r}"))
        elif a.first_submitted != want[0]:
            problems.append(invariant(path, row, f"{a.arxiv_id} → {a.topic_id}: first_submitted {a.first_submitted} differs from the paper's {want[0]}"))
    for key, want in expected.items():
        if key not in seen:
            problems.append(invariant(path, None, f"{key[0]} → {key[1]} (matched {want[1]!r}) is missing: {RULE} assigns it"))
    if len(problems) > SHOWN:
        rest = len(problems) - SHOWN
        problems = problems[:SHOWN] + [invariant(path, None, f"and {rest} more rows differ from {RULE}")]
    return problems
