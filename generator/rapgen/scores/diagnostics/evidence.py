"""Search evidence statistics (SEARCH.md, Replay), read from the recorded traces.

Per model and condition, from the ids each recorded call returned:

* ``recent_share`` — of all returned paper slots (every id of every call,
  repeats counted), the share whose ``first_submitted`` lies in the recent
  window [T - window, T) of the call's origin T;
* ``spearman_recent`` / ``spearman_future`` — per unit (field, origin) whose
  calls returned at least one paper, the primary-direction counts D0…D7 of
  the unique returned papers (``other`` left out) against the field's counts
  in the recent window and in the target window [T, T + window), by the
  scorer's §2 spearman (:func:`rapgen.scores.kernels.spearman`); reported as
  the mean over units where it is defined, with the number of such units.

A unit whose returned papers are all ``other`` has no composition (missing);
a window without counted papers is constant, so the value is undefined there.
Ratios and means are rounded to 6 decimals, as replay.json carried them.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

import numpy as np

from rapgen.archive import SLOTS, recent_window, target_window
from rapgen.scores.kernels import spearman

ASSIGNMENTS_SQL = 'SELECT field_id, arxiv_id, first_submitted, "primary" FROM assignments'
DECIMALS = 6


def _ledger(archive: Any) -> dict[str, dict[str, tuple[date, int]]]:
    """Per field: {arxiv_id: (first_submitted, slot index, or -1 for other)}."""
    con = archive.connect()
    try:
        rows = con.execute(ASSIGNMENTS_SQL).fetchall()
    finally:
        con.close()
    slot_index = {s: i for i, s in enumerate(SLOTS)}
    grouped: dict[str, dict[str, tuple[date, int]]] = defaultdict(dict)
    for field_id, arxiv_id, first, primary in rows:
        grouped[field_id][arxiv_id] = (first, slot_index.get(primary, -1))
    return grouped


def _window_counts(members: dict[str, tuple[date, int]], lo: date, hi: date) -> np.ndarray:
    slots = [slot for first, slot in members.values() if lo <= first < hi and slot >= 0]
    return np.bincount(np.asarray(slots, dtype=np.int64), minlength=len(SLOTS)).astype(float)


def _unit_vectors(units: dict, ledger: dict, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(returned, recent, future) count rows for each unit, NaN rows for a unit with no counted paper."""
    cache: dict[tuple[str, date, date], np.ndarray] = {}

    def counts(field_id: str, lo: date, hi: date) -> np.ndarray:
        key = (field_id, lo, hi)
        if key not in cache:
            cache[key] = _window_counts(ledger.get(field_id, {}), lo, hi)
        return cache[key]

    returned, recent, future = [], [], []
    for (field_id, origin), pids in units.items():
        members = ledger.get(field_id, {})
        slots = [members[p][1] for p in pids if p in members and members[p][1] >= 0]
        row = np.bincount(np.asarray(slots, dtype=np.int64), minlength=len(SLOTS)).astype(float) if slots else np.full(8, np.nan)
        returned.append(row)
        recent.append(counts(field_id, *recent_window(origin, window)))
        future.append(counts(field_id, *target_window(origin, window)))
    return np.array(returned).reshape(-1, 8), np.array(recent).reshape(-1, 8), np.array(future).reshape(-1, 8)


def _mean(values: np.ndarray) -> tuple[float | None, int]:
    defined = values[~np.isnan(values)]
    return (round(float(np.mean(defined)), DECIMALS) if defined.size else None), int(defined.size)


def _condition_row(model_id: str, condition: str, calls: list, ledger: dict, window: int) -> dict:
    returned_slots = recent_slots = 0
    units: dict[tuple[str, date], set[str]] = defaultdict(set)
    for call in calls:
        lo, hi = recent_window(call.origin, window)
        members = ledger.get(call.field_id, {})
        for pid in call.returned_ids:
            returned_slots += 1
            info = members.get(pid)
            if info is not None and lo <= info[0] < hi:
                recent_slots += 1
            units[(call.field_id, call.origin)].add(pid)
    returned, recent, future = _unit_vectors(units, ledger, window)
    rho_recent, n_recent = _mean(spearman(returned, recent))
    rho_future, n_future = _mean(spearman(returned, future))
    return {
        "entry": model_id, "condition": condition, "calls": len(calls), "units": len(units),
        "returned_slots": returned_slots, "recent_slots": recent_slots,
        "recent_share": round(recent_slots / returned_slots, DECIMALS) if returned_slots else None,
        "spearman_recent": rho_recent, "spearman_units": n_recent,
        "spearman_future": rho_future, "spearman_future_units": n_future,
    }


def search_evidence(archive: Any) -> dict:
    """The ``search_evidence`` section: one row per (model, condition) with recorded calls,
    models in archive order, conditions sorted."""
    window = archive.origins.window_months
    traced = [m for m in archive.model_ids if archive.has_traces(m)]
    ledger = _ledger(archive) if traced else {}
    rows = []
    for model_id in traced:
        by_condition: dict[str, list] = defaultdict(list)
        for call in archive.traces(model_id):
            by_condition[call.condition].append(call)
        rows.extend(_condition_row(model_id, c, by_condition[c], ledger, window) for c in sorted(by_condition))
    return {"window_months": window, "rows": rows}
