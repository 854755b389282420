"""Exact-history conditions (INTERVENTIONS.md §2) and partial-coverage panels (§3):
which contrasts exist, their pairing, tracks, the pooled panel contrast and P."""

from __future__ import annotations

import numpy as np
import pytest

from rapgen.scores.interventions import UnitValues, oracle_statistics, panel_statistics

NAN = np.nan


def uv(values: dict, present=None, valid=None) -> UnitValues:
    return UnitValues({k: np.array(v, dtype=float) for k, v in values.items()}, present, valid)


ALL = {"all": np.ones((2, 3), bool)}


def test_oracle_contrasts_and_tracks():
    o1 = uv({"spearman": [[0.5, 0.6, 0.7], [0.1, NAN, 0.3]], "adapt_6": [[0.2, 0.1, NAN], [NAN, NAN, NAN]]},
            np.ones((2, 3), bool), np.array([[1, 1, 1], [1, 0, 1]], bool))
    o2 = uv({"spearman": [[0.4, 0.4, 0.4], [0.2, 0.2, 0.2]]}, np.ones((2, 3), bool), np.ones((2, 3), bool))
    a1 = uv({"spearman": [[0.3, 0.3, 0.3], [0.0, 0.0, NAN]]})
    a3 = uv({"spearman": [[0.1, 0.2, 0.3], [0.1, 0.1, 0.1]]})
    ewma = uv({"spearman": [[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]], "adapt_6": [[0.0, 0.0, NAN], [NAN, NAN, NAN]]})
    recent = uv({"spearman": [[0.6, 0.6, 0.6], [0.1, 0.1, 0.1]]})
    tracks = {"all_origin": np.array([True, True, True]), "forecast_strict": np.array([False, False, True])}
    cells, contrasts = oracle_statistics("m", {"O1": o1, "O2": o2}, {"A1": a1, "A3": a3}, {"ewma": ewma, "recent": recent}, ALL, tracks)
    names = {(s.key["track"], s.key["contrast"], s.key["metric"]) for s in contrasts}
    assert {n for t, n, _ in names if t == "all_origin"} == {"O1-ewma", "O1-recent", "O2-ewma", "O2-recent", "O1-A1", "O2-A3"}
    assert ("all_origin", "O1-ewma", "adapt_6") in names and ("all_origin", "O1-recent", "adapt_6") not in names  # both sides only
    by = {(s.key["track"], s.key["contrast"], s.key["metric"]): s.values for s in contrasts}
    assert by[("all_origin", "O1-A1", "spearman")] == pytest.approx([0.3, 0.1])  # b: only T1 pairs (T2 O1, T3 A1 undefined)
    assert by[("forecast_strict", "O1-A1", "spearman")][0] == pytest.approx(0.4) and np.isnan(by[("forecast_strict", "O1-A1", "spearman")][1])
    assert by[("all_origin", "O1-ewma", "adapt_6")] == pytest.approx([0.15, NAN], nan_ok=True)
    cell = {(s.key["track"], s.key["cell"], s.key["metric"]): s for s in cells}
    assert cell[("all_origin", "O1", "spearman")].values == pytest.approx([0.6, 0.2])
    assert cell[("all_origin", "O1", "spearman")].counts["n_invalid"].tolist() == [0, 1]
    assert cell[("forecast_strict", "O2", "spearman")].counts["n_units"].tolist() == [1, 1]
    assert all(s.key["analysis"] == "oracle" for s in cells + contrasts)


def test_o3_contrasts_when_present():
    o2 = uv({"spearman": [[0.4, 0.4, 0.4], [0.2, 0.2, 0.2]]})
    o3 = uv({"spearman": [[0.5, 0.4, 0.3], [0.2, 0.3, 0.4]]})
    a3 = uv({"spearman": [[0.1, 0.1, 0.1], [0.1, 0.1, 0.1]]})
    _, contrasts = oracle_statistics("m", {"O2": o2, "O3": o3}, {"A3": a3}, {}, ALL, {"all_origin": np.ones(3, bool)})
    by = {s.key["contrast"]: s.values for s in contrasts}
    assert set(by) == {"O2-A3", "O3-A3", "O3-O2"}
    assert by["O3-O2"] == pytest.approx([0.0, 0.1])  # the effect of reopening Search


def test_panel_pooled_is_one_mean_over_all_cells():
    model = {
        "A1": uv({"spearman": [[0.5, NAN, 0.0], [0.4, 0.4, 0.4]], "adapt_6": [[0.3, NAN, NAN], [NAN, NAN, NAN]]}),
        "A3": uv({"spearman": [[0.6, 0.8, 0.0], [0.1, 0.1, 0.1]], "adapt_6": [[0.1, NAN, NAN], [NAN, NAN, NAN]]}),
    }
    base = {c: uv({"spearman": [[0.4, 0.4, 0.9], [0.2, 0.2, 0.2]], "adapt_6": [[0.0, NAN, NAN], [NAN, NAN, NAN]]}) for c in ("A1", "A3")}
    cells_mask = np.array([[True, True, False], [True, True, True]])  # a's third origin is outside P
    cells, contrasts = panel_statistics("tuned", model, base, cells_mask, ALL)
    by = {(s.key["contrast"], s.key["metric"]): s.values for s in contrasts}
    assert by[("A1:model-base", "spearman")] == pytest.approx([0.1, 0.2])
    assert by[("A3:model-base", "spearman")] == pytest.approx([0.3, -0.1])
    # a: differences 0.1 (A1, T1), 0.2 and 0.4 (A3, T1 and T2) -> 0.7 / 3, not (0.1 + 0.3) / 2.
    assert by[("pooled:model-base", "spearman")] == pytest.approx([0.7 / 3, 0.05])
    assert ("pooled:model-base", "adapt_6") not in by and ("A1:model-base", "adapt_6") in by
    assert {s.key["cell"] for s in cells} == {"model:A1", "model:A3", "base:A1", "base:A3"}
    assert all(s.key["track"] == "panel" and s.key["analysis"] == "panel" for s in cells + contrasts)
    base_a1 = next(s for s in cells if s.key["cell"] == "base:A1" and s.key["metric"] == "spearman")
    assert base_a1.values == pytest.approx([0.4, 0.2])  # the base is scored on P only
