"""Live free-riding: a commitment carrying another model's digests fails `submit check` and verify,
and the report names whose digests it copies (archive/history/digests.py)."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from history_factory import FIRST_OPEN, SECOND_OPEN, add_lines, prediction_lines
from rapgen.archive.history.digests import digest_copies
from rapgen.archive.history.ops import cut_release
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment
from rapgen.cli import cli
from test_submit_releases import model_json

# history_copy (conftest): model-a's commitment for 2025-07-01 is in release 2; release 3 opened 2026-01-01.
OWN = hashlib.sha256(prediction_lines(SECOND_OPEN, seed=5)).hexdigest()
TRACES = hashlib.sha256(b'{"call_index": 0}\n').hexdigest()


def _commit(root: Path, model_id: str, predictions: str, traces: str | None = None, origin: date = SECOND_OPEN) -> str:
    path = commitment_path(origin, model_id)
    add_lines(root, {path: format_commitment(Commitment(model_id, origin, predictions, traces, "rapgen 0.1"))})
    return path


def _new_model(root: Path, model_id: str) -> str:
    folder = f"archive/models/{model_id}"
    (root / folder).mkdir()
    add_lines(root, {f"{folder}/model.json": (json.dumps(model_json(model_id), indent=2) + "\n").encode()})
    return folder


def _verify(root: Path, *command: str):
    return CliRunner().invoke(cli, [*command, "--root", str(root)])


@pytest.mark.parametrize("command", [["verify"], ["release", "verify"]], ids=["verify", "release-verify"])
def test_a_later_commitment_with_another_models_digests_fails_verification(history_copy, command) -> None:
    _commit(history_copy, "model-a", OWN, TRACES)
    cut_release(history_copy, "models", release_date=date(2026, 1, 12))  # model-a's entry is release 4's
    _new_model(history_copy, "copycat")
    copied = _commit(history_copy, "copycat", OWN, TRACES)
    result = _verify(history_copy, *command)
    assert result.exit_code == 1, result.output
    lines = [x for x in result.output.splitlines() if x.startswith(f"INVARIANT {copied}: ")]
    assert any("its predictions.jsonl digest" in x and "is that of model-a's archive/commitments/2026-01-01/model-a.json" in x
               for x in lines), result.output
    assert any("its traces.jsonl digest" in x for x in lines), result.output
    assert not any(x.startswith("INVARIANT archive/commitments/2026-01-01/model-a.json") for x in result.output.splitlines())


def test_a_commitment_with_the_digest_of_another_models_file_fails(history_copy) -> None:
    revealed = history_copy / "archive/models/model-a/origins/2025-07-01/predictions.jsonl"  # merged, not yet cut
    _new_model(history_copy, "copycat")
    copied = _commit(history_copy, "copycat", hashlib.sha256(revealed.read_bytes()).hexdigest(), origin=SECOND_OPEN)
    result = _verify(history_copy, "verify")
    assert result.exit_code == 1
    assert f"INVARIANT {copied}: its predictions.jsonl digest" in result.output
    assert "model-a's archive/commitments/2025-07-01/model-a.json" in result.output  # the commitment it matches


def test_distinct_digests_verify(history_copy) -> None:
    _commit(history_copy, "model-a", OWN)
    _new_model(history_copy, "other")
    _commit(history_copy, "other", hashlib.sha256(b"other forecasts").hexdigest())
    assert _verify(history_copy, "release", "verify").exit_code == 0


def test_submit_check_names_the_model_copied(history_copy) -> None:
    _commit(history_copy, "model-a", OWN, TRACES)
    folder = _new_model(history_copy, "copycat")
    _commit(history_copy, "copycat", OWN)
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--root", str(history_copy), "--now", "2026-01-10",
                                      str(history_copy / folder)])
    assert result.exit_code == 1, result.output
    assert "**COPY**" in result.stdout
    assert "the commitment copies another model: its predictions.jsonl digest" in result.stdout
    assert "model-a's archive/commitments/2026-01-01/model-a.json" in result.stdout


def test_the_rule_ignores_the_models_own_files_and_null_digests() -> None:
    mine = Commitment("m", SECOND_OPEN, "a" * 64, None, "k")
    others = {commitment_path(FIRST_OPEN, "m"): Commitment("m", FIRST_OPEN, "a" * 64, None, "k"),
              commitment_path(SECOND_OPEN, "n"): Commitment("n", SECOND_OPEN, "b" * 64, None, "k")}
    files = {"archive/models/m/predictions.jsonl": "a" * 64, "archive/models/n/origins/2026-01-01/traces.jsonl": "c" * 64}
    assert digest_copies(mine, others, files) == []
    files["archive/models/n/predictions.jsonl"] = "a" * 64
    [copy] = digest_copies(mine, others, files)
    assert (copy.file, copy.source, copy.source_model) == ("predictions.jsonl", "archive/models/n/predictions.jsonl", "n")
