"""What a readout or an oracle unit is shown, from the archive and the model's folder.

- :func:`read_model_folder` — a model folder's predictions and traces, parsed by
  the archive's own parsers (a bad line is one error naming file and line);
  across a history also each resolved later origin's ``origins/<origin>/``
  files (intervention records cover the resolved origins).
- :func:`readout_jobs` — every (pair, source, readout, budget) of the folder,
  with its kept calls: n for ``all``, k = min(n_A3, n_A4) for ``matched``.
- :class:`EvidenceBuilder` — the evidence list of a job
  (:func:`rapgen.archive.evidence.build_evidence` over ``papers.parquet``,
  malformed calls judged by :func:`rapgen.search.validate_call`).
- :class:`OracleBlocks` — the exact-history block of an O unit
  (:func:`rapgen.archive.evidence.build_oracle_block` over SCORING §1's
  canonical counts of ``assignments.parquet``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rapgen.archive import (
    ORIGINS_SUBDIR, PREDICTIONS_JSONL, TRACES_JSONL, Archive, TraceCall, ledger_rows, Unit, parse_predictions, parse_traces,
    PaperText, build_evidence, build_oracle_block, canonical_counts, oracle_windows, calls_by_unit, replay_pairs,
    BUDGETS, READOUTS, SOURCE_CONDITIONS,
)
from rapgen.errors import SubmissionError, UsageProblem
from rapgen.search import call_is_malformed


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageProblem(f"{path}: unreadable ({exc.strerror})") from None


def read_model_folder(archive: Archive, folder: Path) -> tuple[list[Unit], list[TraceCall]]:
    """The folder's predictions and traces; SubmissionError naming the first bad line."""
    max_calls = int(archive.ledger["search"]["max_calls"])
    base = archive.origins.origins
    sources = [(folder, base)] + [(folder / ORIGINS_SUBDIR / o.isoformat(), (o,)) for o in archive.resolved_origins if o not in base]
    units: list[Unit] = []
    traces: list[TraceCall] = []
    findings = []
    for where, origins in sources:
        data = _read(where / PREDICTIONS_JSONL)
        if data is None:
            continue
        found, problems = parse_predictions(str(where / PREDICTIONS_JSONL), data, archive.field_map, origins)
        units, findings = [*units, *found], [*findings, *problems]
        traces_data = _read(where / TRACES_JSONL)
        if traces_data is not None:
            calls, more = parse_traces(str(where / TRACES_JSONL), traces_data, archive.field_map, origins, max_calls)
            traces, findings = [*traces, *calls], [*findings, *more]
    if not units and not findings:
        raise UsageProblem(f"{folder / PREDICTIONS_JSONL}: missing; a readout needs the model's own A3 and A4 units")
    findings = [f for f in findings if f.line]  # line problems; coverage is submit check's (a trial run covers part)
    if findings:
        first = findings[0]
        where = first.path + (f" line {first.line}" if first.line else "")
        raise SubmissionError(f"{where}: {first.detail}; fix the folder first (rapgen submit check)")
    return units, traces


@dataclass(frozen=True)
class ReadoutJob:
    field_id: str
    origin: date
    source_condition: str
    readout: str
    budget: str
    calls: tuple[TraceCall, ...]  # the kept calls, call_index order

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.field_id, self.origin.isoformat(), self.source_condition, self.readout, self.budget)


def readout_jobs(
    units: list[Unit], traces: list[TraceCall], *, fields: set[str] | None = None, origins: set[str] | None = None,
    readouts: tuple[str, ...] = READOUTS, sources: tuple[str, ...] = SOURCE_CONDITIONS, budgets: tuple[str, ...] = BUDGETS,
) -> list[ReadoutJob]:
    """Every selected readout of every pair (an episode with both an A3 and an A4 unit, valid or not)."""
    calls = calls_by_unit(traces)
    jobs = []
    for fid, origin in sorted(replay_pairs(units)):
        if (fields and fid not in fields) or (origins and origin.isoformat() not in origins):
            continue
        own = {c: calls.get((fid, origin, c), []) for c in SOURCE_CONDITIONS}
        k = min(len(v) for v in own.values())
        for source in SOURCE_CONDITIONS:
            if source not in sources:
                continue
            for readout in READOUTS:
                if readout not in readouts:
                    continue
                for budget in BUDGETS:
                    if budget in budgets:
                        kept = own[source] if budget == "all" else own[source][:k]
                        jobs.append(ReadoutJob(fid, origin, source, readout, budget, tuple(kept)))
    return jobs


class EvidenceBuilder:
    """Evidence lists over one archive's papers.parquet (paper text read once, for the ids needed)."""

    def __init__(self, archive: Archive):
        self.archive = archive
        self.papers: dict[str, PaperText] = {}

    def _load(self, ids: set[str]) -> None:
        missing = sorted(ids - set(self.papers))
        if not missing:
            return
        rows = ledger_rows(self.archive, "SELECT arxiv_id, first_submitted, title, abstract FROM papers WHERE list_contains(?, arxiv_id)",
                           [missing])
        for pid, day, title, abstract in rows:
            self.papers[pid] = PaperText(day.isoformat(), title, abstract)

    def evidence(self, calls: tuple[TraceCall, ...] | list[TraceCall]) -> list[dict]:
        self._load({pid for c in calls for pid in c.returned_ids})
        try:
            return build_evidence(calls, self.papers, call_is_malformed)
        except KeyError as exc:
            raise SubmissionError(f"traces.jsonl returns paper {exc.args[0]!r}, which is not in papers.parquet") from None


class OracleBlocks:
    """Exact-history blocks over one archive's assignments.parquet (canonical counts, SCORING §1)."""

    def __init__(self, archive: Archive):
        self.archive = archive
        self.window_months = archive.origins.window_months
        self._rows: dict[str, list[tuple[date, str]]] | None = None

    def _field_rows(self, field_id: str) -> list[tuple[date, str]]:
        if self._rows is None:
            rows = ledger_rows(self.archive, "SELECT field_id, first_submitted, \"primary\" FROM assignments")
            grouped: dict[str, list[tuple[date, str]]] = defaultdict(list)
            for fid, day, primary in rows:
                grouped[fid].append((day, primary))
            self._rows = dict(grouped)
        return self._rows.get(field_id, [])

    def block(self, field_id: str, origin: date, condition: str) -> dict:
        windows = oracle_windows(condition, origin, self.window_months)
        rows = self._field_rows(field_id)
        return build_oracle_block(windows, [canonical_counts(rows, a, b) for a, b in windows])
