"""``benchmark/papers.parquet`` of an Ideas archive (IDEAS.md §1).

Columns ``arxiv_id``, ``title``, ``abstract``, ``key_points`` (a list of
strings), the optional ``key_points_date``, ``first_submitted`` and
``updated`` (dates; ``updated`` is metadata: every rule splits on
``first_submitted``) and ``categories``. Ids are unique.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from rapgen.archive import Finding, ProblemKind
from rapgen.kinds.ideas.archive.lines import malformed
from rapgen.kinds.ideas.archive.tables import DATE, STRING, STRINGS, null_rows, read_table

PAPER_COLUMNS = (("arxiv_id", STRING), ("title", STRING), ("abstract", STRING), ("key_points", STRINGS),
                 ("first_submitted", DATE), ("updated", DATE), ("categories", STRING))
PAPER_OPTIONAL = (("key_points_date", DATE),)


@dataclass(frozen=True)
class Paper:
    arxiv_id: str
    title: str
    abstract: str
    key_points: tuple[str, ...]
    first_submitted: date


def parse_papers(path: str, data: bytes) -> tuple[dict[str, Paper], list[Finding]]:
    """Papers by id (file order kept); findings for a bad schema, nulls and repeated ids."""
    findings: list[Finding] = []
    table = read_table(path, data, PAPER_COLUMNS, findings, PAPER_OPTIONAL)
    if table is None:
        return {}, findings
    required = ("arxiv_id", "title", "abstract", "key_points", "first_submitted")
    for row, name in null_rows(table, required)[:1]:
        findings.append(malformed(path, row, f"{name} is null"))
    if findings:
        return {}, findings
    out: dict[str, Paper] = {}
    for i, pid in enumerate(table["arxiv_id"]):
        if pid in out:
            findings.append(malformed(path, i + 1, f"arxiv_id {pid!r} is there twice", ProblemKind.DUPLICATE_RECORD))
            continue
        points = table["key_points"][i]
        if any(p is None for p in points):
            findings.append(malformed(path, i + 1, f"key_points of {pid} holds a null"))
            continue
        out[pid] = Paper(pid, table["title"][i], table["abstract"][i], tuple(points), table["first_submitted"][i])
    return out, findings


def merge_papers(parts: list[tuple[str, dict[str, Paper]]]) -> tuple[dict[str, Paper], list[Finding]]:
    """The snapshot as the union of its papers files (base and ``windows/*``); an id in two files is a finding."""
    out: dict[str, Paper] = {}
    where: dict[str, str] = {}
    findings: list[Finding] = []
    for path, papers in parts:
        for pid, paper in papers.items():
            if pid in out:
                findings.append(malformed(path, None, f"arxiv_id {pid!r} is also in {where[pid]}", ProblemKind.DUPLICATE_RECORD))
                continue
            out[pid], where[pid] = paper, path
    return out, findings
