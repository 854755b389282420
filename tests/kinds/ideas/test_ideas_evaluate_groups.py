"""``rapgen evaluate --out DIR`` on a prepared folder whose forecasts cover later cutoffs too: each
``origins/<t>/`` group of a resolved cutoff is evaluated beside its predictions, an unresolved one is left
for later, and a group folder that is not a date is one usage line."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks/ideas"
MODEL = SAMPLE / "archive/models/recent-titles"
TABLES = ("candidates.parquet", "judgments.parquet")


def run(*args: str):
    return CliRunner().invoke(cli, ["evaluate", "--root", str(SAMPLE), *args])


def prepared(folder: Path) -> Path:
    """The sample's recent-titles forecasts as a new model's prepared folder: model.json, predictions.jsonl
    and each later cutoff's origins/<t>/predictions.jsonl, no evaluator files."""
    folder.mkdir()
    info = json.loads((MODEL / "model.json").read_bytes())
    info["model_id"] = "mine"
    (folder / "model.json").write_text(json.dumps(info))
    shutil.copy(MODEL / "predictions.jsonl", folder / "predictions.jsonl")
    for group in sorted((MODEL / "origins").iterdir()):
        (folder / "origins" / group.name).mkdir(parents=True)
        shutil.copy(group / "predictions.jsonl", folder / "origins" / group.name / "predictions.jsonl")
    return folder


def rows(path: Path) -> list:
    return sorted(pq.read_table(path).to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def test_every_resolved_cutoff_group_of_a_prepared_folder_is_evaluated_beside_its_predictions(tmp_path):
    folder = prepared(tmp_path / "mine")
    groups = sorted(p.name for p in (folder / "origins").iterdir())
    assert len(groups) == 6
    result = run("--model", "mine", "--judge", "lexical-a", "--out", str(folder), "--no-cache", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["cutoff_groups"] == ["predictions.jsonl", *(f"origins/{g}" for g in groups)]
    assert summary["predictions"].endswith("predictions.jsonl and 6 later cutoffs")
    for prefix in ["", *(f"origins/{g}/" for g in groups)]:
        for name in TABLES:
            written = folder / prefix / "eval/lexical-a" / name
            assert rows(written) == rows(MODEL / prefix / "eval/lexical-a" / name), (prefix, name)
        assert rows(folder / prefix / "features.parquet") == rows(MODEL / prefix / "features.parquet"), prefix
    again = run("--model", "mine", "--judge", "lexical-a", "--out", str(folder), "--no-cache", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["written"] == []


def test_an_unresolved_cutoff_group_is_left_for_later_and_a_group_not_named_by_a_date_is_a_usage_error(tmp_path):
    folder = prepared(tmp_path / "mine")
    for extra in sorted((folder / "origins").iterdir())[1:]:
        shutil.rmtree(extra)
    later = folder / "origins" / "2031-01-01"
    later.mkdir()
    (later / "predictions.jsonl").write_text('{"episode_id": "nothing-yet"}\n')
    result = run("--model", "mine", "--judge", "lexical-a", "--out", str(folder), "--no-cache", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cutoff_groups"] == ["predictions.jsonl", "origins/2024-10-01"]
    assert not (later / "eval").exists() and not (later / "features.parquet").exists()
    odd = folder / "origins" / "next-month"
    odd.mkdir()
    (odd / "predictions.jsonl").write_text("")
    bad = run("--model", "mine", "--judge", "lexical-a", "--out", str(folder), "--no-cache")
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
    assert "next-month: a cutoff group is named by its cutoff date" in bad.stderr
