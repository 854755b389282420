"""From parsed records to every DIR/interventions/ file on a small synthetic grid, with the
replay cells, the matched-call signature and an exposure row recomputed from the raw records
by plain loops (agreement to 1e-9)."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import numpy as np
import pytest
from scipy.stats import rankdata

from rapgen.archive.calendar import add_months
from rapgen.archive.interventions import OracleUnit, Panel, Readout
from rapgen.archive.records import TraceCall, Unit
from rapgen.scores.interventions import INTERVENTION_FILES, intervention_files, split_draws
from rapgen.scores.interventions.assemble import Grid, ModelRecords, assemble_rows

FIELDS = ["fa", "fb", "fc", "fd"]
SPLITS = ["dev", "dev", "test", "test"]
BLOCKS = ["b1", "b1", "b2", "b3"]
ORIGINS = [date(2025, 1, 1), date(2025, 7, 1), date(2026, 1, 1)]
CONDITIONS = ("A0", "A1", "A2", "A3", "A4")
HEX = "0" * 64


def _spearman(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.isnan(a).any() or np.isnan(b).any():
        return np.nan
    if np.ptp(a) <= 1e-12:
        return 0.0
    if np.ptp(b) <= 1e-12:
        return np.nan
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def _macro(per_unit: dict[tuple[int, int], float], split: str) -> float:
    fields = []
    for i, s in enumerate(SPLITS):
        vals = [v for (f, _), v in per_unit.items() if f == i and not np.isnan(v)]
        if s == split and vals:
            fields.append(np.mean(vals))
    return float(np.mean(fields))


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(7)
    F, O = len(FIELDS), len(ORIGINS)
    y = rng.dirichlet(np.ones(8), size=(F, O))
    y[3, 2] = np.nan  # one episode without a target
    x, ewma, recent = (rng.dirichlet(np.ones(8), size=(F, O)) for _ in range(3))
    papers = {f"p{i}": date(2024, 1, 1) + timedelta(days=int(d)) for i, d in enumerate(rng.integers(0, 700, 60))}
    labels = {f: {f"p{i}": int(rng.integers(0, 8)) for i in rng.choice(60, 30, replace=False)} for f in FIELDS}

    def weights():
        return tuple(rng.dirichlet(np.ones(8)))

    units, traces, readouts, oracle, o_traces = [], [], [], [], []
    for fi, f in enumerate(FIELDS):
        for T in ORIGINS:
            for c in CONDITIONS:
                valid = rng.random() > 0.1
                units.append(Unit(f, T, c, weights() if valid else None, valid))
                if c != "A0":
                    for k in range(int(rng.integers(0, 5))):
                        ids = tuple(rng.choice(sorted(papers), int(rng.integers(0, 5)), replace=False))
                        query = "" if rng.random() < 0.1 else "q"
                        date_from = add_months(T, -6).isoformat() if rng.random() < 0.4 else None
                        traces.append(TraceCall(f, T, c, k, query, ["relevance", "date"][k % 2], date_from, None,
                                                len(ids), () if not query else ids))
            for source in ("A3", "A4"):
                for readout in ("forecast", "state"):
                    for budget in ("all", "matched"):
                        valid = rng.random() > 0.1
                        readouts.append(Readout(f, T, source, readout, budget, 0, HEX, HEX, weights() if valid else None, valid))
            for c in ("O1", "O2", "O3"):
                oracle.append(OracleUnit(f, T, c, weights(), True, HEX, HEX))
            o_traces.append(TraceCall(f, T, "O3", 0, "q", "relevance", None, None, 1, ("p1",)))
    main = ModelRecords("m", units, traces, readouts, oracle, o_traces, knowledge_cutoff=date(2025, 3, 1), cutoff_precision="month")
    base = ModelRecords("base", units, traces)
    tuned_units = [Unit(u.field_id, u.origin, u.condition, tuple(np.roll(u.weights, 1)) if u.valid else None, u.valid)
                   for u in units if u.condition in ("A1", "A3") and u.field_id in ("fc", "fd") and u.origin == ORIGINS[2]]
    cells = frozenset({("fc", ORIGINS[2]), ("fd", ORIGINS[2])})
    tuned = ModelRecords("tuned", tuned_units, panel=Panel(("test",), (ORIGINS[2],), ("A1", "A3")), panel_cells=cells, base_model="base")
    change_rich = rng.random((F, O)) < 0.5
    grid = Grid(FIELDS, SPLITS, BLOCKS, ORIGINS, 6, ORIGINS[2], y, x, ewma, recent, change_rich, papers, labels,
                split_draws(FIELDS, SPLITS, BLOCKS, 200, 0, 0.95))
    return grid, [main, base, tuned]


def malformed(call: TraceCall) -> bool:
    return not call.query.strip()


@pytest.fixture(scope="module")
def rows(world):
    grid, models = world
    return assemble_rows(grid, models, malformed)


def test_every_file_is_written_with_its_columns(rows):
    files = intervention_files(rows)
    for name, columns in INTERVENTION_FILES.items():
        text = files[f"interventions/{name}"].decode()
        table = list(csv.reader(io.StringIO(text)))
        assert tuple(table[0]) == columns
        if name != "option_counterfactual.csv":
            assert len(table) > 1, name
    analyses = {r["analysis"] for r in rows["cells.csv"]}
    assert analyses == {"replay", "oracle", "panel"}
    assert {r["track"] for r in rows["cells.csv"] if r["analysis"] == "oracle"} == {"all_origin", "forecast_strict"}
    assert {r["entry"] for r in rows["strict_masks.csv"]} == {"m"}  # the others have no cut-off
    panel = [r for r in rows["contrasts.csv"] if r["analysis"] == "panel"]
    assert {r["split"] for r in panel if r["n_fields"]} == {"test"}  # P lies in test only
    assert {r["contrast"] for r in panel} == {"A1:model-base", "A3:model-base", "pooled:model-base"}


def test_replay_cell_matches_brute_force(world, rows):
    grid, models = world
    m = models[0]
    for cell, source, readout, budget in (("S->F:matched", "A4", "forecast", "matched"), ("F->S:all", "A3", "state", "all")):
        per_unit = {}
        for r in m.readouts:
            if (r.source_condition, r.readout, r.budget) == (source, readout, budget):
                i, j = FIELDS.index(r.field_id), ORIGINS.index(r.origin)
                per_unit[(i, j)] = _spearman(r.weights, grid.y[i, j]) if r.valid else np.nan
        for split in ("dev", "test"):
            row = next(x for x in rows["cells.csv"] if (x["analysis"], x["split"], x["subset"], x["cell"], x["metric"])
                       == ("replay", split, "all", cell, "spearman"))
            assert row["estimate"] == pytest.approx(_macro(per_unit, split), abs=1e-9)
            assert row["n_units"] == 6 and row["n_units"] == row["n_valid"] + row["n_invalid"]


def test_signature_matches_brute_force(world, rows):
    grid, models = world
    m = models[0]
    per_unit = {}
    for i, f in enumerate(FIELDS):
        for j, T in enumerate(ORIGINS):
            sides = []
            for c in ("A3", "A4"):
                sides.append(sorted((t for t in m.traces if (t.field_id, t.origin, t.condition) == (f, T, c)), key=lambda t: t.call_index))
            k = min(len(s) for s in sides)
            slots = [pid for t in sides[0][:k] if t.query.strip() for pid in t.returned_ids]
            recent = [pid for pid in slots if add_months(T, -6) <= grid.first_submitted[pid] < T]
            per_unit[(i, j)] = len(recent) / len(slots) if slots else np.nan
    for split in ("dev", "test"):
        row = next(x for x in rows["signature.csv"] if (x["split"], x["regime"], x["side"], x["metric"])
                   == (split, "expanding", "forecast", "recent_share"))
        assert row["estimate"] == pytest.approx(_macro(per_unit, split), abs=1e-9)
        assert row["n_units"] == 6


def test_exposure_row_matches_brute_force(world, rows):
    grid, models = world
    m = models[0]
    by = {(u.field_id, u.origin, u.condition): u for u in m.units}
    # Month precision: c_eff = 2025-03-31, so Forecast-Strict origins are 2025-07 and 2026-01.
    strict = [False, True, True]
    for stratum in ("strict", "exposed", "difference"):
        fields = []
        for i, f in enumerate(FIELDS):
            if SPLITS[i] != "test":
                continue
            parts = {}
            for name, mask in (("strict", strict), ("exposed", [not s for s in strict])):
                d = []
                for j, T in enumerate(ORIGINS):
                    a, b = by[(f, T, "A3")], by[(f, T, "A1")]
                    if mask[j] and a.valid and b.valid and not np.isnan(grid.y[i, j]).any():
                        d.append(_spearman(a.weights, grid.y[i, j]) - _spearman(b.weights, grid.y[i, j]))
                d = [v for v in d if not np.isnan(v)]
                parts[name] = np.mean(d) if d else np.nan
            value = parts["strict"] - parts["exposed"] if stratum == "difference" else parts[stratum]
            if not np.isnan(value):
                fields.append(value)
        row = next(x for x in rows["exposure.csv"] if (x["split"], x["mask"], x["contrast"], x["metric"], x["stratum"])
                   == ("test", "forecast", "A3-A1", "spearman", stratum))
        assert row["estimate"] == pytest.approx(np.mean(fields), abs=1e-9)
        assert row["n_fields"] == len(fields)
    masks = {r["mask"] for r in rows["exposure.csv"]}
    assert masks == {"forecast", "joint"}  # no boundary origin for this cut-off
    assert {r["contrast"] for r in rows["exposure.csv"] if r["mask"] == "joint"} >= {"A4-A3", "A2-A1", "readout:all"}


def test_option_counterfactual_from_reruns(world):
    grid, models = world
    m = models[0]
    # A stand-in re-run: every well-formed call returns the papers of the recent window it asked about, the first two by id.
    recent_ids = sorted(p for p, d in grid.first_submitted.items())
    reruns = {}
    for t in m.traces:
        if t.query.strip():
            lo = add_months(t.origin, -6)
            reruns[("m", t.field_id, t.origin, t.condition, t.call_index)] = [p for p in recent_ids if lo <= grid.first_submitted[p] < t.origin][:2]
    rows = assemble_rows(grid, models, malformed, reruns=reruns)["option_counterfactual.csv"]
    assert {(r["budget"], r["side"], r["arm"]) for r in rows} == {
        (b, s, a) for b in ("matched", "all") for s in ("forecast", "state", "delta") for a in ("native", "common", "gain")}
    per_unit = {}
    for i, f in enumerate(FIELDS):
        for j, T in enumerate(ORIGINS):
            sides = [sorted((t for t in m.traces if (t.field_id, t.origin, t.condition) == (f, T, c)), key=lambda t: t.call_index)
                     for c in ("A3", "A4")]
            k = min(len(s) for s in sides)
            slots = [p for t in sides[0][:k] if t.query.strip() for p in reruns[("m", f, T, "A3", t.call_index)]]
            per_unit[(i, j)] = 1.0 if slots else np.nan  # every re-run id is recent by construction
    row = next(r for r in rows if (r["split"], r["regime"], r["budget"], r["side"], r["arm"], r["metric"])
               == ("test", "expanding", "matched", "forecast", "common", "recent_share"))
    assert row["estimate"] == pytest.approx(_macro(per_unit, "test"), abs=1e-12)
    assert intervention_files({"option_counterfactual.csv": rows})["interventions/option_counterfactual.csv"].count(b"\n") == len(rows) + 1


def test_extra_metrics_computed_ahead_give_the_rows_computed_in_turn(world, monkeypatch):
    """With extra metrics, every condition's values are started in a second thread while the
    signatures are made; the rows are those of computing each condition when it is first read."""
    from rapgen.scores.interventions import assemble

    grid, models = world
    seen = []

    def extra(p, is_state):
        seen.append(is_state)
        return {"row_sum": np.nansum(p, axis=-1) + (0.5 if is_state else 0.0)}

    ahead = assemble_rows(grid, models, malformed, extra)
    n_ahead = len(seen)
    monkeypatch.setattr(assemble._Model, "compute_ahead", lambda self, pool: None)
    in_turn = assemble_rows(grid, models, malformed, extra)
    assert intervention_files(ahead) == intervention_files(in_turn)  # byte for byte
    assert any(r.get("metric") == "row_sum" for rows in ahead.values() for r in rows)
    assert n_ahead >= len(seen) - n_ahead  # every condition read was computed ahead (none twice)


def test_condition_values_started_before_the_grid_give_the_same_rows(world):
    """The scorer starts every model's condition values before the change-rich mask, the paper
    dates and the draws exist (:class:`ConditionsAhead`, on a grid with only the compositions);
    assemble_rows then takes them, and the rows are the bytes of computing them itself."""
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from rapgen.scores.interventions.assemble import ConditionsAhead

    grid, models = world
    computed = []

    def extra(p, is_state):
        computed.append(is_state)
        return {"row_sum": np.nansum(p, axis=-1) + (0.5 if is_state else 0.0)}

    early = replace(grid, change_rich=np.zeros(grid.shape, dtype=bool), first_submitted={}, labels={}, draws={})
    itself = assemble_rows(grid, models, malformed, extra)
    n_itself = len(computed)
    with ThreadPoolExecutor(max_workers=2) as pool:
        ahead = ConditionsAhead(early, models, extra, pool)
        taken = assemble_rows(grid, models, malformed, extra, ahead=ahead)
    assert intervention_files(taken) == intervention_files(itself)  # byte for byte
    assert len(computed) == 2 * n_itself  # assemble_rows computed none of them again
    assert not ahead.futures  # every model took its own


def test_the_scorers_plan_gives_the_counterfactual_and_signature_of_its_own(world):
    """assemble_rows with plan_into makes each pair's native signatures once: signature.csv reads the
    matched budget's, and its plan completed with re-run ids gives the option_counterfactual.csv
    rows of a plan made alone and of assemble_rows with the re-runs, byte for byte."""
    from rapgen.scores.interventions.assemble import CounterfactualPlan

    grid, models = world
    recent_ids = sorted(grid.first_submitted)
    reruns = {}
    for t in models[0].traces:
        if t.query.strip():
            lo = add_months(t.origin, -6)
            reruns[("m", t.field_id, t.origin, t.condition, t.call_index)] = [
                p for p in recent_ids if lo <= grid.first_submitted[p] < t.origin][:2]
    made: list = []
    rows = assemble_rows(grid, models, malformed, plan_into=made)
    (plan,) = made
    alone = assemble_rows(grid, models, malformed)
    assert intervention_files(rows) == intervention_files(alone)
    assert any(r["side"] == "pair" for r in rows["signature.csv"])
    with_reruns = assemble_rows(grid, models, malformed, reruns=reruns)["option_counterfactual.csv"]
    made_alone = CounterfactualPlan(grid, models, malformed).rows(reruns)
    handed = plan.rows(reruns)
    assert handed  # the stand-in re-runs cover model m's pairs
    for other in (made_alone, with_reruns):
        assert intervention_files({"option_counterfactual.csv": handed}) == intervention_files({"option_counterfactual.csv": other})
