"""releases.csv and ``rapgen score --release N`` on a tiny history built with the release operations."""

from __future__ import annotations

import csv
import hashlib
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import make_archive
from history_factory import FIRST_OPEN, add_lines, make_window, prediction_lines
from rapgen.archive import open_verified
from rapgen.archive.history.ops import cut_release, roll_release, start_history
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.cli import cli
from rapgen.scores import compute_scores, write_scores

RESAMPLES = 60


def _score(root: Path, out: Path, release: int | None):
    result = compute_scores(open_verified(root).release(release), resamples=RESAMPLES, diagnostics=False)
    write_scores(result, out)
    return result


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Release 1 (initial, 2025-07-01 open), scored; a sealed commitment (release 2), the roll
    resolving 2025-07-01 (release 3), the reveal (release 4), then a model merged but not cut."""
    tmp = tmp_path_factory.mktemp("history")
    root = tmp / "repo"
    make_archive(root)
    start_history(root, release_date=date(2025, 7, 1), simulated=True)
    at_release_1 = tmp / "at1"
    _score(root, at_release_1, 1)
    predictions = prediction_lines(FIRST_OPEN)
    commitment = Commitment("model-a", FIRST_OPEN, hashlib.sha256(predictions).hexdigest(), None, "rapgen 0.1")
    add_lines(root, {commitment_path(FIRST_OPEN, "model-a"): format_commitment(commitment)})
    cut_release(root, "models", release_date=date(2025, 7, 15))
    roll_release(root, make_window(tmp / "window", FIRST_OPEN), release_date=date(2026, 1, 10))
    add_lines(root, {reveal_path("model-a", FIRST_OPEN, "predictions.jsonl"): predictions})
    cut_release(root, "models", release_date=date(2026, 1, 12))
    latest = tmp / "latest"
    result = _score(root, latest, None)
    return root, at_release_1, latest, result, tmp


def test_release_1_scores_byte_for_byte_after_later_releases(history):
    root, at_release_1, _, _, tmp = history
    again = tmp / "again1"
    _score(root, again, 1)
    names = sorted(p.name for p in at_release_1.iterdir())
    assert "releases.csv" in names and "pairs.csv" in names
    for name in names:
        assert (at_release_1 / name).read_bytes() == (again / name).read_bytes(), name


def test_releases_csv_covers_every_release_each_as_scored_alone(history):
    root, _, latest, _, tmp = history
    rows = read_csv(latest / "releases.csv")
    assert {r["release"] for r in rows} == {"1", "2", "3", "4"}
    assert {r["date"] for r in rows if r["release"] == "3"} == {"2026-01-10"}
    for n in (2, 3):
        alone = tmp / f"alone{n}"
        _score(root, alone, n)
        block = [r for r in rows if r["release"] == str(n)]
        assert block and block == [r for r in read_csv(alone / "releases.csv") if r["release"] == str(n)]
        lb = {(r["track"], r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): (r["estimate"], r["ci_low"], r["ci_high"])
              for r in read_csv(alone / "leaderboard.csv")}
        mine = {(r["track"], r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): (r["estimate"], r["ci_low"], r["ci_high"])
                for r in block if r["track"] != "live"}
        assert mine == lb, n


def test_partial_and_live_participation_in_the_latest_release(history):
    _, _, latest, result, _ = history
    rows = read_csv(latest / "releases.csv")
    meta = result.meta["release"]
    assert meta["number"] == 4 and meta["includes_unreleased"] is True and meta["simulated"] is True
    # model-b never covered 2025-07-01: partial 5 of 6 since the roll; complete last in release 2.
    assert meta["partial"]["model-b"]["A0"] == {"origins": 5, "of": 6, "last_complete_release": 2}
    # model-a revealed A0, A1, A3 for 2025-07-01; its State conditions stay partial.
    assert set(meta["partial"]["model-a"]) == {"A2", "A4"}
    assert meta["live"] == {"model-a": ["2025-07-01"]} and meta["unreleased"] == []
    def entries(n, track):
        return {(r["entry"], r["condition"]) for r in rows if r["release"] == str(n) and track == r["track"]}
    assert ("model-b", "A0") in entries(2, "all_origin") and ("model-b", "A0") not in entries(3, "all_origin")
    # in release 3 the revealed files were not yet listed: live holds the baselines alone
    assert {c for _, c in entries(3, "live")} == {"BASE"}
    assert {("model-a", c) for c in ("A0", "A1", "A3")} <= entries(4, "live")
    assert not entries(1, "live") and not entries(2, "live")


def test_cli_score_release(history):
    root, _, _, _, tmp = history
    out = tmp / "cli"
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(out), "--resamples", "20", "--release", "2"])
    assert result.exit_code == 0, result.output
    assert "Release 2 (2025-07-15, models), from the files it listed." in result.output
    bad = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(tmp / "bad"), "--release", "9"])
    assert bad.exit_code == 2 and "release 9 does not exist" in bad.output and "Traceback" not in bad.output
    assert not (tmp / "bad").exists()


def test_live_csv_lists_each_model_over_its_on_time_origins(history):
    _, _, latest, _, _ = history
    rows = read_csv(latest / "live.csv")
    assert list(rows[0]) == ["split", "policy", "entry", "kind", "condition", "metric", "origins", "n_origins", "estimate", "ci_low",
                             "ci_high", "n_fields", "rank"]
    models = {(r["entry"], r["condition"], r["origins"], r["n_origins"]) for r in rows if r["kind"] == "model"}
    assert models == {("model-a", c, "2025-07-01", "1") for c in ("A0", "A1", "A3")}
    assert {r["origins"] for r in rows if r["kind"] == "baseline"} == {"2025-07-01"}
    releases = {(r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): (r["estimate"], r["ci_low"], r["ci_high"], r["rank"])
                for r in read_csv(latest / "releases.csv") if r["release"] == "4" and r["track"] == "live"}
    mine = {(r["split"], r["policy"], r["entry"], r["condition"], r["metric"]): (r["estimate"], r["ci_low"], r["ci_high"], r["rank"])
            for r in rows}
    assert mine == releases  # one origin set: live.csv and the release's live rows agree, ranks included
