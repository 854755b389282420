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
from rapgen.kinds.ideas.archive.tables import DATE, STRING, STRINGS, days, first_null, read_arrow

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
    import pyarrow.compute as pc

    findings: list[Finding] = []
    table = read_arrow(path, data, PAPER_COLUMNS, findings, PAPER_OPTIONAL)
    if table is None:
        return {}, findings
    null = first_null(table, ("arxiv_id", "title", "abstract", "key_points", "first_submitted"))
    if null:
        return {}, [malformed(path, null[0], f"{null[1]} is null")]
    ids = table.column("arxiv_id").to_pylist()
    points = table.column("key_points")
    columns = (ids, table.column("title").to_pylist(), table.column("abstract").to_pylist(), points.to_pylist(), days(table.column("first_submitted")))
    if len(set(ids)) == len(ids) and not pc.list_flatten(points).null_count:  # the usual file: one Paper per row
        return {pid: Paper(pid, t, a, tuple(k), d) for pid, t, a, k, d in zip(*columns)}, findings
    out: dict[str, Paper] = {}
    for i, (pid, title, abstract, key_points, d) in enumerate(zip(*columns)):
        if pid in out:
            findings.append(malformed(path, i + 1, f"arxiv_id {pid!r} is there twice", ProblemKind.DUPLICATE_RECORD))
            continue
        if any(p is None for p in key_points):
            findings.append(malformed(path, i + 1, f"key_points of {pid} holds a null"))
            continue
        out[pid] = Paper(pid, title, abstract, tuple(key_points), d)
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
