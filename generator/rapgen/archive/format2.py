"""Format 2 and the intervention records, checked inside ``verify_archive``.

After the structural invariants (:mod:`rapgen.archive.invariants`) have
parsed the format-1 documents, :func:`check_format2` runs, on the same
verified bytes:

- every history rule of RELEASES.md ("What ``rapgen verify`` adds") through
  :func:`rapgen.archive.history.load.load_history` (hash chain, what each
  release added, window rows, opened origins' manifests, commitments);
- the files of later origins, ``models/<id>/origins/<origin>/``, each parsed
  against its own origin, with per-origin coverage (A0, A1 and A3 required);
- every model folder's intervention records through
  :func:`rapgen.archive.intervention_folder.check_model_interventions`.

Whether a recorded Search call is malformed is the Search validator's call;
this stage may not import ``rapgen.search``, so the caller passes it
(``validate_call``). Without one, :func:`recorded_call_malformed` applies the
archive's own reading of SEARCH.md's malformed calls to the recorded arguments.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date
from itertools import chain, filterfalse
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from rapgen.archive import parse
from rapgen.io import Background
from rapgen.archive.evidence import PaperText, WindowCounts, call_arguments
from rapgen.archive.frames import register_frame
from rapgen.archive.history.check import HistoryInput, first_release
from rapgen.archive.history.load import LoadedHistory, load_history
from rapgen.archive.history.prefetch import LedgerPrefetch
from rapgen.archive.history.records import history_origins
from rapgen.archive.intervention_folder import ArchiveFacts, InterventionRecords, check_model_interventions
from rapgen.archive.interventions import ModelExtensions
from rapgen.archive.invariants import ParsedDocuments, returned_detail, returned_frame
from rapgen.archive.parse_ahead import parse_model_file
from rapgen.archive.layout import (
    ASSIGNMENTS_PARQUET, COMMITMENT_PATTERN, INTERVENTION_MODEL_FILES, MODEL_JSON, ORACLE_JSONL, ORIGIN_FILE_PATTERN,
    PAPERS_PARQUET, PREDICTIONS_JSONL, REPLAYS_JSONL, TRACES_JSONL, WINDOW_FILE_PATTERN, model_file
)
from rapgen.archive.records import FORECAST_CONDITIONS, SLOTS, Category, Finding, ProblemKind, TraceCall, Unit

_ORIGIN_FILE = re.compile(ORIGIN_FILE_PATTERN)
_WINDOW_FILE = re.compile(WINDOW_FILE_PATTERN)
_COMMITMENT = re.compile(COMMITMENT_PATTERN)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
SORTS = ("relevance", "date")  # SEARCH.md: the two sorts a call may ask for
CallValidator = Callable[[dict], object]  # raises on a malformed call (rapgen.search.validate_call)


@dataclass
class Format2Result:
    """Findings, the history, every model's units and traces across its files, and its intervention records."""

    findings: list[Finding] = field(default_factory=list)
    history: LoadedHistory | None = None
    predictions: dict[str, list[Unit]] = field(default_factory=dict)
    traces: dict[str, list[TraceCall]] = field(default_factory=dict)
    interventions: dict[str, InterventionRecords] = field(default_factory=dict)
    files: dict[str, list] = field(default_factory=dict)  # a later origin's file -> its units or calls


def recorded_call_malformed(call: TraceCall) -> bool:
    """The archive's rule for a recorded call's arguments (SEARCH.md's malformed calls):
    a sort other than relevance or date, a bound that is not a strict ``YYYY-MM-DD``
    date or null, ``date_from >= date_to``, or an empty query or one that is not text
    (a lone surrogate)."""
    if call.sort not in SORTS or not call.query.strip() or _LONE_SURROGATE.search(call.query):
        return True
    bounds = []
    for value in (call.date_from, call.date_to):
        if value is None:
            bounds.append(None)
            continue
        if not _DATE.match(value):
            return True
        try:
            bounds.append(date.fromisoformat(value))
        except ValueError:
            return True
    return bounds[0] is not None and bounds[1] is not None and bounds[0] >= bounds[1]


def malformed_by(validate_call: CallValidator | None) -> Callable[[TraceCall], bool]:
    """``call -> True if malformed``, from a validator that raises on a malformed call."""
    if validate_call is None:
        return recorded_call_malformed

    def malformed(call: TraceCall) -> bool:
        try:
            validate_call(call_arguments(call))
        except Exception:  # noqa: BLE001 - the validator's one way of saying "malformed"
            return True
        return False

    return malformed


def check_format2(
    root: str | Path, documents: Mapping[str, bytes], verified: set[str], listed: Mapping[str, str],
    parsed: ParsedDocuments, validate_call: CallValidator | None = None, prefetch: LedgerPrefetch | None = None,
    ahead: Any = None,
) -> Format2Result:
    """The history, later-origin and intervention checks on the verified bytes (``prefetch``: the union
    ledger, being built beside the format-1 checks; ``ahead``: the model files, being parsed in a child process)."""
    root = Path(root)
    out = Format2Result()
    field_ids = [f.field_id for f in parsed.fields] if parsed.fields is not None else None
    read = _ReadAhead(root, listed, verified, parsed, documents)
    history = out.history = load_history(root, verified, sums=listed, documents=documents, origins=parsed.origins,
                                         field_ids=field_ids, prefetch=prefetch)
    out.findings += history.findings
    out.predictions = {m: list(u) for m, u in parsed.predictions.items()}
    out.traces = {m: list(t) for m, t in parsed.traces.items()}
    _origin_files(root, history, documents, verified, parsed, out, ahead)
    _interventions(root, history, documents, verified, parsed, out, malformed_by(validate_call), ahead, read)
    return out


_RETURNED_IDS = re.compile(rb'"returned_ids"\s*:\s*\[([^\]]*)\]')
_QUOTED = re.compile(rb'"([^"\\]*)"')


def _quoted_ids(data: bytes) -> list[str]:
    """The plain quoted strings in the ``returned_ids`` arrays of a traces file's bytes, unparsed:
    what a read ahead of the papers asks for (the parsed calls decide which are returned)."""
    return [m.decode("utf-8", "replace") for arr in _RETURNED_IDS.findall(data) for m in _QUOTED.findall(arr)]


class _ReadAhead:
    """The paper text and canonical counts the intervention checks will read, started in threads before the
    history and later-origin checks (DuckDB's reads release the GIL): for every model with a replays file,
    the papers its main traces returned and those its later-origin traces' bytes name (not parsed yet),
    and the counts when a model has an oracle file. Only a head start: each is read from the files the
    checks would read, the checks read whatever else they ask for, and when they find the facts they need
    invalid nothing is taken (a read that failed then raises nowhere)."""

    def __init__(self, root: Path, listed: Mapping[str, str], verified: set[str], parsed: ParsedDocuments,
                 documents: Mapping[str, bytes]):
        papers, rows = _ledger_files(listed, verified)
        self.papers, self.counts = _LazyPapers(root, papers), _Counts(root, rows)
        if parsed.fields is None or parsed.blocks is None or parsed.ledger is None or parsed.origins is None:
            return
        folders = _intervention_folders(listed)
        later: dict[str, list[str]] = defaultdict(list)
        for path in listed:
            if (m := _ORIGIN_FILE.match(path)) and m.group(3) == "traces" and path in verified and path in documents:
                later[m.group(1)].append(path)
        for model_id, names in folders.items():
            if REPLAYS_JSONL in names:
                self.papers.want(returned_ids(parsed.traces.get(model_id, ())))
                for path in later.get(model_id, ()):  # not parsed yet: the ids its lines name (a superset is harmless)
                    self.papers.want(_quoted_ids(documents[path]))
        self.papers.start()
        if any(ORACLE_JSONL in names for names in folders.values()):
            self.counts.start()


# ------------------------------------------------------------------ later origins
def known_origins(history: LoadedHistory, parsed: ParsedDocuments) -> tuple[date, ...]:
    """origins.json's origins and every origin a release resolved or opened, ascending."""
    return history_origins(parsed.origins.origins if parsed.origins else (), history.input.records.values())


def scored_origins(history: LoadedHistory, parsed: ParsedDocuments) -> tuple[date, ...]:
    """The origins unreleased intervention records cover: the latest release's resolved origins (an
    open origin has no outcome to score yet), origins.json's for a format-1 archive."""
    latest = history.latest
    if latest is None:
        return tuple(parsed.origins.origins if parsed.origins else ())
    return tuple(sorted(latest.resolved_origins))


def origins_when_added(inp: HistoryInput, paths: Mapping[str, str]) -> dict[str, tuple[date, ...]]:
    """name -> the resolved origins of the release that first listed ``paths[name]``, for every
    released path: a record is judged against the release that added it, so a later roll (which
    resolves one more origin) never invalidates it. Unreleased paths are left out."""
    out = {}
    for name, path in paths.items():
        k = first_release(inp, path)
        if k is not None and k in inp.records:
            out[name] = tuple(sorted(inp.records[k].resolved_origins))
    return out


def returned_ids(calls: Iterable[TraceCall]) -> Iterator[str]:
    """Every id the calls returned, in order (iterated in C: a full archive's calls return ~300,000)."""
    return chain.from_iterable(map(_RETURNED, calls))


_RETURNED = attrgetter("returned_ids")


def _has_panel(documents: Mapping[str, bytes], model_id: str) -> bool:
    return parse.names_panel(documents.get(model_file(model_id, MODEL_JSON)))


def _origin_files(root: Path, history: LoadedHistory, documents: Mapping[str, bytes], verified: set[str],
                  parsed: ParsedDocuments, out: Format2Result, ahead: Any = None) -> None:
    """Predictions and traces of a later origin, each parsed against that origin alone; every
    paper a later-origin trace returned must be in its episode's shard of the full ledger."""
    paths = sorted(p for p in history.input.root if _ORIGIN_FILE.match(p))
    if not paths:
        return
    traced: list[tuple[str, str, list[TraceCall]]] = []  # (path, "release k: ", calls) of each parsed traces file
    known = set(known_origins(history, parsed))
    base = set(parsed.origins.origins if parsed.origins else ())
    for path in paths:
        model_id, origin_text, kind = _ORIGIN_FILE.match(path).groups()
        origin = date.fromisoformat(origin_text)
        k = first_release(history.input, path)
        tag = f"release {k}: " if k else ""
        if not history.is_history:
            out.findings.append(Finding(path, None, Category.INVARIANT, "later-origin files need a format-2 archive "
                                        "(run 'rapgen release start')"))
            continue
        if origin not in known or origin in base:
            why = "is one of origins.json's (its units belong in predictions.jsonl)" if origin in base else "is not an origin of this history"
            out.findings.append(Finding(path, None, Category.INVARIANT, f"{tag}{origin} {why}"))
            continue
        if model_file(model_id, MODEL_JSON) not in history.input.root:
            out.findings.append(Finding(path, None, Category.INVARIANT, f"{tag}model {model_id} has no model.json"))
        if path not in verified or parsed.fields is None or parsed.ledger is None:
            continue
        found = _parse_origin_file(path, documents[path], kind, origin, model_id, documents, parsed, out, traced, tag, ahead)
        out.findings.extend(Finding(f.path, f.line, Category.INVARIANT, tag + f.detail, kind=f.kind) for f in found)
    out.findings += _returned_outside_shards(root, history, verified, parsed, traced)


# A later-origin trace's returned papers against the full ledger (benchmark/ and every window):
# each must be a member of the call's field dated in [date_from, origin), as for traces.jsonl.
RETURNED_OUTSIDE_LEDGER_SHARD = """
    SELECT r.file, r.line, r.arxiv_id, a.first_submitted
    FROM returned_frame r
    LEFT JOIN assignments a ON a.field_id = r.field_id AND a.arxiv_id = r.arxiv_id
    WHERE a.arxiv_id IS NULL OR a.first_submitted >= r.origin OR a.first_submitted < r.date_from
    ORDER BY r.file, r.line, r.arxiv_id
"""


def _returned_outside_shards(root: Path, history: LoadedHistory, verified: set[str], parsed: ParsedDocuments,
                             traced: list[tuple[str, str, list[TraceCall]]]) -> list[Finding]:
    if not any(c.returned_ids for _, _, calls in traced for c in calls):
        return []
    rows = _ledger_files(history.input.root, verified)[1]
    if ASSIGNMENTS_PARQUET not in verified:
        return [Finding(path, None, Category.NOT_EVALUATED, f"{tag}returned papers not checked: {ASSIGNMENTS_PARQUET} did not verify")
                for path, tag, _ in traced]
    import duckdb

    con = duckdb.connect()
    try:
        con.read_parquet([str(root / p) for p in rows]).create_view("assignments")
        register_frame(con, "returned_frame", returned_frame([calls for _, _, calls in traced], parsed.origins.window_months,
                                                             with_file=True))
        bad = con.execute(RETURNED_OUTSIDE_LEDGER_SHARD).fetchall()
    finally:
        con.close()
    out = []
    for i, line, arxiv_id, when in bad:
        path, tag, _ = traced[i]
        out.append(Finding(path, line, Category.INVARIANT, tag + returned_detail(arxiv_id, when), kind=ProblemKind.TRACE))
    return out


def _parse_origin_file(path: str, data: bytes, kind: str, origin: date, model_id: str, documents: Mapping[str, bytes],
                       parsed: ParsedDocuments, out: Format2Result, traced: list, tag: str,
                       ahead: Any = None) -> list[Finding]:
    field_ids = [f.field_id for f in parsed.fields or ()]
    if kind == "traces":
        calls, found = parse_model_file(ahead, path, data, "traces", field_ids, [origin], int(parsed.ledger["search"]["max_calls"]))
        if parsed.origins is not None:
            traced.append((path, tag, calls))
        if not found:
            out.traces.setdefault(model_id, []).extend(calls)
            out.files[path] = calls
        return found
    panel = _has_panel(documents, model_id)
    units, found = parse_model_file(ahead, path, data, "predictions", field_ids, [origin], not panel)
    claimed = {u.condition for u in units}
    if not panel:
        found += [Finding(path, None, Category.MALFORMED, f"origin {origin} lacks condition {c}: every origin a model "
                          "claims covers A0, A1 and A3", kind=ProblemKind.COVERAGE)
                  for c in FORECAST_CONDITIONS if units and c not in claimed]
    if not found:
        mine = out.predictions.setdefault(model_id, [])
        have = {(u.field_id, u.origin, u.condition) for u in mine}
        for unit in units:
            if (unit.field_id, unit.origin, unit.condition) in have:
                found.append(Finding(path, unit.line, Category.MALFORMED, f"unit {unit.field_id} {unit.origin} {unit.condition} "
                                     "is also in another prediction file (a unit appears once)", kind=ProblemKind.DUPLICATE_UNIT))
        if not found:
            mine.extend(units)
            out.files[path] = units
    return found


# ------------------------------------------------------------------ interventions
def _interventions(root: Path, history: LoadedHistory, documents: Mapping[str, bytes], verified: set[str],
                   parsed: ParsedDocuments, out: Format2Result, malformed: Callable[[TraceCall], bool],
                   ahead: Any = None, read: _ReadAhead | None = None) -> None:
    """Every model whose model.json parsed: its INTERVENTIONS.md keys, and its intervention files if any
    (``read``: their paper text and counts, being read since the history checks began)."""
    folders = _intervention_folders(history.input.root)
    if parsed.fields is None or parsed.blocks is None or parsed.ledger is None or parsed.origins is None:
        for model_id in sorted(folders):
            out.findings.append(Finding(f"archive/models/{model_id}", None, Category.NOT_EVALUATED,
                                        "intervention records not checked: fields, blocks, ledger or origins is invalid"))
        return
    facts = intervention_facts(root, _ledger_files(history.input.root, verified), parsed, scored_origins(history, parsed),
                               malformed, lambda mid: out.predictions.get(mid, []))
    facts = replace(facts, ahead=ahead, **({"papers": read.papers, "counts": read.counts} if read is not None else {}))
    for model_id, names in folders.items():  # every readout's papers read in one pass, not one per model
        if REPLAYS_JSONL in names:
            facts.papers.want(returned_ids(out.traces.get(model_id, ())))
    for model_id in sorted(set(parsed.models) | set(folders)):
        folder, names = f"archive/models/{model_id}", folders.get(model_id, [])
        bad = [p for p in (model_file(model_id, n) for n in (MODEL_JSON, *names)) if p not in verified]
        if bad or model_id not in parsed.models or _unparsed_records(model_id, history.input.root, parsed):
            if names:  # a folder without intervention files has nothing more to report here
                why = f"{', '.join(bad)} did not verify" if bad else "model.json, predictions or traces is invalid"
                out.findings.append(Finding(folder, None, Category.NOT_EVALUATED, f"intervention records not checked: {why}"))
            continue
        files = {n: documents[model_file(model_id, n)] for n in (MODEL_JSON, *names)}
        records, found = folder_interventions(history.input, facts, model_id, files, out.predictions.get(model_id, []),
                                              out.traces.get(model_id, []), parsed.models[model_id])
        out.findings.extend(found)
        if records is not None and (names or records.extensions != ModelExtensions()):
            out.interventions[model_id] = records


def intervention_facts(root: Path, ledger_files: tuple[list[str], list[str]], parsed, origins: Sequence[date],
                       malformed: Callable[[TraceCall], bool], units_of: Callable[[str], Sequence[Unit]]) -> ArchiveFacts:
    """What the intervention checks read of an archive (``parsed``: its fields, blocks, origins, ledger and
    models), with paper text and canonical counts from ``ledger_files`` (papers, assignments), read on first use."""
    return ArchiveFacts(
        parsed.fields, parsed.blocks, tuple(origins), parsed.origins.window_months, int(parsed.ledger["search"]["max_calls"]),
        sorted(parsed.models), _LazyPapers(root, ledger_files[0]), _Counts(root, ledger_files[1]), malformed, units_of,
    )


def folder_interventions(inp: HistoryInput, facts: ArchiveFacts, model_id: str, files: Mapping[str, bytes],
                         units: Sequence[Unit], traces: Sequence[TraceCall], model) -> tuple[InterventionRecords | None, list[Finding]]:
    """One model folder's intervention records and findings, each file judged against the origins of
    the release that added it; the paper text its readouts' evidence needs is read in one pass."""
    if REPLAYS_JSONL in files:
        facts.papers.want(returned_ids(traces))
    added = origins_when_added(inp, {n: model_file(model_id, n) for n in files})
    return check_model_interventions(f"archive/models/{model_id}", files, units, traces, replace(facts, origins_of=added), model)


def _intervention_folders(root_lines: Mapping[str, str]) -> dict[str, list[str]]:
    """Models with an intervention file: model id -> its intervention file names."""
    out: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root_lines):
        parts = path.split("/")
        if len(parts) == 4 and parts[:2] == ["archive", "models"] and parts[3] in INTERVENTION_MODEL_FILES:
            out[parts[2]].append(parts[3])
    return dict(out)


def _unparsed_records(model_id: str, root_lines: Mapping[str, str], parsed: ParsedDocuments) -> bool:
    return (model_file(model_id, PREDICTIONS_JSONL) in root_lines and model_id not in parsed.predictions) or (
        model_file(model_id, TRACES_JSONL) in root_lines and model_id not in parsed.traces)


def _ledger_files(root_lines: Mapping[str, str], verified: set[str]) -> tuple[list[str], list[str]]:
    """(papers files, assignments files): benchmark/ first, then each verified window by start."""
    papers, rows = [PAPERS_PARQUET], [ASSIGNMENTS_PARQUET]
    for path in sorted(root_lines):
        m = _WINDOW_FILE.match(path)
        if m and path in verified:
            (papers if m.group(2) == "papers" else rows).append(path)
    return papers, rows


# Each wanted paper's canonical evidence JSON (evidence.paper_json), written by DuckDB where that is plain
# concatenation: all four members text with nothing JSON escapes (", \ and U+0000-U+001F) and an ISO date
# of four-digit year. Any other paper's JSON is NULL here and is made in Python from its text, as before.
PAPER_JSON = r"""
    SELECT p.arxiv_id,
           CASE WHEN typeof(p.arxiv_id) = 'VARCHAR' AND typeof(p.title) = 'VARCHAR' AND typeof(p.abstract) = 'VARCHAR'
                 AND typeof(p.first_submitted) = 'DATE' AND year(p.first_submitted) BETWEEN 1000 AND 9999
                 AND NOT regexp_matches(p.arxiv_id || p.title || p.abstract, '[\x00-\x1f"\\]')
                THEN encode('{"arxiv_id":"' || p.arxiv_id || '","first_submitted":"' || CAST(p.first_submitted AS VARCHAR)
                            || '","title":"' || p.title || '","abstract":"' || p.abstract || '"}') END
    FROM papers p JOIN wanted USING (arxiv_id)
"""
PAPER_TEXT = "SELECT p.arxiv_id, p.first_submitted, p.title, p.abstract FROM papers p JOIN wanted USING (arxiv_id)"


class _LazyPapers(Mapping[str, PaperText]):
    """Paper text for the ids asked for with :meth:`want`, read from the union of papers files.

    A paper is read as its canonical evidence JSON (``evidence_json``, what the models' hashers
    join) where DuckDB can write it, and as text otherwise; its :class:`PaperText` is decoded from
    that JSON when asked for (the JSON of four strings reads back as exactly those strings)."""

    def __init__(self, root: Path, files: list[str]):
        self.root, self.files = root, files
        self._text: dict[str, PaperText] = {}
        self._found: dict[str, None] = {}  # every id read, as JSON or as text, in the order read
        self._wanted: set[str] = set()
        self._pending: set[str] = set()  # the ids being read by ``_ahead``
        self._ahead: Background | None = None
        self.evidence_json: dict[str, bytes] = {}  # each paper's canonical evidence JSON, shared by the models' hashers

    def want(self, ids) -> None:
        self._wanted.update(filterfalse(self._pending.__contains__, filterfalse(self._found.__contains__, ids)))

    def start(self) -> None:
        """Read the papers wanted so far in a thread; the next :meth:`_load` takes them."""
        if self._wanted and self._ahead is None:
            ids, self._pending, self._wanted = sorted(self._wanted), self._wanted, set()
            self._ahead = Background(lambda: self._query(ids), name="rapgen-read-ahead")

    def _load(self) -> None:
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            self._merge(*ahead.result())
            self._pending = set()
        if self._wanted:
            ids = sorted(self._wanted)
            self._wanted.clear()
            self._merge(*self._query(ids))

    def _query(self, ids: list[str]) -> tuple[list[tuple], list[tuple]]:
        """(arxiv_id, JSON or None) of each of ``ids`` found, and the text rows of those without JSON."""
        import duckdb

        con = duckdb.connect()
        try:
            con.read_parquet([str(self.root / p) for p in self.files]).create_view("papers")
            register_frame(con, "wanted", {"arxiv_id": ("text", ids)})
            rows = con.execute(PAPER_JSON).fetchall()
            plain = [a for a, data in rows if data is None]
            if plain:
                register_frame(con, "wanted", {"arxiv_id": ("text", sorted(set(plain)))})
                plain = con.execute(PAPER_TEXT).fetchall()
        finally:
            con.close()
        return rows, plain

    def _merge(self, rows: list[tuple], plain: list[tuple]) -> None:
        self.evidence_json.update(filter(itemgetter(1), rows))  # those with JSON (never empty bytes)
        self._found.update(dict.fromkeys(map(itemgetter(0), rows)))
        iso: dict[date, str] = {}  # papers share their dates: each written once
        self._text.update((a, PaperText(iso[d] if d in iso else iso.setdefault(d, d.isoformat()), t, ab))
                          for a, d, t, ab in plain)

    def __getitem__(self, key: str) -> PaperText:
        if key not in self._found:
            if key not in self._pending:
                self._wanted.add(key)
            self._load()
        out = self._text.get(key)
        if out is None:
            data = self.evidence_json.get(key) if key in self._found else None
            if data is None:
                raise KeyError(key)
            obj = json.loads(data)
            out = self._text[key] = PaperText(obj["first_submitted"], obj["title"], obj["abstract"])
        return out

    def __iter__(self):
        self._load()
        return iter(self._found)

    def __len__(self) -> int:
        self._load()
        return len(self._found)


class _Counts:
    """``(field, date_from, date_to) -> canonical counts`` over the union ledger, read on first use."""

    def __init__(self, root: Path, files: list[str]):
        self.root, self.files = root, files
        self._counts: WindowCounts | None = None
        self._ahead: Background | None = None
        self.block_hashes: dict[tuple, str] = {}  # (field, *windows) -> H(oracle block), shared by the models' oracle checks

    def start(self) -> None:
        """Read the ledger's counts in a thread; the first call takes them."""
        if self._counts is None and self._ahead is None:
            self._ahead = Background(self._read, name="rapgen-read-ahead")

    def __call__(self, field_id: str, date_from: date, date_to: date) -> list[int]:
        if self._counts is None:
            ahead, self._ahead = self._ahead, None
            self._counts = ahead.result() if ahead is not None else self._read()
        return self._counts(field_id, date_from, date_to)

    def _read(self) -> WindowCounts:
        import duckdb
        import numpy as np

        slots = ", ".join(f"'{s}'" for s in SLOTS)
        con = duckdb.connect()
        try:
            rel = con.read_parquet([str(self.root / p) for p in self.files]).select(
                f"field_id, CAST(first_submitted - DATE '1970-01-01' AS BIGINT) AS day, "
                f'coalesce(list_position([{slots}], "primary"), 0) - 1 AS slot')
            cols = rel.order("field_id, day").fetchnumpy()  # grouped and sorted by DuckDB
            if any(isinstance(c, np.ma.MaskedArray) for c in cols.values()):  # a missing value: as before
                cols = rel.fetchnumpy()
                return WindowCounts(cols["field_id"], cols["day"], cols["slot"])
            return WindowCounts.from_sorted(cols["field_id"], cols["day"], cols["slot"])
        finally:
            con.close()


def commitment_models(listed) -> dict[str, set[str]]:
    """Model id -> the origins it holds a commitment for (``commitments/<origin>/<model_id>.json``)."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in listed:
        m = _COMMITMENT.match(path)
        if m:
            out[m.group(2)].add(m.group(1))
    return dict(out)
