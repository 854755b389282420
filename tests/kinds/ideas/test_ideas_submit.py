"""``rapgen submit check`` of an Ideas model folder (KINDS.md §6, IDEAS.md §3–§4): a copy of a committed
sample model passes with exit 0 and a report of its coverage, accounting and preview; each damaged copy
fails with exit 1 and one last line naming the file, the line and the problem, and nothing is written."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks" / "ideas"
SOURCE = SAMPLE / "archive" / "models" / "recent-titles"
MODEL = "my-ideas"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def check(folder: Path, *more: str):
    return run("submit", "check", "--root", str(SAMPLE), *more, str(folder))


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / MODEL
    shutil.copytree(SOURCE, out)  # a new model's folder: config.json's cutoffs, and origins/<t>/ for each later resolved one
    model = json.loads((out / "model.json").read_text())
    model.update(model_id=MODEL, display_name="My ideas model")
    (out / "model.json").write_text(json.dumps(model, indent=2) + "\n")
    return out


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def _write(folder: Path, rows: list[dict]) -> None:
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _table(path: Path) -> pa.Table:
    return pq.read_table(io.BytesIO(path.read_bytes()))


def _set(path: Path, column: str, row: int, value) -> None:
    table = _table(path)
    values = table.column(column).to_pylist()
    values[row] = value
    pq.write_table(table.set_column(table.schema.get_field_index(column), column, pa.array(values, type=table.schema.field(column).type)), path)


def last_line(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_a_good_folder_passes_with_its_report(folder, tmp_path):
    report = tmp_path / "report.md"
    result = check(folder, "--resamples", "50", "--report", str(report))
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert text.startswith("<!-- rapgen-submit-check -->\n## ✅ Submission `my-ideas` passes")
    for heading in ("### Leaderboard in context (all_cutoff, default, hit\\@5)", "### Coverage", "### Accounting", "### Preview"):
        assert heading in text
    assert "| direct | 9 of 9 | 108 | 108 | complete |" in text  # 12 topics × the 9 cutoffs the latest release resolves
    assert "| **my-ideas** | direct |" in text
    assert "| Site dry-run render | ✅ passed |" in text and "Trace replay" not in text  # Ideas has no Search
    assert result.stdout == text
    assert not (SAMPLE / "archive" / "models" / MODEL).exists()


def test_json_names_the_kind_and_its_tables(folder):
    result = check(folder, "--no-scores", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "ideas" and data["ok"] is True
    assert [t["title"] for t in data["tables"]] == ["Coverage", "Accounting", "Preview"]
    accounting = data["tables"][1]
    assert data["tables"][0]["rows"][0] == ["direct", "9 of 9", 108, 108, "complete"]
    assert accounting["rows"][0][:3] == ["direct", 540, 0]  # 108 episodes × 5 ideas


def _missing_episode(folder: Path) -> str:
    rows = [r for r in _lines(folder) if r["episode_id"] != "rag@2024-08-01"]
    _write(folder, rows)
    return "predictions.jsonl:1: condition direct misses episode rag@2024-08-01"


def _six_ideas(folder: Path) -> str:
    rows = _lines(folder)
    extra = dict(rows[4], rank=6, title="A sixth idea")
    _write(folder, rows[:5] + [extra] + rows[5:])
    return "predictions.jsonl:6: rank 6: more than top_k = 5 ideas for rag@2024-07-01 direct"


def _duplicate_rank(folder: Path) -> str:
    rows = _lines(folder)
    _write(folder, rows[:2] + [dict(rows[1], title="Another second idea")] + rows[2:])
    return "predictions.jsonl:3: rag@2024-07-01 direct rank 2 is there twice (first on line 2)"


def _unknown_key(folder: Path) -> str:
    rows = _lines(folder)
    rows[3]["confidence"] = 0.9
    _write(folder, rows)
    return "predictions.jsonl:4: unknown key 'confidence'"


def _stale_key(folder: Path) -> str:
    _set(folder / "eval" / "lexical-a" / "judgments.parquet", "cache_key", 0, "0" * 64)
    return "eval/lexical-a/judgments.parquet:1: "


def _outside_future(folder: Path) -> str:
    path = folder / "eval" / "lexical-b" / "judgments.parquet"
    table = _table(path)
    assert table.column("episode_id")[0].as_py().endswith("@2024-07-01")  # its future ends 2024-10-31
    later = next(a for e, a in zip(table.column("episode_id").to_pylist(), table.column("arxiv_id").to_pylist())
                 if e.endswith("@2024-09-01") and a >= "2411")  # in 2024-09-01's future, after 2024-07-01's
    _set(path, "arxiv_id", 0, later)
    return "eval/lexical-b/judgments.parquet:1: "


def _edited_title(folder: Path) -> str:
    rows = _lines(folder)
    rows[0]["title"] = "A title the judges never saw"
    _write(folder, rows)
    return "eval/lexical-a/judgments.parquet:"  # the first row judging rag@2024-07-01 direct rank 1


def _unexpected_file(folder: Path) -> str:
    (folder / "notes.txt").write_text("hello\n")
    return "notes.txt: unexpected file in the model folder"


@pytest.mark.parametrize("damage, keyword, detail", [
    (_missing_episode, "COVERAGE", None),
    (_six_ideas, "MALFORMED", None),
    (_duplicate_rank, "DUPLICATE", None),
    (_unknown_key, "MALFORMED", None),
    (_stale_key, "INVARIANT", "stale cache_key"),
    (_outside_future, "INVARIANT", "outside the episode's future"),
    (_edited_title, "INVARIANT", "rag@2024-07-01 direct 1 cand_rank 1: stale cache_key"),
    (_unexpected_file, "UNEXPECTED-FILE", None),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_bad_input_is_exit_1_with_one_line_naming_file_line_and_problem(folder, damage, keyword, detail):
    where = damage(folder)
    result = check(folder, "--no-scores")
    assert result.exit_code == 1, result.output
    line = last_line(result)
    assert line.startswith(f"Error: {folder}/{where}"), line
    if detail:
        assert detail in line, line
    assert f"({keyword}; " in line and "see the report above" in line
    assert "Traceback" not in result.output and result.stderr.count("\n") == 1
    assert "## ❌ Submission `my-ideas`" in result.stdout
    assert not (SAMPLE / "archive" / "models" / MODEL).exists()


def test_a_folder_missing_a_resolved_cutoff_is_partial_and_fails(folder, tmp_path):
    for t in ("2025-02-01", "2025-03-01"):
        shutil.rmtree(folder / "origins" / t)
    report = tmp_path / "report.md"
    result = check(folder, "--resamples", "50", "--report", str(report))
    assert result.exit_code == 1, result.output
    line = last_line(result)
    assert line.startswith(f"Error: {folder}: partial: every strategy misses 2 of the 9 resolved cutoffs (2025-02-01, 2025-03-01); "), line
    assert "(COVERAGE; 1 problem in all, see the report above)" in line and result.stderr.count("\n") == 1
    text = report.read_text()
    assert "### Coverage" in text and "| direct | 7 of 9 | 108 | 84 | partial: misses 2025-02-01, 2025-03-01 |" in text
    assert "SCORES" not in text  # the gap is named in the coverage section, never as a scoring failure
    assert not (SAMPLE / "archive" / "models" / MODEL).exists()


def test_an_origin_group_of_an_open_cutoff_may_not_hold_evaluator_files(folder):
    group = folder / "origins" / "2025-04-01"
    shutil.copytree(folder / "origins" / "2025-03-01" / "eval", group / "eval")
    result = check(folder, "--no-scores")
    assert result.exit_code == 1, result.output
    assert last_line(result).startswith(f"Error: {folder}/origins/2025-04-01/eval/lexical-a: cutoff 2025-04-01 is not resolved"), last_line(result)


def test_an_existing_model_id_is_refused(tmp_path):
    copy = tmp_path / "recent-titles"
    shutil.copytree(SOURCE, copy)
    result = check(copy, "--no-scores")
    assert result.exit_code == 1
    assert last_line(result).startswith(f"Error: {copy}: model 'recent-titles' already exists in archive/models/recent-titles/ (EXISTS; ")


def test_inside_the_archive_the_sealed_lines_are_checked(folder, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SAMPLE, root)
    target = root / "archive" / "models" / MODEL
    shutil.copytree(folder, target)
    unsealed = run("submit", "check", "--root", str(root), "--no-scores", str(target))
    assert unsealed.exit_code == 1 and "SHA256SUMS: no line for archive/models/my-ideas/" in last_line(unsealed), unsealed.output
    from rapgen.archive import format_sums, read_sums, sums_lines

    lines = {line.path: line.digest for line in sums_lines(read_sums(root / "SHA256SUMS")) if line.path}
    lines.update({line[66:]: line[:64] for line in json.loads(check(folder, "--no-scores", "--json").stdout)["sha256sums_lines"]})
    (root / "SHA256SUMS").write_bytes(format_sums(lines))  # the lines `rapgen seal` writes
    again = run("submit", "check", "--root", str(root), "--no-scores", str(target))
    assert again.exit_code == 0, again.output
    assert "| SHA256SUMS lines | ✅ passed |" in again.stdout
