"""``rapgen submit check`` of an Inspire model folder (KINDS.md §6, INSPIRE.md §2–§3): a copy of a committed
sample model passes with exit 0; what a well-formed file may still hold (malformed, duplicate or versioned
ids, ids after the cutoff or never returned by the unit's searches, more than K ids, a failed unit) is
scored and counted in the report's accounting, exit 0; a trace with a gap or an edited result, and a call
that does not reproduce on replay, fail with exit 1 and one last line naming the file and the call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks" / "inspire"
SOURCE = SAMPLE / "archive" / "models" / "keyword-loop"
MODEL = "my-inspire"
UNIT = ("insp-0001", "detailed")  # cutoff 2024-04-02
# The accounting's columns after condition, units and Search calls (kinds/inspire/review.py COUNTS).
COLUMNS = ("failed", "empty", "submitted", "versioned", "duplicate", "over_limit", "malformed", "unknown", "post_cutoff",
           "unsurfaced", "unlabelled", "scored")


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def check(folder: Path, *more: str):
    return run("submit", "check", "--root", str(SAMPLE), *more, str(folder))


def _copy(out: Path) -> Path:
    shutil.copytree(SOURCE, out)
    model = json.loads((out / "model.json").read_text())
    model.pop("reference_agent")  # reserved for rapgen's own reference agents
    model.update(model_id=MODEL, display_name="My Inspire model")
    (out / "model.json").write_text(json.dumps(model, indent=2) + "\n")
    return out


@pytest.fixture
def folder(tmp_path) -> Path:
    return _copy(tmp_path / MODEL)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """One full run (scores, replay, render) of an undamaged copy, shared by the tests that read it."""
    out = _copy(tmp_path_factory.mktemp("good") / MODEL)
    return out, check(out, "--resamples", "100"), check(out, "--no-scores", "--json")


def _rows(folder: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def _write(folder: Path, name: str, rows: list[dict]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _unit(rows: list[dict]) -> int:
    return next(k for k, r in enumerate(rows) if (r["instance_id"], r["condition"]) == UNIT)


def _surfaced(folder: Path) -> set[str]:
    return {i for c in _rows(folder, "traces.jsonl") if (c["instance_id"], c["condition"]) == UNIT for i in c["returned_ids"]}


def _corpus_id(folder: Path, after_cutoff: bool) -> str:
    papers = pq.read_table(SAMPLE / "archive" / "corpus" / "papers.parquet", columns=["arxiv_id", "first_submitted"]).to_pylist()
    seen = _surfaced(folder)
    return next(p["arxiv_id"] for p in papers if (str(p["first_submitted"])[:10] >= "2024-04-02") == after_cutoff and p["arxiv_id"] not in seen)


def accounting(result) -> dict[str, int]:
    data = json.loads(result.stdout)
    table = next(t for t in data["tables"] if t["title"] == "Accounting")
    row = next(r for r in table["rows"] if r[0] == "detailed")
    return dict(zip(COLUMNS, row[3:]))


def last_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


# ---------------------------------------------------------------- a good copy
def test_a_good_folder_passes_with_scores_replay_and_render(good):
    _, result, _ = good
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("<!-- rapgen-submit-check -->\n## ✅ Submission `my-inspire` passes")
    assert "| Trace replay | ✅ passed | 900 of 900 calls reproduce exactly |" in text
    assert "| Site dry-run render | ✅ passed |" in text
    assert "| 3 | **my-inspire** | detailed | **0.080** |" in text  # ties keyword-loop on eval
    assert "| detailed | 90 | 450 | 0 | 0 | 900 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 802 | 98 |" in text
    assert not (SAMPLE / "archive" / "models" / MODEL).exists()


def test_json_names_the_kind_and_its_tables(good):
    _, _, result = good
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "inspire" and data["ok"] is True
    assert [t["title"] for t in data["tables"]] == ["Coverage", "Accounting", "Preview"]


# ---------------------------------------------------------------- scored and counted, never refused
def _slot(folder: Path, value) -> None:
    rows = _rows(folder, "predictions.jsonl")
    rows[_unit(rows)]["ranking"][0]["arxiv_id"] = value(rows[_unit(rows)]["ranking"]) if callable(value) else value
    _write(folder, "predictions.jsonl", rows)


def _malformed(folder):
    _slot(folder, "arxiv:2401.00001")
    return {"malformed": 1}


def _duplicate(folder):
    _slot(folder, lambda ranking: ranking[1]["arxiv_id"])
    return {"duplicate": 1}


def _versioned(folder):
    _slot(folder, lambda ranking: ranking[0]["arxiv_id"] + "v3")
    return {"versioned": 1, "scored": 98}  # the suffix is dropped and the id scores as before


def _after_cutoff(folder):
    _slot(folder, _corpus_id(folder, after_cutoff=True))
    return {"post_cutoff": 1}


def _unsurfaced(folder):
    _slot(folder, _corpus_id(folder, after_cutoff=False))
    return {"unsurfaced": 1}


def _over_ten(folder):
    rows = _rows(folder, "predictions.jsonl")
    extra = sorted(_surfaced(folder) - {r["arxiv_id"] for r in rows[_unit(rows)]["ranking"]})[:2]
    rows[_unit(rows)]["ranking"] += [{"arxiv_id": i} for i in extra]
    _write(folder, "predictions.jsonl", rows)
    return {"over_limit": 2, "submitted": 902}


def _failed(folder):
    rows = _rows(folder, "predictions.jsonl")
    rows[_unit(rows)].update(status="failed", ranking=None, reason="timeout")
    _write(folder, "predictions.jsonl", rows)
    return {"failed": 1}


@pytest.mark.parametrize("damage", [_malformed, _duplicate, _versioned, _after_cutoff, _unsurfaced, _over_ten, _failed],
                         ids=lambda f: f.__name__.strip("_"))
def test_what_the_spec_scores_is_counted_not_refused(folder, good, damage):
    expected = damage(folder)
    result = check(folder, "--no-scores", "--json")
    assert result.exit_code == 0, result.output
    counts, before = accounting(result), accounting(good[2])
    for key, value in expected.items():
        assert counts[key] == value, (key, counts)
    assert counts != before
    markdown = check(folder, "--no-scores")
    assert markdown.exit_code == 0 and "Traceback" not in markdown.output
    assert "### Accounting" in markdown.stdout and "## ✅ Submission `my-inspire` passes" in markdown.stdout


# ---------------------------------------------------------------- refused: the traces
def _gap(folder):
    rows = _rows(folder, "traces.jsonl")
    k = next(k for k, c in enumerate(rows) if (c["instance_id"], c["condition"], c["call_index"]) == (*UNIT, 2))
    _write(folder, "traces.jsonl", rows[:k] + rows[k + 1:])
    return "traces.jsonl: ", "call 2 of insp-0001 detailed is missing"


def _edited_id(folder):
    rows = _rows(folder, "traces.jsonl")
    rows[0]["returned_ids"][0] = "2999.99999"  # no paper of the corpus
    _write(folder, "traces.jsonl", rows)
    return "traces.jsonl:1: ", "call 0 of insp-0001 detailed returned '2999.99999', which is not a corpus paper"


@pytest.mark.parametrize("damage", [_gap, _edited_id], ids=lambda f: f.__name__.strip("_"))
def test_a_broken_trace_is_exit_1_naming_file_and_call(folder, damage):
    where, detail = damage(folder)
    result = check(folder, "--no-scores")
    assert result.exit_code == 1, result.output
    line = last_line(result)
    assert line.startswith(f"Error: {folder}/{where}"), line
    assert detail in line and "see the report above" in line, line
    assert "Traceback" not in result.output and result.stderr.count("\n") == 1
    assert "## ❌ Submission `my-inspire`" in result.stdout


def _swapped(call):
    call["returned_ids"][0], call["returned_ids"][1] = call["returned_ids"][1], call["returned_ids"][0]  # same ids, edited order


def _more_hits(call):
    call["total_hits"] += 1


@pytest.mark.parametrize("edit", [_swapped, _more_hits], ids=lambda f: f.__name__.strip("_"))
def test_a_call_that_does_not_reproduce_fails_the_replay(folder, edit):
    rows = _rows(folder, "traces.jsonl")
    edit(rows[0])
    _write(folder, "traces.jsonl", rows)
    result = check(folder, "--resamples", "100")
    assert result.exit_code == 1, result.output
    line = last_line(result)
    assert line.startswith(f"Error: {folder}/traces.jsonl:1"), line
    assert "(REPLAY; " in line and "Traceback" not in result.output
    assert "| Trace replay | ❌ failed | 899 of 900 calls reproduce exactly |" in result.stdout
