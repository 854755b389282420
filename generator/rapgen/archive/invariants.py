"""Structural invariants of an archive (ARCHIVE.md), VERIFY.md step 5.

Each check names the files it reads; it runs only if all of them verified
byte for byte, and otherwise reports ``NOT-EVALUATED``. Every check collects
all of its findings.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Callable

from rapgen.archive import parse
from rapgen.archive.calendar import add_months
from rapgen.archive.reader import (
    ARCHIVE_JSON,
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    LEDGER_JSON,
    MANIFEST_JSONL,
    MODELS_DIR,
    ORIGINS_JSON,
    PAPERS_PARQUET,
)
from rapgen.archive.records import MODEL_ID_PATTERN, Category, Finding

REQUIRED = (ARCHIVE_JSON, ORIGINS_JSON, FIELDS_JSONL, CODEBOOKS_JSONL, BLOCKS_JSONL, PAPERS_PARQUET, ASSIGNMENTS_PARQUET, LEDGER_JSON, *MANIFEST_JSONL.values())
MODEL_FILES = ("model.json", "predictions.jsonl", "traces.jsonl")
PAPERS_COLUMNS = {"arxiv_id": "VARCHAR", "title": "VARCHAR", "abstract": "VARCHAR", "first_submitted": "DATE", "categories": "VARCHAR"}
ASSIGNMENTS_COLUMNS = {
    "arxiv_id": "VARCHAR", "field_id": "VARCHAR", "first_submitted": "DATE",
    "primary": "VARCHAR", "secondary": "VARCHAR", "assignment_type": "VARCHAR",
}
_MODEL_RE = re.compile(MODEL_ID_PATTERN)
_EXAMPLES = 3  # offending rows quoted per finding

# Ledger rules (ARCHIVE.md, assignments.parquet), as SQL predicates naming a broken row.
ASSIGNMENT_RULES = (
    ("primary must be D0..D7 or other", "\"primary\" IS NULL OR \"primary\" NOT IN ('D0','D1','D2','D3','D4','D5','D6','D7','other')"),
    ("secondary must be D0..D7 or null", "secondary IS NOT NULL AND secondary NOT IN ('D0','D1','D2','D3','D4','D5','D6','D7')"),
    ("assignment_type must be single, boundary, bridge, other or low_evidence",
     "assignment_type IS NULL OR assignment_type NOT IN ('single','boundary','bridge','other','low_evidence')"),
    ("a secondary is only present for boundary and bridge rows", "secondary IS NOT NULL AND assignment_type NOT IN ('boundary','bridge')"),
    ("boundary and bridge rows need a secondary", "secondary IS NULL AND assignment_type IN ('boundary','bridge')"),
    ("secondary must differ from primary", "secondary IS NOT NULL AND secondary = \"primary\""),
    ("a row with primary 'other' must have type other or low_evidence", "\"primary\" = 'other' AND assignment_type NOT IN ('other','low_evidence')"),
    ("an 'other' row must have primary 'other'", "assignment_type = 'other' AND \"primary\" <> 'other'"),
)


class InvariantChecker:
    def __init__(self, root: str | Path, verified: set[str], listed: set[str], cache: dict | None = None, present: set[str] | None = None):
        self.root = Path(root)
        self.present = present if present is not None else listed  # regular files found on disk
        self.cache = cache if cache is not None else {}  # parsed model files, reused by the reader
        self.verified = verified
        self.listed = listed
        self.findings: list[Finding] = []
        self._con = None
        self.fields: list = []
        self.origins = None
        self.ledger: dict | None = None

    # -------------------------------------------------------------- plumbing
    def add(self, path: str, detail: str, line: int | None = None) -> None:
        self.findings.append(Finding(path, line, Category.INVARIANT, detail))

    def need(self, check: str, *paths: str) -> bool:
        """True if every file the check reads verified; else report NOT-EVALUATED once."""
        bad = [p for p in paths if p not in self.verified]
        if bad:
            target = paths[-1]
            self.findings.append(Finding(target, None, Category.NOT_EVALUATED, f"{check} not checked: {', '.join(bad)} did not verify"))
            return False
        return True

    def parsed(self, rel: str, parser: Callable[[str, bytes], tuple]):
        value, findings = parser(rel, (self.root / rel).read_bytes())
        for f in findings:  # schema problems inside a verified file are invariant failures
            self.findings.append(Finding(f.path, f.line, Category.INVARIANT, f.detail))
        return value, not findings

    @property
    def con(self):
        if self._con is None:
            import duckdb

            self._con = duckdb.connect()
            self._con.execute("SET threads TO 2")
        return self._con

    def sql_path(self, rel: str) -> str:
        return str(self.root / rel).replace("'", "''")

    # -------------------------------------------------------------- checks
    def gate(self, check: str, paths: tuple[str, ...], upstream: dict[str, bool]) -> bool:
        """``need`` plus upstream checks that must have passed (e.g. fields before blocks)."""
        if not self.need(check, *paths):
            return False
        failed = [name for name, ok in upstream.items() if not ok]
        if failed:
            self.findings.append(Finding(paths[-1], None, Category.NOT_EVALUATED, f"{check} not checked: {', '.join(failed)} is invalid"))
            return False
        return True

    def run(self) -> list[Finding]:
        for rel in REQUIRED:
            # A required file that exists but is unlisted (or listed on a malformed line) is
            # already an UNLISTED finding; only a file that is nowhere is missing here.
            if rel not in self.listed and rel not in self.present:
                self.add(rel, "required file is not in the archive")
        if self.need("ARCHIVE.json schema", ARCHIVE_JSON):
            self.parsed(ARCHIVE_JSON, parse.parse_archive_json)
        if self.need("origins", ORIGINS_JSON):
            self.origins, _ = self.parsed(ORIGINS_JSON, parse.parse_origins)
        if self.need("parameter ledger", LEDGER_JSON):
            self.ledger, _ = self.parsed(LEDGER_JSON, parse.parse_ledger)
        fields_ok = self.need("fields", FIELDS_JSONL) and self.check_fields()
        fields = {FIELDS_JSONL: fields_ok}
        if self.gate("codebooks", (FIELDS_JSONL, CODEBOOKS_JSONL), fields):
            self.check_codebooks()
        if self.gate("dependency blocks", (FIELDS_JSONL, BLOCKS_JSONL), fields):
            self.check_blocks()
        papers_ok = self.need("papers table", PAPERS_PARQUET) and self.check_papers()
        ledger_ok = self.gate(
            "membership ledger", (PAPERS_PARQUET, FIELDS_JSONL, ASSIGNMENTS_PARQUET), {PAPERS_PARQUET: papers_ok, **fields}
        ) and self.check_assignments()
        for regime, rel in MANIFEST_JSONL.items():
            upstream = {ASSIGNMENTS_PARQUET: ledger_ok, ORIGINS_JSON: self.origins is not None}
            if self.gate(f"{regime} search manifest", (ASSIGNMENTS_PARQUET, ORIGINS_JSON, rel), upstream):
                self.check_manifest(regime, rel)
        self.check_models(fields_ok, ledger_ok)
        if self._con is not None:
            self._con.close()
        return self.findings

    def check_fields(self) -> bool:
        fields, ok = self.parsed(FIELDS_JSONL, parse.parse_fields)
        counts = Counter(f.field_id for f in fields)
        for fid, n in sorted(counts.items()):
            if n > 1:
                self.add(FIELDS_JSONL, f"field {fid!r} appears {n} times")
                ok = False
        if not fields:
            self.add(FIELDS_JSONL, "no fields")
            ok = False
        self.fields = fields
        return ok

    def check_codebooks(self) -> None:
        books, _ = self.parsed(CODEBOOKS_JSONL, parse.parse_codebooks)
        known = {f.field_id for f in self.fields}
        named = set(books) | _field_ids_named((self.root / CODEBOOKS_JSONL).read_bytes())
        for fid in sorted(known - named):  # a malformed codebook line is its own finding
            self.add(CODEBOOKS_JSONL, f"field {fid!r} has no codebook")
        for fid in sorted(set(books) - known):
            self.add(CODEBOOKS_JSONL, f"codebook for unknown field {fid!r}")

    def check_blocks(self) -> None:
        blocks, _ = self.parsed(BLOCKS_JSONL, parse.parse_blocks)
        by_field = {f.field_id: f for f in self.fields}
        owner: dict[str, list[str]] = defaultdict(list)
        for fid, n in Counter(b.block_id for b in blocks).items():
            if n > 1:
                self.add(BLOCKS_JSONL, f"block {fid!r} appears {n} times")
        for block in blocks:
            for fid in block.fields:
                owner[fid].append(block.block_id)
                field = by_field.get(fid)
                if field is None:
                    self.add(BLOCKS_JSONL, f"block {block.block_id!r} lists unknown field {fid!r}")
                    continue
                if field.split != block.split:
                    self.add(BLOCKS_JSONL, f"field {fid!r} is {field.split} but its block {block.block_id!r} is {block.split}")
                if field.block_id != block.block_id:
                    self.add(BLOCKS_JSONL, f"field {fid!r} names block {field.block_id!r} but is listed in {block.block_id!r}")
        for fid in sorted(by_field):
            if len(owner.get(fid, [])) == 0:
                self.add(BLOCKS_JSONL, f"field {fid!r} is in no block")
            elif len(owner[fid]) > 1:
                self.add(BLOCKS_JSONL, f"field {fid!r} is in {len(owner[fid])} blocks: {', '.join(sorted(owner[fid]))}")

    def _columns(self, rel: str, expected: dict[str, str]) -> bool:
        try:
            rows = self.con.execute(f"DESCRIBE SELECT * FROM read_parquet('{self.sql_path(rel)}')").fetchall()
        except Exception as exc:  # duckdb.Error: not a parquet file
            self.add(rel, f"not a readable parquet file ({str(exc).splitlines()[0][:120]})")
            return False
        have = {r[0]: r[1] for r in rows}
        ok = True
        for name, kind in expected.items():
            if name not in have:
                self.add(rel, f"missing column {name!r}")
                ok = False
            elif have[name] != kind:
                self.add(rel, f"column {name!r} has type {have[name]}, expected {kind}")
                ok = False
        for name in sorted(set(have) - set(expected)):
            self.add(rel, f"unexpected column {name!r}")
            ok = False
        return ok

    def _violations(self, rel: str, sql: str, message: str) -> bool:
        rows = self.con.execute(sql).fetchall()
        if rows:
            n = rows[0][-1]
            examples = ", ".join(str(r[0]) for r in rows[:_EXAMPLES])
            self.add(rel, f"{message}: {n} row{'s' * (n != 1)} (e.g. {examples})")
            return False
        return True

    def check_papers(self) -> bool:
        rel = PAPERS_PARQUET
        if not self._columns(rel, PAPERS_COLUMNS):
            return False
        src = f"read_parquet('{self.sql_path(rel)}')"
        ok = self._violations(rel, f"SELECT arxiv_id, count(*) OVER () FROM (SELECT arxiv_id FROM {src} GROUP BY arxiv_id HAVING count(*) > 1) LIMIT 3", "arxiv_id is not unique")
        ok &= self._violations(rel, f"SELECT coalesce(arxiv_id, '<null>'), count(*) OVER () FROM {src} WHERE arxiv_id IS NULL OR arxiv_id = '' OR first_submitted IS NULL LIMIT 3", "arxiv_id or first_submitted is empty")
        if ok:
            self.con.execute(f"CREATE TEMP TABLE papers AS SELECT arxiv_id, first_submitted FROM {src}")
        return ok

    def check_assignments(self) -> bool:
        rel = ASSIGNMENTS_PARQUET
        if not self._columns(rel, ASSIGNMENTS_COLUMNS):
            return False
        self.con.execute(f"CREATE TEMP TABLE assignments AS SELECT * FROM read_parquet('{self.sql_path(rel)}')")
        field_list = ", ".join("'" + f.field_id.replace("'", "''") + "'" for f in self.fields)
        ok = self._violations(
            rel,
            "SELECT arxiv_id || ' in ' || field_id, count(*) OVER () FROM assignments GROUP BY arxiv_id, field_id HAVING count(*) > 1 LIMIT 3",
            "(arxiv_id, field_id) is not unique",
        )
        ok &= self._violations(
            rel,
            f"SELECT coalesce(field_id, '<null>'), count(*) OVER () FROM assignments WHERE field_id IS NULL OR field_id NOT IN ({field_list}) LIMIT 3",
            "field_id is not a field of fields.jsonl",
        )
        ok &= self._violations(
            rel,
            "SELECT coalesce(a.arxiv_id, '<null>'), count(*) OVER () FROM assignments a ANTI JOIN papers p USING (arxiv_id) LIMIT 3",
            "arxiv_id is not in papers.parquet",
        )
        ok &= self._violations(
            rel,
            "SELECT a.arxiv_id, count(*) OVER () FROM assignments a JOIN papers p USING (arxiv_id) "
            "WHERE a.first_submitted IS DISTINCT FROM p.first_submitted LIMIT 3",
            "first_submitted differs from the paper's",
        )
        for message, predicate in ASSIGNMENT_RULES:
            ok &= self._violations(
                rel,
                f"SELECT coalesce(arxiv_id, '<null>') || ' in ' || coalesce(field_id, '<null>'), count(*) OVER () FROM assignments WHERE {predicate} LIMIT 3",
                message,
            )
        return ok

    def check_manifest(self, regime: str, rel: str) -> None:
        entries, parsed_ok = self.parsed(rel, lambda p, d: parse.parse_manifest(p, d, regime))
        origins = self.origins
        window = origins.window_months
        expected = {(f.field_id, o) for f in self.fields for o in origins.origins}
        seen: dict[tuple[str, date], int] = {}
        rows = []
        for line, entry in enumerate(entries, start=1):
            key = (entry.field_id, entry.origin)
            if key not in expected:
                self.add(rel, f"episode {entry.field_id} {entry.origin} is not a field × origin of this archive")
                continue
            if key in seen:
                self.add(rel, f"episode {entry.field_id} {entry.origin} appears twice")
                continue
            seen[key] = line
            if entry.date_to != entry.origin:
                self.add(rel, f"{entry.field_id} {entry.origin}: date_to {entry.date_to} must equal the origin")
            if regime == "fixed" and entry.date_from != add_months(entry.origin, -window):
                self.add(rel, f"{entry.field_id} {entry.origin}: date_from {entry.date_from} must be {add_months(entry.origin, -window)}")
            if entry.max_date is not None and entry.max_date >= entry.origin:
                self.add(rel, f"{entry.field_id} {entry.origin}: holds a paper dated {entry.max_date}, on or after its origin")
            rows.append(entry)
        if parsed_ok:
            for fid, origin in sorted(expected - set(seen)):
                self.add(rel, f"episode {fid} {origin} has no line")
        if not rows:
            return
        import pandas as pd

        frame = pd.DataFrame(
            {
                "field_id": [e.field_id for e in rows],
                "origin": [e.origin for e in rows],
                "date_from": [add_months(e.origin, -window) if regime == "fixed" else date(1, 1, 1) for e in rows],
            }
        )
        self.con.register("episodes_frame", frame)
        # Rebuild each shard from the ledger: ids sorted by bytes, joined by '\n', hashed (ARCHIVE.md).
        rebuilt = self.con.execute(
            """
            SELECT e.field_id, e.origin, count(a.arxiv_id) AS n, min(a.first_submitted), max(a.first_submitted),
                   sha256(coalesce(string_agg(a.arxiv_id, chr(10) ORDER BY a.arxiv_id COLLATE "C"), ''))
            FROM episodes_frame e
            LEFT JOIN assignments a
              ON a.field_id = e.field_id AND a.first_submitted >= e.date_from AND a.first_submitted < e.origin
            GROUP BY e.field_id, e.origin
            """
        ).fetchall()
        self.con.unregister("episodes_frame")
        truth = {(r[0], r[1]): r[2:] for r in rebuilt}
        for entry in rows:
            n, lo, hi, sha = truth[(entry.field_id, entry.origin)]
            label = f"{entry.field_id} {entry.origin}"
            if entry.n_papers != n:
                self.add(rel, f"{label}: n_papers {entry.n_papers} but the ledger has {n}")
            if (entry.min_date, entry.max_date) != (lo, hi):
                self.add(rel, f"{label}: dates {entry.min_date}..{entry.max_date} but the ledger has {lo}..{hi}")
            if entry.ids_sha256 != sha:
                self.add(rel, f"{label}: ids_sha256 does not match the ledger's ids", )

    def check_models(self, fields_ok: bool, ledger_ok: bool) -> None:
        prefix = MODELS_DIR + "/"
        by_model: dict[str, set[str]] = defaultdict(set)
        for rel in self.listed:
            if rel.startswith(prefix):
                rest = rel[len(prefix):]
                if "/" not in rest:
                    self.add(rel, "files directly under archive/models/ are not allowed; use archive/models/<model_id>/")
                    continue
                model_id, name = rest.split("/", 1)
                by_model[model_id].add(name)
        for model_id in sorted(by_model):
            folder = prefix + model_id
            names = by_model[model_id]
            if not _MODEL_RE.match(model_id):
                self.add(folder, f"model id {model_id!r} does not match {MODEL_ID_PATTERN}")
            for name in sorted(names - set(MODEL_FILES)):
                self.add(f"{folder}/{name}", "unexpected file in a model folder (allowed: model.json, predictions.jsonl, traces.jsonl)")
            for name in ("model.json", "predictions.jsonl"):
                if name not in names:
                    self.add(f"{folder}/{name}", "required model file is missing")
            if "model.json" in names and self.need("model metadata", f"{folder}/model.json"):
                self.parsed(f"{folder}/model.json", lambda p, d, m=model_id: parse.parse_model_json(p, d, folder=m))
            field_ids = [f.field_id for f in self.fields]
            upstream = {FIELDS_JSONL: fields_ok, ORIGINS_JSON: self.origins is not None}
            rel = f"{folder}/predictions.jsonl"
            if "predictions.jsonl" in names and self.gate("predictions", (FIELDS_JSONL, ORIGINS_JSON, rel), upstream):
                units, ok = self.parsed(rel, lambda p, d: parse.parse_predictions(p, d, field_ids, self.origins.origins))
                if ok:
                    self.cache[("predictions", model_id)] = units
            rel = f"{folder}/traces.jsonl"
            upstream = {**upstream, LEDGER_JSON: self.ledger is not None}
            if "traces.jsonl" in names and self.gate("traces", (FIELDS_JSONL, LEDGER_JSON, ORIGINS_JSON, rel), upstream):
                calls, _ = self.parsed(
                    rel,
                    lambda p, d: parse.parse_traces(p, d, field_ids, self.origins.origins, int(self.ledger["search"]["max_calls"])),
                )
                if ledger_ok and calls:
                    self.check_returned(rel, calls)
                self.cache[("traces", model_id)] = calls

    def check_returned(self, rel: str, calls: list) -> None:
        """Every returned paper must be in its episode's shard: a member of the field dated before the origin."""
        import pandas as pd

        window = self.origins.window_months
        recs = []
        for c in calls:
            start = add_months(c.origin, -window) if c.condition in ("A1", "A2") else date(1, 1, 1)
            for rid in c.returned_ids:
                recs.append((c.line, c.field_id, c.origin, start, rid))
        if not recs:
            return
        frame = pd.DataFrame(recs, columns=["line", "field_id", "origin", "date_from", "arxiv_id"])
        self.con.register("returned_frame", frame)
        bad = self.con.execute(
            """
            SELECT r.line, r.arxiv_id, a.first_submitted
            FROM returned_frame r
            LEFT JOIN assignments a ON a.field_id = r.field_id AND a.arxiv_id = r.arxiv_id
            WHERE a.arxiv_id IS NULL OR a.first_submitted >= r.origin OR a.first_submitted < r.date_from
            ORDER BY r.line, r.arxiv_id
            """
        ).fetchall()
        self.con.unregister("returned_frame")
        for line, arxiv_id, when in bad:
            if when is None:
                self.add(rel, f"returned paper {arxiv_id} is not a member of the field", line)
            else:
                self.add(rel, f"returned paper {arxiv_id} dated {when} lies outside the episode's shard (on or after its origin, or before the window)", line)


def _field_ids_named(data: bytes) -> set[str]:
    """Field ids named on any JSON line of a file, valid or not (to avoid a second finding)."""
    out = set()
    for raw in data.decode("utf-8", "replace").splitlines():
        try:
            obj = parse.loads_strict(raw)
        except Exception:  # noqa: BLE001 - malformed lines are reported by the parser
            continue
        if isinstance(obj, dict) and isinstance(obj.get("field_id"), str):
            out.add(obj["field_id"])
    return out


def check_invariants(
    root: str | Path, verified: set[str], listed: set[str], cache: dict | None = None, present: set[str] | None = None
) -> list[Finding]:
    """Run every structural check; return all findings (INVARIANT / NOT-EVALUATED).

    ``cache``, if given, receives the parsed predictions and traces of every model
    so that a reader opened on the verified archive need not parse them again.
    """
    return InvariantChecker(root, verified, listed, cache, present).run()
