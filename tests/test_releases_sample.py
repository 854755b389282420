"""The replayed sample history, built from a tiny archive that has the sample's five origins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import make_archive
from rapgen.archive import verify_archive
from rapgen.cli import cli


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("sample-history")
    make_archive(base / "src")
    result = CliRunner().invoke(cli, ["release", "sample-history", "--source", str(base / "src"), "--out", str(base / "out"),
                                      "--open-submitter", "model-b"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"Wrote a history of 8 releases into {base / 'out'}."
    return base


def test_the_history_has_the_planned_releases(built):
    out = built / "out"
    records = [json.loads((out / f"archive/releases/{k:04d}.json").read_text()) for k in range(1, 9)]
    assert [(r["kind"], r["date"], r["resolved_origins"][-1], r["open_origin"]["origin"]) for r in records] == [
        ("initial", "2024-01-01", "2023-07-01", "2024-01-01"),
        ("models", "2024-01-15", "2023-07-01", "2024-01-01"),
        ("roll", "2024-07-01", "2024-01-01", "2024-07-01"),
        ("models", "2024-07-15", "2024-01-01", "2024-07-01"),
        ("roll", "2025-01-01", "2024-07-01", "2025-01-01"),
        ("models", "2025-01-15", "2024-07-01", "2025-01-01"),
        ("roll", "2025-07-01", "2025-01-01", "2025-07-01"),
        ("models", "2025-07-15", "2025-01-01", "2025-07-01"),
    ]
    assert all(r["simulated"] for r in records)
    assert not (out / "archive/benchmark/windows/2025-07-01").exists()
    report = verify_archive(out)
    assert report.ok, report.findings


def test_sealed_entries_are_revealed_and_match_the_source(built):
    out, src = built / "out", built / "src"
    commitment = json.loads((out / "archive/commitments/2024-07-01/model-a.json").read_text())
    revealed = out / "archive/models/model-a/origins/2024-07-01/predictions.jsonl"
    import hashlib

    assert commitment["files"]["predictions.jsonl"] == hashlib.sha256(revealed.read_bytes()).hexdigest()
    source_lines = [x for x in (src / "archive/models/model-a/predictions.jsonl").read_text().splitlines() if '"origin": "2024-07-01"' in x]
    assert revealed.read_text().splitlines() == source_lines
    # The open submitter has no commitment; its files arrive before the deadline, in the models release.
    assert not (out / "archive/commitments/2024-07-01/model-b.json").exists()
    m4 = (out / "archive/releases/0004.SHA256SUMS").read_text()
    assert "archive/models/model-b/origins/2024-07-01/predictions.jsonl" in m4
    assert "archive/models/model-a/origins/2024-07-01/predictions.jsonl" not in m4  # revealed only after the roll
    assert "archive/models/model-a/origins/2024-07-01/predictions.jsonl" in (out / "archive/releases/0006.SHA256SUMS").read_text()


def test_the_base_ledger_stops_at_the_first_open_origin(built):
    import pyarrow.parquet as pq

    dates = pq.read_table(built / "out/archive/benchmark/papers.parquet")["first_submitted"].to_pylist()
    assert max(dates).isoformat() < "2024-01-01"
    window = pq.read_table(built / "out/archive/benchmark/windows/2024-07-01/papers.parquet")["first_submitted"].to_pylist()
    assert min(window).isoformat() >= "2024-07-01" and max(window).isoformat() < "2025-01-01"
    origins = json.loads((built / "out/archive/benchmark/origins.json").read_text())
    assert origins["origins"] == ["2023-01-01", "2023-07-01"] and origins["strict_origin"] == "2023-07-01"


def test_refuses_a_folder_that_is_not_empty(built, tmp_path):
    (tmp_path / "x").write_text("x")
    result = CliRunner().invoke(cli, ["release", "sample-history", "--source", str(built / "src"), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "not empty" in result.output
