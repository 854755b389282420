"""The committed cs.CL papers the Inspire sample is built from, and their RAP fields.

Read only from a RAP archive's committed files (no download):
``archive/benchmark/papers.parquet`` and ``archive/benchmark/windows/*/papers.parquet``
for the papers, the matching ``assignments.parquet`` files for each paper's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rapgen.errors import UsageProblem

PAPERS_GLOBS = ("archive/benchmark/papers.parquet", "archive/benchmark/windows/*/papers.parquet")
ASSIGNMENTS_GLOBS = ("archive/benchmark/assignments.parquet", "archive/benchmark/windows/*/assignments.parquet")


@dataclass(frozen=True)
class SourcePaper:
    arxiv_id: str
    title: str
    abstract: str
    first_submitted: date
    categories: str


def source_files(root: str | Path) -> tuple[list[Path], list[Path]]:
    """The papers and assignments files under a RAP root, in path order; a usage error if none."""
    root = Path(root)
    papers = sorted(p for g in PAPERS_GLOBS for p in root.glob(g))
    assignments = sorted(p for g in ASSIGNMENTS_GLOBS for p in root.glob(g))
    if not papers:
        raise UsageProblem(f"{root}: no archive/benchmark/papers.parquet; point --from at a RAP root with the committed papers")
    return papers, assignments


def read_papers(files: list[Path]) -> list[SourcePaper]:
    """Every paper once, sorted by arXiv id (a later file never overrides an earlier one)."""
    import pyarrow.parquet as pq

    out: dict[str, SourcePaper] = {}
    for path in files:
        for r in pq.read_table(path, columns=["arxiv_id", "title", "abstract", "first_submitted", "categories"]).to_pylist():
            out.setdefault(r["arxiv_id"], SourcePaper(r["arxiv_id"], r["title"] or "", r["abstract"] or "", r["first_submitted"],
                                                      r["categories"] or ""))
    return [out[k] for k in sorted(out)]


def first_fields(files: list[Path]) -> dict[str, str]:
    """Each paper's first RAP field (field ids in byte order): the sample's ``topic``."""
    import pyarrow.parquet as pq

    out: dict[str, str] = {}
    for path in files:
        table = pq.read_table(path, columns=["arxiv_id", "field_id"])
        for aid, fid in zip(table.column("arxiv_id").to_pylist(), table.column("field_id").to_pylist()):
            if aid not in out or fid.encode("utf-8") < out[aid].encode("utf-8"):
                out[aid] = fid
    return out
