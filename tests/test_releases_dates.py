"""Forged histories with impossible dates: every hash of the chain recomputed (history_factory.forge),
so only the date rules (archive/history/dates.py) can catch them; and `release roll --closes`."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from history_factory import FIRST_OPEN, SECOND_OPEN, forge, make_window, prediction_lines
from rapgen.archive.history.dates import deadline_problem, roll_date_problem
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.cli import cli

# make_history: release 1 (initial, 2025-07-01) opens 2025-07-01 closing 2025-07-15; release 2 (models,
# 2025-07-15) lists model-a's commitment; release 3 (roll, 2026-01-10) resolves 2025-07-01, opens 2026-01-01.


def _write(root: Path, path: str, data: bytes) -> str:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(data)
    return path


def early_commitment(root: Path) -> None:
    """A commitment for the origin release 3 opened, slipped into release 2 (dated long before)."""
    c = Commitment("model-b", SECOND_OPEN, hashlib.sha256(b"anything").hexdigest(), None, "rapgen 0.1")
    forge(root, listed_from={_write(root, commitment_path(SECOND_OPEN, "model-b"), format_commitment(c)): 2})


def early_open_entry(root: Path) -> None:
    """Open Live files for 2026-01-01 listed by release 2, before that origin opened."""
    forge(root, listed_from={_write(root, reveal_path("model-b", SECOND_OPEN, "predictions.jsonl"), prediction_lines(SECOND_OPEN)): 2})


def early_reveal(root: Path) -> None:
    """model-a's reveal (merged after the roll) listed by release 2, before release 3 resolved its origin."""
    forge(root, listed_from={reveal_path("model-a", FIRST_OPEN, "predictions.jsonl"): 2})


def early_roll(root: Path) -> None:
    forge(root, records={3: {"date": "2025-12-01"}})


def early_initial(root: Path) -> None:
    forge(root, records={1: {"date": "2025-03-01"}})


def backwards(root: Path) -> None:
    forge(root, records={3: {"date": "2025-07-10"}})


def deadline_before_release(root: Path) -> None:
    forge(root, records={3: {"open_origin": {"origin": "2026-01-01", "closes": "2026-01-05"}}})


def deadline_before_origin(root: Path) -> None:
    forge(root, records={1: {"date": "2025-07-01", "open_origin": {"origin": "2025-07-01", "closes": "1999-01-01"}},
                         2: {"open_origin": {"origin": "2025-07-01", "closes": "1999-01-01"}}})


def deadline_after_window(root: Path) -> None:
    forge(root, records={3: {"open_origin": {"origin": "2026-01-01", "closes": "2026-07-01"}}})


FORGERIES = [
    (early_commitment, "archive/commitments/2026-01-01/model-b.json",
     "release 2: a commitment for 2026-01-01 listed by release 2 (2025-07-15), before release 3 (2026-01-10) opened that origin"),
    (early_open_entry, "archive/models/model-b/origins/2026-01-01/predictions.jsonl",
     "release 2: files for origin 2026-01-01 listed by release 2 (2025-07-15), before release 3 (2026-01-10) opened that origin"),
    (early_reveal, "archive/models/model-a/origins/2025-07-01/predictions.jsonl",
     "release 2: reveals a sealed entry for 2025-07-01 before release 3 (2026-01-10) resolved it"),
    (early_roll, "archive/releases/0003.json",
     "release 3: a roll dated 2025-12-01, before the window [2025-07-01, 2026-01-01) closes"),
    (early_initial, "archive/releases/0001.json",
     "release 1: the initial release is dated 2025-03-01, before the window [2025-01-01, 2025-07-01) closes"),
    (backwards, "archive/releases/0003.json", "release 3: dated 2025-07-10 before release 2 (2025-07-15): release dates never decrease"),
    (deadline_before_release, "archive/releases/0003.json",
     "release 3: open origin 2026-01-01 closes 2026-01-05, before the release that opens it (2026-01-10)"),
    (deadline_before_origin, "archive/releases/0001.json", "release 1: open origin 2025-07-01 closes 1999-01-01, before the release"),
    (deadline_after_window, "archive/releases/0003.json",
     "release 3: open origin 2026-01-01 closes 2026-07-01, on or after 2026-07-01, when the origin's target window"),
]


def test_the_forger_alone_leaves_a_history_that_verifies(history_copy):
    forge(history_copy)
    result = CliRunner().invoke(cli, ["release", "verify", "--root", str(history_copy)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", [["verify"], ["release", "verify"]], ids=["verify", "release-verify"])
@pytest.mark.parametrize("forgery,path,needle", FORGERIES, ids=[f[0].__name__ for f in FORGERIES])
def test_a_forged_date_fails_verification_naming_the_release(history_copy, forgery, path, needle, command):
    forgery(history_copy)
    result = CliRunner().invoke(cli, [*command, "--root", str(history_copy)])
    assert result.exit_code == 1, result.output
    assert f"INVARIANT {path}: {needle}" in result.output, result.output
    assert "Traceback" not in result.output


def test_release_live_does_not_call_an_early_commitment_on_time(history_copy):
    early_commitment(history_copy)
    result = CliRunner().invoke(cli, ["release", "live", "--root", str(history_copy)])
    line = next(x for x in result.output.splitlines() if "model-b" in x)
    assert "late" in line and "on time" not in line, result.output


# ---------------------------------------------------------------- the rules themselves
@pytest.mark.parametrize("closes,opened_on,problem", [
    (date(2026, 1, 15), date(2026, 1, 10), None),
    (date(2026, 1, 10), date(2026, 1, 10), None),  # on the release's own date: the spec's example
    (date(2026, 6, 30), date(2026, 1, 10), None),  # the last day before the target window ends
    (date(2026, 1, 9), date(2026, 1, 10), "before the release that opens it"),
    (date(2025, 12, 31), date(2025, 12, 1), "before the origin 2026-01-01 itself"),
    (date(1999, 1, 1), date(1998, 1, 1), "before the origin"),
    (date(2026, 7, 1), date(2026, 1, 10), "on or after 2026-07-01"),
])
def test_deadline_rule(closes, opened_on, problem):
    found = deadline_problem(date(2026, 1, 1), closes, opened_on, 6)
    assert (found is None) if problem is None else (problem in found), found


def test_roll_date_rule():
    assert roll_date_problem(date(2025, 7, 1), date(2026, 1, 1), 6) is None
    assert "before the window [2025-07-01, 2026-01-01) closes" in roll_date_problem(date(2025, 7, 1), date(2025, 12, 31), 6)


# ---------------------------------------------------------------- release roll --closes
def _roll(root: Path, tmp_path: Path, *args: str):
    window = make_window(tmp_path / "w", SECOND_OPEN, id_prefix="z")
    return CliRunner().invoke(cli, ["release", "roll", "--root", str(root), "--window", str(window), "--date", "2026-07-02", *args])


@pytest.mark.parametrize("closes,needle", [
    ("2026-07-01", "--closes: origin 2026-07-01 closes 2026-07-01, before the release that opens it (2026-07-02)"),
    ("2026-06-15", "before the release that opens it"),
    ("1999-01-01", "closes 1999-01-01, before the release that opens it"),
    ("2027-01-01", "closes 2027-01-01, on or after 2027-01-01, when the origin's target window [2026-07-01, 2027-01-01) has ended"),
    ("2099-12-31", "on or after 2027-01-01"),
])
def test_roll_refuses_an_impossible_deadline(history_copy, tmp_path, closes, needle):
    before = {p: p.read_bytes() for p in history_copy.rglob("*") if p.is_file()}
    result = _roll(history_copy, tmp_path, "--closes", closes)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.output
    assert {p: p.read_bytes() for p in history_copy.rglob("*") if p.is_file()} == before  # nothing written


def test_roll_accepts_a_deadline_in_the_window(history_copy, tmp_path):
    result = _roll(history_copy, tmp_path, "--closes", "2026-07-20")
    assert result.exit_code == 0, result.output
    assert "open 2026-07-01 until 2026-07-20" in result.output


def test_a_late_roll_with_the_default_deadline_is_told_to_give_one(history_copy, tmp_path):
    window = make_window(tmp_path / "w", SECOND_OPEN, id_prefix="z")
    result = CliRunner().invoke(cli, ["release", "roll", "--root", str(history_copy), "--window", str(window), "--date", "2026-08-01"])
    assert result.exit_code == 2
    assert "the default deadline: origin 2026-07-01 closes 2026-07-15, before the release that opens it (2026-08-01)" in result.output
    assert "give a later one with --closes" in result.output


def test_start_refuses_an_impossible_deadline(tmp_path):
    from factory import make_archive

    root = tmp_path / "repo"
    make_archive(root)
    sums = (root / "SHA256SUMS").read_bytes()
    result = CliRunner().invoke(cli, ["release", "start", "--root", str(root), "--date", "2025-07-01", "--closes", "1999-01-01"])
    assert result.exit_code == 2 and "closes 1999-01-01, before the release that opens it" in result.output
    assert (root / "SHA256SUMS").read_bytes() == sums and not (root / "archive" / "releases").exists()


# ---------------------------------------------------------------- release list / live on a wrong root
@pytest.mark.parametrize("command", ["list", "live"])
def test_list_and_live_refuse_a_root_that_is_not_an_archive(tmp_path, command):
    missing = CliRunner().invoke(cli, ["release", command, "--root", str(tmp_path / "no-such")])
    assert missing.exit_code == 2, missing.output
    assert missing.output.strip().splitlines() == [f"Error: {tmp_path / 'no-such'}: the root is not a directory"]
    empty = CliRunner().invoke(cli, ["release", command, "--root", str(tmp_path)])
    assert empty.exit_code == 1, empty.output
    assert empty.output.strip().splitlines() == [f"Error: {tmp_path}: no SHA256SUMS at the root, so it is not an archive "
                                                 "(run 'rapgen seal' to create it)"]
