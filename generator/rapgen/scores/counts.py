"""Direction counts n[f, w, d] under the four counting policies (SCORING.md §1).

DuckDB does the work: the membership ledger is joined to a small table of
half-open windows and every row's contribution under each policy is summed
by field, window and slot. The result is a dense numpy array
``counts[policy, field, window, slot]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from rapgen.archive import SLOTS, Archive, add_months
from rapgen.errors import ScoringError

# Output order of the policy axis everywhere in the scores.
from rapgen.scores.schema import CANONICAL_POLICY, FLIP_POLICY, POLICIES, SINGLE_POLICY, SPLIT_POLICY  # noqa: E402,F401

# Ledger rows are first grouped by (field, window, labels, type); each group then
# feeds its slots under every policy. `primary = other`
# never counts; `secondary` is only set on boundary/bridge rows.
COUNTS_SQL = f"""
WITH monthly AS (
    -- Window edges are first-of-month dates, so a row lies in [start, end) exactly
    -- when its month does: group by month first, then place months in windows.
    SELECT field_id, date_trunc('month', first_submitted)::DATE AS month, "primary" AS prim, secondary AS sec,
           assignment_type AS kind, count(*)::DOUBLE AS rows_n
    FROM assignments
    WHERE "primary" <> 'other'
    GROUP BY ALL
),
counted AS (
    SELECT m.field_id, w.window_index, m.prim, m.sec, m.kind, sum(m.rows_n) AS rows_n
    FROM monthly AS m
    JOIN windows AS w ON m.month >= w.window_start AND m.month < w.window_end
    GROUP BY ALL
),
contributions AS (
    SELECT field_id, window_index, '{CANONICAL_POLICY}' AS policy, prim AS slot, rows_n AS amount FROM counted
    UNION ALL
    SELECT field_id, window_index, '{SPLIT_POLICY}', prim, CASE WHEN sec IS NULL THEN rows_n ELSE 0.5 * rows_n END FROM counted
    UNION ALL
    SELECT field_id, window_index, '{SPLIT_POLICY}', sec, 0.5 * rows_n FROM counted WHERE sec IS NOT NULL
    UNION ALL
    SELECT field_id, window_index, '{SINGLE_POLICY}', prim, rows_n FROM counted WHERE kind = 'single' AND sec IS NULL
    UNION ALL
    SELECT field_id, window_index, '{FLIP_POLICY}', coalesce(sec, prim), rows_n FROM counted
)
SELECT k.field_index, c.window_index, list_position($policies, c.policy) - 1 AS policy_index,
       CAST(substr(c.slot, 2) AS INTEGER) AS slot_index, sum(c.amount) AS n, any_value(c.field_id) AS field_id
FROM contributions AS c
LEFT JOIN field_index AS k ON k.field_id = c.field_id
GROUP BY k.field_index, c.field_id, c.window_index, c.policy, c.slot
"""

# Ledger rows whose slot labels are not D0..D7 (or `other` as primary) would
# silently vanish from the counts; refuse them instead.
BAD_LABELS_SQL = """
SELECT field_id, arxiv_id, "primary", secondary
FROM assignments
WHERE "primary" NOT IN (SELECT unnest($slots)) AND "primary" <> 'other'
   OR (secondary IS NOT NULL AND secondary NOT IN (SELECT unnest($slots)))
ORDER BY field_id, arxiv_id
LIMIT 1
"""


@dataclass(frozen=True)
class Windows:
    """Every window the scores need, sorted by start, and each origin's use of them."""

    starts: tuple[date, ...]
    ends: tuple[date, ...]
    target: np.ndarray  # (O,) window index of each origin's target window
    history: np.ndarray  # (O, H) window indices of the history windows, oldest first


def build_windows(origins: tuple[date, ...], window_months: int, history_windows: int) -> Windows:
    """The grid of windows from the earliest history window to the last target
    window (step ``window_months``), plus any off-grid window an origin needs."""
    if not origins:
        raise ScoringError("origins.json lists no origins; nothing to score")
    needed: set[tuple[date, date]] = set()
    for origin in origins:
        for i in range(history_windows):
            start = add_months(origin, -(history_windows - i) * window_months)
            needed.add((start, add_months(start, window_months)))
        needed.add((origin, add_months(origin, window_months)))
    first = min(s for s, _ in needed)
    last_end = max(e for _, e in needed)
    start = first
    while add_months(start, window_months) <= last_end:
        needed.add((start, add_months(start, window_months)))
        start = add_months(start, window_months)
    ordered = sorted(needed)
    index = {w: i for i, w in enumerate(ordered)}
    target = np.array([index[(o, add_months(o, window_months))] for o in origins], dtype=np.int64)
    history = np.array(
        [
            [
                index[(add_months(o, -(history_windows - i) * window_months), add_months(o, -(history_windows - i - 1) * window_months))]
                for i in range(history_windows)
            ]
            for o in origins
        ],
        dtype=np.int64,
    ).reshape(len(origins), history_windows)
    return Windows(tuple(s for s, _ in ordered), tuple(e for _, e in ordered), target, history)


def compute_counts(archive: Archive, field_ids: list[str], windows: Windows) -> np.ndarray:
    """``counts[policy, field, window, slot]`` (float64; halves are exact)."""
    import duckdb
    import pandas as pd

    counts = np.zeros((len(POLICIES), len(field_ids), len(windows.starts), len(SLOTS)), dtype=np.float64)
    try:
        con = archive.connect()
        try:
            bad = con.execute(BAD_LABELS_SQL, {"slots": list(SLOTS)}).fetchone()
            if bad is not None:
                raise ScoringError(
                    f"archive/benchmark/assignments.parquet: row ({bad[1]}, {bad[0]}) has a direction label outside D0-D7 "
                    f"(primary {bad[2]!r}, secondary {bad[3]!r})"
                )
            frame = pd.DataFrame(
                {"window_index": np.arange(len(windows.starts)), "window_start": list(windows.starts), "window_end": list(windows.ends)}
            )
            con.register("windows_frame", frame)
            con.execute(
                "CREATE TABLE windows AS SELECT window_index::BIGINT AS window_index, window_start::DATE AS window_start, "
                "window_end::DATE AS window_end FROM windows_frame"
            )
            con.register("field_index", pd.DataFrame({"field_id": field_ids, "field_index": np.arange(len(field_ids))}))
            result = con.execute(COUNTS_SQL, {"policies": list(POLICIES)}).fetchnumpy()
        finally:
            con.close()
    except duckdb.Error as exc:
        raise ScoringError(f"counting the ledger (COUNTS_SQL) failed: {exc}") from None
    if len(result["n"]) == 0:
        return counts
    fi = np.asarray(result["field_index"])
    if hasattr(fi, "mask") and np.ma.getmaskarray(fi).any():
        stray = sorted(np.asarray(result["field_id"])[np.ma.getmaskarray(fi)].tolist())[0]
        raise ScoringError(f"archive/benchmark/assignments.parquet: field_id {stray!r} is not in fields.jsonl")
    counts[
        np.asarray(result["policy_index"], dtype=np.int64),
        np.asarray(fi, dtype=np.int64),
        np.asarray(result["window_index"], dtype=np.int64),
        np.asarray(result["slot_index"], dtype=np.int64),
    ] = np.asarray(result["n"], dtype=np.float64)
    return counts


def compositions(counts: np.ndarray) -> np.ndarray:
    """n / sum(n) on the last axis; a row of NaN where the total is zero."""
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1.0), np.nan)
