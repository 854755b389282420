"""Plain ``rapgen verify`` on format 2 and on intervention records, and what VerifiedArchive hands on.

The history archive is built with ``release start``/``cut``/``roll`` on the
tiny factory archive (history_factory); the intervention records are computed
from the tiny archive's own bytes (interventions_factory), then one line at a
time is broken.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import make_archive, reseal
from history_factory import FIRST_OPEN, SECOND_OPEN, add_lines, prediction_lines
from interventions_factory import add_interventions
from rapgen.archive import open_verified, verify_archive
from rapgen.archive.interventions import OracleUnit, Readout
from rapgen.archive.records import Category, ProblemKind
from rapgen.cli import cli
from rapgen.search import validate_call


@pytest.fixture
def history(history_copy: Path) -> Path:
    return history_copy  # conftest: a fresh copy of history_factory's history


@pytest.fixture(scope="module")
def _with_records(tmp_path_factory):
    tiny = make_archive(tmp_path_factory.mktemp("f2-interventions"))
    add_interventions(tiny.root)
    return tiny.root


@pytest.fixture
def with_records(_with_records, tmp_path: Path) -> Path:
    dest = tmp_path / "records"
    shutil.copytree(_with_records, dest)
    return dest


def verify(root: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["verify", "--root", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.output.splitlines()


# ------------------------------------------------------------------ format 2
def test_plain_verify_accepts_a_history_built_with_release_commands(history):
    code, lines = verify(history)
    assert code == 0, lines
    assert lines[-1].startswith("OK:")


def test_verified_root_exposes_releases_commitments_and_views(history):
    root = open_verified(history, validate_call=validate_call)
    assert root.is_history and list(root.releases) == [1, 2, 3] and root.latest_release == 3
    assert [r.kind.value for r in root.releases.values()] == ["initial", "models", "roll"]
    assert "archive/benchmark/windows/2025-07-01/papers.parquet" not in root.release(2).files
    [(path, commitment)] = root.commitments.items()
    assert path == f"archive/commitments/{FIRST_OPEN}/model-a.json" and commitment.model_id == "model-a"
    one, three, now = root.release(1), root.release(3), root.release()
    assert one.ledger_files()[0] == ["archive/benchmark/papers.parquet"]
    assert three.ledger_files()[0] == ["archive/benchmark/papers.parquet", "archive/benchmark/windows/2025-07-01/papers.parquet"]
    assert now.unreleased == (f"archive/models/model-a/origins/{FIRST_OPEN}/predictions.jsonl",) and three.unreleased == ()
    assert now.current and not three.current and root.release(3) is three  # each view is built once
    assert three.manifest_sha256 == root.digests["archive/releases/0003.SHA256SUMS"] and now.manifest_sha256 == root.manifest_sha256
    # the units are the union of the prediction files the release lists; the ledger the union of its papers files
    origins = {u.origin for u in now.predictions("model-a")}
    assert FIRST_OPEN in origins and len(origins) == 6
    assert FIRST_OPEN not in {u.origin for u in three.predictions("model-a")}  # merged after release 3
    counts = []
    for release in (now, one):
        con = release.connect()
        try:
            counts.append(con.execute("SELECT count(*) FROM papers").fetchone()[0])
        finally:
            con.close()
    assert counts[0] == counts[1] + 12  # the window's twelve papers
    with pytest.raises(Exception, match="release 9 does not exist"):
        root.release(9)


def test_a_format1_archive_is_one_implicit_release(tmp_path):
    root = open_verified(make_archive(tmp_path).root)
    assert not root.is_history and list(root.releases) == [1]
    release = root.release(1)
    assert root.releases[1].kind.value == "initial" and release.implicit and release is root.release()
    assert release.files == root.digests and dict(root.commitments) == {}


def test_later_origin_files_need_a_format2_archive(tmp_path):
    tiny = make_archive(tmp_path)
    add_lines(tiny.root, {"archive/models/model-b/origins/2025-07-01/predictions.jsonl": prediction_lines(FIRST_OPEN)})
    code, lines = verify(tiny.root)
    assert code == 1
    assert any(line.startswith("INVARIANT archive/models/model-b/origins/2025-07-01/predictions.jsonl: later-origin files need "
                               "a format-2 archive") for line in lines), lines


def test_a_unit_appears_once_across_prediction_files(history):
    add_lines(history, {f"archive/models/model-b/origins/{SECOND_OPEN}/predictions.jsonl": prediction_lines(SECOND_OPEN),
                        f"archive/models/model-b/origins/{SECOND_OPEN}/traces.jsonl": b""})
    assert verify(history)[0] == 0
    # a later origin must not be one of origins.json's (those units live in predictions.jsonl)
    add_lines(history, {"archive/models/model-b/origins/2025-01-01/predictions.jsonl": prediction_lines(date(2025, 1, 1))})
    code, lines = verify(history)
    assert code == 1 and any("origins/2025-01-01/predictions.jsonl: 2025-01-01 is one of origins.json's" in line for line in lines), lines


def test_a_reveal_that_differs_names_its_release_in_plain_verify(history):
    path = history / f"archive/models/model-a/origins/{FIRST_OPEN}/predictions.jsonl"
    add_lines(history, {str(path.relative_to(history)): prediction_lines(FIRST_OPEN, seed=9)})
    code, lines = verify(history)
    assert code == 1 and any("differs from its commitment" in line and "release 2:" in line for line in lines), lines


# ------------------------------------------------------------------ interventions
def test_a_model_folder_with_every_intervention_record_verifies(with_records):
    code, lines = verify(with_records)
    assert code == 0, lines
    archive = open_verified(with_records, validate_call=validate_call).release()
    readouts, oracle = archive.replays("model-a"), archive.oracle("model-a")
    assert len(readouts) == 40 and all(isinstance(r, Readout) for r in readouts)
    assert {r.cell for r in readouts} == {"F->S:all", "F->S:matched"}
    assert len(oracle) == 40 and all(isinstance(u, OracleUnit) for u in oracle)
    assert [(c.condition, c.line) for c in archive.oracle_traces("model-a")] == [("O3", 1)]
    assert archive.training("model-t").base_model == "model-b" and archive.training("model-a") is None
    records = archive.interventions("model-t")
    assert records.extensions.cutoff_precision == "month" and records.extensions.inference["seed"] == 7
    assert len(records.panel_cells) == 6 and archive.interventions("model-b") is None
    assert len(archive.predictions("model-t")) == 6  # panel coverage, not every field × origin


def test_the_archive_rule_for_recorded_calls_agrees_with_the_search_validator(with_records):
    assert verify_archive(with_records).ok and verify_archive(with_records, validate_call=validate_call).ok


def _edit_line(path: Path, number: int, change) -> None:
    lines = path.read_text().splitlines()
    obj = json.loads(lines[number - 1])
    lines[number - 1] = json.dumps(change(obj))
    path.write_text("\n".join(lines) + "\n")


def _set(**values):
    return lambda obj: {**obj, **values}


M = "archive/models/model-a/"
T = "archive/models/model-t/"
# (file, line to edit, edit, "path:line" expected, text the finding holds)
MALFORMED = [
    ("replays.jsonl", 3, _set(evidence_sha256="0" * 64), f"{M}replays.jsonl:3", "'evidence_sha256' does not match"),
    ("replays.jsonl", 1, _set(calls_used=5), f"{M}replays.jsonl:1", "'calls_used' is 5, expected 1"),
    ("replays.jsonl", 2, _set(budget="half"), f"{M}replays.jsonl:2", "budget"),
    ("replays.jsonl", 4, _set(prompt_sha256="cd" * 32), f"{M}replays.jsonl:4", "one replay template per file"),
    ("replays.jsonl", 5, _set(source_condition="A1"), f"{M}replays.jsonl:5", "source_condition"),
    ("oracle.jsonl", 1, _set(input_sha256="1" * 64), f"{M}oracle.jsonl:1", "'input_sha256' does not match the exact-history block"),
    ("oracle.jsonl", 2, _set(condition="O1"), f"{M}oracle.jsonl:2", "duplicate unit"),
    ("oracle.jsonl", 3, _set(usage={"input_tokens": -1, "output_tokens": 0}), f"{M}oracle.jsonl:3", "'usage.input_tokens'"),
    ("oracle_traces.jsonl", 1, _set(condition="O1"), f"{M}oracle_traces.jsonl:1", "must be \"O3\""),
    ("oracle_traces.jsonl", 1, _set(call_index=99), f"{M}oracle_traces.jsonl:1", "beyond the cap"),
    ("predictions.jsonl", 1, _set(attempts=0), f"{M}predictions.jsonl:1", "'attempts'"),
]


@pytest.mark.parametrize("name,line,edit,where,needle", MALFORMED, ids=[f"{m[0]}:{m[1]}:{m[4][:24]}" for m in MALFORMED])
def test_each_malformed_intervention_line_is_a_line_numbered_finding(with_records, name, line, edit, where, needle):
    _edit_line(with_records / M / name, line, edit)
    reseal(with_records)
    code, lines = verify(with_records)
    assert code == 1
    assert any(out.split(" ", 1)[1].startswith(where + ":") and needle in out for out in lines if " " in out), lines


PANEL_CASES = [
    (lambda root: _edit_line(root / T / "predictions.jsonl", 2, _set(field_id="delta")), f"{T}predictions.jsonl:2",
     "outside the panel's cells"),
    (lambda root: (root / T / "training.json").unlink(), f"{T}model.json", "requires a training.json"),
    (lambda root: _edit_json(root / T / "model.json", base_model="model-z"), f"{T}model.json", "'base_model' 'model-z' is not a listed model"),
    (lambda root: _edit_json(root / T / "model.json", inference={"endpoint": "local"}), f"{T}model.json", "'inference'"),
    (lambda root: _edit_json(root / T / "training.json", n_trajectories=9), f"{T}training.json", "'n_trajectories' 9 is not in [1, 1]"),
    (lambda root: _drop_base_units(root), f"{T}model.json", "BASE-COVERAGE"),
]


def _edit_json(path: Path, **changes) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=2) + "\n")


def _drop_base_units(root: Path) -> None:
    path = root / "archive/models/model-b/predictions.jsonl"
    lines = [x for x in path.read_text().splitlines() if not ('"alpha"' in x and '"2025-01-01"' in x and '"A1"' in x)]
    path.write_text("\n".join(lines) + "\n")
    # the base's own coverage then fails too; only the panel's finding is asserted here


@pytest.mark.parametrize("edit,where,needle", PANEL_CASES, ids=[c[2][:30] for c in PANEL_CASES])
def test_panel_model_problems_are_findings(with_records, edit, where, needle):
    edit(with_records)
    reseal(with_records)
    code, lines = verify(with_records)
    assert code == 1
    assert any(where in out and needle in out for out in lines), lines


def test_a_record_file_that_fails_its_digest_is_not_evaluated_again(with_records):
    path = with_records / M / "oracle.jsonl"
    path.write_bytes(path.read_bytes() + b"\n")
    report = verify_archive(with_records, validate_call=validate_call)
    assert [(f.category, f.path) for f in report.errors] == [
        (Category.NOT_EVALUATED, M.rstrip("/")), (Category.FAILED, f"{M}oracle.jsonl")]


def test_intervention_findings_carry_their_kind(with_records):
    _edit_line(with_records / M / "replays.jsonl", 3, _set(evidence_sha256="0" * 64))
    reseal(with_records)
    report = verify_archive(with_records, validate_call=validate_call)
    [finding] = report.errors
    assert finding.kind is ProblemKind.EVIDENCE and finding.line == 3
    assert finding.actual == "0" * 64 and len(finding.expected) == 64 and finding.expected != finding.actual


CALLS = [
    ("q", "relevance", None, None, False),
    ("q", "date", "2024-01-01", "2024-06-30", False),
    ("q", "newest", None, None, True),
    ("   ", "relevance", None, None, True),
    ("q", "relevance", "2024-1-01", None, True),
    ("q", "relevance", "2024-02-30", None, True),
    ("q", "relevance", "2024-06-01", "2024-06-01", True),
    ("q", "relevance", "2024-07-01", "2024-06-01", True),
    ("q\ud800", "relevance", None, None, True),
    ("the a", "relevance", None, "2025-01-01", False),
]


@pytest.mark.parametrize("query,sort,lo,hi,bad", CALLS)
def test_the_recorded_call_rule_gives_the_search_validators_verdict(query, sort, lo, hi, bad):
    from rapgen.archive.format2 import malformed_by, recorded_call_malformed
    from rapgen.archive.records import TraceCall

    call = TraceCall("alpha", date(2025, 1, 1), "A3", 0, query, sort, lo, hi, 0, ())
    assert recorded_call_malformed(call) is bad
    assert malformed_by(validate_call)(call) is bad


def test_a_history_with_later_origin_units_still_scores_its_origins(history):
    from rapgen.scores import compute_scores

    archive = open_verified(history, validate_call=validate_call).release()
    assert max(u.origin for u in archive.predictions("model-a")) == FIRST_OPEN  # the reveal is in the union
    result = compute_scores(archive, resamples=10)
    assert result is not None  # the revealed origin waits for the scorer's --release support; it does not break scoring


def test_every_opened_origins_shards_are_in_the_manifest(history):
    """The Search backend finds a later origin's shards: both readers return release 1's
    manifests followed by each opened origin's search/<origin>/ manifest."""
    from rapgen.archive import Archive
    from rapgen.search.cache import input_digest

    verified = open_verified(history, validate_call=validate_call).release()
    plain = Archive(history)
    for regime in ("fixed", "expanding"):
        origins = {m.origin for m in verified.manifest(regime)}
        assert {FIRST_OPEN, SECOND_OPEN} <= origins, regime
        assert [(m.field_id, m.origin) for m in plain.manifest(regime)] == [(m.field_id, m.origin) for m in verified.manifest(regime)]
    # The index cache is keyed by the rolled-in windows too, so a roll never reuses a stale index.
    windows = input_digest(verified)["windows_sha256"]
    assert windows and all("/benchmark/windows/" in path for path in windows)
