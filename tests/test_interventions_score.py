"""``rapgen score`` and ``rapgen replay`` on a tiny archive with intervention records:
every §8 file with exactly its columns, the §6 additions declared and read through
the contract, panel and O units off the leaderboard, interval rows recomputed by brute
loops from the raw files, the Search-option counterfactual from replay's re-runs, and
an archive without records scored as before."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from factory import make_archive, reseal
from intervention_fixture import add_records
from interventions_factory import _panel_model, assignments_by_field
from scipy.stats import spearmanr

from rapgen.archive import SLOTS, Archive, open_verified
from rapgen.archive.calendar import add_months
from rapgen.archive.evidence import canonical_counts
from rapgen.cli import cli
from rapgen.scores import compute_scores, diagnostic_tables
from rapgen.scores.bootstrap import draw_counts, percentiles
from rapgen.scores.schema import CEILING_GAP_TABLE, INTERVENTION_FILES, POSTERIOR_TABLE, REVISION_TABLES, table_records
from rapgen.search import Backend, call_is_malformed

R = 40


@pytest.fixture(scope="module")
def archive_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("records") / "repo"
    make_archive(root)
    add_records(root, root.parent / "cache")
    _panel_model(root, Archive(root))
    reseal(root)
    return root


@pytest.fixture(scope="module")
def scored(archive_root) -> Path:
    out = archive_root.parent / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(archive_root), "--out", str(out), "--resamples", str(R)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def replayed(archive_root, scored) -> tuple[Path, str]:
    out = archive_root.parent / "replayed"
    shutil.copytree(scored, out)
    result = CliRunner().invoke(cli, ["replay", "--root", str(archive_root), "--out", str(out), "--cache-dir",
                                      str(archive_root.parent / "cache"), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return out, result.output


def _csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_every_file_with_exactly_its_columns(scored):
    assert sorted(p.name for p in (scored / "interventions").iterdir()) == sorted(INTERVENTION_FILES)
    for name, columns in INTERVENTION_FILES.items():
        header = (scored / "interventions" / name).read_text().split("\n", 1)[0]
        assert tuple(header.split(",")) == columns, name
    analyses = {r["analysis"] for r in _csv(scored / "interventions/cells.csv")}
    assert analyses == {"replay", "oracle", "panel"}


def test_panel_model_and_oracle_units_stay_off_the_leaderboard(scored):
    for name in ("leaderboard.csv", "ranks.csv", "contrasts.csv"):
        rows = _csv(scored / name)
        assert rows and "model-t" not in {r["entry"] for r in rows}, name
        assert not {r.get("condition", "") for r in rows} & {"O1", "O2", "O3"}, name
    panel = [r for r in _csv(scored / "interventions/cells.csv") if r["analysis"] == "panel"]
    assert {r["entry"] for r in panel} == {"model-t"} and {r["cell"] for r in panel} == {"model:A1", "base:A1"}
    assert {r["split"] for r in panel if r["n_fields"] != "0"} == {"test"}
    masks = _csv(scored / "interventions/strict_masks.csv")
    assert {r["entry"] for r in masks} == {"model-a", "model-b", "model-t"}


def test_reliability_additions_are_declared_and_read_through_the_contract(scored):
    body = json.loads((scored / "diagnostics.json").read_text())
    assert sorted(body["reliability"]["posterior"]) == ["all", "dev", "test"]
    posterior = table_records(POSTERIOR_TABLE, body)
    for row in posterior:
        for c in POSTERIOR_TABLE.columns:
            assert c.key in row and (not c.interval or (c.ci_low in row and c.ci_high in row)), c.key
    assert row["ceiling"] == pytest.approx(np.sqrt(row["estimate"]), abs=1e-12)
    for spec in REVISION_TABLES:
        rows = table_records(spec, body)
        assert [r["horizon"] for r in rows] == [6, 12, 18]
    titles = [t.title for s in diagnostic_tables(body) if s.key == "reliability" for t in s.tables]
    assert POSTERIOR_TABLE.title in titles and all(t.title in titles for t in REVISION_TABLES)


def test_ceiling_gap_is_each_leaderboard_row_minus_the_posterior_ceiling(scored):
    body = json.loads((scored / "diagnostics.json").read_text())
    gaps = table_records(CEILING_GAP_TABLE, body)
    lb = {(r["split"], r["entry"], r["kind"], r["condition"]): r for r in _csv(scored / "leaderboard.csv")
          if (r["track"], r["policy"], r["metric"]) == ("all_origin", "canonical", "spearman")}
    assert sorted((r["split"], r["entry"], r["kind"], r["condition"]) for r in gaps) == sorted(lb)  # one row per leaderboard row
    for row in gaps:
        ceiling = body["reliability"]["posterior"][row["split"]]["ceiling"]
        assert row["estimate"] == pytest.approx(float(lb[row["split"], row["entry"], row["kind"], row["condition"]]["estimate"])
                                                - ceiling, abs=1e-12)
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"] and row["fc_low"] <= row["fc_high"]
    ewma = {r["split"]: r for r in gaps if r["entry"] == "ewma"}
    for split, row in ewma.items():  # the EWMA row is the posterior table's ewma_gap, negated
        post = body["reliability"]["posterior"][split]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((-post["ewma_gap_ci_high"], -post["ewma_gap_ci_low"]), abs=1e-12)


def _target_counts(archive: Archive) -> dict[tuple[str, date], list[int]]:
    by_field = assignments_by_field(archive)
    w = archive.origins.window_months
    return {(f.field_id, o): canonical_counts(by_field[f.field_id], o, add_months(o, w))
            for f in archive.fields for o in archive.origins.origins}


def _brute_row(archive: Archive, field_values: dict[str, float], split: str, level: float, seed: int) -> tuple:
    """estimate, ci_low, ci_high, fc_low, fc_high, n_fields by explicit loops over replicates."""
    fields = [f for f in archive.fields if f.split == split]
    values = {f.field_id: field_values.get(f.field_id, np.nan) for f in fields}
    defined = [v for v in values.values() if not np.isnan(v)]
    out = [float(np.mean(defined)), None, None, None, None, len(defined)]
    for slot, unit_of in ((1, {f.field_id: f.block_id for f in fields}), (3, {f.field_id: f.field_id for f in fields})):
        units = sorted(set(unit_of.values()), key=lambda u: u.encode())
        C = draw_counts(len(units), R, seed)
        reps = []
        for r in range(R):
            num = den = 0.0
            for fid, v in values.items():
                if not np.isnan(v):
                    c = C[r, units.index(unit_of[fid])]
                    num, den = num + c * v, den + c
            if den > 0:
                reps.append(num / den)
        out[slot], out[slot + 1] = np.percentile(reps, percentiles(level), method="linear")
    return tuple(out)


def test_replay_cell_interval_row_by_brute_loops(archive_root, scored):
    archive = Archive(archive_root)
    targets = _target_counts(archive)
    per_field: dict[str, list[float]] = defaultdict(list)
    for line in (archive_root / "archive/models/model-a/replays.jsonl").read_text().splitlines():
        r = json.loads(line)
        if (r["source_condition"], r["readout"], r["budget"]) != ("A4", "forecast", "all") or r["weights"] is None:
            continue
        y = targets[(r["field_id"], date.fromisoformat(r["origin"]))]
        p = [r["weights"][s] for s in SLOTS]
        if len(set(y)) > 1:
            per_field[r["field_id"]].append(0.0 if len(set(p)) == 1 else spearmanr(p, y).statistic)
    field_values = {f: float(np.mean(v)) for f, v in per_field.items()}
    boot = archive.ledger["bootstrap"]
    want = _brute_row(archive, field_values, "test", float(boot["level"]), int(boot["seed"]))
    row = next(r for r in _csv(scored / "interventions/cells.csv") if (r["analysis"], r["split"], r["entry"], r["subset"], r["cell"],
                                                                       r["metric"]) == ("replay", "test", "model-a", "all", "S->F:all", "spearman"))
    got = tuple(float(row[c]) for c in ("estimate", "ci_low", "ci_high", "fc_low", "fc_high")) + (int(row["n_fields"]),)
    assert got == pytest.approx(want, abs=1e-9)


def test_oracle_contrast_interval_row_by_brute_loops(archive_root, scored):
    """O1-A1 (tv) on dev: the paired unit differences (reference minus candidate), field-macro, block draws."""
    archive = open_verified(archive_root).release()
    targets = _target_counts(archive)
    o1 = {(u.field_id, u.origin): u.weights for u in archive.oracle("model-a") if u.condition == "O1"}
    a1 = {(u.field_id, u.origin): u.weights for u in archive.predictions("model-a") if u.condition == "A1"}
    per_field: dict[str, list[float]] = defaultdict(list)
    for key, p in o1.items():
        y = np.array(targets[key], dtype=float)
        if p is None or a1.get(key) is None or y.sum() == 0:
            continue
        y = y / y.sum()
        # reference minus candidate (positive: O1 is closer): tv(A1, y) - tv(O1, y)
        per_field[key[0]].append(0.5 * np.abs(np.array(a1[key]) - y).sum() - 0.5 * np.abs(np.array(p) - y).sum())
    field_values = {f: float(np.mean(v)) for f, v in per_field.items()}
    boot = archive.ledger["bootstrap"]
    want = _brute_row(archive, field_values, "test", float(boot["level"]), int(boot["seed"]))
    row = next(r for r in _csv(scored / "interventions/contrasts.csv") if (r["analysis"], r["track"], r["split"], r["entry"], r["subset"],
                                                                           r["contrast"], r["metric"]) ==
               ("oracle", "all_origin", "test", "model-a", "all", "O1-A1", "tv"))
    got = tuple(float(row[c]) for c in ("estimate", "ci_low", "ci_high", "fc_low", "fc_high")) + (int(row["n_fields"]),)
    assert got == pytest.approx(want, abs=1e-9)


def test_replay_runs_o3_and_the_counterfactual(archive_root, replayed):
    out, output = replayed
    report = json.loads((out / "replay.json").read_text())
    model_a = next(m for m in report["models"] if m["model_id"] == "model-a")
    assert "O3" in {c["condition"] for c in model_a["conditions"]} and report["ok"]
    reruns = json.loads((out / "option_reruns.json").read_text())
    archive = open_verified(archive_root).release()
    assert reruns["manifest_sha256"] == archive.manifest_sha256
    wellformed = [c for c in archive.traces("model-a") if not call_is_malformed(c)]
    assert len(reruns["calls"]) == len(wellformed) > 0
    assert len(wellformed) < len(archive.traces("model-a"))  # malformed calls are recorded, and get no re-run
    backend = Backend(archive, cache_dir=archive_root.parent / "cache", jobs=1)
    for mid, fid, origin, condition, k, ids in reruns["calls"][:: max(1, len(reruns["calls"]) // 7)]:
        call = next(c for c in wellformed if (c.field_id, c.origin.isoformat(), c.condition, c.call_index) == (fid, origin, condition, k))
        T = date.fromisoformat(origin)
        regime = "fixed" if condition in ("A1", "A2") else "expanding"
        again = backend.search(fid, T, regime, {"query": call.query, "sort": "relevance",
                                                "date_from": add_months(T, -6).isoformat(), "date_to": origin})
        assert list(again.ids) == ids
    rows = _csv(out / "interventions/option_counterfactual.csv")
    assert rows and {r["arm"] for r in rows} == {"native", "common", "gain"}
    by = {(r["split"], r["regime"], r["budget"], r["side"], r["arm"], r["metric"]): r for r in rows}
    signature = {(r["split"], r["regime"], r["side"], r["metric"]): r for r in _csv(out / "interventions/signature.csv")}
    for (split, regime, budget, side, arm, metric), r in by.items():
        if arm == "native" and budget == "matched" and side != "delta" and metric == "recent_share":
            assert r["estimate"] == signature[(split, regime, side, metric)]["estimate"]  # same ids, same k
    # rapgen score after replay reads the hand-off and writes the same bytes
    again = out.parent / "rescored"
    shutil.copytree(out, again)
    result = CliRunner().invoke(cli, ["score", "--root", str(archive_root), "--out", str(again), "--resamples", str(R)])
    assert result.exit_code == 0, result.output
    assert (again / "interventions/option_counterfactual.csv").read_bytes() == (out / "interventions/option_counterfactual.csv").read_bytes()


def test_a_stale_rerun_file_is_not_used(archive_root, scored, tmp_path):
    out = tmp_path / "stale"
    shutil.copytree(scored, out)
    (out / "option_reruns.json").write_text(json.dumps({"schema_version": 1, "manifest_sha256": "0" * 64, "calls": [["model-a", "alpha",
                                                                                                                   "2023-01-01", "A3", 0, []]]}))
    result = CliRunner().invoke(cli, ["score", "--root", str(archive_root), "--out", str(out), "--resamples", str(R)])
    assert result.exit_code == 0, result.output
    assert (out / "interventions/option_counterfactual.csv").read_text().count("\n") == 1  # the header alone
    (out / "option_reruns.json").write_text("{not json")
    result = CliRunner().invoke(cli, ["score", "--root", str(archive_root), "--out", str(out), "--resamples", str(R)])
    assert result.exit_code == 1 and "option_reruns.json" in result.output and "Traceback" not in result.output


def test_an_archive_without_records_scores_as_before(_tiny_template, tmp_path):
    archive = open_verified(_tiny_template.root).release()
    result = compute_scores(archive, resamples=20, malformed=call_is_malformed)
    assert result.files == {} and "posterior" not in result.diagnostics["reliability"]
    out = tmp_path / "plain"
    assert CliRunner().invoke(cli, ["score", "--root", str(_tiny_template.root), "--out", str(out), "--resamples", "20"]).exit_code == 0
    assert not (out / "interventions").exists()


def test_month_precision_cutoff_is_the_forecast_strict_bound(_tiny_template):
    from rapgen.scores.units import read_model_units

    archive = Archive(_tiny_template.root)
    fields = [f.field_id for f in archive.fields]
    units = read_model_units(archive, fields, tuple(archive.origins.origins), frozenset({"model-b"}), {"model-a": date(2024, 6, 30)})
    assert {e.entry for e in units.entries} == {"model-a"}
    assert {e.cutoff for e in units.entries} == {date(2024, 6, 30)}


def test_counting_rules_from_model_json_match_the_records(archive_root):
    # releases.csv's blocks before an errata count with the rules read from model.json alone: the
    # panel model and its month-precision c_eff must come out as the parsed records give them.
    from rapgen.scores.interventions.sources import counting_rules, effective_cutoffs, model_records, panel_models
    from rapgen.search import validate_call

    release = open_verified(archive_root, validate_call=validate_call).release()
    records = model_records(release)
    panels, cutoffs = counting_rules(release)
    assert (panels, cutoffs) == (panel_models(records), effective_cutoffs(records))
    assert panels == {"model-t"} and list(cutoffs) == ["model-t"]
