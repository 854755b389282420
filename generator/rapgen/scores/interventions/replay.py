"""Frozen-evidence replay (INTERVENTIONS.md §1): cells, contrasts and fidelity.

A cell ``X->Y:b`` reads out evidence X (F: the A3 unit's, S: the A4 unit's)
as Y (F: a forecast, S: a State answer carried forward) under budget b
(``all`` calls or the ``matched`` k = min(n_A3, n_A4)). Each readout is scored
like a unit against the target window; a contrast is paired within a field
over the origins where both cells are defined.

Inputs are plain arrays on the archive's (field, origin) grid: predictions
``(F, O, 8)`` with NaN rows where a unit is invalid or absent, and boolean
``(F, O)`` masks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rapgen.archive import EXPANDING_FORECAST, EXPANDING_STATE
from rapgen.scores.interventions.core import Statistic, field_values, paired_field_values
from rapgen.scores.kernels import spearman
from rapgen.scores.metrics import JSD, REGISTRY, SPEARMAN, TV, UnitInputs, tv
from rapgen.scores.schema import ALL_ORIGIN_TRACK

CELLS: tuple[str, ...] = tuple(f"{x}->{y}:{b}" for b in ("all", "matched") for x in "FS" for y in "FS")
CELL_METRICS: tuple[str, ...] = (SPEARMAN, TV, JSD)
FIDELITY_METRICS: tuple[str, ...] = (SPEARMAN, TV)
ANALYSIS = "replay"
TRACK = ALL_ORIGIN_TRACK
# (name, left, right); a cell name or A3/A4 (the source units themselves).
CONTRASTS: tuple[tuple[str, str, str], ...] = tuple(
    (f"{name}:{b}", left.format(b=b), right.format(b=b))
    for b in ("all", "matched")
    for name, left, right in (
        ("acquisition", "S->F:{b}", "F->F:{b}"),
        ("readout", "S->S:{b}", "S->F:{b}"),
        ("pipeline", "S->S:{b}", "F->F:{b}"),
    )
) + (("native_shift_F", "F->F:all", EXPANDING_FORECAST), ("native_shift_S", "S->S:all", EXPANDING_STATE))


@dataclass(frozen=True)
class CellUnits:
    """One cell's readouts on the (F, O) grid."""

    predictions: np.ndarray  # (F, O, 8) renormalised weights; NaN rows: invalid or no record
    present: np.ndarray  # (F, O) bool: a record exists (valid or not)


def unit_values(p: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """The registry's spearman, tv and jsd of each unit against the target (NaN: undefined)."""
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    units = UnitInputs(p, y, y, y)  # these three read only p and y
    return {name: REGISTRY[name].fn(units) for name in CELL_METRICS}


def _masked(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, values, np.nan)


def readout_values(
    cells: Mapping[str, CellUnits], a3: np.ndarray, a4: np.ndarray, y: np.ndarray
) -> dict[str, dict[str, np.ndarray]]:
    """cell (and ``A3``/``A4``, the model's own source units) -> metric -> (F, O) unit values."""
    values = {name: unit_values(c.predictions, y) for name, c in cells.items()}
    values[EXPANDING_FORECAST], values[EXPANDING_STATE] = unit_values(a3, y), unit_values(a4, y)
    return values


def replay_statistics(
    entry: str,
    values: Mapping[str, Mapping[str, np.ndarray]],
    cells: Mapping[str, CellUnits],
    subsets: Mapping[str, np.ndarray],
) -> tuple[list[Statistic], list[Statistic]]:
    """cells.csv and contrasts.csv statistics of one model (rows only for the cells it has).

    ``values``: :func:`readout_values` (or the same layout from elsewhere);
    ``cells``: the readouts, for the unit counts; ``subsets``: subset name ->
    (F, O) episode mask (``all`` and ``change_rich``).
    """
    cell_stats: list[Statistic] = []
    contrast_stats: list[Statistic] = []
    for subset, mask in subsets.items():
        mask = np.asarray(mask, dtype=bool)
        for name in (c for c in CELLS if c in cells):
            unit = cells[name]
            valid = unit.present & ~np.isnan(unit.predictions).any(axis=-1)
            counts = {
                "n_units": (unit.present & mask).sum(axis=1),
                "n_valid": (valid & mask).sum(axis=1),
                "n_invalid": (unit.present & ~valid & mask).sum(axis=1),
            }
            for metric in CELL_METRICS:
                key = {"analysis": ANALYSIS, "track": TRACK, "entry": entry, "subset": subset, "cell": name, "metric": metric}
                cell_stats.append(Statistic(key, field_values(_masked(values[name][metric], mask)), counts))
        for name, left, right in CONTRASTS:
            if left not in values or right not in values:
                continue
            for metric in CELL_METRICS:
                key = {"analysis": ANALYSIS, "track": TRACK, "entry": entry, "subset": subset, "contrast": name, "metric": metric}
                diff = paired_field_values(_masked(values[left][metric], mask), values[right][metric], metric=metric)
                contrast_stats.append(Statistic(key, diff))
    return cell_stats, contrast_stats


def fidelity_statistics(entry: str, cells: Mapping[str, CellUnits], a3: np.ndarray, a4: np.ndarray) -> list[Statistic]:
    """fidelity.csv: spearman and tv of (F->F:all, A3) and (S->S:all, A4), readout first,
    over the pairs where both are valid."""
    out = []
    for readout, name, native in (("forecast", "F->F:all", a3), ("state", "S->S:all", a4)):
        if name not in cells:
            continue
        p = np.asarray(cells[name].predictions, dtype=np.float64)
        q = np.asarray(native, dtype=np.float64)
        both = ~np.isnan(p).any(axis=-1) & ~np.isnan(q).any(axis=-1)
        per_unit = {SPEARMAN: spearman(p, q), TV: tv(p, q)}
        for metric in FIDELITY_METRICS:
            key = {"entry": entry, "readout": readout, "metric": metric}
            out.append(Statistic(key, field_values(_masked(per_unit[metric], both)), {"n_units": both.sum(axis=1)}))
    return out
