"""The submission check scores only what its report shows (``diagnostics=False``, the default):
the report, Markdown and ``--json``, is the same bytes as with the full scoring and the site
rendered from it (``diagnostics=True``, as ``rapgen build`` scores), on the sample archive and on
tiny archives with every feature: format 1, intervention records and a panel model, a format-2
history with a partial new model and a later origin of a listed one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from factory import make_archive, reseal
from history_factory import FIRST_OPEN, add_lines, make_history, prediction_lines
from intervention_fixture import MODEL as RECORDS_MODEL, add_records
from interventions_factory import add_interventions
from test_submit_support import NEW_ID, append_sums, write_submission

import rapgen.submit.review.overlay as overlay
from rapgen.archive.history.records import reveal_path
from rapgen.submit import check_submission, render_report

REPO = Path(__file__).resolve().parent.parent


def both_ways(root: Path, folder: Path) -> tuple[str, str]:
    """The Markdown and JSON reports of the check with and without the full scoring; asserts they are the same."""
    out = []
    for diagnostics in (False, True):
        res = check_submission(root, folder, resamples=30, diagnostics=diagnostics)
        out.append((render_report(res), json.dumps(res.to_dict(), indent=2, ensure_ascii=True, default=str), res))
    (fast_md, fast_json, fast), (full_md, full_json, _) = out
    assert fast_md == full_md
    assert fast_json == full_json
    assert fast.stages["scores"].status == "passed" and fast.stages["site"].status == "passed", fast_md
    assert fast.site_pages and any(fast.model_id in p for p in fast.site_pages)
    return fast_md, fast_json


def copy_model(root: Path, source: str) -> Path:
    """A new model folder: ``source``'s predictions and traces under NEW_ID, with its SHA256SUMS lines."""
    src, dst = root / "archive" / "models" / source, root / "archive" / "models" / NEW_ID
    dst.mkdir()
    for name in ("predictions.jsonl", "traces.jsonl"):
        if (src / name).is_file():
            shutil.copyfile(src / name, dst / name)
    info = json.loads((src / "model.json").read_text())
    info.pop("reference_agent", None)  # reserved for rapgen's own agents
    (dst / "model.json").write_text(json.dumps({**info, "model_id": NEW_ID}, indent=2) + "\n")
    append_sums(root, NEW_ID)
    return dst


def test_format_1_new_model_with_traces(replayable, tmp_path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(replayable[0], root)
    md, _ = both_ways(root, copy_model(root, "model-a"))
    assert "Trace replay | ✅ passed" in md


def test_interventions_and_a_panel_model(tiny_archive) -> None:
    root = tiny_archive.root
    add_interventions(root)  # model-a's intervention records and model-t, a panel model
    write_submission(root / "archive" / "models" / NEW_ID, root, traces=False)
    append_sums(root, NEW_ID)
    both_ways(root, root / "archive" / "models" / NEW_ID)


def test_a_model_with_intervention_records(tmp_path, monkeypatch) -> None:
    root = tmp_path / "repo"
    make_archive(root)
    add_records(root, tmp_path / "cache")
    reseal(root)
    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path / "cache"))
    both_ways(root, root / "archive" / "models" / RECORDS_MODEL)


@pytest.fixture(scope="module")
def _history(tmp_path_factory) -> Path:
    return make_history(tmp_path_factory.mktemp("history")).root


def test_format_2_partial_new_model_and_a_later_origin(_history, tmp_path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(_history, root, symlinks=True)
    write_submission(root / "archive" / "models" / NEW_ID, root, traces=False)
    append_sums(root, NEW_ID)
    md, _ = both_ways(root, root / "archive" / "models" / NEW_ID)
    assert "listed unranked" in md  # covers origins.json's origins, not the later resolved one
    shutil.rmtree(root)
    shutil.copytree(_history, root, symlinks=True)
    add_lines(root, {reveal_path("model-b", FIRST_OPEN, "predictions.jsonl"): prediction_lines(FIRST_OPEN, seed=5)})
    both_ways(root, root / "archive" / "models" / "model-b")


def test_the_sample_archive_with_a_copied_model(tmp_path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "archive", root / "archive", copy_function=os.link)
    shutil.copy2(REPO / "SHA256SUMS", root / "SHA256SUMS")
    both_ways(root, copy_model(root, "ref-recent-hits"))


def test_the_default_scores_without_the_diagnostics(tiny_archive, monkeypatch) -> None:
    """The site is rendered from a score folder without diagnostics.json (the §6 sections say so)."""
    root = tiny_archive.root
    write_submission(root / "archive" / "models" / NEW_ID, root, traces=False)
    append_sums(root, NEW_ID)
    seen: dict = {}
    real = overlay.render_docs

    def spy(archive, scores_dir, out, **kwargs):
        seen["files"] = sorted(p.name for p in Path(scores_dir).iterdir())
        return real(archive, scores_dir, out, **kwargs)

    monkeypatch.setattr(overlay, "render_docs", spy)
    res = check_submission(root, root / "archive" / "models" / NEW_ID, resamples=30)
    assert res.ok, [p.one_line() for p in res.problems]
    assert "leaderboard.csv" in seen["files"] and "scores.json" in seen["files"]
    assert "diagnostics.json" not in seen["files"] and "interventions" not in seen["files"]


def test_the_cli_option(replayable, tmp_path) -> None:
    from click.testing import CliRunner

    from rapgen.cli import cli

    root = tmp_path / "repo"
    shutil.copytree(replayable[0], root)
    folder = copy_model(root, "model-a")
    runs = [CliRunner().invoke(cli, ["submit", "check", "--resamples", "30", *extra, "--root", str(root), str(folder)])
            for extra in ((), ("--diagnostics",))]
    assert [r.exit_code for r in runs] == [0, 0], runs[0].output
    assert runs[0].stdout == runs[1].stdout and "Site dry-run render | ✅ passed" in runs[0].stdout
