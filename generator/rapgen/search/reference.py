"""References the fast backend is proven against, for tests and benchmarks only.

* :class:`WhooshShard` — a real per-shard Whoosh index;
* :func:`build_memory_index` — a :class:`FieldIndex` built in memory from
  paper rows, without an archive or a cache.


This follows the verified pattern in the project's Whoosh notes: one writer,
one process, one commit, documents added in ascending arXiv-id order,
``BM25F(B, K1)`` set on the searcher, a flat ``Or`` of (field, term) pairs
built in code, an exact total from the posting lists intersected with the
allowed docnums, and facet-level reverse for date order. It is slow (a few
hundred documents per second) and used only by tests and ``bench/search.py``.
"""

from __future__ import annotations

from datetime import date
from typing import Iterable, Sequence

import numpy as np

from rapgen.search.analysis import FIELDS, check_whoosh_version
from rapgen.search.index import FieldIndex, build_field_arrays, day_number, paper_term_counts, tokenize_corpus


def _yyyymmdd(d: date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


class WhooshShard:
    """An in-memory Whoosh index of one shard's papers."""

    def __init__(self, papers: Iterable[tuple[str, str | None, str | None, date]], *, k1: float, b: float):
        check_whoosh_version()
        from whoosh import scoring
        from whoosh.analysis import StandardAnalyzer
        from whoosh.fields import ID, NUMERIC, TEXT, Schema
        from whoosh.filedb.filestore import RamStorage

        analyzer = StandardAnalyzer()
        schema = Schema(
            pid=ID(stored=True, sortable=True),
            title=TEXT(analyzer=analyzer, phrase=False),
            abstract=TEXT(analyzer=analyzer, phrase=False),
            date=NUMERIC(int, bits=32, stored=True, sortable=True),
        )
        self.ix = RamStorage().create_index(schema)
        writer = self.ix.writer(procs=1, limitmb=128)
        rows = sorted(papers, key=lambda p: p[0].encode("utf-8"))
        for pid, title, abstract, first in rows:
            writer.add_document(pid=pid, title=title or "", abstract=abstract or "", date=_yyyymmdd(first))
        writer.commit()
        self.n = len(rows)
        self.searcher = self.ix.searcher(weighting=scoring.BM25F(B=b, K1=k1))
        self.analyzer = self.ix.schema["title"].analyzer
        reader = self.searcher.reader()
        column = reader.column_reader("date") if self.n else None
        self.dates = [column[n] for n in range(self.n)] if self.n else []

    def search(self, query: str, sort: str = "relevance", date_from: date | None = None, date_to: date | None = None, top_k: int = 8):
        """(total_hits, ids, scores or None)."""
        from whoosh import sorting
        from whoosh.query import Or, Term

        terms = list(dict.fromkeys(t.text for t in self.analyzer(query)))
        if not terms or not self.n:
            return 0, [], []
        q = Or([Term(f, t) for t in terms for f in FIELDS])
        allow = None
        if date_from is not None or date_to is not None:
            lo = _yyyymmdd(date_from) if date_from else None
            hi = _yyyymmdd(date_to) if date_to else None
            allow = {n for n, d in enumerate(self.dates) if (lo is None or d >= lo) and (hi is None or d < hi)}
        reader = self.searcher.reader()
        matched: set[int] = set()
        for t in terms:
            for f in FIELDS:
                if (f, t) in reader:
                    matched.update(reader.postings(f, t).all_ids())
        total = len(matched) if allow is None else len(matched & allow)
        if total == 0:
            return 0, [], []
        if sort == "date":
            hits = self.searcher.search(
                q, limit=top_k, filter=allow,
                sortedby=[sorting.FieldFacet("date", reverse=True), sorting.FieldFacet("pid")],
            )
            return total, [h["pid"] for h in hits], None
        hits = self.searcher.search(q, limit=top_k, filter=allow)
        return total, [h["pid"] for h in hits], [h.score for h in hits]

    def stats(self, fieldname: str, term: str) -> tuple[int, int, float]:
        """(doc_count_all, doc_frequency, avg_field_length) as Whoosh sees them."""
        s = self.searcher
        return s.doc_count_all(), s.doc_frequency(fieldname, term), s.avg_field_length(fieldname)

    def close(self) -> None:
        self.searcher.close()


def build_memory_index(field_id: str, papers: Sequence[tuple[str, str | None, str | None, date]]) -> tuple[FieldIndex, dict[str, int]]:
    """A field index built in memory from (arxiv_id, title, abstract, first_submitted)
    rows, with its vocabulary: for tests and benchmarks without an archive."""
    rows = sorted(papers, key=lambda p: p[0].encode("utf-8"))
    vocab, ptrs, flats = tokenize_corpus([(r[1], r[2]) for r in rows])
    per_field = [paper_term_counts(ptrs[k], flats[k], len(vocab)) for k in range(len(FIELDS))]
    lengths = [np.diff(ptrs[k]) for k in range(len(FIELDS))]
    ids = np.array([r[0] for r in rows], dtype=object)
    members = np.arange(len(rows), dtype=np.int64)
    days = np.array([day_number(r[3]) for r in rows], dtype=np.int64)
    arrays = build_field_arrays(members, days, ids, per_field, lengths)
    return FieldIndex.from_arrays(field_id, arrays), {t: i for i, t in enumerate(vocab)}
