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

It also counts the calls per unit (``called_units``, ``calls_per_unit_mean``,
``calls_per_unit_max``) over every unit with at least one call, so that no
reader of the score folder has to count traces itself.

A unit whose returned papers are all ``other`` has no composition (missing);
a window without counted papers is constant, so the value is undefined there.
Ratios and means are rounded to 6 decimals, as replay.json carried them.

The ledger is looked up by sorted ``field_id TAB arxiv_id`` keys
(``numpy.searchsorted``), so every returned id of a condition is resolved in
one vectorised pass.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from rapgen.archive import SLOTS, recent_window, target_window
from rapgen.scores.kernels import spearman

LEDGER_SQL = (
    "SELECT field_id || chr(9) || arxiv_id AS key, date_diff('day', DATE '1970-01-01', first_submitted) AS day, "
    '"primary" FROM assignments'
)
DECIMALS = 6
EPOCH = date(1970, 1, 1)


@dataclass(frozen=True)
class Ledger:
    """The membership ledger sorted by ``field_id TAB arxiv_id``: each field's rows are one run."""

    keys: np.ndarray  # (n,) str
    days: np.ndarray  # (n,) int64, days since 1970-01-01
    slots: np.ndarray  # (n,) int64 slot index, -1 for other
    runs: dict[str, tuple[int, int]]  # field_id -> [start, stop)

    def find(self, keys: list[str]) -> np.ndarray:
        """Row of each key, -1 where the ledger has none."""
        if not len(self.keys) or not keys:
            return np.full(len(keys), -1, dtype=np.int64)
        wanted = np.asarray(keys, dtype=str)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        return np.where(self.keys[at] == wanted, at, -1)

    def window_counts(self, field_id: str, lo: date, hi: date) -> np.ndarray:
        start, stop = self.runs.get(field_id, (0, 0))
        days, slots = self.days[start:stop], self.slots[start:stop]
        keep = (days >= _day(lo)) & (days < _day(hi)) & (slots >= 0)
        return np.bincount(slots[keep], minlength=len(SLOTS)).astype(float)


def _day(d: date) -> int:
    return (d - EPOCH).days


def read_ledger(archive: Any) -> Ledger:
    con = archive.connect()
    try:
        table = con.execute(LEDGER_SQL).fetchnumpy()
    finally:
        con.close()
    keys = np.asarray(table["key"], dtype=str)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    labels, codes = np.unique(np.asarray(table["primary"], dtype=object).astype(str), return_inverse=True)
    slot_of = np.array([SLOTS.index(label) if label in SLOTS else -1 for label in labels], dtype=np.int64)
    fields = np.array([k.split("\t", 1)[0] for k in keys], dtype=object)
    runs: dict[str, tuple[int, int]] = {}
    if len(fields):
        edges = np.flatnonzero(fields[1:] != fields[:-1]) + 1
        for start, stop in zip(np.r_[0, edges], np.r_[edges, len(fields)]):
            runs[str(fields[start])] = (int(start), int(stop))
    days = np.asarray(table["day"], dtype=np.int64)[order]
    return Ledger(keys, days, slot_of[codes.reshape(-1)][order] if len(keys) else np.zeros(0, np.int64), runs)


def _mean(values: np.ndarray) -> tuple[float | None, int]:
    defined = values[~np.isnan(values)]
    return (round(float(np.mean(defined)), DECIMALS) if defined.size else None), int(defined.size)


def _condition_row(model_id: str, condition: str, calls: list, ledger: Ledger, window: int, cache: dict) -> dict:
    n_ids = np.array([len(c.returned_ids) for c in calls], dtype=np.int64)
    rows = ledger.find([f"{c.field_id}\t{pid}" for c in calls for pid in c.returned_ids])
    bounds = {o: tuple(map(_day, recent_window(o, window))) for o in {c.origin for c in calls}}
    lo = np.repeat(np.array([bounds[c.origin][0] for c in calls], dtype=np.int64), n_ids)
    hi = np.repeat(np.array([bounds[c.origin][1] for c in calls], dtype=np.int64), n_ids)
    found = rows >= 0
    day = np.where(found, ledger.days[np.maximum(rows, 0)], 0)
    recent_slots = int((found & (day >= lo) & (day < hi)).sum())
    # Units (field, origin) with at least one returned id, in (field_id, origin) order.
    units = sorted({(c.field_id, c.origin) for c, n in zip(calls, n_ids) if n})
    unit_index = {u: i for i, u in enumerate(units)}
    unit_of = np.repeat(np.array([unit_index.get((c.field_id, c.origin), -1) for c in calls], dtype=np.int64), n_ids)
    # The unique papers of each unit, counted by their primary direction.
    pairs = np.unique(unit_of[found] * max(len(ledger.keys), 1) + rows[found])
    pair_unit, pair_row = np.divmod(pairs, max(len(ledger.keys), 1))
    slot = ledger.slots[pair_row]
    returned = np.bincount(pair_unit[slot >= 0] * 8 + slot[slot >= 0], minlength=8 * len(units)).reshape(-1, 8).astype(float)
    returned[returned.sum(axis=1) == 0] = np.nan  # nothing counted: no composition
    recent = np.array([_counts(ledger, cache, f, recent_window(o, window)) for f, o in units]).reshape(-1, 8)
    future = np.array([_counts(ledger, cache, f, target_window(o, window)) for f, o in units]).reshape(-1, 8)
    rho_recent, n_recent = _mean(spearman(returned, recent))
    rho_future, n_future = _mean(spearman(returned, future))
    returned_slots = int(n_ids.sum())
    per_unit: dict[tuple[str, date], int] = defaultdict(int)
    for c in calls:
        per_unit[(c.field_id, c.origin)] += 1
    return {
        "entry": model_id, "condition": condition, "calls": len(calls), "units": len(units),
        "returned_slots": returned_slots, "recent_slots": recent_slots,
        "recent_share": round(recent_slots / returned_slots, DECIMALS) if returned_slots else None,
        "spearman_recent": rho_recent, "spearman_units": n_recent,
        "spearman_future": rho_future, "spearman_future_units": n_future,
        # Calls per unit over every unit with at least one call (returned papers or not).
        "called_units": len(per_unit), "calls_per_unit_mean": len(calls) / len(per_unit),
        "calls_per_unit_max": max(per_unit.values()),
    }


def _counts(ledger: Ledger, cache: dict, field_id: str, bounds: tuple[date, date]) -> np.ndarray:
    key = (field_id, *bounds)
    if key not in cache:
        cache[key] = ledger.window_counts(field_id, *bounds)
    return cache[key]


def search_evidence(archive: Any) -> dict:
    """The ``search_evidence`` section: one row per (model, condition) with recorded calls,
    models in archive order, conditions sorted."""
    window = archive.origins.window_months
    traced = [m for m in archive.model_ids if archive.has_traces(m)]
    ledger = read_ledger(archive) if traced else None
    cache: dict = {}
    rows = []
    for model_id in traced:
        by_condition: dict[str, list] = defaultdict(list)
        for call in archive.traces(model_id):
            by_condition[call.condition].append(call)
        rows.extend(_condition_row(model_id, c, by_condition[c], ledger, window, cache) for c in sorted(by_condition))
    return {"window_months": window, "rows": rows}
