"""A catalogue of history tampering on disk: each edit is re-sealed so every byte verifies,
and ``rapgen release verify`` must still exit 1 with a finding that names the release."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import reseal
from history_factory import FIRST_OPEN, make_window
from rapgen.cli import cli


@pytest.fixture
def history(history_copy: Path) -> Path:
    return history_copy  # conftest: a fresh copy of history_factory's history


def _edit_json(path: Path, **changes) -> None:
    obj = json.loads(path.read_text())
    obj.update(changes)
    path.write_text(json.dumps(obj, indent=2) + "\n")


def edit_old_manifest(root: Path) -> None:
    sums = root / "archive/releases/0001.SHA256SUMS"
    lines = sums.read_text().splitlines(keepends=True)
    sums.write_text("".join(line for line in lines if "model-b/traces" not in line and "model-b/model.json" not in line))


def edit_frozen_file(root: Path) -> None:
    path = root / "archive/models/model-b/model.json"
    path.write_bytes(path.read_bytes().replace(b'"notes": ""', b'"notes": "edited"'))


def edit_open_manifest(root: Path) -> None:
    path = root / "archive/search/2026-01-01/manifest_fixed.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["max_date"] = "2026-01-03"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def remove_release(root: Path) -> None:
    for name in ("0002.json", "0002.SHA256SUMS", "0002.croissant.json"):
        (root / "archive/releases" / name).unlink()


def reorder_releases(root: Path) -> None:
    folder = root / "archive/releases"
    for ext in ("json", "SHA256SUMS"):
        a, b = folder / f"0002.{ext}", folder / f"0003.{ext}"
        tmp = folder / f"swap.{ext}"
        a.rename(tmp)
        b.rename(a)
        tmp.rename(b)


def renumber_with_gap(root: Path) -> None:
    folder = root / "archive/releases"
    (folder / "0003.json").rename(folder / "0004.json")
    (folder / "0003.SHA256SUMS").rename(folder / "0004.SHA256SUMS")


def decreasing_date(root: Path) -> None:
    _edit_json(root / "archive/releases/0003.json", date="2025-07-10")


def wrong_parent(root: Path) -> None:
    _edit_json(root / "archive/releases/0003.json", parent_sha256="0" * 64)


def reveal_differs(root: Path) -> None:
    path = root / "archive/models/model-a/origins/2025-07-01/predictions.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"weights": {"D0": ', b'"weights": {"D0": 1', 1))


def window_rows_outside(root: Path) -> None:
    make_window(root / "archive/benchmark/windows/2025-07-01", FIRST_OPEN, shift_days=-200)


def unreleased_benchmark_file(root: Path) -> None:
    (root / "archive/benchmark/notes.jsonl").write_text("{}\n")


def drop_old_manifest(root: Path) -> None:
    (root / "archive/releases/0001.SHA256SUMS").unlink()


# (tamper, a line of the output must contain all of these)
CATALOGUE = [
    (edit_old_manifest, ["INVARIANT archive/releases/0002.json", "release 2: parent_sha256 does not match releases/0001.SHA256SUMS"]),
    (edit_frozen_file, ["INVARIANT archive/models/model-b/model.json", "release 1: SHA256SUMS gives a digest other than the release's"]),
    (edit_open_manifest, ["archive/search/2026-01-01/manifest_fixed.jsonl", "release 3:", "on or after 2026-01-01"]),
    (remove_release, ["archive/releases/0003.json", "release 3: follows release 1 but release 2 is missing"]),
    (reorder_releases, ["archive/releases/0002.json", "release 2: 'release' is 3 but the file is release 2's"]),
    (renumber_with_gap, ["archive/releases/0004.json", "release 4: 'release' is 3 but the file is release 4's"]),
    (decreasing_date, ["archive/releases/0003.json", "release 3: dated 2025-07-10 before release 2 (2025-07-15)"]),
    (wrong_parent, ["archive/releases/0003.json", "release 3: parent_sha256 does not match releases/0002.SHA256SUMS"]),
    (reveal_differs, ["archive/models/model-a/origins/2025-07-01/predictions.jsonl", "release 2: differs from its commitment"]),
    (window_rows_outside, ["archive/benchmark/windows/2025-07-01/papers.parquet", "release 3: rows dated",
                           "lie outside the window [2025-07-01, 2026-01-01)"]),
    (unreleased_benchmark_file, ["archive/benchmark/notes.jsonl", "release 3: listed by SHA256SUMS but by no release"]),
    (drop_old_manifest, ["archive/releases/0001.SHA256SUMS", "release 1: 0001.SHA256SUMS is missing"]),
]


# Plain 'rapgen verify' runs every history check; 'rapgen release verify' reports the same findings.
COMMANDS = {"verify": ["verify"], "release-verify": ["release", "verify"]}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("tamper,needles", CATALOGUE, ids=[t[0].__name__ for t in CATALOGUE])
def test_tampered_history_exits_1_naming_the_release(history, tamper, needles, command):
    tamper(history)
    reseal(history)
    result = CliRunner().invoke(cli, [*COMMANDS[command], "--root", str(history)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(all(n in line for n in needles) for line in lines), result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_untampered_copy_verifies(history, command):
    reseal(history)
    result = CliRunner().invoke(cli, [*COMMANDS[command], "--root", str(history)])
    assert result.exit_code == 0, result.output


def test_plain_verify_json_names_the_release(history):
    wrong_parent(history)
    reseal(history)
    result = CliRunner().invoke(cli, ["verify", "--root", str(history), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert [f["path"] for f in report["findings"] if f["detail"].startswith("release 3: parent_sha256")] == ["archive/releases/0003.json"]


def test_json_report_carries_the_history_findings(history):
    wrong_parent(history)
    reseal(history)
    result = CliRunner().invoke(cli, ["release", "verify", "--root", str(history), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert any(f["category"] == "INVARIANT" and f["detail"].startswith("release 3: parent_sha256") for f in report["findings"])


def _open_entry(root: Path, keep) -> None:
    from history_factory import SECOND_OPEN, add_lines, prediction_lines
    from rapgen.archive.history.records import reveal_path

    lines = [x for x in prediction_lines(SECOND_OPEN).decode().splitlines(keepends=True) if keep(json.loads(x))]
    add_lines(root, {reveal_path("model-b", SECOND_OPEN, "predictions.jsonl"): "".join(lines).encode()})


def test_an_open_entry_must_be_complete(history):
    _open_entry(history, lambda u: True)
    assert CliRunner().invoke(cli, ["release", "verify", "--root", str(history)]).exit_code == 0
    # plain 'rapgen verify' allows later-origin files in a model folder
    result = CliRunner().invoke(cli, ["verify", "--root", str(history)])
    assert result.exit_code == 0 and "unexpected file in a model folder" not in result.output, result.output


@pytest.mark.parametrize("keep,needle", [
    (lambda u: u["condition"] != "A3", "origin 2026-01-01 lacks condition A3"),
    (lambda u: not (u["condition"] == "A1" and u["field_id"] == "gamma"), "condition A1 does not cover every episode"),
])
def test_an_incomplete_open_entry_is_malformed(tmp_path, _history_made, keep, needle):
    root = tmp_path / "h"
    shutil.copytree(_history_made.root, root)
    _open_entry(root, keep)
    result = CliRunner().invoke(cli, ["release", "verify", "--root", str(root)])
    assert result.exit_code == 1
    assert any("archive/models/model-b/origins/2026-01-01/predictions.jsonl" in line and needle in line for line in result.output.splitlines()), result.output


def test_a_new_model_may_arrive_sealed_with_only_model_json(history):
    import hashlib

    from history_factory import SECOND_OPEN, add_lines, prediction_lines
    from rapgen.archive.history.ops import cut_release
    from rapgen.archive.history.records import Commitment, commitment_path, format_commitment

    model_json = json.loads((history / "archive/models/model-b/model.json").read_text())
    model_json.update(model_id="model-c", display_name="Model C")
    digest = hashlib.sha256(prediction_lines(SECOND_OPEN, seed=5)).hexdigest()
    add_lines(history, {
        "archive/models/model-c/model.json": (json.dumps(model_json, indent=2) + "\n").encode(),
        commitment_path(SECOND_OPEN, "model-c"): format_commitment(Commitment("model-c", SECOND_OPEN, digest, None, "0.1")),
    })
    result = CliRunner().invoke(cli, ["release", "verify", "--root", str(history)])
    assert result.exit_code == 0, result.output
    from datetime import date

    cut = cut_release(history, "models", release_date=date(2026, 1, 15))
    assert "archive/models/model-c/model.json" in cut.added
    # without a commitment or a later-origin file, a model folder still needs its predictions
    (history / "archive/models/model-d").mkdir()
    add_lines(history, {"archive/models/model-d/model.json": (json.dumps({**model_json, "model_id": "model-d"}, indent=2) + "\n").encode()})
    result = CliRunner().invoke(cli, ["release", "verify", "--root", str(history)])
    assert result.exit_code == 1 and "archive/models/model-d/predictions.jsonl: required model file is missing" in result.output
