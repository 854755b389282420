"""``rapgen score`` end to end on the tiny archive: counts, tracks, validity,
contrasts, ranks, the output files and their columns, determinism, errors, CLI."""

from __future__ import annotations

import csv
import importlib.util
import json
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.archive import Archive, open_release, verify_archive
from rapgen.archive.writer import write_assignments
from rapgen.io import write_json
from rapgen.cli import cli
from rapgen.errors import ArchiveError, ScoringError
from rapgen.scores import compute_scores, write_scores
from rapgen.scores.counts import POLICIES, build_windows, compute_counts
from rapgen.scores.diagnostics import UNIT_COLUMNS as DIAGNOSTIC_UNIT_COLUMNS

RESAMPLES = 200
BENCH = Path(__file__).resolve().parent.parent / "bench" / "score.py"
SPEC_COLUMNS = {
    "leaderboard.csv": "track,split,policy,entry,kind,condition,metric,estimate,ci_low,ci_high,n_fields,n_episodes,n_valid,n_invalid",
    "contrasts.csv": "track,split,policy,entry,contrast,metric,estimate,ci_low,ci_high,n_fields",
    "ranks.csv": "track,split,policy,condition,metric,entry,estimate,rank,p_first",
    "field_scores.csv": "track,split,policy,entry,kind,condition,metric,field_id,estimate,n_origins",
    "origin_scores.csv": "split,policy,entry,kind,condition,metric,origin,estimate,n_fields",
    "compositions.csv": "field_id,policy,window_start,window_end,n_total,D0,D1,D2,D3,D4,D5,D6,D7",
    "field_clustered.csv": "table,track,split,policy,entry,condition,metric,estimate,ci_low,ci_high",
}


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def num(cell: str) -> float | None:
    return None if cell == "" else float(cell)


@pytest.fixture(scope="module")
def scored(_tiny_template, tmp_path_factory):
    """The tiny archive scored once (no §6 diagnostics), written to a folder."""
    result = compute_scores(open_release(_tiny_template.root), resamples=RESAMPLES, diagnostics=False)
    out = tmp_path_factory.mktemp("scores")
    write_scores(result, out)
    return _tiny_template.root, result, out


# ---------------------------------------------------------------- counts (§1)
def test_counts_under_the_four_policies(tiny_archive):
    root = tiny_archive.root
    d = date(2024, 2, 10)
    rows = [
        # arxiv_id, field, date, primary, secondary, type
        ("a1", "alpha", d, "D0", None, "single"),
        ("a2", "alpha", d, "D1", "D2", "boundary"),
        ("a3", "alpha", d, "D3", "D5", "bridge"),
        ("a4", "alpha", d, "other", None, "other"),
        ("a5", "alpha", d, "other", None, "low_evidence"),
        ("a6", "alpha", d, "D4", None, "low_evidence"),
        ("a7", "alpha", date(2024, 7, 1), "D6", None, "single"),  # next window (half-open)
        ("a8", "alpha", date(2023, 12, 31), "D7", None, "single"),  # previous window
        ("b1", "beta", d, "D2", None, "single"),
    ]
    write_assignments(root / "archive/benchmark/assignments.parquet", {
        "arxiv_id": [r[0] for r in rows], "field_id": [r[1] for r in rows], "first_submitted": [r[2] for r in rows],
        "primary": [r[3] for r in rows], "secondary": [r[4] for r in rows], "assignment_type": [r[5] for r in rows],
    })
    archive = Archive(root)
    og = archive.origins
    windows = build_windows(og.origins, og.window_months, og.history_windows)
    field_ids = [f.field_id for f in archive.fields]
    counts = compute_counts(archive, field_ids, windows)
    w = windows.starts.index(date(2024, 1, 1))
    alpha = field_ids.index("alpha")
    got = {policy: counts[p, alpha, w].tolist() for p, policy in enumerate(POLICIES)}
    #                      D0   D1   D2   D3   D4   D5   D6   D7
    assert got["canonical"] == [1, 1, 0, 1, 1, 0, 0, 0]
    assert got["split"] == [1, 0.5, 0.5, 0.5, 1, 0.5, 0, 0]
    assert got["single"] == [1, 0, 0, 0, 0, 0, 0, 0]
    assert got["flip"] == [1, 0, 1, 0, 1, 1, 0, 0]
    assert counts[0, alpha, w + 1].tolist() == [0, 0, 0, 0, 0, 0, 1, 0]
    assert counts[0, alpha, w - 1].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    assert counts[:, field_ids.index("delta")].sum() == 0


def test_windows_cover_history_to_last_target():
    origins = (date(2024, 1, 1), date(2024, 7, 1))
    windows = build_windows(origins, 6, 3)
    assert windows.starts[0] == date(2022, 7, 1) and windows.ends[-1] == date(2025, 1, 1)
    assert len(windows.starts) == 5
    assert windows.target.tolist() == [3, 4] and windows.history.tolist() == [[0, 1, 2], [1, 2, 3]]


# ---------------------------------------------------------------- against the per-unit reference
def test_every_leaderboard_and_contrast_number_matches_the_per_unit_reference(scored):
    root, _, out = scored
    spec = importlib.util.spec_from_file_location("bench_score", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    reference = bench.reference_scores(root, RESAMPLES, json.loads((out / "scores.json").read_text())["tracks"])
    checked, worst = bench.compare(out, reference)
    assert checked == len(reference) > 1000
    assert worst <= 1e-9


# ---------------------------------------------------------------- files and columns (§7)
def test_files_and_exact_columns(scored):
    _, result, out = scored
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(list(SPEC_COLUMNS) + ["live.csv", "pairs.csv", "releases.csv", "units.parquet", "scores.json", "diagnostics.json"])
    for name, header in SPEC_COLUMNS.items():
        assert (out / name).read_text().splitlines()[0] == header
    meta = json.loads((out / "scores.json").read_text())
    assert meta["schema_version"] == 1 and meta["resamples"] == RESAMPLES and meta["seed"] == 0 and meta["level"] == 0.95
    assert meta["manifest_sha256"] == Archive(scored[0]).manifest_sha256
    assert meta["policies"] == ["canonical", "split", "single", "flip"]
    assert meta["archive"] == {"name": "tiny test archive", "synthetic": True}
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["schema_version"] == 1 and diag["manifest_sha256"] == meta["manifest_sha256"]


@pytest.mark.parametrize("n", [10, 5000])
def test_float_cells_are_shortest_round_trip_for_short_and_long_columns(n):
    """Long columns format each distinct value once; the text must not change."""
    from rapgen.scores.outputs import _format_floats

    rng = np.random.default_rng(n)
    values = np.round(rng.normal(size=n), 2)
    values[::3] = np.nan
    values[1], values[2], values[4] = -0.0, 1e-17, -2.5e-20
    want = ["" if np.isnan(v) else repr(float(v) + 0.0) for v in values]
    assert _format_floats(values) == want
    assert _format_floats([None if np.isnan(v) else float(v) for v in values]) == want
    assert "-0.0" not in want and "1e-17" in want


def test_same_inputs_same_bytes(scored, tmp_path):
    root, _, out = scored
    again = tmp_path / "again"
    write_scores(compute_scores(open_release(root), resamples=RESAMPLES, diagnostics=False), again)
    for path in sorted(out.iterdir()):
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name


def test_rewriting_keeps_other_files_and_leaves_no_temporaries(scored, tmp_path):
    _, result, _ = scored
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    write_scores(result, out)
    write_scores(result, out)
    assert (out / "keep.txt").read_text() == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


# ---------------------------------------------------------------- tracks and validity (§4, §7)
def test_tracks_participation_and_validity_accounting(scored):
    _, _, out = scored
    rows = read_csv(out / "leaderboard.csv")
    strict_models = {r["entry"] for r in rows if r["track"] == "forecast_strict" and r["kind"] == "model"}
    assert strict_models == {"model-a"}  # cutoff 2024-06-01 < 2025-01-01; model-b's release is later
    assert {r["entry"] for r in rows if r["kind"] == "baseline" and r["track"] == "forecast_strict"} == {
        "recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge"}

    def row(**key):
        found = [r for r in rows if all(r[k] == v for k, v in key.items())]
        assert len(found) == 1, key
        return found[0]

    # model-a A1 has one invalid unit (gamma, 2024-01-01; test split of 3 fields).
    r = row(track="all_origin", split="test", policy="split", entry="model-a", condition="A1", metric="tv")
    assert (r["n_episodes"], r["n_valid"], r["n_invalid"]) == ("15", "14", "1")
    r = row(track="forecast_strict", split="test", policy="canonical", entry="model-a", condition="A1", metric="spearman")
    assert (r["n_episodes"], r["n_valid"], r["n_invalid"]) == ("3", "3", "0")
    # model-a A3 has one invalid unit (delta, 2023-07-01; the dev split's only field).
    r = row(track="all_origin", split="dev", policy="flip", entry="model-a", condition="A3", metric="jsd")
    assert (r["n_episodes"], r["n_valid"], r["n_invalid"]) == ("5", "4", "1")
    r = row(track="all_origin", split="dev", policy="flip", entry="ewma", condition="BASE", metric="jsd")
    assert r["kind"] == "baseline" and r["n_invalid"] == "0" and r["n_valid"] == "5"
    # State conditions carry state_recent, forecasts and baselines pred_recent.
    metrics = {(r["condition"], r["metric"]) for r in rows}
    assert ("A2", "state_recent") in metrics and ("A2", "pred_recent") not in metrics
    assert ("A0", "pred_recent") in metrics and ("BASE", "pred_recent") in metrics and ("A0", "state_recent") not in metrics
    for r in rows:
        if r["estimate"]:
            assert num(r["ci_low"]) <= num(r["ci_high"])


def test_headline_is_the_mean_of_field_scores(scored):
    _, _, out = scored
    fields = read_csv(out / "field_scores.csv")
    by_key: dict[tuple, list[float]] = {}
    for r in fields:
        key = (r["track"], r["split"], r["policy"], r["entry"], r["kind"], r["condition"], r["metric"])
        by_key.setdefault(key, []).append(float(r["estimate"]))
    for r in read_csv(out / "leaderboard.csv"):
        key = (r["track"], r["split"], r["policy"], r["entry"], r["kind"], r["condition"], r["metric"])
        values = by_key.get(key, [])
        assert int(r["n_fields"]) == len(values)
        if values:
            assert float(r["estimate"]) == pytest.approx(sum(values) / len(values), abs=1e-12)
        else:
            assert r["estimate"] == r["ci_low"] == r["ci_high"] == ""


def test_origin_scores_average_over_the_splits_fields(scored):
    _, result, out = scored
    units = pq.read_table(out / "units.parquet").to_pandas()
    rows = read_csv(out / "origin_scores.csv")
    r = next(r for r in rows if (r["split"], r["policy"], r["entry"], r["condition"], r["metric"], r["origin"])
             == ("test", "canonical", "model-b", "A3", "spearman", "2024-07-01"))
    sel = units[(units.split == "test") & (units.policy == "canonical") & (units.entry == "model-b")
                & (units.condition == "A3") & (units.origin == date(2024, 7, 1))]
    assert float(r["estimate"]) == pytest.approx(sel.spearman.mean(), abs=1e-12)
    assert int(r["n_fields"]) == sel.spearman.notna().sum() == 3


# ---------------------------------------------------------------- contrasts (§4)
def test_contrast_set_and_metrics(scored):
    _, _, out = scored
    rows = read_csv(out / "contrasts.csv")
    pairs = {(r["entry"], r["contrast"]) for r in rows if r["track"] == "all_origin"}
    assert pairs == {
        ("model-a", c) for c in ("A1-A0", "A3-A1", "A2-A1", "A4-A3", "A0-ewma", "A1-ewma", "A3-ewma")
    } | {("model-b", c) for c in ("A1-A0", "A3-A1", "A0-ewma", "A1-ewma", "A3-ewma")}
    metrics = {}
    for r in rows:
        metrics.setdefault(r["contrast"], set()).add(r["metric"])
    assert metrics["A2-A1"] == metrics["A4-A3"] == {"spearman", "tv", "jsd", "tv_gain"}
    assert metrics["A1-A0"] == metrics["A3-ewma"] == {"spearman", "tv", "jsd", "pred_recent", "tv_gain"}
    assert {r["entry"] for r in rows if r["track"] == "forecast_strict"} == {"model-a"}


def test_contrast_uses_only_origins_where_both_sides_are_defined(scored):
    _, _, out = scored
    units = pq.read_table(out / "units.parquet").to_pandas()
    key = ["field_id", "origin"]
    sel = dict(policy="canonical", entry="model-a")
    a1 = units[(units.policy == "canonical") & (units.entry == "model-a") & (units.condition == "A1")].set_index(key)
    a0 = units[(units.policy == "canonical") & (units.entry == "model-a") & (units.condition == "A0")].set_index(key)
    diff = (a1.spearman - a0.spearman).dropna()
    split = a1.split
    field_means = diff.groupby(level="field_id").mean()
    test_fields = sorted(set(split[split == "test"].index.get_level_values("field_id")))
    expected = field_means.loc[test_fields].mean()
    row = next(r for r in read_csv(out / "contrasts.csv") if (r["track"], r["split"], r["policy"], r["entry"], r["contrast"], r["metric"])
               == ("all_origin", "test", sel["policy"], sel["entry"], "A1-A0", "spearman"))
    assert float(row["estimate"]) == pytest.approx(expected, abs=1e-12)
    # gamma 2024-01-01 is invalid for A1: that origin is left out of gamma's contrast.
    assert ("gamma", date(2024, 1, 1)) not in diff.index


# ---------------------------------------------------------------- ranks
def test_ranks_groups_and_probabilities(scored):
    _, _, out = scored
    rows = [r for r in read_csv(out / "ranks.csv") if r["metric"] == "spearman"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["track"], r["split"], r["policy"], r["condition"]), []).append(r)
    a2 = groups[("all_origin", "test", "canonical", "A2")]
    assert [r["entry"] for r in a2] == ["model-a", "arima110", "ewma", "holt", "linear_trend", "recent", "var_ridge"]
    a0 = groups[("all_origin", "test", "canonical", "A0")]
    assert [r["entry"] for r in a0][:2] == ["model-a", "model-b"] and len(a0) == 8
    assert ("forecast_strict", "test", "canonical", "A0") in groups
    assert [r["entry"] for r in groups[("forecast_strict", "test", "canonical", "A0")]][0] == "model-a"
    lb = {(r["track"], r["split"], r["policy"], r["condition"] if r["kind"] == "model" else "BASE", r["entry"]): r
          for r in read_csv(out / "leaderboard.csv") if r["metric"] == "spearman"}
    for key, members in groups.items():
        if all(r["p_first"] == "" for r in members):  # no replicate with a defined entry
            assert all(r["estimate"] == "" for r in members), key
            continue
        total = sum(float(r["p_first"]) for r in members)
        assert total == pytest.approx(1.0, abs=1e-12)
        for r in members:
            cond = "BASE" if r["entry"] in {"recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge"} else r["condition"]
            ref = lb[(r["track"], r["split"], r["policy"], cond, r["entry"])]
            assert r["estimate"] == ref["estimate"]
            # rank = 1 + entries whose interval lies entirely above this one's
            above = sum(1 for o in members if o is not r and
                        num(lb[(o["track"], o["split"], o["policy"], "BASE" if o["entry"] in {"recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge"} else o["condition"], o["entry"])]["ci_low"])
                        > num(ref["ci_high"]))
            assert int(r["rank"]) == 1 + above


# ---------------------------------------------------------------- units.parquet and compositions
def test_units_parquet(scored):
    _, result, out = scored
    table = pq.read_table(out / "units.parquet")
    frame = table.to_pandas()
    n_entries = 5 + 3 + 6  # model-a A0..A4, model-b A0 A1 A3, six baselines
    assert len(frame) == 4 * n_entries * 4 * 5
    assert not frame.duplicated(["policy", "entry", "kind", "condition", "field_id", "origin"]).any()
    assert table.column_names[:9] == ["policy", "entry", "kind", "condition", "field_id", "origin", "split", "valid", "reason"]
    assert table.column_names[9:23] == ["spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain"] + [f"p_D{i}" for i in range(8)]
    assert tuple(table.column_names[23:]) == DIAGNOSTIC_UNIT_COLUMNS
    assert all(str(table.schema.field(c).type) == "double" for c in DIAGNOSTIC_UNIT_COLUMNS)
    # Scored without the §6 diagnostics: the alignment columns exist and are null.
    assert frame[list(DIAGNOSTIC_UNIT_COLUMNS)].isna().all().all()
    bad = frame[(frame.entry == "model-a") & (frame.condition == "A1") & (frame.field_id == "gamma") & (frame.origin == date(2024, 1, 1))]
    assert len(bad) == 4 and not bad.valid.any() and (bad.reason == "no Finish call").all()
    assert bad[["spearman", "tv", "jsd", "pred_recent", "tv_gain", "p_D0"]].isna().all().all()
    negative = frame[(frame.entry == "model-a") & (frame.condition == "A3") & (frame.field_id == "delta") & (frame.origin == date(2023, 7, 1))]
    assert not negative.valid.any() and negative.reason.iloc[0] == "a weight is negative"
    ok = frame[frame.valid]
    assert np.allclose(ok[[f"p_D{i}" for i in range(8)]].sum(axis=1), 1.0)
    assert frame[frame.condition.isin(["A2", "A4"])].pred_recent.isna().all()
    assert frame[~frame.condition.isin(["A2", "A4"])].state_recent.isna().all()


@pytest.fixture(scope="module")
def scored_with_diagnostics(_tiny_template, tmp_path_factory):
    result = compute_scores(open_release(_tiny_template.root), resamples=50)
    out = tmp_path_factory.mktemp("scores-diag")
    write_scores(result, out)
    return result, pq.read_table(out / "units.parquet").to_pandas()


def test_units_parquet_carries_the_unit_diagnostics_on_canonical_rows(scored_with_diagnostics):
    """The §6 per-unit alignment values land on the canonical rows, equal to the
    diagnostics functions applied to that unit alone; other policies are null."""
    from rapgen.scores.diagnostics.residual import direct_alignment, direct_permutations, partial_residual

    result, frame = scored_with_diagnostics
    inputs = result.inputs
    assert (frame.loc[frame.policy != "canonical", list(DIAGNOSTIC_UNIT_COLUMNS)].isna().all().all())
    canonical = frame[frame.policy == "canonical"]
    assert canonical["partial_residual"].notna().sum() > 20 and canonical["direct_cos"].notna().sum() > 20
    perms = direct_permutations(int(inputs.archive.ledger["residual"]["direct_permutations"]), int(inputs.archive.ledger["residual"]["seed"]))
    c = list(inputs.policies).index("canonical")
    index = {(e.entry, e.kind, e.condition): i for i, e in enumerate(inputs.entries)}
    checked = 0
    for row in canonical[canonical.direct_cos.notna() | canonical.partial_residual.notna()].iloc[::7].itertuples():
        e = index[(row.entry, row.kind, row.condition)]
        f = inputs.field_ids.index(row.field_id)
        o = inputs.origins.index(row.origin)
        p, ew, y = (v[None] for v in (inputs.predictions[e, c, f, o], inputs.ewma[c, f, o], inputs.y[c, f, o]))
        d, pr = direct_alignment(p, ew, y, perms), partial_residual(p, ew, y)
        want = {
            "direct_cos": d.cos, "direct_cos_null": d.cos_null, "direct_cos_corrected": d.cos_corrected,
            "direct_spearman": d.spearman, "direct_spearman_null": d.spearman_null, "direct_spearman_corrected": d.spearman_corrected,
            "partial_residual": pr.c, "partial_residual_null": pr.null, "partial_residual_corrected": pr.corrected,
        }
        for name in DIAGNOSTIC_UNIT_COLUMNS:
            got = getattr(row, name)
            assert (np.isnan(got) and np.isnan(want[name][0])) or got == pytest.approx(float(want[name][0]), abs=1e-12), (row, name)
        checked += 1
    assert checked >= 5
    # The EWMA baseline has no residual against itself, and invalid units have no values.
    assert canonical.loc[canonical.entry == "ewma", list(DIAGNOSTIC_UNIT_COLUMNS)].isna().all().all()
    assert canonical.loc[~canonical.valid, list(DIAGNOSTIC_UNIT_COLUMNS)].isna().all().all()


def test_compositions(scored):
    _, _, out = scored
    rows = read_csv(out / "compositions.csv")
    assert len(rows) == 4 * 4 * 8  # fields x policies x windows 2021-07 .. 2025-07
    assert rows[0]["window_start"] == "2021-07-01" and rows[-1]["window_end"] == "2025-07-01"
    for r in rows:
        shares = [num(r[f"D{i}"]) for i in range(8)]
        if float(r["n_total"]) == 0:
            assert shares == [None] * 8
        else:
            assert sum(shares) == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------- bad input
# The scorer takes verified releases only, so its own refusals are reached by giving a valid
# release a document that breaks the rule, in memory (verify refuses the same bytes on disk).
def test_history_windows_other_than_three_is_refused(tiny_archive):
    from dataclasses import replace

    release = open_release(tiny_archive.root)
    release.__dict__["origins"] = replace(release.origins, history_windows=4)
    with pytest.raises(ScoringError, match=r"origins.json: the baselines need history_windows = 3, found 4"):
        compute_scores(release, resamples=10, diagnostics=False)


def test_resamples_must_be_positive(tiny_archive):
    with pytest.raises(ScoringError, match="at least 1"):
        compute_scores(open_release(tiny_archive.root), resamples=0, diagnostics=False)


def test_malformed_predictions_name_file_and_line(tiny_archive):
    from factory import reseal

    path = tiny_archive.root / "archive/models/model-b/predictions.jsonl"
    lines = path.read_text().splitlines()
    lines.append(lines[0])  # the same unit twice
    path.write_text("\n".join(lines) + "\n")
    reseal(tiny_archive.root)
    found = [(f.path, f.line) for f in verify_archive(tiny_archive.root).errors if "duplicate unit" in f.detail]
    assert found == [("archive/models/model-b/predictions.jsonl", len(lines))]
    with pytest.raises(ArchiveError, match="failed verification"):
        open_release(tiny_archive.root)  # nothing is scored from an archive that does not verify


def test_unknown_direction_label_in_the_ledger(tiny_archive, tmp_path):
    release = open_release(tiny_archive.root)
    bad = tmp_path / "assignments.parquet"
    write_assignments(bad, {
        "arxiv_id": ["x1"], "field_id": ["alpha"], "first_submitted": [date(2024, 2, 1)],
        "primary": ["D9"], "secondary": [None], "assignment_type": ["single"],
    })
    papers, _ = release.ledger_sources()
    release.ledger_sources = lambda: (papers, [str(bad)])
    with pytest.raises(ScoringError, match=r"assignments.parquet: row \(x1, alpha\) has a direction label outside D0-D7"):
        compute_scores(release, resamples=10, diagnostics=False)


# ---------------------------------------------------------------- CLI
@pytest.fixture
def no_diagnostics(monkeypatch):
    """Skip the §6 diagnostics in CLI tests that are about the command itself."""
    import rapgen.scores.pipeline as pipeline

    monkeypatch.setattr(
        pipeline, "compute_diagnostics_section", lambda inputs, *_: ({**pipeline._diagnostics_head(inputs), "status": "skipped"}, None)
    )


def test_cli_scores_and_reports(tiny_archive, tmp_path, no_diagnostics):
    out = tmp_path / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), "--out", str(out), "--resamples", "30"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Scored 2 models and 4 policies on 1 dev, 3 test fields (30 resamples, seed 0).\nWrote 13 files to ")
    assert json.loads((out / "scores.json").read_text())["resamples"] == 30


def test_cli_json(tiny_archive, tmp_path, no_diagnostics):
    out = tmp_path / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), "--out", str(out), "--resamples", "20", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["resamples"] == 20 and payload["out"] == str(out)
    assert payload["files"] == sorted(p.name for p in out.iterdir())


def test_cli_uses_the_ledgers_resamples_by_default(tiny_archive, tmp_path, no_diagnostics):
    path = tiny_archive.root / "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json"
    ledger = json.loads(path.read_text())
    ledger["bootstrap"]["resamples"] = 25
    write_json(path, ledger)
    from factory import reseal

    reseal(tiny_archive.root)
    out = tmp_path / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "(25 resamples, seed 0)" in result.output


def test_cli_refuses_an_archive_that_fails_verification(tiny_archive, tmp_path):
    path = tiny_archive.root / "archive/models/model-a/predictions.jsonl"
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))
    out = tmp_path / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), "--out", str(out)])
    assert result.exit_code == 1
    assert "archive failed verification" in result.stderr and "rapgen verify" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "Missing option '--out'"),
        (["--out", "x", "--resamples", "0"], "Invalid value for '--resamples'"),
        (["--out", "x", "--resamples", "many"], "Invalid value for '--resamples'"),
    ],
)
def test_cli_usage_errors(tiny_archive, args, message):
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_cli_output_path_that_is_a_file(tiny_archive, tmp_path, no_diagnostics):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = CliRunner().invoke(cli, ["score", "--root", str(tiny_archive.root), "--out", str(target), "--resamples", "5"])
    assert result.exit_code == 2
    assert target.read_text() == "x"


def test_cli_help_names_every_output():
    result = CliRunner().invoke(cli, ["score", "--help"])
    assert result.exit_code == 0
    for name in ("leaderboard.csv", "contrasts.csv", "ranks.csv", "units.parquet", "diagnostics.json", "--resamples", "--json"):
        assert name in result.output


def test_an_archive_without_models_scores_the_baselines(tmp_path):
    from factory import make_archive

    tiny = make_archive(tmp_path / "repo", with_models=False, papers_per_window=8)
    result = compute_scores(open_release(tiny.root), resamples=20, diagnostics=False)
    rows = result.tables["leaderboard.csv"].rows()
    assert {r[4] for r in rows} == {"baseline"} and len(rows) == 2 * 2 * 4 * 6 * 5
    assert len(result.tables["contrasts.csv"]) == 0 and len(result.tables["ranks.csv"]) == 0
    assert result.meta["tracks"]["forecast_strict"]["models"] == []


def test_a_field_whose_block_is_not_in_its_split(tiny_archive):
    from dataclasses import replace

    release = open_release(tiny_archive.root)
    release.__dict__["blocks"] = [replace(b, split="test") if b.block_id == "b3" else b for b in release.blocks]
    with pytest.raises(ScoringError, match=r"fields.jsonl: field 'delta' names block 'b3', which is not a dev block in blocks.jsonl"):
        compute_scores(release, resamples=10, diagnostics=False)


@pytest.mark.parametrize(
    "replicates, higher, expected",
    [
        # two replicates: A best, then B best
        ([[0.9, 0.1], [0.2, 0.8]], True, [0.5, 0.5]),
        # lower is better (tv): B wins both
        ([[0.9, 0.1], [0.3, 0.2]], False, [0.0, 1.0]),
        # an exact tie splits the replicate
        ([[0.5, 0.5], [0.6, 0.1]], True, [0.75, 0.25]),
        # equal up to float noise (one unit in the last place) is a tie too
        ([[0.1 + 0.2, 0.3], [0.6, 0.1]], True, [0.75, 0.25]),
        # an undefined entry takes no part; a replicate with nothing defined is not counted
        ([[np.nan, 0.4], [np.nan, np.nan], [0.7, 0.2]], True, [0.5, 0.5]),
        # nothing defined anywhere: undefined, not zero
        ([[np.nan, np.nan]], True, [np.nan, np.nan]),
    ],
)
def test_probability_first_table(replicates, higher, expected):
    from rapgen.scores.aggregate import probability_first

    got = probability_first(np.array(replicates, dtype=float), higher)
    np.testing.assert_allclose(got, expected, equal_nan=True)


# ---------------------------------------------------------------- extreme but valid weights (issue: hardening)
EXTREME_WEIGHTS = [
    # (weights D0..D7 as written in predictions.jsonl, the composition they stand for)
    ([1.7e308] * 8, [0.125] * 8),  # the sum overflows a double
    ([1.7976931348623157e308] + [0] * 7, [1.0] + [0.0] * 7),  # the largest double
    ([1.7e308, 1.7e308, 0, 0, 0, 0, 0, 8.5e307], [0.4, 0.4, 0, 0, 0, 0, 0, 0.2]),
    ([5e-324] * 4 + [0] * 4, [0.25] * 4 + [0.0] * 4),  # the smallest subnormal
    ([1e-320, 3e-320, 0, 0, 0, 0, 0, 0], [0.25, 0.75, 0, 0, 0, 0, 0, 0]),
    ([-0.0, 1, 1, 1, 1, 1, 1, 1], [0.0] + [1 / 7] * 7),  # negative zero is a valid zero weight
    ([10**300, 10**300, 0, 0, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0, 0, 0, 0]),  # a huge JSON integer
    ([1e-300, 1e300, 0, 0, 0, 0, 0, 0], [0.0, 1.0, 0, 0, 0, 0, 0, 0]),  # 1e-600 relative: rounds to 0
    ([1, 5e-324, 0, 0, 0, 0, 0, 0], [1.0, 5e-324, 0, 0, 0, 0, 0, 0]),  # a subnormal share survives (jsd's log of it too)
]


def test_extreme_valid_weights_score_like_their_composition(tiny_archive):
    from factory import reseal

    from rapgen.io import write_jsonl

    path = tiny_archive.root / "archive/models/model-b/predictions.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    expected = {}
    for i, line in enumerate(lines):
        weights, composition = EXTREME_WEIGHTS[i % len(EXTREME_WEIGHTS)]
        line.update(weights=dict(zip([f"D{k}" for k in range(8)], weights)), status="valid")
        line.pop("reason", None)
        expected[(line["condition"], line["field_id"], line["origin"])] = composition
    write_jsonl(path, lines)
    assert "1.7e+308" in path.read_text() and "-0.0" in path.read_text()
    reseal(tiny_archive.root)
    result = compute_scores(open_release(tiny_archive.root), resamples=10, diagnostics=False)
    units = result.units
    cols = {c: units.column(c) for c in ("entry", "policy", "condition", "field_id", "origin", "valid", "spearman", "tv", "jsd", "tv_gain")}
    p = np.array([units.column(f"p_D{k}") for k in range(8)]).T
    seen = 0
    for r in range(len(units)):
        if cols["entry"][r] != "model-b" or cols["policy"][r] != "canonical":
            continue
        key = (cols["condition"][r], cols["field_id"][r], cols["origin"][r].isoformat())
        assert cols["valid"][r], key
        assert p[r] == pytest.approx(expected[key], abs=1e-15), key
        assert np.isfinite(cols["tv"][r]), key
        assert all(np.isfinite(cols[m][r]) or np.isnan(cols[m][r]) for m in ("jsd", "tv_gain")), key
        seen += 1
    assert seen == len(lines)
    # and the files are written: no overflow, no non-finite value anywhere
    write_scores(result, tiny_archive.root / "out")
    assert (tiny_archive.root / "out" / "leaderboard.csv").stat().st_size > 0
