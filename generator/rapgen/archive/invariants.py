"""Structural invariants of an archive (ARCHIVE.md), VERIFY.md step 5.

Each check names the files it reads; it runs only if all of them verified
byte for byte, and otherwise reports ``NOT-EVALUATED``. Every check collects
all of its findings.

The checks read no file themselves: the verifier hands in the bytes it hashed
(``documents``, the JSON and JSONL files), each is parsed exactly once here, and
every check receives the parsed documents it needs as arguments. The parsed
documents come back in :class:`ParsedDocuments`, from which the verifier builds
its :class:`~rapgen.archive.verified.VerifiedRoot`. Only the two parquet
tables are read from disk, by DuckDB, with their paths bound as parameters.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import parse
from rapgen.archive.layout import (
    ARCHIVE_JSON,
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    LEDGER_JSON,
    MANIFEST_JSONL,
    COMMITMENT_PATTERN,
    MODEL_FILES,
    MODEL_ID_PATTERN,
    ORIGIN_FILE_PATTERN,
    MODEL_JSON,
    MODELS_DIR,
    ORIGINS_JSON,
    PAPERS_PARQUET,
    PREDICTIONS_JSONL,
    REQUIRED_FILES,
    REQUIRED_MODEL_FILES,
    TRACES_JSONL,
    model_file,
)
from rapgen.archive.frames import register_frame, unregister_frame
from rapgen.archive.ledger_jobs import Job, LedgerWorker
from rapgen.archive.parse_ahead import parse_model_file
from rapgen.archive.records import Block, Category, Direction, Field, Finding, ModelInfo, Origins, ProblemKind, ShardManifest, TraceCall, Unit
from rapgen.archive.shards import condition_shard_start, shard_start

REQUIRED = REQUIRED_FILES
PAPERS_COLUMNS = {"arxiv_id": "VARCHAR", "title": "VARCHAR", "abstract": "VARCHAR", "first_submitted": "DATE", "categories": "VARCHAR"}
ASSIGNMENTS_COLUMNS = {
    "arxiv_id": "VARCHAR", "field_id": "VARCHAR", "first_submitted": "DATE",
    "primary": "VARCHAR", "secondary": "VARCHAR", "assignment_type": "VARCHAR",
}
_MODEL_RE = re.compile(MODEL_ID_PATTERN)
_ORIGIN_FILE = re.compile(ORIGIN_FILE_PATTERN)
_COMMITMENT = re.compile(COMMITMENT_PATTERN)
ALLOWED_MODEL_FILES = ", ".join(MODEL_FILES) + ", origins/<origin>/predictions.jsonl, origins/<origin>/traces.jsonl"
_EXAMPLES = 3  # offending rows quoted per finding

# Ledger rules (ARCHIVE.md, assignments.parquet), as SQL predicates naming a broken row.
# They are fixed text (no value is ever spliced in); the table is a temp copy of the file.
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



@dataclass
class ParsedDocuments:
    """Every document of the archive that verified and parsed without a finding.

    A value is None (or a key absent) when its file did not verify or did not parse."""

    info: dict | None = None
    origins: Origins | None = None
    ledger: dict | None = None
    fields: list[Field] | None = None
    codebooks: dict[str, tuple[Direction, ...]] | None = None
    blocks: list[Block] | None = None
    manifests: dict[str, list[ShardManifest]] = field(default_factory=dict)
    models: dict[str, ModelInfo] = field(default_factory=dict)
    predictions: dict[str, list[Unit]] = field(default_factory=dict)
    traces: dict[str, list[TraceCall]] = field(default_factory=dict)


@dataclass(frozen=True)
class InvariantReport:
    findings: list[Finding]
    parsed: ParsedDocuments


# SQL, bound parameters only (STYLE): the parquet path and the field ids are values, never spliced.
DESCRIBE_PARQUET = "DESCRIBE SELECT * FROM read_parquet(?)"
LOAD_PAPERS = "CREATE TEMP TABLE papers AS SELECT arxiv_id, first_submitted FROM read_parquet(?)"
LOAD_ASSIGNMENTS = "CREATE TEMP TABLE assignments AS SELECT * FROM read_parquet(?)"
PAPER_RULES = (
    ("arxiv_id is not unique",
     "SELECT arxiv_id, count(*) OVER () FROM (SELECT arxiv_id FROM read_parquet(?) GROUP BY arxiv_id HAVING count(*) > 1) LIMIT 3"),
    ("arxiv_id or first_submitted is empty",
     "SELECT coalesce(arxiv_id, '<null>'), count(*) OVER () FROM read_parquet(?) "
     "WHERE arxiv_id IS NULL OR arxiv_id = '' OR first_submitted IS NULL LIMIT 3"),
)
DUPLICATE_ASSIGNMENTS = (
    "SELECT arxiv_id || ' in ' || field_id, count(*) OVER () FROM assignments GROUP BY arxiv_id, field_id HAVING count(*) > 1 LIMIT 3"
)
UNKNOWN_FIELD_ASSIGNMENTS = (
    "SELECT coalesce(field_id, '<null>'), count(*) OVER () FROM assignments "
    "WHERE field_id IS NULL OR NOT list_contains(?::VARCHAR[], field_id) LIMIT 3"
)
# The same rows counted by a hash anti join: the rule above tests each row against the whole list of
# ids, which costs more than every other rule together, so it runs only when this count is not zero.
ANY_UNKNOWN_FIELD_ASSIGNMENT = "SELECT count(*) FROM assignments ANTI JOIN (SELECT unnest(?::VARCHAR[]) AS field_id) USING (field_id)"
ORPHAN_ASSIGNMENTS = "SELECT coalesce(a.arxiv_id, '<null>'), count(*) OVER () FROM assignments a ANTI JOIN papers p USING (arxiv_id) LIMIT 3"
DATE_MISMATCH_ASSIGNMENTS = (
    "SELECT a.arxiv_id, count(*) OVER () FROM assignments a JOIN papers p USING (arxiv_id) "
    "WHERE a.first_submitted IS DISTINCT FROM p.first_submitted LIMIT 3"
)
ASSIGNMENT_RULE_SQL = (
    "SELECT coalesce(arxiv_id, '<null>') || ' in ' || coalesce(field_id, '<null>'), count(*) OVER () "
    "FROM assignments WHERE {predicate} LIMIT 3"
)
# Each shard rebuilt from the ledger: ids sorted by bytes, joined by '\n', hashed (archive.shards).
REBUILD_SHARDS = """
    SELECT e.field_id, e.origin, count(a.arxiv_id) AS n, min(a.first_submitted), max(a.first_submitted),
           sha256(coalesce(string_agg(a.arxiv_id, chr(10) ORDER BY a.arxiv_id COLLATE "C"), ''))
    FROM episodes_frame e
    LEFT JOIN assignments a
      ON a.field_id = e.field_id AND a.first_submitted >= e.date_from AND a.first_submitted < e.origin
    GROUP BY e.field_id, e.origin
"""
RETURNED_OUTSIDE_SHARD = """
    SELECT r.line, r.arxiv_id, a.first_submitted
    FROM returned_frame r
    LEFT JOIN assignments a ON a.field_id = r.field_id AND a.arxiv_id = r.arxiv_id
    WHERE a.arxiv_id IS NULL OR a.first_submitted >= r.origin OR a.first_submitted < r.date_from
    ORDER BY r.line, r.arxiv_id
"""
NO_LOWER_BOUND = date(1, 1, 1)  # an expanding shard's date_from, for SQL comparisons
THREADED = True  # False: the DuckDB checks run in turn on the main thread (a test comparing the two)


class _Checker:
    """Findings of one run; parsed documents are passed to each check explicitly."""

    def __init__(self, root: str | Path, documents: dict[str, bytes], verified: set[str], listed: set[str], present: set[str],
                 ahead: Any = None):
        self.root = Path(root)
        self.ahead = ahead  # the model files, being parsed in a child process
        self.documents = documents
        self.verified = verified
        self.listed = listed
        self.present = present  # regular files found on disk
        self.findings: list[Finding] = []
        self.parsed = ParsedDocuments()
        self._con = None
        self._kept_traces: list[Callable[[], None]] = []  # each model's traces, kept once its returned papers are checked

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

    def gate(self, check: str, paths: tuple[str, ...], upstream: dict[str, bool]) -> bool:
        """``need`` plus upstream checks that must have passed (e.g. fields before blocks)."""
        if not self.need(check, *paths):
            return False
        failed = [name for name, ok in upstream.items() if not ok]
        if failed:
            self.findings.append(Finding(paths[-1], None, Category.NOT_EVALUATED, f"{check} not checked: {', '.join(failed)} is invalid"))
            return False
        return True

    def parse(self, rel: str, parser: Callable[[str, bytes], tuple]) -> tuple[Any, bool]:
        """Parse a verified document from the bytes that were hashed: ``(value, no findings)``."""
        value, findings = parser(rel, self.documents[rel])
        for f in findings:  # schema problems inside a verified file are invariant failures
            self.findings.append(Finding(f.path, f.line, Category.INVARIANT, f.detail, kind=f.kind))
        return value, not findings

    @property
    def con(self):
        if self._con is None:
            import duckdb

            self._con = duckdb.connect()
            self._con.execute("SET threads TO 2")
        return self._con

    def disk_path(self, rel: str) -> str:
        return str(self.root / rel)

    # -------------------------------------------------------------- run
    def run(self) -> InvariantReport:
        for rel in REQUIRED:
            # A required file that exists but is unlisted (or listed on a malformed line) is
            # already an UNLISTED finding; only a file that is nowhere is missing here.
            if rel not in self.listed and rel not in self.present:
                self.add(rel, "required file is not in the archive")
        out = self.parsed
        out.info = self.document("ARCHIVE.json schema", ARCHIVE_JSON, parse.parse_archive_json)
        out.origins = self.document("origins", ORIGINS_JSON, parse.parse_origins)
        out.ledger = self.document("parameter ledger", LEDGER_JSON, parse.parse_ledger)
        fields = out.fields = self.check_fields() if self.need("fields", FIELDS_JSONL) else None
        fields_ok = {FIELDS_JSONL: fields is not None}
        if self.gate("codebooks", (FIELDS_JSONL, CODEBOOKS_JSONL), fields_ok):
            out.codebooks = self.check_codebooks(fields)
        if self.gate("dependency blocks", (FIELDS_JSONL, BLOCKS_JSONL), fields_ok):
            out.blocks = self.check_blocks(fields)
        worker = LedgerWorker(self, threaded=THREADED)  # the DuckDB checks, beside the model files' checks
        try:
            ledger = worker.submit(lambda sub: sub.check_ledger(fields, fields_ok))
            self.check_models(fields, out.origins, out.ledger, ledger, worker)
        finally:
            worker.finish()
        for keep in self._kept_traces:  # in model order, as each model's check would have kept it
            keep()
        if self._con is not None:
            self._con.close()
        return InvariantReport(self.findings, out)

    def check_ledger(self, fields: list[Field] | None, fields_ok: dict[str, bool]) -> bool:
        """The papers table, the membership ledger and the Search manifests rebuilt from it; True when
        the ledger is sound (the returned-papers check reads it then)."""
        out = self.parsed
        papers_ok = self.need("papers table", PAPERS_PARQUET) and self.check_papers()
        ledger_ok = self.gate(
            "membership ledger", (PAPERS_PARQUET, FIELDS_JSONL, ASSIGNMENTS_PARQUET), {PAPERS_PARQUET: papers_ok, **fields_ok}
        ) and self.check_assignments(fields)
        for regime, rel in MANIFEST_JSONL.items():
            upstream = {ASSIGNMENTS_PARQUET: ledger_ok, ORIGINS_JSON: out.origins is not None}
            if self.gate(f"{regime} search manifest", (ASSIGNMENTS_PARQUET, ORIGINS_JSON, rel), upstream):
                entries = self.check_manifest(regime, rel, fields, out.origins)
                if entries is not None:
                    out.manifests[regime] = entries
        return ledger_ok

    def document(self, check: str, rel: str, parser: Callable[[str, bytes], tuple]) -> Any:
        """A whole-file document, or None if it did not verify or parse."""
        if not self.need(check, rel):
            return None
        value, ok = self.parse(rel, parser)
        return value if ok else None

    # -------------------------------------------------------------- benchmark documents
    def check_fields(self) -> list[Field] | None:
        """The fields, or None if fields.jsonl breaks a rule (later checks then do not run)."""
        fields, ok = self.parse(FIELDS_JSONL, parse.parse_fields)
        counts = Counter(f.field_id for f in fields)
        for fid, n in sorted(counts.items()):
            if n > 1:
                self.add(FIELDS_JSONL, f"field {fid!r} appears {n} times")
                ok = False
        if not fields:
            self.add(FIELDS_JSONL, "no fields")
            ok = False
        return fields if ok else None

    def check_codebooks(self, fields: list[Field]) -> dict[str, tuple[Direction, ...]] | None:
        books, ok = self.parse(CODEBOOKS_JSONL, parse.parse_codebooks)
        known = {f.field_id for f in fields}
        named = set(books)
        if not ok:  # a malformed codebook line is its own finding; do not also call its field uncovered
            named |= _field_ids_named(self.documents[CODEBOOKS_JSONL])
        problems = len(self.findings)
        for fid in sorted(known - named):
            self.add(CODEBOOKS_JSONL, f"field {fid!r} has no codebook")
        for fid in sorted(set(books) - known):
            self.add(CODEBOOKS_JSONL, f"codebook for unknown field {fid!r}")
        return books if ok and len(self.findings) == problems else None

    def check_blocks(self, fields: list[Field]) -> list[Block] | None:
        blocks, ok = self.parse(BLOCKS_JSONL, parse.parse_blocks)
        problems = len(self.findings)
        by_field = {f.field_id: f for f in fields}
        owner: dict[str, list[str]] = defaultdict(list)
        for fid, n in Counter(b.block_id for b in blocks).items():
            if n > 1:
                self.add(BLOCKS_JSONL, f"block {fid!r} appears {n} times")
        for block in blocks:
            for fid in block.fields:
                owner[fid].append(block.block_id)
                field_ = by_field.get(fid)
                if field_ is None:
                    self.add(BLOCKS_JSONL, f"block {block.block_id!r} lists unknown field {fid!r}")
                    continue
                if field_.split != block.split:
                    self.add(BLOCKS_JSONL, f"field {fid!r} is {field_.split} but its block {block.block_id!r} is {block.split}")
                if field_.block_id != block.block_id:
                    self.add(BLOCKS_JSONL, f"field {fid!r} names block {field_.block_id!r} but is listed in {block.block_id!r}")
        for fid in sorted(by_field):
            if len(owner.get(fid, [])) == 0:
                self.add(BLOCKS_JSONL, f"field {fid!r} is in no block")
            elif len(owner[fid]) > 1:
                self.add(BLOCKS_JSONL, f"field {fid!r} is in {len(owner[fid])} blocks: {', '.join(sorted(owner[fid]))}")
        return blocks if ok and len(self.findings) == problems else None

    # -------------------------------------------------------------- parquet tables
    def _columns(self, rel: str, expected: dict[str, str]) -> bool:
        try:
            rows = self.con.execute(DESCRIBE_PARQUET, [self.disk_path(rel)]).fetchall()
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

    def _fetch(self, rel: str, sql: str, params: list | None = None) -> list | None:
        """Rows of a query, or None after an INVARIANT finding when DuckDB cannot
        read the table or its values do not convert (e.g. a date past year 9999)."""
        try:
            return self.con.execute(sql, params or []).fetchall()
        except Exception as exc:  # duckdb.Error, or ValueError/OverflowError converting a value
            self.add(rel, f"cannot be read as the archive's table ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})")
            return None

    def _violations(self, rel: str, sql: str, message: str, params: list | None = None) -> bool:
        rows = self._fetch(rel, sql, params)
        if rows is None:
            return False
        if rows:
            n = rows[0][-1]
            examples = ", ".join(str(r[0]) for r in rows[:_EXAMPLES])
            self.add(rel, f"{message}: {n} row{'s' * (n != 1)} (e.g. {examples})")
            return False
        return True

    def _none_match(self, count_sql: str, params: list) -> bool:
        """True when a rule's counting query finds no row; False when it finds some or cannot run (the
        rule's own query then runs and reports, as it always did)."""
        try:
            return self.con.execute(count_sql, params).fetchone()[0] == 0
        except Exception:  # noqa: BLE001 - the rule's query reports the problem in its own words
            return False

    def check_papers(self) -> bool:
        rel = PAPERS_PARQUET
        if not self._columns(rel, PAPERS_COLUMNS):
            return False
        ok = True
        for message, sql in PAPER_RULES:
            ok &= self._violations(rel, sql, message, [self.disk_path(rel)])
        if ok:
            ok = self._fetch(rel, LOAD_PAPERS, [self.disk_path(rel)]) is not None
        return ok

    def check_assignments(self, fields: list[Field] | None) -> bool:
        rel = ASSIGNMENTS_PARQUET
        if not self._columns(rel, ASSIGNMENTS_COLUMNS):
            return False
        if self._fetch(rel, LOAD_ASSIGNMENTS, [self.disk_path(rel)]) is None:
            return False
        field_ids = [f.field_id for f in fields or ()]
        ok = self._violations(rel, DUPLICATE_ASSIGNMENTS, "(arxiv_id, field_id) is not unique")
        if not self._none_match(ANY_UNKNOWN_FIELD_ASSIGNMENT, [field_ids]):
            ok &= self._violations(rel, UNKNOWN_FIELD_ASSIGNMENTS, "field_id is not a field of fields.jsonl", [field_ids])
        ok &= self._violations(rel, ORPHAN_ASSIGNMENTS, "arxiv_id is not in papers.parquet")
        ok &= self._violations(rel, DATE_MISMATCH_ASSIGNMENTS, "first_submitted differs from the paper's")
        for message, predicate in ASSIGNMENT_RULES:
            ok &= self._violations(rel, ASSIGNMENT_RULE_SQL.format(predicate=predicate), message)
        return ok

    # -------------------------------------------------------------- search manifests
    def check_manifest(self, regime: str, rel: str, fields: list[Field] | None, origins: Origins) -> list[ShardManifest] | None:
        entries, parsed_ok = self.parse(rel, lambda p, d: parse.parse_manifest(p, d, regime))
        problems = len(self.findings)
        window = origins.window_months
        expected = {(f.field_id, o) for f in fields or () for o in origins.origins}
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
            start = shard_start(entry.origin, regime, window)
            if entry.date_to != entry.origin:
                self.add(rel, f"{entry.field_id} {entry.origin}: date_to {entry.date_to} must equal the origin")
            if regime == "fixed" and entry.date_from != start:
                self.add(rel, f"{entry.field_id} {entry.origin}: date_from {entry.date_from} must be {start}")
            if entry.max_date is not None and entry.max_date >= entry.origin:
                self.add(rel, f"{entry.field_id} {entry.origin}: holds a paper dated {entry.max_date}, on or after its origin")
            rows.append(entry)
        if parsed_ok:
            for fid, origin in sorted(expected - set(seen)):
                self.add(rel, f"episode {fid} {origin} has no line")
        if rows:
            self._compare_shards(rel, regime, window, rows)
        return entries if parsed_ok and len(self.findings) == problems else None

    def _compare_shards(self, rel: str, regime: str, window: int, rows: list[ShardManifest]) -> None:
        register_frame(self.con, "episodes_frame", {
            "field_id": ("text", [e.field_id for e in rows]),
            "origin": ("date", [e.origin for e in rows]),
            "date_from": ("date", [shard_start(e.origin, regime, window) or NO_LOWER_BOUND for e in rows]),
        })
        rebuilt = self._fetch(rel, REBUILD_SHARDS)
        unregister_frame(self.con, "episodes_frame")
        if rebuilt is None:
            return
        truth = {(r[0], r[1]): r[2:] for r in rebuilt}
        for entry in rows:
            n, lo, hi, sha = truth[(entry.field_id, entry.origin)]
            label = f"{entry.field_id} {entry.origin}"
            if entry.n_papers != n:
                self.add(rel, f"{label}: n_papers {entry.n_papers} but the ledger has {n}")
            if (entry.min_date, entry.max_date) != (lo, hi):
                self.add(rel, f"{label}: dates {entry.min_date}..{entry.max_date} but the ledger has {lo}..{hi}")
            if entry.ids_sha256 != sha:
                self.add(rel, f"{label}: ids_sha256 does not match the ledger's ids")

    # -------------------------------------------------------------- model folders
    def _model_folders(self) -> dict[str, set[str]]:
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
        return by_model

    def check_models(self, fields: list[Field] | None, origins: Origins | None, ledger: dict | None, ledger_ok: Job,
                     worker: LedgerWorker) -> None:
        # Format 2: a model may enter with model.json and only later-origin files or a commitment.
        committed = {m.group(2) for p in self.listed if (m := _COMMITMENT.match(p))}
        for model_id, names in sorted(self._model_folders().items()):
            folder = f"{MODELS_DIR}/{model_id}"
            if not _MODEL_RE.match(model_id):
                self.add(folder, f"model id {model_id!r} does not match {MODEL_ID_PATTERN}")
            later = {n for n in names if _ORIGIN_FILE.match(f"{folder}/{n}")}  # checked per origin by format2
            for name in sorted(names - set(MODEL_FILES) - later):
                self.add(f"{folder}/{name}", f"unexpected file in a model folder (allowed: {ALLOWED_MODEL_FILES})")
            for name in REQUIRED_MODEL_FILES:
                entered_later = name == PREDICTIONS_JSONL and (later or model_id in committed)
                if name not in names and not entered_later:
                    self.add(f"{folder}/{name}", "required model file is missing")
            self.check_model(model_id, names, fields, origins, ledger, ledger_ok, worker)

    def check_model(
        self, model_id: str, names: set[str], fields: list[Field] | None, origins: Origins | None, ledger: dict | None,
        ledger_ok: Job, worker: LedgerWorker,
    ) -> None:
        out = self.parsed
        rel = model_file(model_id, MODEL_JSON)
        if MODEL_JSON in names and self.need("model metadata", rel):
            info, ok = self.parse(rel, lambda p, d: parse.parse_model_json(p, d, folder=model_id))
            if ok:
                out.models[model_id] = info
        field_ids = [f.field_id for f in fields or ()]
        upstream = {FIELDS_JSONL: fields is not None, ORIGINS_JSON: origins is not None}
        rel = model_file(model_id, PREDICTIONS_JSONL)
        if PREDICTIONS_JSONL in names and self.gate("predictions", (FIELDS_JSONL, ORIGINS_JSON, rel), upstream):
            panel = parse.names_panel(self.documents.get(model_file(model_id, MODEL_JSON)))
            units, ok = self.parse(rel, lambda p, d: parse_model_file(self.ahead, p, d, "predictions", field_ids, origins.origins,
                                                                      not panel))
            if ok:
                out.predictions[model_id] = units
        rel = model_file(model_id, TRACES_JSONL)
        upstream = {**upstream, LEDGER_JSON: ledger is not None}
        if TRACES_JSONL in names and self.gate("traces", (FIELDS_JSONL, LEDGER_JSON, ORIGINS_JSON, rel), upstream):
            max_calls = int(ledger["search"]["max_calls"])
            calls, ok = self.parse(rel, lambda p, d: parse_model_file(self.ahead, p, d, "traces", field_ids, origins.origins, max_calls))
            returned = worker.submit(lambda sub: sub.check_returned(rel, calls, origins) if ledger_ok.value and calls else None)

            def keep() -> None:
                if ok and not returned.findings:
                    out.traces[model_id] = calls

            self._kept_traces.append(keep)

    def check_returned(self, rel: str, calls: list[TraceCall], origins: Origins) -> None:
        """Every returned paper must be in its episode's shard: a member of the field dated before the origin."""
        frame = returned_frame([calls], origins.window_months, with_file=False)
        if frame is None:
            return
        register_frame(self.con, "returned_frame", frame)
        bad = self._fetch(rel, RETURNED_OUTSIDE_SHARD) or []
        unregister_frame(self.con, "returned_frame")
        for line, arxiv_id, when in bad:
            self.findings.append(Finding(rel, line, Category.INVARIANT, returned_detail(arxiv_id, when), kind=ProblemKind.TRACE))


def returned_frame(traced: list[list[TraceCall]], window: int, *, with_file: bool):
    """The columns of the ``returned_frame`` the shard queries join against the ledger, for
    :func:`~rapgen.archive.frames.register_frame`: one row per paper a call returned — (``file``: the
    index in ``traced`` of the call's list,) its ``line``, ``field_id``, ``origin``, the shard's
    ``date_from`` and the ``arxiv_id`` — or None when no call returned a paper."""
    files: list[int] = []
    lines: list[int] = []
    fids: list[str] = []
    days: list[date] = []
    starts: list[date] = []
    ids: list[str] = []
    start_of: dict[tuple[str, date], date] = {}
    for i, calls in enumerate(traced):
        for c in calls:
            returned = c.returned_ids
            if not returned:
                continue
            key = (c.condition, c.origin)
            start = start_of.get(key)
            if start is None:
                start = start_of[key] = condition_shard_start(c.condition, c.origin, window) or NO_LOWER_BOUND
            n = len(returned)
            if with_file:
                files += [i] * n
            lines += [c.line] * n
            fids += [c.field_id] * n
            days += [c.origin] * n
            starts += [start] * n
            ids += returned
    if not ids:
        return None
    columns = {"file": ("int", files)} if with_file else {}
    columns.update(line=("int", lines), field_id=("text", fids), origin=("date", days), date_from=("date", starts),
                   arxiv_id=("text", ids))
    return columns


def returned_detail(arxiv_id: str, when: date | None) -> str:
    """Why a returned paper is outside its episode's shard (``when``: its date, None when not a member)."""
    if when is None:
        return f"returned paper {arxiv_id} is not a member of the field"
    return f"returned paper {arxiv_id} dated {when} lies outside the episode's shard (on or after its origin, or before the window)"


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
    root: str | Path, documents: dict[str, bytes], verified: set[str], listed: set[str], present: set[str] | None = None,
    ahead: Any = None,
) -> InvariantReport:
    """Run every structural check over the verified ``documents`` (path → the bytes
    that were hashed); return all findings (INVARIANT / NOT-EVALUATED) and the
    parsed documents. ``present`` is the set of regular files found on disk; ``ahead``,
    the model files being parsed in a child process (:mod:`rapgen.archive.parse_ahead`)."""
    return _Checker(root, documents, verified, listed, present if present is not None else listed, ahead).run()
