"""Frozen-evidence replay (INTERVENTIONS.md §1): the §9 readout example digit for digit,
the two-field macro table, and the paired-contrast rule."""

from __future__ import annotations

import numpy as np
import pytest

from rapgen.scores.interventions import (
    CellUnits,
    fidelity_statistics,
    readout_values,
    replay_statistics,
    split_draws,
    summarise,
)
from rapgen.scores.interventions.replay import unit_values

TARGET = np.array([16, 2, 7, 1, 1, 2, 0, 1], dtype=float)
WEIGHTS = {
    "F->F": [30, 10, 10, 20, 10, 10, 0, 10],
    "S->F": [45, 5, 20, 5, 5, 10, 0, 10],
    "S->S": [50, 5, 20, 5, 5, 5, 5, 5],
    "F->S": [35, 10, 15, 10, 10, 10, 0, 10],
}
SPEARMAN = {"F->F": 0.562544, "S->F": 0.841772, "S->S": 0.787562, "F->S": 0.900070}


def _composition(w) -> np.ndarray:
    w = np.asarray(w, dtype=float)
    return w / w.sum()


@pytest.mark.parametrize("cell", sorted(WEIGHTS))
def test_readout_cell_spearman(cell):
    value = unit_values(_composition(WEIGHTS[cell]), _composition(TARGET))["spearman"]
    assert round(float(value), 6) == SPEARMAN[cell]


def _one_episode_cells() -> tuple[dict, dict]:
    y = _composition(TARGET)[None, None]
    cells = {f"{c}:all": CellUnits(_composition(w)[None, None], np.ones((1, 1), bool)) for c, w in WEIGHTS.items()}
    a3 = _composition(WEIGHTS["F->F"])[None, None]
    return readout_values(cells, a3, a3, y), cells


def test_readout_example_contrasts():
    values, cells = _one_episode_cells()
    _, contrasts = replay_statistics("m", values, cells, {"all": np.ones((1, 1), bool)})
    got = {(s.key["contrast"], s.key["metric"]): float(s.values[0]) for s in contrasts}
    # Acquisition +0.279228, readout −0.054211, pipeline +0.225018 (the spec rounds the differences of exact values).
    assert round(got[("acquisition:all", "spearman")], 6) == 0.279228
    assert round(got[("readout:all", "spearman")], 6) == -0.054211
    assert round(got[("pipeline:all", "spearman")], 6) == 0.225018
    # F->F:all is the A3 readout itself here: no native shift.
    assert got[("native_shift_F", "spearman")] == 0.0
    assert ("acquisition:matched", "spearman") not in got  # no matched cells given, no matched rows


def _macro_values() -> dict[str, dict[str, np.ndarray]]:
    """Fields a, b × origins T1, T2 of the §9 table; field a's T1 from the worked weights."""
    ff = [[SPEARMAN["F->F"], 0.40], [0.60, 0.30]]
    sf = [[SPEARMAN["S->F"], 0.55], [np.nan, 0.45]]  # b's T1 S->F readout is invalid
    ss = [[SPEARMAN["S->S"], 0.50], [0.80, 0.65]]
    values, _ = _one_episode_cells()
    exact = {c: float(values[f"{c}:all"]["spearman"][0, 0]) for c in ("F->F", "S->F", "S->S")}
    ff[0][0], sf[0][0], ss[0][0] = exact["F->F"], exact["S->F"], exact["S->S"]
    grid = lambda rows: {"spearman": np.array(rows, dtype=float), "tv": np.zeros((2, 2)), "jsd": np.zeros((2, 2))}  # noqa: E731
    return {"F->F:all": grid(ff), "S->F:all": grid(sf), "S->S:all": grid(ss), "A3": grid(ff), "A4": grid(ss)}


def test_two_field_macro_table():
    values = _macro_values()
    cells = {name: CellUnits(np.zeros((2, 2, 8)), np.ones((2, 2), bool)) for name in ("F->F:all", "S->F:all", "S->S:all")}
    _, contrasts = replay_statistics("m", values, cells, {"all": np.ones((2, 2), bool)})
    draws = split_draws(["a", "b"], ["test", "test"], ["ba", "bb"], resamples=50, seed=0, level=0.95)
    rows = {r["contrast"]: r for r in summarise([s for s in contrasts if s.key["metric"] == "spearman"], draws)}
    per_field = {s.key["contrast"]: s.values for s in contrasts if s.key["metric"] == "spearman"}
    expected = {  # contrast: (a, b, macro)
        "acquisition:all": (0.214614, 0.150000, 0.182307),
        "readout:all": (-0.052105, 0.200000, 0.073947),
        "pipeline:all": (0.162509, 0.275000, 0.218754),
    }
    for name, (a, b, macro) in expected.items():
        assert round(float(per_field[name][0]), 6) == a
        assert round(float(per_field[name][1]), 6) == b
        assert round(rows[name]["estimate"], 6) == macro
        assert rows[name]["n_fields"] == 2
    # The pipeline is not acquisition + readout: b's T1 pairs only in the pipeline.
    assert round(rows["acquisition:all"]["estimate"] + rows["readout:all"]["estimate"], 6) == 0.256254


def test_cell_counts_and_subset_mask():
    p = np.full((2, 2, 8), np.nan)
    p[0, 0] = _composition(WEIGHTS["F->F"])
    p[1, 1] = _composition(WEIGHTS["S->S"])
    present = np.array([[True, True], [False, True]])  # a's T2 is an invalid record; b's T1 has none
    cells = {"F->F:all": CellUnits(p, present)}
    y = np.broadcast_to(_composition(TARGET), (2, 2, 8))
    values = readout_values(cells, p, p, y)
    subsets = {"all": np.ones((2, 2), bool), "change_rich": np.array([[False, True], [False, True]])}
    stats, _ = replay_statistics("m", values, cells, subsets)
    by = {(s.key["subset"], s.key["metric"]): s for s in stats}
    s = by[("all", "spearman")]
    assert s.counts["n_units"].tolist() == [2, 1]
    assert s.counts["n_valid"].tolist() == [1, 1]
    assert s.counts["n_invalid"].tolist() == [1, 0]
    assert round(float(s.values[0]), 6) == SPEARMAN["F->F"]
    cr = by[("change_rich", "spearman")]
    assert np.isnan(cr.values[0])  # a's only change-rich episode is invalid
    assert round(float(cr.values[1]), 6) == SPEARMAN["S->S"]
    assert cr.counts["n_invalid"].tolist() == [1, 0]


def test_fidelity_readout_first_and_both_valid():
    ff = np.full((1, 2, 8), np.nan)
    ff[0, 0] = _composition(WEIGHTS["F->F"])
    ff[0, 1] = _composition(WEIGHTS["S->F"])
    a3 = np.full((1, 2, 8), np.nan)
    a3[0, 0] = np.full(8, 1 / 8)  # a uniform native answer: spearman(readout, uniform) is undefined
    cells = {"F->F:all": CellUnits(ff, np.ones((1, 2), bool))}
    stats = {(s.key["readout"], s.key["metric"]): s for s in fidelity_statistics("m", cells, a3, a3)}
    assert set(stats) == {("forecast", "spearman"), ("forecast", "tv")}  # no S->S:all cell, no state rows
    assert stats[("forecast", "spearman")].counts["n_units"].tolist() == [1]  # T2's native unit is invalid
    assert np.isnan(stats[("forecast", "spearman")].values[0])  # readout first: b = uniform is constant
    expected_tv = 0.5 * np.abs(ff[0, 0] - a3[0, 0]).sum()
    assert stats[("forecast", "tv")].values[0] == pytest.approx(expected_tv, abs=1e-15)
