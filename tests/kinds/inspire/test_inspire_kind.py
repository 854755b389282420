"""The Inspire kind on the kinds contract: declared, chosen by ARCHIVE.json's format, verified,
scored into the KINDS.md §4 files (INSPIRE.md §5 as a golden test), run by the commands."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import rapgen.kinds
from inspire_fixture import call_line, calls, jsonl, write_example_archive
from rapgen.archive import Category, verify_archive
from rapgen.cli import cli
from rapgen.kinds import Registry
from rapgen.kinds.inspire import KIND, InspireRelease
from rapgen.kinds.inspire.sample.files import seal
from rapgen.kinds.rap import KIND as RAP
from test_inspire_worked import TABLE

SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "inspire"
KINDS = Registry([KIND, RAP])


@pytest.fixture
def kinds(monkeypatch) -> Registry:
    """The commands see RAP and Inspire (the registry as it stands once every kind declares itself)."""
    monkeypatch.setattr(rapgen.kinds, "registry", lambda: KINDS)
    return KINDS


def _release(root: Path) -> InspireRelease:
    report = verify_archive(root, kinds=KINDS.formats)
    assert report.ok, report.findings
    return report.verified.release()


def test_the_kind_is_declared_on_the_contract():
    assert (KIND.name, KIND.format, KIND.unit, KIND.item) == ("inspire", "inspire-archive", ("instance_id", "condition"), "instance_id")
    assert len(KIND.metrics) == 15 and KIND.metric("ndcg@10").form == "mean" and KIND.metric("gain_kept").form == "ratio"
    assert KIND.metric("total_calls").higher_is_better is None and KIND.metric("zero_exposure").higher_is_better is False
    assert (KIND.primary.metric, KIND.primary.track, KIND.primary.condition) == ("ndcg@10", "clean", "detailed")
    assert [t.name for t in KIND.tracks] == ["clean", "all", "flagged"]
    assert [(a.name, a.primary) for a in KIND.axes] == [("gains", "declared"), ("cluster", "target")]
    assert [c.name for c in KIND.clusters if c.primary] == ["target"]
    assert KIND.search.tools == ("search_papers",) and KIND.archive.history.rolls is False
    assert KINDS.for_format("inspire-archive") is KIND


def test_the_sample_verifies_as_inspire_and_opens_as_its_release():
    release = _release(SAMPLE)
    assert isinstance(release, InspireRelease) and release.number == 1 and release.implicit
    assert len(release.instances) == 90 and release.model_ids == ["bm25-brief", "keyword-loop"]
    assert all(m.is_reference for m in release.models.values())


def _mutate(tmp_path: Path, change) -> list[tuple[Category, str, str]]:
    root = write_example_archive(tmp_path / "ex")
    change(root)
    seal(root)
    report = verify_archive(root, kinds=KINDS.formats)
    assert report.verified is None
    return [(f.category, f.path, f.detail) for f in report.errors]


def _write(rel: str, text: str):
    return lambda root: (root / rel).write_text(text, encoding="utf-8")


def _json_edit(rel: str, **changes):
    def change(root: Path) -> None:
        obj = json.loads((root / rel).read_text())
        (root / rel).write_text(json.dumps({**obj, **changes}))
    return change


def _drop_call(index: int):
    def change(root: Path) -> None:
        kept = [call_line(c) for c in calls() if not (c.instance_id == "insp-0001" and c.call_index == index)]
        (root / "archive/models/m/traces.jsonl").write_bytes(jsonl(kept))
    return change


@pytest.mark.parametrize("change, category, path, detail", [
    (_write("archive/models/m/notes.txt", "hi"), Category.INVARIANT, "archive/models/m/notes.txt",
     "unexpected file in a model folder (allowed: model.json, predictions.jsonl, traces.jsonl)"),
    (_write("archive/extra.json", "{}"), Category.INVARIANT, "archive/extra.json", "not a file of an Inspire archive (see INSPIRE.md §1)"),
    (lambda root: (root / "archive/models/m/traces.jsonl").unlink(), Category.MISSING, "archive/models/m/traces.jsonl",
     "every model folder holds model.json, predictions.jsonl and traces.jsonl"),
    (lambda root: (root / "archive/provenance/construction.json").unlink(), Category.MISSING, "archive/provenance/construction.json",
     "a required file of an Inspire archive is not listed in SHA256SUMS"),
    (_json_edit("archive/ARCHIVE.json", format_version=3), Category.MALFORMED, "archive/ARCHIVE.json",
     "'format_version' must be 1 or 2, found 3"),
    (_drop_call(1), Category.INVARIANT, "archive/models/m/traces.jsonl",
     "call 1 of insp-0001 detailed is missing: the trace has a gap (calls 0, 2 recorded)"),
])
def test_verify_reports_each_broken_rule(tmp_path, change, category, path, detail):
    found = _mutate(tmp_path, change)
    assert (category, path, detail) in found, found


# ---------------------------------------------------------------- INSPIRE.md §5 through KIND.score and leaderboard.csv
@pytest.fixture(scope="module")
def example_scores(tmp_path_factory) -> Path:
    root = write_example_archive(tmp_path_factory.mktemp("example"))
    out = root / "scores"
    written = KIND.write_scores(KIND.score(_release(root), resamples=5), out)
    assert sorted(p.name for p in written) == sorted(["leaderboard.csv", "pairs.csv", "diagnostics.csv", "diagnostics.json",
                                                       "units.parquet", "releases.csv", "scores.json"])
    return out


def _csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _num(text: str) -> float | None:
    return None if text == "" else float(text)


@pytest.mark.parametrize("view", sorted(TABLE))
def test_leaderboard_csv_holds_the_worked_example(example_scores, view):
    rows = {r["metric"]: r for r in _csv(example_scores / "leaderboard.csv")
            if (r["track"], r["split"], r["gains"], r["cluster"]) == (view, "eval", "declared", "target")}
    for metric, want in TABLE[view].items():
        value, n = want if isinstance(want, tuple) else (want, None)
        got = _num(rows[metric]["estimate"])
        assert (None if got is None else round(got, 6)) == value, (view, metric)
        if n is not None:
            assert int(rows[metric]["n_items"]) == n, (view, metric)
    assert (rows["ndcg@10"]["n_valid"], rows["ndcg@10"]["n_invalid"]) == (("2", "1") if view == "all" else ("1", "1") if view == "clean" else ("1", "0"))


@pytest.mark.parametrize("metric, view, interval", [
    ("ndcg@10", "all", (0, 0.531166)), ("ndcg@10", "clean", (0, 0.531166)), ("exposed_gain", "all", (0.232781, 0.913590)),
    ("gain_kept", "all", (0, 0.581405)), ("hits5", "all", (0, 0)),
])
def test_leaderboard_csv_gives_the_worked_intervals(example_scores, metric, view, interval):
    (row,) = [r for r in _csv(example_scores / "leaderboard.csv") if (r["track"], r["split"], r["gains"], r["cluster"], r["metric"])
              == (view, "eval", "declared", "target", metric)]
    assert (round(float(row["ci_low"]), 6), round(float(row["ci_high"]), 6)) == interval
    assert row["rank"] == "1" and row["entry"] == "m" and row["kind"] == "model"


def test_the_score_files_have_the_kinds_columns(example_scores):
    header = (example_scores / "leaderboard.csv").read_text().splitlines()[0]
    assert header == "track,split,gains,cluster,entry,kind,condition,metric,estimate,ci_low,ci_high,rank,p_first,n_items,n_valid,n_invalid"
    assert (example_scores / "pairs.csv").read_text().startswith(
        "track,split,gains,cluster,condition,metric,entry_a,kind_a,condition_a,entry_b,kind_b,condition_b,estimate,ci_low,ci_high,n_items")
    diag = {r["metric"] for r in _csv(example_scores / "diagnostics.csv")}
    assert {"exposure_recall@50", "exposure_recall", "retention", "progress@0", "progress@1"} <= diag
    meta = json.loads((example_scores / "scores.json").read_text())
    assert (meta["kind"], meta["resamples"], meta["counts"]["instances"]["eval"]) == ("inspire", 5, 3)
    (acc,) = meta["accounting"]
    assert (acc["n_unsurfaced"], acc["n_malformed"], acc["n_failed"]) == (1, 1, 1)
    import pyarrow.parquet as pq

    units = pq.read_table(example_scores / "units.parquet").to_pylist()
    first = next(u for u in units if u["instance_id"] == "insp-0001")
    assert (round(first["ndcg@10"], 6), first["status"], first["hits"], first["n_unsurfaced"]) == (0.531166, "submitted", 3, 1)
    assert next(u for u in units if u["instance_id"] == "insp-0003")["status"] == "failed"
    releases = _csv(example_scores / "releases.csv")
    assert [(r["release"], r["release_kind"], r["entry"], round(float(r["estimate"]), 6)) for r in releases] == [("1", "initial", "m", 0.265583)]


def test_a_second_model_is_ranked_and_paired(tmp_path):
    from inspire_fixture import _pred, predictions

    failed = [_pred("insp-0001", "failed", None), *predictions()[1:]]
    root = write_example_archive(tmp_path / "ex", models={"m": (predictions(), calls()), "n": (failed, calls())})
    out = tmp_path / "scores"
    KIND.write_scores(KIND.score(_release(root), resamples=50), out)
    pairs = [r for r in _csv(out / "pairs.csv") if (r["track"], r["split"], r["metric"]) == ("all", "eval", "ndcg@10")]
    # n failed insp-0001, so m - n is the example's 0.531166 on that target, averaged over three
    assert [(p["entry_a"], p["entry_b"], round(float(p["estimate"]), 6)) for p in pairs] == [("m", "n", 0.177055)]


# ---------------------------------------------------------------- the commands, through the registry
def test_verify_and_score_commands_run_the_inspire_kind(tmp_path, kinds):
    root = tmp_path / "inspire"
    shutil.copytree(SAMPLE, root)
    run = CliRunner().invoke
    verified = run(cli, ["verify", "--root", str(root)])
    assert verified.exit_code == 0 and verified.output.startswith("OK:"), verified.output
    scored = run(cli, ["score", "--root", str(root), "--out", str(tmp_path / "scores"), "--resamples", "20"])
    assert scored.exit_code == 0, scored.output
    assert "Scored 0 models and 2 reference agents on 30 dev, 60 eval instances (20 resamples, seed 0)." in scored.output
    assert (tmp_path / "scores" / "leaderboard.csv").is_file()
    preds = root / "archive/models/bm25-brief/predictions.jsonl"
    preds.write_text(preds.read_text().replace('"status": "submitted"', '"status": "done"', 1))
    seal(root)
    broken = run(cli, ["verify", "--root", str(root)])
    assert broken.exit_code == 1, broken.output
    assert "MALFORMED archive/models/bm25-brief/predictions.jsonl:1:" in broken.output and "'status'" in broken.output
