"""``rapgen seal`` on an Ideas archive: the kind's declared model folder (``ArchiveKind.folder``) decides.

A sealed model gains evaluator files (``eval/<judge>/``, features) and a later cutoff's group; a new model
folder may hold every Ideas file; anything else is refused in one line naming the file, and SHA256SUMS is
left as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.archive import seal_archive
from rapgen.cli import cli
from rapgen.errors import ArchiveError
from rapgen.kinds import registry

REPO = Path(__file__).resolve().parents[3]
MODEL = "archive/models/recent-titles"


def seal(root: Path):
    return CliRunner().invoke(cli, ["seal", "--root", str(root)])


def verify(root: Path):
    return CliRunner().invoke(cli, ["verify", "--root", str(root)])


@pytest.fixture
def sample(tmp_path) -> Path:
    root = tmp_path / "ideas"
    shutil.copytree(REPO / "benchmarks/ideas", root)
    return root


def without(root: Path, *paths: str) -> None:
    """Remove ``paths`` and their SHA256SUMS lines: an archive in which they were never sealed."""
    sums = root / "SHA256SUMS"
    lines = [x for x in sums.read_text().splitlines(keepends=True) if not any(x.rstrip("\n").endswith("  " + p) for p in paths)]
    sums.write_text("".join(lines))
    moved = {}
    for p in paths:
        moved[p] = (root / p).read_bytes()
        (root / p).unlink()
    return moved


def test_a_sealed_model_gains_a_judges_files_and_the_archive_verifies(sample):
    files = without(sample, *(f"{MODEL}/eval/lexical-b/{n}" for n in ("candidates.parquet", "judgments.parquet")))
    for path, data in files.items():
        (sample / path).write_bytes(data)
    done = seal(sample)
    assert done.exit_code == 0, done.output
    assert "Appended 2 lines" in done.output and f"added {MODEL}/eval/lexical-b/judgments.parquet" in done.output
    assert verify(sample).exit_code == 0


def test_a_new_ideas_model_with_its_evaluator_files_is_added(sample):
    src, dst = sample / "archive/models/rising-terms", sample / "archive/models/rising-copy"
    shutil.copytree(src, dst)
    info = json.loads((dst / "model.json").read_text())
    info["model_id"] = "rising-copy"
    (dst / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    done = seal(sample)
    assert done.exit_code == 0, done.output
    # The folder copied whole: 8 files at its top (the first cutoff) and, for each of the 6 later cutoffs the
    # sample's history holds, an origins/<t>/ group of 7 (predictions, raw, features, two judges' two files).
    groups = sorted((dst / "origins").iterdir())
    assert len(groups) == 6 and all(sum(1 for f in g.rglob("*") if f.is_file()) == 7 for g in groups)
    assert f"Appended {8 + 6 * 7} lines" in done.output and "added archive/models/rising-copy/eval/lexical-a/candidates.parquet" in done.output


@pytest.mark.parametrize("name", ["notes.txt", "eval/lexical-a/extra.parquet", "origins/2025-04-02/predictions.jsonl", "raw.jsonl"])
def test_what_an_ideas_folder_may_not_gain_is_refused_in_one_line(sample, name):
    before = (sample / "SHA256SUMS").read_bytes()
    target = sample / MODEL / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"{}\n")
    done = seal(sample)
    assert done.exit_code == 1 and "Traceback" not in done.output
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: refusing to add {MODEL}/{name}: model 'recent-titles' is already sealed")
    assert "eval/{judge}/judgments.parquet" in lines[0]
    assert (sample / "SHA256SUMS").read_bytes() == before  # nothing written


def test_a_new_ideas_folder_with_a_foreign_file_is_refused(sample):
    folder = sample / "archive/models/newcomer"
    folder.mkdir()
    shutil.copy(sample / MODEL / "predictions.jsonl", folder / "predictions.jsonl")
    (folder / "traces.jsonl").write_text("{}\n")
    before = (sample / "SHA256SUMS").read_bytes()
    done = seal(sample)
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: refusing to add archive/models/newcomer/traces.jsonl: a model folder of this archive holds only ")
    assert (sample / "SHA256SUMS").read_bytes() == before


def test_the_rules_come_from_the_kind_not_from_the_archive_stage(sample):
    files = without(sample, f"{MODEL}/eval/lexical-b/judgments.parquet")
    for path, data in files.items():
        (sample / path).write_bytes(data)
    with pytest.raises(ArchiveError, match="may gain only origins/<origin>/predictions.jsonl"):
        seal_archive(sample)  # no kinds given: RAP's folder rules, as before
    assert seal_archive(sample, kinds=registry().formats).added == (f"{MODEL}/eval/lexical-b/judgments.parquet",)
