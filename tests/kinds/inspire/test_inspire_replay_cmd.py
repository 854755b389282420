"""'rapgen replay' on an Inspire root (INSPIRE.md §4, KINDS.md §7): every recorded call of the
committed sample re-executed on its instance's shard; a call whose answer was edited is exit 1 with
one line naming the file, the line and the call; --out, --json and --model as for RAP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.kinds.inspire.sample.files import seal

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks" / "inspire"
TRACES = "archive/models/keyword-loop/traces.jsonl"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("inspire-cache")  # one corpus index for every test


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "inspire"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".rapgen-cache"))
    return root


def test_the_sample_replays_through_the_benchmark_option(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    result = run("replay", "--benchmark", "inspire", "--cache-dir", str(cache), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "bm25-brief detailed: 90/90 calls reproduced", "bm25-brief terse: 90/90 calls reproduced",
        "keyword-loop detailed: 450/450 calls reproduced", "keyword-loop terse: 450/450 calls reproduced",
        "1080/1080 calls reproduced: every call reproduced"]
    record = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert record["ok"] and record["n_calls"] == record["n_reproduced"] == 1080 and record["differences"] == []
    as_json = run("replay", "--benchmark", "inspire", "--cache-dir", str(cache), "--json", "--model", "bm25-brief")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["n_calls"] == 180


def test_an_edited_answer_is_exit_1_naming_the_call(cache, tmp_path):
    root = _copy(tmp_path)
    path = root / TRACES
    lines = path.read_text(encoding="utf-8").splitlines()
    call = json.loads(lines[6])
    call["returned_ids"][0], call["returned_ids"][1] = call["returned_ids"][1], call["returned_ids"][0]
    lines[6] = json.dumps(call)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seal(root)
    assert run("verify", "--root", str(root)).exit_code == 0  # well-formed: only the replay can tell
    result = run("replay", "--root", str(root), "--cache-dir", str(cache), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    name = f"call {call['call_index']} of {call['instance_id']} {call['condition']}"
    assert result.stderr.splitlines()[-1] == (
        f"Error: 1 of 1,080 recorded Search calls did not reproduce; the first: {TRACES}:7: {name} does not replay: "
        f"position 1 holds {call['returned_ids'][0]} in the trace, {call['returned_ids'][1]} on replay")
    assert f"keyword-loop {call['condition']}: 449/450 calls reproduced" in result.stdout
    assert result.stdout.splitlines()[-1] == "1079/1080 calls reproduced: 1 calls do not reproduce"
    record = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert not record["ok"] and record["differences"][0]["line"] == 7
    other = run("replay", "--root", str(root), "--cache-dir", str(cache), "--model", "bm25-brief")
    assert other.exit_code == 0 and other.stdout.splitlines()[-1] == "180/180 calls reproduced: every call reproduced"


@pytest.mark.parametrize("args, message", [
    (("--model", "nobody"), "Error: model 'nobody' is not in the archive; its models are: bm25-brief, keyword-loop\n"),
])
def test_usage_errors(cache, args, message, monkeypatch):
    monkeypatch.chdir(REPO)
    result = run("replay", "--benchmark", "inspire", "--cache-dir", str(cache), *args)
    assert result.exit_code == 2 and result.stderr == message


def test_a_kind_without_search_stops_at_once(monkeypatch):
    monkeypatch.chdir(REPO)
    result = run("replay", "--benchmark", "ideas")
    assert result.exit_code == 2 and result.stderr.startswith("Error: benchmarks/ideas: rapgen replay reads RAP archives only")
