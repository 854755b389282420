"""The committed sample shows the paper's definitions (issue 24), recomputed from ``units.parquet``.

``rapgen score`` runs once on the committed sample. Its reference agent ``ref-sample-classify``
declares a month-precision cut-off of 2024-01, so the exposure analysis has strict, exposed and
boundary origins; the TV contrasts are reference minus candidate; Table 5's columns and the
residual cuts are in diagnostics.json.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parent.parent
MODEL = "ref-sample-classify"
pytestmark = pytest.mark.skipif(not (REPO / "archive" / "models").is_dir(), reason="no committed archive in this checkout")


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("paper-sample")
    result = CliRunner().invoke(cli, ["score", "--root", str(REPO), "--out", str(out), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def units(scored) -> list[dict]:
    table = pq.read_table(scored / "units.parquet", columns=["policy", "entry", "condition", "field_id", "origin", "split",
                                                              "spearman", "tv"])
    return [r for r in table.to_pylist() if r["policy"] == "canonical"]


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _paired_macro(units: list[dict], entry: str, left: str, right: str, metric: str, split: str, origins=None) -> float:
    """Field-macro of the per-field mean over origins both define of the oriented difference."""
    by = {(u["condition"], u["field_id"], u["origin"].isoformat()): u[metric] for u in units
          if u["entry"] == entry and u["split"] == split}
    per_field: dict[str, list[float]] = defaultdict(list)
    for (cond, fid, origin), value in by.items():
        if cond != left or (origins is not None and origin not in origins):
            continue
        other = by.get((right, fid, origin))
        if value is not None and other is not None and not np.isnan(value) and not np.isnan(other):
            per_field[fid].append(other - value if metric == "tv" else value - other)
    return float(np.mean([np.mean(v) for v in per_field.values()]))


def test_the_cutoff_model_has_strict_exposed_and_boundary_origins(scored):
    info = json.loads((REPO / "archive/models" / MODEL / "model.json").read_text(encoding="utf-8"))
    assert (info["knowledge_cutoff"], info["cutoff_precision"]) == ("2024-01-01", "month") and info["cutoff_source"]
    rows = {r["origin"]: r for r in _csv(scored / "interventions/strict_masks.csv") if r["entry"] == MODEL}
    flags = {o: tuple(r[k] for k in ("forecast_strict", "joint_strict", "forecast_boundary", "joint_boundary")) for o, r in rows.items()}
    # c_eff = 2024-01-31: Forecast-Strict T > c_eff, Joint-Strict T − 6 months > c_eff, boundary with c − 1 day
    assert flags == {"2023-01-01": ("false",) * 4, "2023-07-01": ("false",) * 4,
                     "2024-01-01": ("false", "false", "true", "false"), "2024-07-01": ("true", "false", "false", "true"),
                     "2025-01-01": ("true", "true", "false", "false")}
    meta = json.loads((scored / "scores.json").read_text())
    assert MODEL in meta["tracks"]["forecast_strict"]["models"]  # c_eff precedes the strict origin 2025-01-01


def test_strict_vs_exposed_has_real_rows_on_every_mask(scored, units):
    rows = [r for r in _csv(scored / "interventions/exposure.csv") if r["entry"] == MODEL and r["split"] == "test"]
    masks = {(r["mask"], r["stratum"]): int(r["n_origins"]) for r in rows}
    assert masks[("forecast", "strict")] == 2 and masks[("forecast", "exposed")] == 3
    assert masks[("joint", "strict")] == 1 and masks[("joint", "exposed")] == 4
    assert masks[("forecast_boundary_in", "strict")] == 3 and masks[("joint_boundary_in", "strict")] == 2
    got = {(r["mask"], r["contrast"], r["metric"], r["stratum"]): r for r in rows}
    strict = {"2024-07-01", "2025-01-01"}
    for metric in ("spearman", "tv"):  # tv: A1's distance minus A3's, positive when Expanding is closer
        row = got[("forecast", "A3-A1", metric, "strict")]
        assert float(row["estimate"]) == pytest.approx(_paired_macro(units, MODEL, "A3", "A1", metric, "test", strict), abs=1e-12)
    assert got[("joint", "A4-A3", "spearman", "difference")]["estimate"] != ""


def test_tv_contrasts_are_reference_minus_candidate(scored, units):
    rows = {(r["entry"], r["contrast"], r["metric"]): r for r in _csv(scored / "contrasts.csv")
            if (r["track"], r["split"], r["policy"]) == ("all_origin", "test", "canonical")}
    checked = 0
    for entry in ("ref-history-trend", "ref-recent-hits", MODEL):
        for left, right in (("A1", "A0"), ("A3", "A1"), ("A4", "A3")):
            for metric in ("spearman", "tv"):
                want = _paired_macro(units, entry, left, right, metric, "test")
                assert float(rows[(entry, f"{left}-{right}", metric)]["estimate"]) == pytest.approx(want, abs=1e-12)
                checked += 1
    assert checked == 18
    lb = {(r["entry"], r["condition"]): float(r["estimate"]) for r in _csv(scored / "leaderboard.csv")
          if (r["track"], r["split"], r["policy"], r["metric"]) == ("all_origin", "test", "canonical", "tv")}
    # every unit of the reference agents is valid, so the contrast is the difference of the levels: A0's minus A1's
    assert float(rows[("ref-history-trend", "A1-A0", "tv")]["estimate"]) == pytest.approx(
        lb[("ref-history-trend", "A0")] - lb[("ref-history-trend", "A1")], abs=1e-12)


def test_table5_and_the_residual_cuts_are_in_diagnostics_json(scored):
    body = json.loads((scored / "diagnostics.json").read_text())
    ps = body["policy_sensitivity"]
    for r in ps["rows"]:
        base = r["estimates"]["canonical"]
        others = [v for p, v in r["estimates"].items() if p != "canonical" and v is not None]
        assert r["max_change"] == (max(abs(v - base) for v in others) if base is not None and others else None)
    diagnostic = {r["entry"] for r in ps["orderings"] if r["conditions"] == "A0 A1 A2 A3 A4"}
    assert diagnostic == {"ref-history-trend", "ref-recent-hits", MODEL}
    assert all(1 <= r["order_stable"] <= r["n_policies"] == 4 for r in ps["orderings"])
    signs = {(r["split"], r["entry"], r["contrast"]) for r in ps["contrast_signs"]}
    assert ("test", MODEL, "A4-A3") in signs and ("test", "ref-closed-book", "A1-A0") in signs
    ra = body["residual_alignment"]
    latest = {r["origin"] for r in ra["subsets"] if r["subset"] == "latest_origin"}
    assert latest == {"2025-01-01"}
    assert {r["contrast"] for r in ra["contrasts"]} == {"A1-A0", "A3-A0", "A3-A1"}
    assert [r for r in body["unit_provenance"]["rows"] if r["entry"] == MODEL and r["file"] == "oracle"]


def test_no_pooled_revision_contrast_for_the_panel(scored):
    panel = [r for r in _csv(scored / "interventions/contrasts.csv") if r["analysis"] == "panel"]
    assert panel and not [r for r in panel if r["metric"].startswith("adapt_") and r["contrast"] == "pooled:model-base"]
    assert not [r for r in panel if r["metric"] in ("adapt_12", "adapt_18")]


def test_exact_history_has_a_forecast_strict_track_at_the_scored_strict_origin(scored):
    """The O cells' Forecast-Strict track uses the scored release's strict origin (2025-01-01), not
    origins.json's (2023-07-01, before the model's cut-off): only the model with a cut-off has it."""
    rows = [r for r in _csv(scored / "interventions/cells.csv")
            if (r["analysis"], r["track"], r["split"], r["subset"], r["metric"]) == ("oracle", "forecast_strict", "test", "all", "spearman")]
    assert {r["entry"] for r in rows} == {MODEL} and {r["cell"] for r in rows} == {"O1", "O2", "O3"}
    assert {int(r["n_units"]) for r in rows} == {13}  # the 13 test fields at one origin
