"""Replay every recorded Search call and compute the evidence diagnostics.

A call *reproduces* when re-executing it on its shard gives the same
``total_hits`` and the same ``returned_ids`` in the same order (a recorded
malformed call reproduces as ``total_hits`` 0 and no ids). Work is split by
field across processes; each worker opens the shared index read-only.

Evidence diagnostics (SEARCH.md, Replay), per model and condition, from the
recorded ids:

* ``recent_share`` — of all returned paper slots (every id of every call,
  repeats counted), the share whose ``first_submitted`` lies in the recent
  window [T - window, T) of the call's origin T;
* ``spearman_recent`` / ``spearman_future`` — per unit (field, origin), the
  primary-direction composition of the unique papers the unit's calls
  returned (counts of D0…D7, ``other`` left out) is compared with the
  field's composition in the recent window and in the target window
  [T, T + window) by Spearman's rank correlation over the eight slots;
  reported as the mean over units where it is defined (both vectors
  non-constant), with the number of such units.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable

import numpy as np

from rapgen.errors import SearchError, UsageProblem
from rapgen.archive import CONDITION_REGIME
from rapgen.search.engine import Backend

SCHEMA_VERSION = 1
MAX_DIFFERENCES = 5
SLOT_NAMES = tuple(f"D{i}" for i in range(8))

# (model_id, line, field_id, origin iso, condition, call_index, query, sort, date_from, date_to)
_Call = tuple


@dataclass
class ReplayReport:
    """Everything ``rapgen replay`` prints and writes (see docs/search.md)."""

    data: dict

    @property
    def ok(self) -> bool:
        return bool(self.data["ok"])


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# ---------------------------------------------------------------- workers
_WORKER: dict = {}


def _init_worker(root: str, folder: str) -> None:
    from rapgen.archive import Archive

    _WORKER["backend"] = Backend(Archive(root), index_folder=Path(folder))


def _run_field(job: tuple[str, list[_Call]]) -> tuple[str, list[tuple]]:
    field_id, calls = job
    backend: Backend = _WORKER["backend"]
    out = []
    try:
        for call in calls:
            mid, line, fid, origin, condition, _index, query, sort, dfrom, dto = call
            args = {"query": query, "sort": sort, "date_from": dfrom, "date_to": dto}
            try:
                result = backend.search(fid, origin, CONDITION_REGIME[condition], args)
                out.append((mid, line, result.total_hits, list(result.ids), result.error))
            except SearchError as exc:
                out.append((mid, line, None, None, str(exc)))
    finally:
        backend.release(field_id)
    return field_id, out


# ---------------------------------------------------------------- main entry
def replay_archive(
    archive,
    *,
    cache_dir: str | Path | None = None,
    jobs: int | None = None,
    models: list[str] | None = None,
    on_start: Callable[[int], None] | None = None,
    tick: Callable[[int], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> ReplayReport:
    """Replay the traces of every model (or of ``models``) of ``archive``."""
    jobs = jobs or default_jobs()
    model_ids = list(models) if models else list(archive.model_ids)
    unknown = [m for m in model_ids if m not in archive.model_ids]
    if unknown:  # a name given by the user: a usage error, raised before any index is built
        known = ", ".join(archive.model_ids) or "none"
        raise UsageProblem(f"model {unknown[0]!r} is not in the archive; its models are: {known}")
    backend = Backend(archive, cache_dir=cache_dir, jobs=jobs, log=log)
    traces = {mid: archive.traces(mid) for mid in model_ids}
    recorded: dict[tuple[str, int], object] = {}
    by_field: dict[str, list[_Call]] = defaultdict(list)
    for mid, calls in traces.items():
        for c in calls:
            recorded[(mid, c.line)] = c
            by_field[c.field_id].append(
                (mid, c.line, c.field_id, c.origin.isoformat(), c.condition, c.call_index, c.query, c.sort, c.date_from, c.date_to)
            )
    n_calls = len(recorded)
    if on_start:
        on_start(n_calls)
    jobs_list = sorted(by_field.items(), key=lambda kv: -len(kv[1]))  # big fields first: better balance
    results: dict[tuple[str, int], tuple] = {}
    if jobs > 1 and len(jobs_list) > 1:
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        with ctx.Pool(jobs, initializer=_init_worker, initargs=(str(archive.root), str(backend.folder))) as pool:
            for _fid, out in pool.imap_unordered(_run_field, jobs_list):
                for mid, line, total, ids, error in out:
                    results[(mid, line)] = (total, ids, error)
                if tick:
                    tick(len(out))
    else:
        _WORKER["backend"] = backend
        for job in jobs_list:
            _fid, out = _run_field(job)
            for mid, line, total, ids, error in out:
                results[(mid, line)] = (total, ids, error)
            if tick:
                tick(len(out))
    data = _summarise(archive, backend, model_ids, traces, results)
    return ReplayReport(data)


def _summarise(archive, backend: Backend, model_ids: list[str], traces: dict, results: dict) -> dict:
    from rapgen.archive import recent_window, target_window

    window = archive.origins.window_months
    ledger = _ledger_lookup(archive)
    compositions: dict[tuple[str, date, str], np.ndarray] = {}

    def composition(fid: str, lo: date, hi: date) -> np.ndarray:
        key = (fid, lo, f"{hi}")
        if key not in compositions:
            days, slots = ledger[fid][1] if fid in ledger else (np.zeros(0, np.int64), np.zeros(0, np.int64))
            mask = (days >= _day(lo)) & (days < _day(hi)) & (slots >= 0)
            compositions[key] = np.bincount(slots[mask], minlength=8).astype(float)
        return compositions[key]

    models_out = []
    total_calls = total_ok = 0
    for mid in model_ids:
        per_condition: dict[str, dict] = {}
        unit_papers: dict[tuple[str, date, str], set[str]] = defaultdict(set)
        for c in traces[mid]:
            cond = per_condition.setdefault(c.condition, {
                "condition": c.condition, "calls": 0, "reproduced": 0, "failed": 0, "errors_recorded": 0,
                "first_differences": [], "returned_slots": 0, "recent_slots": 0,
            })
            cond["calls"] += 1
            total, ids, error = results[(mid, c.line)]
            same = total == c.total_hits and ids == list(c.returned_ids)
            if same:
                cond["reproduced"] += 1
                if error is not None:
                    cond["errors_recorded"] += 1
            else:
                cond["failed"] += 1
                if len(cond["first_differences"]) < MAX_DIFFERENCES:
                    cond["first_differences"].append({
                        "line": c.line, "field_id": c.field_id, "origin": c.origin.isoformat(), "call_index": c.call_index,
                        "query": c.query, "sort": c.sort, "date_from": c.date_from, "date_to": c.date_to,
                        "recorded": {"total_hits": c.total_hits, "returned_ids": list(c.returned_ids)},
                        "replayed": {"total_hits": total, "returned_ids": ids, "error": error},
                    })
            lo, hi = recent_window(c.origin, window)
            field_days = ledger.get(c.field_id, ({}, None))[0]
            for pid in c.returned_ids:
                cond["returned_slots"] += 1
                info = field_days.get(pid)
                if info is not None and _day(lo) <= info[0] < _day(hi):
                    cond["recent_slots"] += 1
                unit_papers[(c.field_id, c.origin, c.condition)].add(pid)
        for (fid, origin, condition), pids in sorted(unit_papers.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
            field_days = ledger.get(fid, ({}, None))[0]
            slots = [field_days[p][1] for p in pids if p in field_days and field_days[p][1] >= 0]
            returned = np.bincount(np.asarray(slots, dtype=np.int64), minlength=8).astype(float) if slots else np.zeros(8)
            rec = composition(fid, *recent_window(origin, window))
            fut = composition(fid, *target_window(origin, window))
            cond = per_condition[condition]
            for name, ref in (("recent", rec), ("future", fut)):
                rho = _spearman(returned, ref)
                bucket = cond.setdefault(f"_rho_{name}", [])
                if rho is not None:
                    bucket.append(rho)
            cond["units"] = cond.get("units", 0) + 1
        conditions = []
        for name in sorted(per_condition):
            cond = per_condition[name]
            rec_rhos = cond.pop("_rho_recent", [])
            fut_rhos = cond.pop("_rho_future", [])
            cond.setdefault("units", 0)
            cond["recent_share"] = _ratio(cond["recent_slots"], cond["returned_slots"])
            cond["spearman_recent"] = _mean(rec_rhos)
            cond["spearman_future"] = _mean(fut_rhos)
            cond["spearman_units"] = len(rec_rhos)
            cond["spearman_future_units"] = len(fut_rhos)
            total_calls += cond["calls"]
            total_ok += cond["reproduced"]
            conditions.append(cond)
        calls = sum(c["calls"] for c in conditions)
        ok = sum(c["reproduced"] for c in conditions)
        models_out.append({"model_id": mid, "calls": calls, "reproduced": ok, "failed": calls - ok, "conditions": conditions})
    return {
        "schema_version": SCHEMA_VERSION,
        "manifest_sha256": archive.manifest_sha256,
        "engine": {"k1": backend.k1, "b": backend.b, "top_k": backend.top_k, "index": backend.folder.name},
        "window_months": window,
        "ok": total_calls == total_ok,
        "calls": total_calls,
        "reproduced": total_ok,
        "failed": total_calls - total_ok,
        "models": models_out,
    }


def _day(d: date) -> int:
    from rapgen.search.index import day_number

    return day_number(d)


def _ledger_lookup(archive) -> dict[str, tuple[dict[str, tuple[int, int]], tuple[np.ndarray, np.ndarray]]]:
    """Per field: {arxiv_id: (day, slot index or -1 for other)} and the same as arrays."""
    from rapgen.search.index import day_number

    con = archive.connect()
    try:
        rows = con.execute('SELECT field_id, arxiv_id, first_submitted, "primary" FROM assignments').fetchall()
    finally:
        con.close()
    slot_index = {s: i for i, s in enumerate(SLOT_NAMES)}
    grouped: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for fid, pid, first, primary in rows:
        grouped[fid][pid] = (day_number(first), slot_index.get(primary, -1))
    out = {}
    for fid, members in grouped.items():
        values = list(members.values())
        out[fid] = (members, (np.array([v[0] for v in values], dtype=np.int64), np.array([v[1] for v in values], dtype=np.int64)))
    return out


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing their average rank (scipy's ``rankdata`` default)."""
    below = (x[:, None] > x[None, :]).sum(axis=1)
    equal = (x[:, None] == x[None, :]).sum(axis=1)
    return below + (equal + 1) / 2.0


def _spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rho over the eight slots (average ranks for ties); None if undefined."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    ra, rb = _average_ranks(a), _average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    return float((ra @ rb) / math.sqrt((ra @ ra) * (rb @ rb)))


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 6) if b else None


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 6) if values else None


def format_summary(report: ReplayReport) -> str:
    """The human-readable replay summary."""
    d = report.data
    lines = [
        f"Replayed {d['calls']:,} calls: {d['reproduced']:,} reproduced, {d['failed']:,} failed"
        f" (archive {d['manifest_sha256'][:12]}, k1={d['engine']['k1']}, b={d['engine']['b']}, top_k={d['engine']['top_k']})."
    ]
    header = f"{'model':<28} {'cond':<4} {'calls':>7} {'repro':>7} {'failed':>6} {'recent':>7} {'ρ recent':>9} {'ρ future':>9}"
    lines.append(header)

    def fmt(v):
        return "—" if v is None else f"{v:.3f}"

    for m in d["models"]:
        if not m["conditions"]:
            lines.append(f"{m['model_id']:<28} {'—':<4} {0:>7} {0:>7} {0:>6}")
        for c in m["conditions"]:
            lines.append(
                f"{m['model_id']:<28} {c['condition']:<4} {c['calls']:>7,} {c['reproduced']:>7,} {c['failed']:>6,} "
                f"{fmt(c['recent_share']):>7} {fmt(c['spearman_recent']):>9} {fmt(c['spearman_future']):>9}"
            )
    for m in d["models"]:
        for c in m["conditions"]:
            for diff in c["first_differences"]:
                rec, rep = diff["recorded"], diff["replayed"]
                why = rep["error"] or (
                    f"total_hits {rec['total_hits']} → {rep['total_hits']}" if rec["total_hits"] != rep["total_hits"] else "returned ids differ"
                )
                lines.append(
                    f"  DIFF {m['model_id']} traces.jsonl:{diff['line']} {diff['field_id']} {diff['origin']} {c['condition']}"
                    f" call {diff['call_index']} {diff['query']!r}: {why}"
                )
    return "\n".join(lines)
