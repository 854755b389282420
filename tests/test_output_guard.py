"""One rule for every folder a command writes (rapgen.io.guard_output_dir): never the archive, the
repository root or the project's own folders, never a non-empty folder it would replace that is not
an earlier output of its kind. Each refusal is exit 2 with one line, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.errors import UsageProblem
from rapgen.io import DOCS_OUTPUT, MODEL_OUTPUT, SCORES_OUTPUT, SITE_OUTPUT, guard_output_dir


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A tiny archive (with the project's docs/ beside it) and a score folder of it."""
    from factory import make_archive

    base = tmp_path_factory.mktemp("guard")
    root = make_archive(base / "repo").root
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("the project's own page\n")
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(base / "scores"), "--resamples", "10"])
    assert result.exit_code == 0, result.output
    return root, base / "scores"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _nonempty(tmp: Path) -> Path:
    folder = tmp / "precious"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    return folder


def _link_to_archive(tmp: Path, root: Path) -> Path:
    link = tmp / "innocent"
    link.symlink_to(root / "archive")
    return link


# (id, argv builder(root, scores, tmp), a part of the one error line)
CASES = [
    ("render-into-archive", lambda r, s, t: ["render", "--scores", s, "--out", r / "archive"], "it is the archive of"),
    ("render-into-root", lambda r, s, t: ["render", "--scores", s, "--out", r], "it is an archive root"),
    ("render-over-project-docs", lambda r, s, t: ["render", "--scores", s, "--out", r / "docs"], "the project's own docs/ folder"),
    ("render-over-a-folder", lambda r, s, t: ["render", "--scores", s, "--out", _nonempty(t)],
     "refusing to build into a non-empty folder that rapgen did not build (the docs folder replaces"),
    ("render-through-a-link", lambda r, s, t: ["render", "--scores", s, "--out", _link_to_archive(t, r)], "it is the archive of"),
    ("build-work-dir-root", lambda r, s, t: ["build", "--work-dir", r, "--site-dir", t / "site"], "work folder there: it is an archive root"),
    ("build-work-dir-archive", lambda r, s, t: ["build", "--work-dir", r / "archive", "--site-dir", t / "site"], "it is the archive of"),
    ("build-work-dir-in-archive", lambda r, s, t: ["build", "--work-dir", r / "archive" / "w", "--site-dir", t / "site"],
     "lies inside the archive"),
    ("build-site-in-archive", lambda r, s, t: ["build", "--site-dir", r / "archive" / "site"], "site there: it lies inside the archive"),
    ("build-site-root", lambda r, s, t: ["build", "--site-dir", r], "refusing to write the site there: it is an archive root"),
    ("score-in-archive", lambda r, s, t: ["score", "--out", r / "archive" / "scores"], "score folder there: it lies inside the archive"),
    ("score-into-root", lambda r, s, t: ["score", "--out", r], "score folder there: it is an archive root"),
    ("replay-into-a-model", lambda r, s, t: ["replay", "--out", r / "archive" / "models" / "model-a"], "lies inside the archive"),
    ("search-cache-in-archive", lambda r, s, t: ["search", "--cache-dir", r / "archive" / "cache", "alpha", "2024-01-01", "fixed", "parsing"],
     "cache folder there: it lies inside the archive"),
    ("synth-in-archive", lambda r, s, t: ["synth", "--scale", "small", "--out", r / "archive" / "x"], "archive there: it lies inside the archive"),
    ("agent-run-in-benchmark", lambda r, s, t: ["agent", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                                                "--out", r / "archive" / "benchmark" / "m"], "model folder there: it lies inside the archive"),
    ("reference-agents-in-archive", lambda r, s, t: ["reference-agents", "run", "--out", r / "archive" / "agents"], "lies inside the archive"),
    ("sample-history-in-archive", lambda r, s, t: ["release", "sample-history", "--source", r, "--out", r / "archive" / "h"],
     "lies inside the archive"),
]


@pytest.mark.parametrize("argv,needle", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_writer_refuses_with_one_line_and_writes_nothing(scored, tmp_path, argv, needle):
    root, scores = scored
    before = snapshot(root)
    args = [str(a) for a in argv(root, scores, tmp_path)]
    if args[0] not in ("synth", "release"):  # the others read the archive at --root
        args += ["--root", str(root)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert snapshot(root) == before  # nothing in the repository changed
    assert not (tmp_path / "site").exists()
    assert not (root / "build").exists()


def test_a_file_is_not_a_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageProblem, match="it exists and is not a folder"):
        guard_output_dir(tmp_path / "f", SCORES_OUTPUT)


def test_relative_dot_is_the_root_too(scored, monkeypatch):
    root, scores = scored
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["render", "--scores", str(scores), "--out", "."])
    assert result.exit_code == 2 and "Error: .: refusing to write the docs folder there: it is an archive root" in result.stderr


def test_earlier_outputs_are_replaced(scored, tmp_path):
    root, scores = scored
    docs = tmp_path / "docs"
    for _ in range(2):  # the second render replaces the first: it carries the renderer's own assets
        result = CliRunner().invoke(cli, ["render", "--root", str(root), "--scores", str(scores), "--out", str(docs)])
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(scores), "--resamples", "10"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("rel,kind,ok", [
    ("build", SCORES_OUTPUT, True),  # ROOT/build: the default work folder
    ("site", SITE_OUTPUT, True),
    (".rapgen-cache", SCORES_OUTPUT, True),
    ("archive/models/new-model", MODEL_OUTPUT, True),  # a submitter's model folder
    ("archive/models/new-model", SCORES_OUTPUT, False),
    ("archive/models", MODEL_OUTPUT, False),
    ("archive/benchmark/x", MODEL_OUTPUT, False),
    (".git", SCORES_OUTPUT, False),
    ("generator", DOCS_OUTPUT, False),
])
def test_the_rule(tiny_archive, rel, kind, ok):
    target = tiny_archive.root / rel
    if ok:
        assert guard_output_dir(target, kind) == target
    else:
        with pytest.raises(UsageProblem):
            guard_output_dir(target, kind)


@pytest.mark.parametrize("rel,ok", [("archive/benchmark/x.json", False), ("archive/x.json", False), ("docs/x.json", False),
                                    ("x.json", True), ("archive/commitments/2026-01-01/copycat.json", True)])
def test_submit_commit_writes_its_file_only_where_a_commitment_may_go(history_copy, tmp_path, rel, ok):
    from history_factory import SECOND_OPEN, prediction_lines

    folder = tmp_path / "copycat"
    (folder / "origins" / SECOND_OPEN.isoformat()).mkdir(parents=True)
    (folder / "origins" / SECOND_OPEN.isoformat() / "predictions.jsonl").write_bytes(prediction_lines(SECOND_OPEN))
    before = snapshot(history_copy)
    result = CliRunner().invoke(cli, ["submit", "commit", "--root", str(history_copy), "--out", str(history_copy / rel), str(folder)])
    if ok:
        assert result.exit_code == 0, result.output
        assert (history_copy / rel).is_file()
    else:
        assert result.exit_code == 2, result.output
        assert "refusing to write the commitment there" in result.stderr
        assert snapshot(history_copy) == before
