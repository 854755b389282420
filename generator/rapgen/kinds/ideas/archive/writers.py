"""Bytes of the Ideas kind's files, deterministic: the writers the sample builder and the evaluator share.

Parquet: a fixed Arrow schema, zstd, one row group, no pandas metadata; JSON
lines in the archive's canonical form (:func:`rapgen.io.dumps_line`).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rapgen.io import dumps_document, dumps_line
from rapgen.kinds.ideas.archive.assignment import ASSIGNMENT_COLUMNS, Assignment
from rapgen.kinds.ideas.archive.evaluation import CANDIDATE_COLUMNS, CLUSTER_COLUMNS, FEATURE_COLUMNS, JUDGMENT_COLUMNS, Candidate, Judgment
from rapgen.kinds.ideas.archive.papers import PAPER_COLUMNS, Paper
from rapgen.kinds.ideas.archive.tables import DATE, DOUBLE, INT, STRING, STRINGS


def _arrow_type(name: str):
    import pyarrow as pa

    return {STRING: pa.string(), DATE: pa.date32(), DOUBLE: pa.float64(), INT: pa.int64(), STRINGS: pa.list_(pa.string())}[name]


def parquet_bytes(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence]) -> bytes:
    rows = list(rows)
    data = list(zip(*rows)) if rows else [() for _ in columns]
    return columns_parquet_bytes(columns, [list(col) for col in data])


def columns_parquet_bytes(columns: Sequence[tuple[str, str]], data: Sequence[object]) -> bytes:
    """:func:`parquet_bytes` from whole columns (lists, numpy arrays or Arrow arrays, in ``columns``' order):
    the same bytes as the rows would give, without building a tuple per row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(n, _arrow_type(t)) for n, t in columns])
    arrays = [col if isinstance(col, pa.Array) else pa.array(col, type=_arrow_type(t)) for (n, t), col in zip(columns, data)]
    table = pa.Table.from_arrays(arrays, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=1 << 20, write_statistics=True)
    return sink.getvalue()


def jsonl_bytes(rows: Iterable[object]) -> bytes:
    return "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8")


def json_bytes(obj: object) -> bytes:
    return dumps_document(obj).encode("utf-8")


def papers_bytes(papers: Iterable[Paper], categories: dict[str, str] | None = None) -> bytes:
    """papers.parquet; ``updated`` = ``first_submitted`` (the sample has no revision dates)."""
    rows = [(p.arxiv_id, p.title, p.abstract, list(p.key_points), p.first_submitted, p.first_submitted, (categories or {}).get(p.arxiv_id, ""))
            for p in sorted(papers, key=lambda p: p.arxiv_id.encode("utf-8"))]
    return parquet_bytes(PAPER_COLUMNS, rows)


def assignments_bytes(rows: Iterable[Assignment]) -> bytes:
    return parquet_bytes(ASSIGNMENT_COLUMNS, [(a.arxiv_id, a.topic_id, a.first_submitted, a.matched_term) for a in rows])


def candidates_bytes(rows: Iterable[Candidate]) -> bytes:
    return parquet_bytes(CANDIDATE_COLUMNS, [(c.episode_id, c.condition, c.rank, c.cand_rank, c.arxiv_id, c.cosine) for c in rows])


def judgments_bytes(rows: Iterable[Judgment]) -> bytes:
    return parquet_bytes(JUDGMENT_COLUMNS, [(j.episode_id, j.condition, j.rank, j.cand_rank, j.arxiv_id, j.judge_id, j.P, j.M, j.S,
                                             j.status, j.cache_key) for j in rows])


def features_bytes(rows: Iterable[tuple[str, str, int, float]]) -> bytes:
    return parquet_bytes(FEATURE_COLUMNS, rows)


def clusters_bytes(rows: Iterable[tuple[str, str, int]]) -> bytes:
    return parquet_bytes(CLUSTER_COLUMNS, rows)
