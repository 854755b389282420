"""Temporal exposure (INTERVENTIONS.md §4): c_eff, the §9 mask rows, boundary origins,
which mask a contrast takes, and the strict / exposed / difference strata."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from rapgen.scores.interventions import (
    effective_cutoff,
    exposure_statistics,
    mask_kind,
    masks_of,
    split_draws,
    strict_mask_rows,
    summarise,
)

ORIGINS = [date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1), date(2025, 7, 1), date(2026, 1, 1)]


def _months(rows, attr) -> list[str]:
    return [r.origin.strftime("%Y-%m") for r in rows if getattr(r, attr)]


@pytest.mark.parametrize(
    "cutoff,precision,forecast,joint,f_boundary,j_boundary",
    [
        (date(2025, 12, 1), "day", ["2026-01"], [], [], []),
        (date(2024, 6, 1), "month", ["2024-07", "2025-01", "2025-07", "2026-01"], ["2025-01", "2025-07", "2026-01"], [], []),
        (date(2024, 7, 1), "month", ["2025-01", "2025-07", "2026-01"], ["2025-07", "2026-01"], ["2024-07"], ["2025-01"]),
    ],
)
def test_worked_mask_rows(cutoff, precision, forecast, joint, f_boundary, j_boundary):
    rows = strict_mask_rows("m", cutoff, None, precision, ORIGINS, 6)
    assert [r.origin for r in rows] == ORIGINS
    assert _months(rows, "forecast_strict") == forecast
    assert _months(rows, "joint_strict") == joint
    assert _months(rows, "forecast_boundary") == f_boundary
    assert _months(rows, "joint_boundary") == j_boundary


def test_paper_mask_counts():
    """The paper's 1/4/3 Forecast- and 0/3/2 Joint-Strict masks."""
    bounds = [(date(2025, 12, 1), "day"), (date(2024, 6, 1), "month"), (date(2024, 7, 1), "month")]
    rows = [strict_mask_rows("m", c, None, p, ORIGINS, 6) for c, p in bounds]
    assert [sum(r.forecast_strict for r in rs) for rs in rows] == [1, 4, 3]
    assert [sum(r.joint_strict for r in rs) for rs in rows] == [0, 3, 2]


def test_effective_cutoff_rules():
    assert effective_cutoff(date(2024, 2, 1), None, "month") == date(2024, 2, 29)  # leap year
    assert effective_cutoff(None, date(2024, 12, 1), "month") == date(2024, 12, 31)  # release date when no cut-off
    assert effective_cutoff(date(2024, 2, 10), date(2023, 1, 1), "day") == date(2024, 2, 10)  # knowledge_cutoff first
    assert effective_cutoff(None, None, "month") is None
    with pytest.raises(ValueError, match="1st of a month"):
        effective_cutoff(date(2024, 2, 10), None, "month")
    with pytest.raises(ValueError, match="cutoff_precision"):
        effective_cutoff(date(2024, 2, 1), None, "year")


def test_no_cutoff_no_rows():
    assert strict_mask_rows("m", None, None, "day", ORIGINS, 6) == []
    assert masks_of([]) == {}


def test_day_precision_boundary_is_the_cutoff_origin():
    rows = strict_mask_rows("m", date(2025, 7, 1), None, "day", ORIGINS, 6)
    assert _months(rows, "forecast_boundary") == ["2025-07"]  # T = c is strict only under c − 1 day
    masks = masks_of(rows)
    assert sorted(masks) == ["forecast", "forecast_boundary_in", "joint", "joint_boundary_in"]
    assert masks["forecast_boundary_in"].tolist() == [False, False, False, True, True]


@pytest.mark.parametrize(
    "contrast,kind",
    [("A1-A0", "forecast"), ("A3-A1", "forecast"), ("A0-ewma", "forecast"), ("O2-ewma", "forecast"), ("O3-O2", "forecast"),
     ("A2-A1", "joint"), ("A4-A3", "joint"), ("acquisition:matched", "joint"), ("native_shift_S", "joint")],
)
def test_mask_kind(contrast, kind):
    assert mask_kind(contrast) == kind


def test_strata_and_difference():
    # Two fields × five origins of unit differences; strict origins are the last two.
    diff = np.array([[0.1, 0.2, 0.3, 0.5, 0.7], [0.0, np.nan, 0.2, np.nan, np.nan]])
    masks = {"forecast": np.array([False, False, False, True, True])}
    stats = exposure_statistics("m", {"A3-A1": {"spearman": diff, "adapt_6": diff}, "A4-A3": {"spearman": diff}}, masks)
    assert {s.key["metric"] for s in stats} == {"spearman"}
    assert {s.key["contrast"] for s in stats} == {"A3-A1"}  # A4-A3 takes the joint mask, absent here
    by = {s.key["stratum"]: s for s in stats}
    assert by["strict"].values[0] == pytest.approx(0.6)
    assert by["exposed"].values[0] == pytest.approx(0.2)
    assert by["difference"].values[0] == pytest.approx(0.4)
    assert np.isnan(by["strict"].values[1]) and np.isnan(by["difference"].values[1])  # b has no strict value
    assert [by[s].extra["n_origins"] for s in ("strict", "exposed", "difference")] == [2, 3, 5]
    draws = split_draws(["a", "b"], ["dev", "dev"], ["x", "y"], 20, 0, 0.95)
    rows = {r["stratum"]: r for r in summarise(stats, draws)}
    assert rows["difference"]["n_fields"] == 1 and rows["difference"]["estimate"] == pytest.approx(0.4)
    assert rows["exposed"]["n_fields"] == 2 and rows["exposed"]["estimate"] == pytest.approx(0.15)


def test_empty_stratum_has_empty_values():
    diff = np.array([[0.1, 0.2]])
    stats = exposure_statistics("m", {"A1-A0": {"tv": diff}}, {"forecast": np.array([False, False])})
    draws = split_draws(["a"], ["test"], ["x"], 20, 0, 0.95)
    rows = {r["stratum"]: r for r in summarise(stats, draws)}
    assert rows["strict"]["estimate"] is None and rows["strict"]["ci_low"] is None and rows["strict"]["n_fields"] == 0
    assert rows["strict"]["n_origins"] == 0
    assert rows["exposed"]["estimate"] == pytest.approx(0.15)
