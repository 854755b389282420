"""The files of ``DIR/interventions/`` (INTERVENTIONS.md §8): exact columns, rows
sorted in byte order by the key columns (every column before ``estimate``).

CSV formatting is the scorer's (:func:`rapgen.scores.outputs.csv_bytes`):
shortest round-trip floats, empty cells for undefined values, ``true``/``false``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rapgen.errors import ScoringError
from rapgen.scores.interventions.exposure import MaskRow
from rapgen.scores.outputs import Table, csv_bytes
from rapgen.scores.schema import INTERVENTION_FILES, INTERVENTIONS_DIR

FOLDER = INTERVENTIONS_DIR
ANALYSES: tuple[str, ...] = ("replay", "oracle", "panel")


def key_columns(name: str) -> tuple[str, ...]:
    """The columns a file's rows are sorted by: all before ``estimate`` (every column if none)."""
    columns = INTERVENTION_FILES[name]
    return columns[: columns.index("estimate")] if "estimate" in columns else columns


def _sort_key(row: Mapping[str, object], keys: Sequence[str]) -> tuple[bytes, ...]:
    return tuple(str(row[k]).encode("utf-8") for k in keys)


def build_table(name: str, rows: Iterable[Mapping[str, object]]) -> Table:
    """One §8 file as a :class:`Table`: exactly its columns (a row missing one is an
    error, extra keys are ignored), sorted by its key columns; duplicate keys refused."""
    if name not in INTERVENTION_FILES:
        raise ScoringError(f"unknown interventions file {name!r}; known: {', '.join(sorted(INTERVENTION_FILES))}")
    columns = INTERVENTION_FILES[name]
    keys = key_columns(name)
    rows = list(rows)
    for row in rows:
        missing = [c for c in columns if c not in row]
        if missing:
            raise ScoringError(f"interventions/{name}: a row lacks column {missing[0]!r}")
        if name == "cells.csv" and row["analysis"] not in ANALYSES:
            raise ScoringError(f"interventions/{name}: analysis {row['analysis']!r} is not one of {', '.join(ANALYSES)}")
    rows.sort(key=lambda r: _sort_key(r, keys))
    for a, b in zip(rows, rows[1:]):
        if _sort_key(a, keys) == _sort_key(b, keys):
            raise ScoringError(f"interventions/{name}: two rows share the key {', '.join(str(a[k]) for k in keys)}")
    return Table(columns, {c: [r[c] for r in rows] for c in columns})


def mask_rows(rows: Iterable[MaskRow]) -> list[dict]:
    """strict_masks.csv rows (origins as ISO dates)."""
    return [
        {"entry": r.entry, "origin": r.origin.isoformat(), "forecast_strict": r.forecast_strict, "joint_strict": r.joint_strict,
         "forecast_boundary": r.forecast_boundary, "joint_boundary": r.joint_boundary}
        for r in rows
    ]


def intervention_files(rows_by_file: Mapping[str, Iterable[Mapping[str, object]]]) -> dict[str, bytes]:
    """``interventions/<name>`` -> CSV bytes for every §8 file (a file without rows gets its header)."""
    return {f"{FOLDER}/{name}": csv_bytes(build_table(name, rows_by_file.get(name, ())), f"{FOLDER}/{name}")
            for name in INTERVENTION_FILES}
