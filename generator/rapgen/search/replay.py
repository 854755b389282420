"""Replay every recorded Search call: does each one reproduce?

A call *reproduces* when re-executing it on its shard gives the same
``total_hits`` and the same ``returned_ids`` in the same order (a recorded
malformed call reproduces as ``total_hits`` 0 and no ids). Work is split by
field across processes; each worker opens the shared index read-only.

The O3 calls of ``oracle_traces.jsonl`` replay on the Expanding shard like
A3's. With ``counterfactual=True`` every well-formed A1–A4 call is also re-run
on its own shard with its recorded query and the common options of
INTERVENTIONS.md §5 (sort ``relevance``, bounds [T − 6 months, T)); the re-run
ids are handed to the scorer in ``option_reruns.json`` (:func:`write_reruns`),
which builds ``interventions/option_counterfactual.csv`` from them.

The evidence statistics computed from the same traces (share of recent
papers, agreement with the recent and future compositions) are scores'
diagnostics (``diagnostics.json`` section ``search_evidence``), not replay's.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable, NamedTuple

from rapgen.io import Background
from rapgen.errors import SearchError, UsageProblem
from rapgen.archive import CONDITION_REGIME, SEARCH_REGIME, RapRelease, TraceCall, add_months
from rapgen.search.engine import Backend, CallArgs, CallProblem, validate_call

SCHEMA_VERSION = 1
MAX_DIFFERENCES = 5
REGIME = SEARCH_REGIME  # O3 searches the Expanding shard, as A3
TRACES, ORACLE_TRACES, RERUN = "traces.jsonl", "oracle_traces.jsonl", "rerun"
OPTION_RERUNS_JSON = "option_reruns.json"  # the hand-off to the scorer (docs/interventions.md)
COMMON_OPTIONS = {"sort": "relevance", "date_from": "T - 6 months", "date_to": "T"}
SAME = True  # a worker's word for "the recorded ids came back" (see _run_field)


class ReplayCall(NamedTuple):
    """One recorded call as sent to a worker: the model, the call (for a counterfactual re-run,
    with the common options) and the file it came from (or ``rerun``)."""

    model_id: str
    call: TraceCall
    source: str = TRACES  # traces.jsonl, oracle_traces.jsonl, or a counterfactual re-run


@dataclass
class ReplayReport:
    """Everything ``rapgen replay`` prints and writes (see docs/search.md); ``reruns``:
    the counterfactual's (model, field, origin, condition, call_index, ids) rows, if run."""

    data: dict
    reruns: list[tuple] | None = None

    @property
    def ok(self) -> bool:
        return bool(self.data["ok"])


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# ---------------------------------------------------------------- workers
_WORKER: dict = {}


def _init_worker(backend: Backend) -> None:
    _WORKER["backend"] = backend


def _run_field(job: str | tuple[str, list[ReplayCall]]) -> tuple[str, list[tuple]]:
    """One field's calls: ``(field_id, [(total_hits, ids, error) per call, in the field's order])``.
    A job is a field id when the worker inherited every field's calls (``_WORKER["calls"]``, fork).
    A recorded call that reproduced comes back with ``ids`` :data:`SAME` (the parent has its
    recorded ids): only the re-runs' and the differing calls' ids cross the pipe.

    The field's calls are parsed first (a counterfactual re-run's parsed call is its recorded
    call's with the common options: the same query, so the same terms and verdict), then each
    shard looks up every term of its calls at once, then each call is answered as
    :meth:`Backend.search` would answer it."""
    field_id, calls = (job, _WORKER["calls"][job]) if isinstance(job, str) else job
    backend: Backend = _WORKER["backend"]
    top_k, k1, b = backend.top_k, backend.k1, backend.b
    parsed: list = []
    terms: dict[tuple, dict[str, None]] = defaultdict(dict)  # shard -> its calls' terms, in first-seen order
    bounds: dict[tuple[str, str], tuple[date, date]] = {}
    previous = None
    for c in calls:
        t = c.call
        call = None
        if c.source == RERUN and type(previous) is CallArgs and previous.query == t.query:
            span = bounds.get((t.date_from, t.date_to))
            if span is None:
                span = bounds[(t.date_from, t.date_to)] = (date.fromisoformat(t.date_from), date.fromisoformat(t.date_to))
            if span[0] < span[1]:
                call = CallArgs(t.query, "relevance", span[0], span[1], previous.terms)
        if call is None:
            try:
                call = validate_call({"query": t.query, "sort": t.sort, "date_from": t.date_from, "date_to": t.date_to})
            except CallProblem as exc:
                call = str(exc)
        parsed.append(call)
        previous = call
        if type(call) is CallArgs:
            terms[(t.origin, REGIME[t.condition])].update(dict.fromkeys(call.terms))
    out: list[tuple] = []
    shards: dict[tuple, object] = {}
    try:
        for c, call in zip(calls, parsed):
            where = (c.call.origin, REGIME[c.call.condition])
            shard = shards.get(where)
            if shard is None:
                try:
                    shard = backend.shard(field_id, *where)
                    shard.prime(list(terms.get(where, ())), k1, b)
                except SearchError as exc:
                    shard = exc
                shards[where] = shard
            if isinstance(shard, SearchError):
                out.append((None, None, str(shard)))
                continue
            if type(call) is str:
                total, ids, error = 0, [], call
            else:
                (total, ids), error = shard.replay_answer(call, top_k=top_k, k1=k1, b=b), None
            if c.source != RERUN and total == c.call.total_hits and ids == list(c.call.returned_ids):
                ids = SAME
            out.append((total, ids, error))
    finally:
        backend.release(field_id)
    return field_id, out


# ---------------------------------------------------------------- main entry
def _common(c: TraceCall, bounds: tuple[str, str]) -> TraceCall:
    """``c`` with the common options (§5): its own query, sort relevance, ``bounds`` [T − w, T)
    (the field values ``dataclasses.replace`` would give, without its keyword round trip)."""
    common = object.__new__(TraceCall)
    common.__dict__.update(c.__dict__)
    common.__dict__.update(sort="relevance", date_from=bounds[0], date_to=bounds[1])
    return common


def _jobs(archive: RapRelease, model_ids: list[str], counterfactual: bool) -> tuple[dict, dict[str, list[ReplayCall]], dict]:
    """The recorded calls per model and source file, every call to run, grouped by field, and
    where each recorded call sits among its field's (its re-run, if any, right after it)."""
    recorded: dict[tuple[str, str], list] = {}
    at: dict[tuple[str, str], list[int]] = {}
    by_field: dict[str, list[ReplayCall]] = defaultdict(list)
    w = archive.origins.window_months
    bounds: dict = {}
    for mid in model_ids:
        recorded[(mid, TRACES)] = archive.traces(mid)
        recorded[(mid, ORACLE_TRACES)] = list(archive.oracle_traces(mid))
        for source in (TRACES, ORACLE_TRACES):
            spots = at[(mid, source)] = []
            for c in recorded[(mid, source)]:
                calls = by_field[c.field_id]
                spots.append(len(calls))
                calls.append(ReplayCall(mid, c, source))
                if counterfactual and source == TRACES and c.condition in CONDITION_REGIME:
                    # next to its call: they share the scoring, and the call's own answer tells
                    # whether it was malformed (replay_archive keeps only well-formed calls' re-runs)
                    b = bounds.get(c.origin)
                    if b is None:
                        b = bounds[c.origin] = (add_months(c.origin, -w).isoformat(), c.origin.isoformat())
                    calls.append(ReplayCall(mid, _common(c, b), RERUN))
    return recorded, by_field, at


def _run_all(backend: Backend, by_field: dict[str, list[ReplayCall]], jobs: int,
             tick: Callable[[int], None] | None, beside: Callable[[], None] | None = None) -> dict[str, list[tuple]]:
    """Each field's answers, by position among its calls. ``beside``: work of the caller's run in a
    thread of this process while the workers answer (started once they are forked: no fork
    happens while it runs); its exception is raised here."""
    jobs_list = sorted(by_field.items(), key=lambda kv: -len(kv[1]))  # big fields first: better balance
    results: dict[str, list[tuple]] = {}

    def take(field_id: str, out: list) -> None:
        results[field_id] = out
        if tick:
            tick(len(out))

    if jobs > 1 and len(jobs_list) > 1:
        fork = "fork" in mp.get_all_start_methods()
        ctx = mp.get_context("fork") if fork else mp.get_context()
        # each worker gets the backend's manifests and constants, not the release (nothing is read again)
        if fork:  # the workers inherit the calls: only field ids and answers cross the pipes
            _WORKER["calls"] = by_field
        # The parent's objects (the verified release, the calls) are left out of the garbage
        # collector's passes while the workers run: a forked worker then never walks, and so
        # never copies, the pages it inherited.
        gc.freeze()
        try:
            with ctx.Pool(jobs, initializer=_init_worker, initargs=(backend.detached(),)) as pool:
                work = [fid for fid, _ in jobs_list] if fork else jobs_list
                thread = Background(beside) if beside is not None else None
                try:
                    for fid, out in pool.imap_unordered(_run_field, work):
                        take(fid, out)
                finally:  # a worker's failure still waits for the caller's work (it may be writing files)
                    if thread is not None:
                        thread.join()
                if thread is not None:
                    thread.result()
        finally:
            gc.unfreeze()
            _WORKER.pop("calls", None)
    else:
        if beside is not None:
            beside()
        _WORKER["backend"] = backend
        for job in jobs_list:
            take(*_run_field(job))
    return results


def replay_archive(
    archive: RapRelease,
    *,
    cache_dir: str | Path | None = None,
    jobs: int | None = None,
    models: list[str] | None = None,
    on_start: Callable[[int], None] | None = None,
    tick: Callable[[int], None] | None = None,
    log: Callable[[str], None] | None = None,
    counterfactual: bool = False,
    beside: Callable[[], None] | None = None,
) -> ReplayReport:
    """Replay the traces of every model (or of ``models``) of the release ``archive``
    (``open_verified(root).release()``: its traces are the records verify parsed, and its
    listed parquet digests key the shard index); with ``counterfactual``, also re-run every
    well-formed A1–A4 call with the common options (``ReplayReport.reruns``). ``beside``: the
    caller's work to run while the calls replay (in a thread; once, before or beside them)."""
    jobs = jobs or default_jobs()
    model_ids = list(models) if models else list(archive.model_ids)
    unknown = [m for m in model_ids if m not in archive.model_ids]
    if unknown:  # a name given by the user: a usage error, raised before any index is built
        known = ", ".join(archive.model_ids) or "none"
        raise UsageProblem(f"model {unknown[0]!r} is not in the archive; its models are: {known}")
    backend = Backend(archive, cache_dir=cache_dir, jobs=jobs, log=log)
    recorded, by_field, at = _jobs(archive, model_ids, counterfactual)
    if on_start:
        on_start(sum(len(v) for v in by_field.values()))
    results = _run_all(backend, by_field, jobs, tick, beside)

    def answers(mid: str, source: str) -> list[tuple]:
        return [results[c.field_id][i] for c, i in zip(recorded[(mid, source)], at[(mid, source)])]

    traces = {mid: [(TRACES, c, r) for c, r in zip(recorded[(mid, TRACES)], answers(mid, TRACES))]
              + [(ORACLE_TRACES, c, r) for c, r in zip(recorded[(mid, ORACLE_TRACES)], answers(mid, ORACLE_TRACES))]
              for mid in model_ids}
    data = _summarise(archive, backend, model_ids, traces)
    reruns = None
    if counterfactual:
        # Only well-formed calls re-run (INTERVENTIONS.md §5): a recorded call is malformed exactly
        # when its own replay answered with the validator's error. A re-run that failed (no shard)
        # is left out too, so its pair is left out of the counterfactual.
        reruns = []
        for mid in model_ids:
            for c, i in zip(recorded[(mid, TRACES)], at[(mid, TRACES)]):
                if c.condition not in CONDITION_REGIME:
                    continue
                answered = results[c.field_id]
                rerun = answered[i + 1]
                if rerun[2] is None and answered[i][2] is None:
                    reruns.append((mid, c.field_id, c.origin.isoformat(), c.condition, c.call_index, rerun[1]))
    return ReplayReport(data, reruns)


def write_reruns(report: ReplayReport, out_dir: str | Path) -> Path:
    """``OUT/option_reruns.json``: the counterfactual's re-run ids, for the scorer."""
    import json

    from rapgen.io import SCORES_OUTPUT, atomic_write_bytes, guard_output_dir

    guard_output_dir(out_dir, SCORES_OUTPUT)
    if report.reruns is None:
        raise ValueError("the replay ran without the counterfactual")
    head = json.dumps({"schema_version": SCHEMA_VERSION, "manifest_sha256": report.data["manifest_sha256"], "options": COMMON_OPTIONS},
                      ensure_ascii=False)
    rows = ",\n".join(json.dumps(list(r), ensure_ascii=False, separators=(",", ":")) for r in report.reruns)
    path = Path(out_dir) / OPTION_RERUNS_JSON
    atomic_write_bytes(path, (head[:-1] + ', "calls": [\n' + rows + "\n]}\n").encode("utf-8"))  # one call per line
    return path


def _difference(source: str, c, total, ids, error) -> dict:
    return {**({"file": source} if source != TRACES else {}),
        "line": c.line, "field_id": c.field_id, "origin": c.origin.isoformat(), "call_index": c.call_index,
        "query": c.query, "sort": c.sort, "date_from": c.date_from, "date_to": c.date_to,
        "recorded": {"total_hits": c.total_hits, "returned_ids": list(c.returned_ids)},
        "replayed": {"total_hits": total, "returned_ids": ids, "error": error},
    }


def _model_summary(mid: str, calls: list) -> dict:
    """``calls``: (source file, recorded call, its answer (total_hits, ids or SAME, error))."""
    per_condition: dict[str, dict] = {}
    for source, c, (total, ids, error) in calls:
        cond = per_condition.get(c.condition)
        if cond is None:
            cond = per_condition[c.condition] = {
                "condition": c.condition, "calls": 0, "reproduced": 0, "failed": 0, "errors_recorded": 0, "first_differences": [],
            }
        cond["calls"] += 1
        if ids is SAME or (total == c.total_hits and ids == list(c.returned_ids)):
            cond["reproduced"] += 1
            cond["errors_recorded"] += error is not None
        else:
            cond["failed"] += 1
            if len(cond["first_differences"]) < MAX_DIFFERENCES:
                cond["first_differences"].append(_difference(source, c, total, ids, error))
    conditions = [per_condition[name] for name in sorted(per_condition)]
    n_calls = sum(c["calls"] for c in conditions)
    ok = sum(c["reproduced"] for c in conditions)
    return {"model_id": mid, "calls": n_calls, "reproduced": ok, "failed": n_calls - ok, "conditions": conditions}


def _summarise(archive, backend: Backend, model_ids: list[str], traces: dict) -> dict:
    models_out = [_model_summary(mid, traces[mid]) for mid in model_ids]
    total_calls = sum(m["calls"] for m in models_out)
    total_ok = sum(m["reproduced"] for m in models_out)
    return {
        "schema_version": SCHEMA_VERSION,
        "manifest_sha256": archive.manifest_sha256,
        "engine": {"k1": backend.k1, "b": backend.b, "top_k": backend.top_k, "index": backend.folder.name},
        "window_months": archive.origins.window_months,
        "ok": total_calls == total_ok,
        "calls": total_calls,
        "reproduced": total_ok,
        "failed": total_calls - total_ok,
        "models": models_out,
    }


def format_summary(report: ReplayReport) -> str:
    """The human-readable replay summary."""
    d = report.data
    lines = [
        f"Replayed {d['calls']:,} calls: {d['reproduced']:,} reproduced, {d['failed']:,} failed"
        f" (archive {d['manifest_sha256'][:12]}, k1={d['engine']['k1']}, b={d['engine']['b']}, top_k={d['engine']['top_k']})."
    ]
    header = f"{'model':<28} {'cond':<4} {'calls':>7} {'repro':>7} {'failed':>6}"
    lines.append(header)

    for m in d["models"]:
        if not m["conditions"]:
            lines.append(f"{m['model_id']:<28} {'—':<4} {0:>7} {0:>7} {0:>6}")
        for c in m["conditions"]:
            lines.append(
                f"{m['model_id']:<28} {c['condition']:<4} {c['calls']:>7,} {c['reproduced']:>7,} {c['failed']:>6,}"
            )
    for m in d["models"]:
        for c in m["conditions"]:
            for diff in c["first_differences"]:
                rec, rep = diff["recorded"], diff["replayed"]
                why = rep["error"] or (
                    f"total_hits {rec['total_hits']} → {rep['total_hits']}" if rec["total_hits"] != rep["total_hits"] else "returned ids differ"
                )
                lines.append(
                    f"  DIFF {m['model_id']} {diff.get('file', TRACES)}:{diff['line']} {diff['field_id']} {diff['origin']} {c['condition']}"
                    f" call {diff['call_index']} {diff['query']!r}: {why}"
                )
    return "\n".join(lines)
