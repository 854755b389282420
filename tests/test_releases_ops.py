"""Release operations on copies of tiny archives: start, roll, cut; refusals write nothing."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import make_archive
from history_factory import FIRST_OPEN, SECOND_OPEN, make_window
from rapgen.archive.history.ops import Replacement, cut_release, roll_release, start_history
from rapgen.archive.verify import verify_archive
from rapgen.cli import cli
from rapgen.errors import ArchiveError, UsageProblem


@pytest.fixture
def history(history_copy: Path) -> Path:
    return history_copy  # conftest: a fresh copy of history_factory's history


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_start_then_roll_a_new_window_verifies(tiny_archive, tmp_path):
    root = tiny_archive.root
    first = start_history(root, release_date=date(2025, 7, 1))
    assert first.record.release == 1 and first.record.open_origin.origin == FIRST_OPEN
    assert json.loads((root / "archive/ARCHIVE.json").read_text())["format_version"] == 2
    window = make_window(tmp_path / "w", FIRST_OPEN)
    result = run("release", "roll", "--root", str(root), "--window", str(window), "--date", "2026-01-02", "--closes", "2026-01-20")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "release 2 (roll, 2026-01-02): resolved 2023-01-01, 2023-07-01, 2024-01-01, 2024-07-01, 2025-01-01, 2025-07-01; "
        "open 2026-01-01 until 2026-01-20",
        "added archive/benchmark/windows/2025-07-01/assignments.parquet",
        "added archive/benchmark/windows/2025-07-01/papers.parquet",
        "added archive/releases/0001.SHA256SUMS",
        "added archive/releases/0002.croissant.json",
        "added archive/releases/0002.json",
        "added archive/search/2026-01-01/manifest_expanding.jsonl",
        "added archive/search/2026-01-01/manifest_fixed.jsonl",
    ]
    assert verify_archive(root).ok
    result = run("release", "verify", "--root", str(root))
    assert result.exit_code == 0 and "history of 2 releases holds" in result.output
    assert not list(root.glob(".rapgen-release-*"))
    shards = [json.loads(x) for x in (root / "archive/search/2026-01-01/manifest_fixed.jsonl").read_text().splitlines()]
    assert [s["field_id"] for s in shards] == sorted(tiny_archive.field_ids)
    assert all(s["date_from"] == "2025-07-01" and s["n_papers"] > 0 for s in shards)  # the ingested window's rows


def test_the_factory_history_verifies(history):
    result = run("release", "verify", "--root", str(history))
    assert result.exit_code == 0, result.output
    listing = run("release", "list", "--root", str(history)).output.splitlines()
    assert [line.split()[:3] for line in listing] == [["1", "2025-07-01", "initial"], ["2", "2025-07-15", "models"], ["3", "2026-01-10", "roll"]]


@pytest.mark.parametrize("kwargs,message", [
    ({"shift_days": -200}, "w/assignments.parquet: rows dated 2025-08-14..2026-06-10 lie outside the window [2026-01-01, 2026-07-01) "
                           "(and 1 more problem); nothing was written"),
    ({"first_id": "w2507.00003"}, "arxiv_id appears in another papers file or twice"),
])
def test_roll_refuses_a_bad_window_and_writes_nothing(history, tmp_path, kwargs, message):
    window = make_window(tmp_path / "w", SECOND_OPEN, **kwargs)
    before = snapshot(history)
    result = run("release", "roll", "--root", str(history), "--window", str(window), "--date", "2026-07-02")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert snapshot(history) == before


def test_roll_refuses_an_archive_that_does_not_verify(history, tmp_path):
    (history / "archive/benchmark/fields.jsonl").write_bytes(b"tampered\n")
    before = snapshot(history)
    result = run("release", "roll", "--root", str(history), "--window", str(make_window(tmp_path / "w", SECOND_OPEN)), "--date", "2026-07-02")
    assert result.exit_code == 1
    assert "the archive does not verify" in result.output and "FAILED archive/benchmark/fields.jsonl" in result.output
    assert snapshot(history) == before


def test_roll_refuses_a_format1_archive_and_an_early_date(tiny_archive, history, tmp_path):
    window = make_window(tmp_path / "w", SECOND_OPEN)
    with pytest.raises(ArchiveError, match=r"no open origin.*run 'rapgen release start'"):
        roll_release(tiny_archive.root, window, release_date=date(2026, 7, 2))
    result = run("release", "roll", "--root", str(history), "--window", str(window), "--date", "2026-06-30")
    assert result.exit_code == 2 and "before the window [2026-01-01, 2026-07-01) closes" in result.output
    result = run("release", "roll", "--root", str(history), "--window", str(window), "--date", "2026-13-01")
    assert result.exit_code == 2 and "'2026-13-01' is not a YYYY-MM-DD date" in result.output
    (window / "notes.txt").write_text("x")
    with pytest.raises(UsageProblem, match="unexpected notes.txt"):
        roll_release(history, window, release_date=date(2026, 7, 2))


def test_a_failed_post_check_puts_every_byte_back(history, tmp_path, monkeypatch):
    from rapgen.archive.history import ops

    before = snapshot(history)

    def refuse(root):
        def check():
            raise ArchiveError("simulated failure")
        return check

    monkeypatch.setattr(ops, "_check_after", refuse)
    with pytest.raises(ArchiveError, match="simulated failure"):
        roll_release(history, make_window(tmp_path / "w", SECOND_OPEN), release_date=date(2026, 7, 2))
    assert snapshot(history) == before


def test_cut_models_releases_the_merged_reveal(history):
    assert verify_archive(history).ok
    result = run("release", "cut", "--root", str(history), "--kind", "models", "--date", "2026-01-20")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:] == [
        "added archive/models/model-a/origins/2025-07-01/predictions.jsonl",
        "added archive/releases/0003.SHA256SUMS",
        "added archive/releases/0004.croissant.json",
        "added archive/releases/0004.json",
    ]
    report = verify_archive(history)
    assert report.ok, report.findings
    assert report.history.latest.kind.value == "models"


def test_cut_errata_keeps_the_old_bytes(history, tmp_path):
    path = "archive/models/model-b/model.json"
    old = (history / path).read_bytes()
    fixed = tmp_path / "model.json"
    fixed.write_bytes(old.replace(b'"notes": ""', b'"notes": "cut-off corrected"'))
    result = run("release", "cut", "--root", str(history), "--kind", "errata", "--replace", f"{path}={fixed}",
                 "--reason", "cut-off corrected", "--date", "2026-02-01")
    assert result.exit_code == 0, result.output
    assert (history / "archive/releases/0004/superseded/models/model-b/model.json").read_bytes() == old
    assert (history / path).read_bytes() == fixed.read_bytes()
    record = json.loads((history / "archive/releases/0004.json").read_text())
    assert record["replaced"] == [{"path": path, "reason": "cut-off corrected"}] and record["kind"] == "errata"
    assert verify_archive(history).ok


def test_cut_usage_errors(history, tmp_path):
    base = ("release", "cut", "--root", str(history))
    assert run(*base, "--kind", "roll").exit_code == 2
    result = run(*base, "--kind", "errata", "--replace", "archive/x=y")
    assert result.exit_code == 2 and "give one --reason per --replace" in result.output
    result = run(*base, "--kind", "errata")
    assert result.exit_code == 2 and "names at least one replaced file" in result.output
    same = tmp_path / "same.json"
    same.write_bytes((history / "archive/models/model-b/model.json").read_bytes())
    result = run(*base, "--kind", "errata", "--replace", f"archive/models/model-b/model.json={same}", "--reason", "r")
    assert result.exit_code == 2 and "nothing to replace" in result.output
    result = run(*base, "--kind", "models", "--date", "2020-01-01")
    assert result.exit_code == 2 and "release dates never decrease" in result.output


def test_start_refuses_an_archive_with_releases(history):
    result = run("release", "start", "--root", str(history))
    assert result.exit_code == 2 and "already has releases" in result.output


def test_format1_archive_lists_one_implicit_release(tmp_path):
    root = make_archive(tmp_path / "repo").root
    assert run("release", "list", "--root", str(root)).output.strip() == "format 1: one implicit release (number 1, kind initial)"
    result = run("release", "verify", "--root", str(root))
    assert result.exit_code == 0 and "one implicit release (format 1)" in result.output


def test_live_lists_the_sealed_entry(history):
    result = run("release", "live", "--root", str(history))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "2025-07-01 model-a                  sealed release 2 (2025-07-15); on time (closes 2025-07-15); revealed"
    ]
    result = run("release", "live", "--root", str(history), "--as-of", "2")
    assert result.output.splitlines()[0].endswith("; sealed")


def test_a_roll_leaves_merged_submissions_unreleased(history, tmp_path):
    reveal = "archive/models/model-a/origins/2025-07-01/predictions.jsonl"
    result = roll_release(history, make_window(tmp_path / "w", SECOND_OPEN), release_date=date(2026, 7, 2))
    assert reveal not in result.added  # a roll adds only its window, the next origin's manifests and its release files
    manifest = (history / "archive/releases/0004.SHA256SUMS").read_text()
    assert reveal not in manifest and reveal in (history / "SHA256SUMS").read_text()
    assert verify_archive(history).ok
    cut = cut_release(history, "models", release_date=date(2026, 7, 3))
    assert reveal in cut.added and cut.record.release == 5
