"""The union ledger of a history: ``benchmark/`` plus every ingested window, in DuckDB.

One place computes what needs the rows themselves: each window file's date
span, the uniqueness rules across the union (an ``arxiv_id`` in one papers
file only, ``(arxiv_id, field_id)`` unique), the ARCHIVE.md ledger rules for
window rows, and the Search manifests of an origin opened after release 1,
built by the one shard rule of :mod:`rapgen.archive.shards`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Mapping, Sequence

from rapgen.archive.frames import register_frame, unregister_frame
from rapgen.archive.history.check import WindowSpan
from rapgen.archive.invariants import ASSIGNMENT_RULES, ASSIGNMENTS_COLUMNS, PAPERS_COLUMNS
from rapgen.archive.layout import REGIMES
from rapgen.archive.shards import shard_ids_sha256, shard_start

_EXAMPLES = 3


@dataclass(frozen=True)
class WindowSource:
    """One window to load: its first day, the archive paths it is known by, and where its bytes are."""

    start: date
    papers_path: str
    assignments_path: str
    papers_file: Path
    assignments_file: Path


def _sql_str(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class UnionLedger:
    """Base ledger plus windows. ``problems`` collects (archive path, detail) for rows that break a rule."""

    def __init__(self, base_papers: Path, base_assignments: Path, windows: Sequence[WindowSource], field_ids: Sequence[str]):
        import duckdb

        self.con = duckdb.connect()
        self.con.execute("SET threads TO 2")
        self.problems: list[tuple[str, str]] = []
        self._shards: dict[tuple[date, int], dict[str, list[dict]]] = {}
        self.spans: list[WindowSpan] = []
        self.field_ids = list(field_ids)
        papers = [f"SELECT arxiv_id, first_submitted, 'base' AS src FROM read_parquet({_sql_str(base_papers)})"]
        rows = [f"SELECT arxiv_id, field_id, first_submitted, 'base' AS src FROM read_parquet({_sql_str(base_assignments)})"]
        self.good: list[WindowSource] = []
        for w in windows:
            ok = self._columns(w.papers_path, w.papers_file, PAPERS_COLUMNS)
            ok = self._columns(w.assignments_path, w.assignments_file, ASSIGNMENTS_COLUMNS) and ok
            if not ok:
                continue
            self.good.append(w)
            tag = w.start.isoformat()
            papers.append(f"SELECT arxiv_id, first_submitted, '{tag}' AS src FROM read_parquet({_sql_str(w.papers_file)})")
            rows.append(f"SELECT arxiv_id, field_id, first_submitted, '{tag}' AS src FROM read_parquet({_sql_str(w.assignments_file)})")
        self.con.execute("CREATE TEMP TABLE papers_union AS " + " UNION ALL ".join(papers))
        self.con.execute("CREATE TEMP TABLE ledger_union AS " + " UNION ALL ".join(rows))
        for w in self.good:
            self._check_window(w)

    def close(self) -> None:
        self.con.close()

    def _columns(self, rel: str, file: Path, expected: dict[str, str]) -> bool:
        try:
            have = {r[0]: r[1] for r in self.con.execute(f"DESCRIBE SELECT * FROM read_parquet({_sql_str(file)})").fetchall()}
        except Exception as exc:  # duckdb.Error: not a parquet file
            self.problems.append((rel, f"not a readable parquet file ({str(exc).splitlines()[0][:120]})"))
            return False
        wrong = [f"{n} ({have.get(n, 'missing')}, expected {k})" for n, k in expected.items() if have.get(n) != k]
        wrong += [f"{n} (unexpected)" for n in sorted(set(have) - set(expected))]
        if wrong:
            self.problems.append((rel, "columns do not follow ARCHIVE.md: " + ", ".join(wrong)))
        return not wrong

    def _violations(self, rel: str, sql: str, params: list, message: str) -> None:
        rows = self.con.execute(sql, params).fetchall()
        if rows:
            n = rows[0][-1]
            examples = ", ".join(str(r[0]) for r in rows[:_EXAMPLES])
            self.problems.append((rel, f"{message}: {n} row{'s' * (n != 1)} (e.g. {examples})"))

    def _check_window(self, w: WindowSource) -> None:
        tag = w.start.isoformat()
        for rel, table in ((w.papers_path, "papers_union"), (w.assignments_path, "ledger_union")):
            n, lo, hi = self.con.execute(f"SELECT count(*), min(first_submitted), max(first_submitted) FROM {table} WHERE src = ?", [tag]).fetchone()
            self.spans.append(WindowSpan(rel, int(n), lo, hi))
        self._violations(
            w.papers_path,
            "SELECT arxiv_id, count(*) OVER () FROM (SELECT arxiv_id FROM papers_union GROUP BY arxiv_id "
            "HAVING count(*) > 1 AND bool_or(src = ?)) ORDER BY arxiv_id LIMIT 3",
            [tag], "arxiv_id appears in another papers file or twice (an arxiv_id is in one papers file only)",
        )
        self._violations(
            w.papers_path, "SELECT coalesce(arxiv_id, '<null>'), count(*) OVER () FROM papers_union WHERE src = ? "
            "AND (arxiv_id IS NULL OR arxiv_id = '' OR first_submitted IS NULL) LIMIT 3", [tag], "arxiv_id or first_submitted is empty",
        )
        self._violations(
            w.assignments_path,
            "SELECT arxiv_id || ' in ' || field_id, count(*) OVER () FROM (SELECT arxiv_id, field_id FROM ledger_union "
            "GROUP BY arxiv_id, field_id HAVING count(*) > 1 AND bool_or(src = ?)) ORDER BY 1 LIMIT 3",
            [tag], "(arxiv_id, field_id) is not unique across the ledger",
        )
        self._violations(
            w.assignments_path,
            "SELECT a.arxiv_id, count(*) OVER () FROM ledger_union a LEFT JOIN papers_union p ON p.arxiv_id = a.arxiv_id "
            "AND p.src = a.src WHERE a.src = ? AND (p.arxiv_id IS NULL OR p.first_submitted IS DISTINCT FROM a.first_submitted) LIMIT 3",
            [tag], "arxiv_id is not a paper of the same window with the same first_submitted",
        )
        self._violations(
            w.assignments_path,
            "SELECT coalesce(field_id, '<null>'), count(*) OVER () FROM ledger_union WHERE src = ? "
            "AND (field_id IS NULL OR NOT list_contains(?, field_id)) LIMIT 3",
            [tag, self.field_ids], "field_id is not a field of fields.jsonl",
        )
        source = f"read_parquet({_sql_str(w.assignments_file)})"
        for message, predicate in ASSIGNMENT_RULES:
            self._violations(
                w.assignments_path,
                f"SELECT coalesce(arxiv_id, '<null>') || ' in ' || coalesce(field_id, '<null>'), count(*) OVER () FROM {source} WHERE {predicate} LIMIT 3",
                [], message,
            )

    def known_ids(self, ids: Sequence[str]) -> list[str]:
        """Those of ``ids`` already in a papers file of the union."""
        register_frame(self.con, "probe_ids", {"arxiv_id": ("text", ids)})
        try:
            rows = self.con.execute("SELECT DISTINCT p.arxiv_id FROM probe_ids p JOIN papers_union u USING (arxiv_id) ORDER BY 1").fetchall()
        finally:
            unregister_frame(self.con, "probe_ids")
        return [r[0] for r in rows]

    def shard_manifests(self, origin: date, window_months: int) -> dict[str, list[dict]]:
        """Both regimes' manifest lines for one origin, ordered by field id, by the one shard rule.

        The shard's bounds come from :func:`shard_start` ([start, origin)) and its
        identity from :func:`shard_ids_sha256`; DuckDB only gathers each field's rows.
        """
        key = (origin, window_months)
        if key in self._shards:
            return self._shards[key]
        out: dict[str, list[dict]] = {}
        for regime in REGIMES:
            start = shard_start(origin, regime, window_months)
            rows = self.con.execute(
                "SELECT field_id, count(*), min(first_submitted), max(first_submitted), list(arxiv_id) FROM ledger_union "
                "WHERE first_submitted < ? AND (? IS NULL OR first_submitted >= ?) GROUP BY field_id",
                [origin, start, start],
            ).fetchall()
            found = {r[0]: r[1:] for r in rows}
            lines = []
            for fid in sorted(self.field_ids, key=lambda f: f.encode("utf-8")):
                n, lo, hi, ids = found.get(fid, (0, None, None, []))
                lines.append({
                    "field_id": fid, "origin": origin.isoformat(), "regime": regime,
                    "date_from": start.isoformat() if start else None, "date_to": origin.isoformat(),
                    "n_papers": int(n), "min_date": lo.isoformat() if lo else None,
                    "max_date": hi.isoformat() if hi else None, "ids_sha256": shard_ids_sha256(ids),
                })
            out[regime] = lines
        self._shards[key] = out
        return out


def compare_manifest(expected: list[dict], found: Sequence, path: str) -> list[tuple[str, str]]:
    """Problems of a parsed manifest against the rebuilt lines (count, dates, hash per episode)."""
    problems: list[tuple[str, str]] = []
    want = {row["field_id"]: row for row in expected}
    seen: set[str] = set()
    for entry in found:
        row = want.get(entry.field_id)
        if row is None or entry.field_id in seen:
            problems.append((path, f"episode {entry.field_id} {entry.origin} is {'repeated' if row else 'not a field of this archive'}"))
            continue
        seen.add(entry.field_id)
        dates = (entry.min_date.isoformat() if entry.min_date else None, entry.max_date.isoformat() if entry.max_date else None)
        if entry.n_papers != row["n_papers"] or dates != (row["min_date"], row["max_date"]) or entry.ids_sha256 != row["ids_sha256"]:
            problems.append((path, f"{entry.field_id} {entry.origin}: shard does not rebuild from the ledger "
                             f"(n_papers {entry.n_papers} vs {row['n_papers']}, dates {dates[0]}..{dates[1]} vs "
                             f"{row['min_date']}..{row['max_date']}, or ids_sha256)"))
    for fid in sorted(set(want) - seen):
        problems.append((path, f"episode {fid} has no line"))
    return problems


def window_sources(root: Path, starts: Mapping[date, tuple[str, str]]) -> list[WindowSource]:
    return [WindowSource(s, p, a, root / p, root / a) for s, (p, a) in sorted(starts.items())]
