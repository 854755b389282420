"""rapgen submit check across releases: later origins, Live commitments and deadlines, reveals,
intervention records added to a listed model, and the workflow's --now.

Histories are built in code (tests/history_factory.py): release 1 opens 2025-07-01 (closes
2025-07-15), release 2 seals model-a's commitment for it, release 3 rolls its window in and opens
2026-01-01 (closes 2026-01-15); model-a's reveal is merged but not yet cut.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from history_factory import FIRST_OPEN, SECOND_OPEN, add_lines, make_history, prediction_lines
from rapgen.archive.history.load import read_root_sums
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.archive.sums import format_sums
from rapgen.io import atomic_write_bytes
from rapgen.cli import cli
from test_submit_support import git, git_init, model_json

REPO = Path(__file__).resolve().parent.parent
MODEL_B = "archive/models/model-b"


@pytest.fixture(scope="module")
def _history_template(tmp_path_factory) -> Path:
    return make_history(tmp_path_factory.mktemp("history")).root


@pytest.fixture
def history(_history_template, tmp_path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(_history_template, dest, symlinks=True)
    return dest


def check(root: Path, folder: str, *args: str):
    return CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--root", str(root), *args, str(root / folder)])


def drop_lines(root: Path, *paths: str) -> None:
    """Remove files and their SHA256SUMS lines (a merged pull request undone)."""
    sums = read_root_sums(root)
    for path in paths:
        (root / path).unlink()
        sums.pop(path)
        folder = (root / path).parent
        while not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    atomic_write_bytes(root / "SHA256SUMS", format_sums(sums))


def lines_without(data: bytes, condition: str) -> bytes:
    return b"".join(line + b"\n" for line in data.splitlines() if json.loads(line)["condition"] != condition)


# ---------------------------------------------------------------- later origins
def test_an_existing_model_adds_a_later_origin(history) -> None:
    add_lines(history, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5)})
    result = check(history, MODEL_B)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "### Coverage per origin" in out
    assert "| 2025-07-01 | `origins/2025-07-01/predictions.jsonl` | A0 4/4, A1 4/4, A3 4/4 | ✅ complete |" in out
    assert "| 2023-01-01 | `predictions.jsonl` (listed) |" in out
    assert "its files are a later origin, not a Live entry" in out
    assert "EXISTS" not in out


def test_a_later_origin_with_git_base_touches_only_new_files(history) -> None:
    (history / "README.md").write_text("repo\n")
    git_init(history)
    git(history, "checkout", "-q", "-b", "pr")
    add_lines(history, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5)})
    git(history, "add", "-A")
    git(history, "commit", "-q", "-m", "model-b: origin 2025-07-01")
    result = check(history, MODEL_B, "--base", "main")
    assert result.exit_code == 0, result.output
    assert "CHECKSUM-CHANGED" not in result.stdout and "TOUCHED" not in result.stdout


def test_an_incomplete_origin_is_refused(history) -> None:
    path = reveal_path("model-b", FIRST_OPEN, "predictions.jsonl")
    data = lines_without(prediction_lines(FIRST_OPEN, seed=5), "A3")
    add_lines(history, {path: b"".join(data.splitlines(keepends=True)[1:])})  # A3 gone, and A0 misses a field
    result = check(history, MODEL_B)
    assert result.exit_code == 1
    out = result.stdout
    assert "origin 2025-07-01 lacks condition A3: every origin a model claims covers A0, A1 and A3" in out
    assert "**COVERAGE**" in out and f"`{path}`" in out
    assert "❌ incomplete" in out


def test_an_origin_of_origins_json_or_unknown_is_refused(history) -> None:
    add_lines(history, {reveal_path("model-b", date(2030, 1, 1), "predictions.jsonl"): prediction_lines(date(2030, 1, 1))})
    result = check(history, MODEL_B)
    assert result.exit_code == 1
    assert "2030-01-01 is not an origin of this history" in result.stdout and "**ORIGIN**" in result.stdout


# ---------------------------------------------------------------- sealed and open Live submissions
def _commit(root: Path, model_id: str, origin: date, predictions: bytes) -> str:
    c = Commitment(model_id, origin, hashlib.sha256(predictions).hexdigest(), None, "rapgen 0.1")
    path = commitment_path(origin, model_id)
    add_lines(root, {path: format_commitment(c)})
    return path


def test_a_sealed_commitment_on_time(history) -> None:
    path = _commit(history, "model-b", SECOND_OPEN, prediction_lines(SECOND_OPEN))
    result = check(history, MODEL_B, "--now", "2026-01-15T23:59:00Z")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Deadlines judged on 2026-01-15 (--now)." in out
    digest = hashlib.sha256((history / path).read_bytes()).hexdigest()
    assert f"| 2026-01-01 | sealed `{path}` | `{digest[:16]}`… | this pull request (2026-01-15) | 2026-01-15 | ✅ on time |" in out
    assert f"{digest}  {path}" in out  # the commitment's SHA256SUMS line is the submission's


def test_a_late_commitment_names_the_deadline(history) -> None:
    _commit(history, "model-b", SECOND_OPEN, prediction_lines(SECOND_OPEN))
    result = check(history, MODEL_B, "--now", "2026-01-16")
    assert result.exit_code == 1
    assert "**LATE**" in result.stdout
    assert "the deadline for origin 2026-01-01 was 2026-01-15; this submission is dated 2026-01-16" in result.stdout
    # Without --now the date is today's in UTC, and the report says so.
    today = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--json", "--root", str(history), str(history / MODEL_B)])
    data = json.loads(today.stdout)
    assert data["now_source"] == "today (UTC)" and len(data["now"]) == 10


def test_a_new_model_arrives_sealed_with_only_model_json(history) -> None:
    folder = history / "archive" / "models" / "sealed-one"
    folder.mkdir()
    add_lines(history, {"archive/models/sealed-one/model.json": (json.dumps(model_json("sealed-one"), indent=2) + "\n").encode()})
    _commit(history, "sealed-one", SECOND_OPEN, prediction_lines(SECOND_OPEN))
    result = check(history, "archive/models/sealed-one", "--now", "2026-01-02")
    assert result.exit_code == 0, result.output
    assert "predictions.jsonl is missing" not in result.stdout
    assert "sealed `archive/commitments/2026-01-01/sealed-one.json`" in result.stdout


def test_an_open_submission_after_the_deadline_is_late(history) -> None:
    add_lines(history, {reveal_path("model-b", SECOND_OPEN, "predictions.jsonl"): prediction_lines(SECOND_OPEN)})
    on_time = check(history, MODEL_B, "--now", "2026-01-03")
    assert on_time.exit_code == 0, on_time.output
    assert "| 2026-01-01 | open `archive/models/model-b/origins/2026-01-01/predictions.jsonl`" in on_time.stdout
    late = check(history, MODEL_B, "--now", "2026-02-01")
    assert late.exit_code == 1 and "the deadline for origin 2026-01-01 was 2026-01-15" in late.stdout


def test_bad_now_is_a_usage_error(history) -> None:
    result = check(history, MODEL_B, "--now", "next tuesday")
    assert result.exit_code == 2 and "--now 'next tuesday': expected a date" in result.stderr


# ---------------------------------------------------------------- reveals
def test_a_reveal_matching_its_commitment(history) -> None:
    result = check(history, "archive/models/model-a")
    assert result.exit_code == 0, result.output
    assert "a reveal of the commitment archive/commitments/2025-07-01/model-a.json" in result.stdout
    assert "| 2025-07-01 | sealed `archive/commitments/2025-07-01/model-a.json`" in result.stdout
    assert "| release 2 (2025-07-15) | 2025-07-15 | ✅ on time | revealed |" in result.stdout


def test_a_reveal_that_differs_from_its_commitment(history) -> None:
    path = reveal_path("model-a", FIRST_OPEN, "predictions.jsonl")
    add_lines(history, {path: prediction_lines(FIRST_OPEN, seed=9)})
    result = check(history, "archive/models/model-a")
    assert result.exit_code == 1
    assert "**REVEAL**" in result.stdout and "the revealed predictions.jsonl differs from the commitment" in result.stdout


def test_an_unrevealed_entry_is_listed(history) -> None:
    drop_lines(history, reveal_path("model-a", FIRST_OPEN, "predictions.jsonl"))
    add_lines(history, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5)})
    result = check(history, MODEL_B)
    assert result.exit_code == 0, result.output
    assert "**Unrevealed sealed entries in the archive (1)** — listed, never dropped:" in result.stdout
    assert "- `model-a` for 2025-07-01: committed" in result.stdout and "in release 2 (2025-07-15)" in result.stdout


# ---------------------------------------------------------------- intervention records, listed files
def test_intervention_records_added_to_a_listed_model(history) -> None:
    add_lines(history, {f"{MODEL_B}/replays.jsonl": b""})
    accepted = check(history, MODEL_B)
    assert accepted.exit_code == 0, accepted.output
    assert f"{MODEL_B}/replays.jsonl" in accepted.stdout  # its SHA256SUMS line is the submission's
    add_lines(history, {f"{MODEL_B}/replays.jsonl": b'{"field_id": "alpha"}\n'})
    refused = check(history, MODEL_B)
    assert refused.exit_code == 1
    assert f"`{MODEL_B}/replays.jsonl:1`" in refused.stdout  # the archive's replays parser, with its line


def test_a_changed_listed_file_is_refused(history) -> None:
    path = f"{MODEL_B}/predictions.jsonl"
    data = (history / path).read_bytes()
    add_lines(history, {path: data.replace(b'"D0": ', b'"D0": 1', 1)})
    result = check(history, MODEL_B)
    assert result.exit_code == 1
    assert "**EXISTS**" in result.stdout
    assert "already exists on release 3, and its listed file predictions.jsonl changed" in result.stdout


# ---------------------------------------------------------------- CI
def test_the_workflow_passes_the_opening_time_as_now() -> None:
    pr = yaml.safe_load((REPO / ".github" / "workflows" / "pr-check.yml").read_text())
    step = next(s for s in pr["jobs"]["check"]["steps"] if s.get("id") == "check")
    assert step["env"]["PR_OPENED"] == "${{ github.event.pull_request.created_at }}"
    assert '--now "$PR_OPENED"' in step["run"]
    assert "${{" not in step["run"]  # the value reaches the shell as an environment variable, never as script text
    assert "archive/commitments/**" in pr[True]["pull_request_target"]["paths"]
    script = (REPO / ".ci" / "submit-check").read_text()
    assert '--now) extra+=(--now "$2")' in script and "archive/commitments" in script


def test_the_ci_script_checks_a_commitment_only_pull_request(history, tmp_path, monkeypatch) -> None:
    """A pull request that adds only a commitment for an existing model is found and judged by --now."""
    import os
    import subprocess
    import sys

    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path / "cache"))
    (history / "README.md").write_text("repo\n")
    git_init(history)
    git(history, "checkout", "-q", "-b", "pr")
    _commit(history, "model-b", SECOND_OPEN, prediction_lines(SECOND_OPEN))
    git(history, "add", "-A")
    git(history, "commit", "-q", "-m", "model-b: sealed for 2026-01-01")
    env = {**os.environ, "RAPGEN": f"{sys.executable} -m rapgen"}
    for now, code, text in (("2026-01-14T10:00:00Z", 0, "✅ on time"), ("2026-01-20T10:00:00Z", 1, "the deadline for origin 2026-01-01 was 2026-01-15")):
        report = tmp_path / f"report-{code}.md"
        done = subprocess.run(["bash", str(REPO / ".ci" / "submit-check"), "pr", "--root", str(history), "--base", "main",
                               "--now", now, "--report", str(report), "--resamples", "50"], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == code, done.stdout + done.stderr
        assert "Submission `model-b`" in report.read_text() and text in report.read_text()


def test_the_full_check_scores_and_renders_a_later_origin(history) -> None:
    from rapgen.submit import check_submission

    add_lines(history, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5)})
    res = check_submission(history, history / MODEL_B, resamples=50)
    assert res.ok, [p.one_line() for p in res.problems]
    assert res.stages["scores"].status == "passed" and res.stages["site"].status == "passed"
    assert res.stages["replay"].status == "skipped"  # no new traces: the listed ones were replayed when added
    assert [r["origin"] for r in res.origins][-1] == "2025-07-01" and res.origins[-1]["complete"]


@pytest.mark.parametrize("text, day", [
    ("2026-01-15", date(2026, 1, 15)),
    ("2026-01-15T23:30:00Z", date(2026, 1, 15)),
    ("2026-01-15T23:30:00-02:00", date(2026, 1, 16)),  # 01:30 UTC the next day
    ("2026-01-16T00:30:00+02:00", date(2026, 1, 15)),
])
def test_now_is_taken_as_a_date_in_utc(text, day) -> None:
    from rapgen.submit.review import parse_now

    assert parse_now(text) == day


def test_a_new_model_json_has_its_intervention_keys_checked(tiny_archive) -> None:
    from test_submit_support import NEW_ID, append_sums, write_submission
    from rapgen.io import write_json

    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo, traces=False)
    write_json(folder / "model.json", model_json(NEW_ID, cutoff_precision="year"))
    append_sums(repo, NEW_ID)
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--root", str(repo), str(folder)])
    assert result.exit_code == 1
    assert "**MODEL-JSON**" in result.stdout and "'cutoff_precision' must be" in result.stdout


@pytest.mark.parametrize("release,expected", [
    ({}, None),  # format 1: no rows is a real problem
    ({"partial": {"m": {"A0": {"origins": 1, "of": 3, "last_complete_release": None}}}}, "partial (1 of 3 resolved origins)"),
    ({"live": {"m": ["2026-01-01"]}}, "wait for their origins to resolve"),
    ({"unreleased": ["archive/commitments/2026-01-01/m.json"]}, "wait for their origins to resolve"),
    ({"partial": {"other": {"A0": {"origins": 1, "of": 3, "last_complete_release": None}}}}, None),
])
def test_a_model_without_all_origin_rows_is_a_problem_unless_it_waits_for_origins(release, expected) -> None:
    from types import SimpleNamespace

    from rapgen.submit.review.overlay import _waiting_for_origins

    note = _waiting_for_origins(SimpleNamespace(meta={"release": release} if release else {}), "m")
    assert (note is None) if expected is None else (expected in note)


# ---------------------------------------------------------------- later-origin traces
def _window_ids(root: Path, field_id: str) -> list[str]:
    import pandas as pd

    rows = pd.read_parquet(root / f"archive/benchmark/windows/{FIRST_OPEN.isoformat()}/assignments.parquet")
    return sorted(rows.loc[rows["field_id"] == field_id, "arxiv_id"])


def _trace_lines(origin: date, returned: list[list[str]]) -> bytes:
    lines = [{"field_id": "alpha", "origin": origin.isoformat(), "condition": "A1", "call_index": i, "query": "parsing methods",
              "sort": "date", "date_from": None, "date_to": None, "total_hits": len(ids), "returned_ids": ids}
             for i, ids in enumerate(returned)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _verify(root: Path):
    return CliRunner().invoke(cli, ["verify", "--root", str(root)])


def test_later_origin_traces_are_checked_against_the_full_ledger(history) -> None:
    # the open origin's fixed shard is the window rolled in by release 3: in the full ledger only
    window = _window_ids(history, "alpha")
    assert window and all(i.startswith("w") for i in window)
    traces = reveal_path("model-b", SECOND_OPEN, "traces.jsonl")
    add_lines(history, {reveal_path("model-b", SECOND_OPEN, "predictions.jsonl"): prediction_lines(SECOND_OPEN, seed=5),
                        traces: _trace_lines(SECOND_OPEN, [window[:2], window[2:]])})
    assert _verify(history).exit_code == 0, _verify(history).output
    assert check(history, MODEL_B, "--now", "2026-01-05").exit_code == 0
    # a returned paper that is in no shard of the ledger (here: no paper at all), on the second line
    add_lines(history, {traces: _trace_lines(SECOND_OPEN, [window[:2], [window[0], "2599.00001"]])})
    result = _verify(history)
    assert result.exit_code == 1, result.output
    bad = [line for line in result.output.splitlines() if "returned paper" in line]
    assert bad == [f"INVARIANT {traces}:2: returned paper 2599.00001 is not a member of the field"], result.output
    submitted = check(history, MODEL_B, "--now", "2026-01-05")
    assert submitted.exit_code == 1 and "returned paper 2599.00001" in submitted.output and "Traceback" not in submitted.output


def test_later_origin_trace_returning_a_paper_on_or_after_its_origin(history) -> None:
    # origin 2025-07-01's fixed shard ends where the window (rolled in by release 3) starts
    window = _window_ids(history, "alpha")
    traces = reveal_path("model-b", FIRST_OPEN, "traces.jsonl")
    add_lines(history, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5),
                        traces: _trace_lines(FIRST_OPEN, [[window[0]]])})
    result = _verify(history)
    assert result.exit_code == 1, result.output
    bad = [line for line in result.output.splitlines() if "returned paper" in line]
    assert len(bad) == 1 and bad[0].startswith(f"INVARIANT {traces}:1: returned paper {window[0]} dated 2025-"), bad
    assert "lies outside the episode's shard" in bad[0]
