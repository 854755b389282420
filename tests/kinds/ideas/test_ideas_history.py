"""The sample's release history: cut in memory, it is byte for byte what the release commands write.

:func:`cut_history` drives either :class:`rapgen.archive.MemoryHistory` (what
``rapgen sample build`` uses) or, here, the commands themselves on a folder
(``release start``, ``release window`` + ``release roll``, ``release cut --kind
models``, each verifying before and after). Both run the same plan on a small
archive (one Live cutoff resolved, four rolls); every file must be equal. On
the committed sample, the last roll is replayed through the commands from
release 12's files and gives release 13's bytes.
"""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.archive import format_sums, parse_sums, read_root_sums, sha256_bytes
from rapgen.cli import cli
from rapgen.kinds.ideas.archive.config import Config
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.writers import papers_bytes
from rapgen.kinds.ideas.sample.build import history_files, history_inputs
from rapgen.kinds.ideas.sample.history import cut_history, history_plan, live_cutoffs
from rapgen.kinds.ideas.sample.models import TOP_K

from ideas_factory import TOPICS, monthly_papers

REPO = Path(__file__).resolve().parents[3]
PLAN = history_plan(first_cutoff=date(2024, 7, 1), data_end=date(2024, 10, 31), rolls=4)
FULL = Config(date(2024, 4, 1), date(2024, 7, 1), tuple(date(2024, m, 1) for m in range(7, 12)), 3, TOP_K, 2, date(2024, 10, 1))


def run(*args: str) -> str:
    done = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


def manifest(root: Path, k: int) -> dict[str, str]:
    entries, _ = parse_sums((root / f"archive/releases/{k:04d}.SHA256SUMS").read_bytes())
    return {e.path: e.digest for e in entries}


def papers() -> dict[str, Paper]:
    """The tiny archive's titles, two a month per topic and pattern, 2024-04 … 2025-02."""
    return monthly_papers(4, 14)


class CommandHistory:
    """:func:`cut_history`'s operations as the release commands on ``root``."""

    def __init__(self, root: Path, base: dict[str, bytes], later: dict[str, Paper], scratch: Path) -> None:
        self.root, self.scratch = root, scratch
        self.merge(base)
        self.new_papers = scratch / "new.parquet"
        self.new_papers.write_bytes(papers_bytes(later.values()))

    @property
    def files(self) -> set[str]:
        return set(read_root_sums(self.root)) if (self.root / "SHA256SUMS").exists() else set()

    def merge(self, files) -> None:
        sums = read_root_sums(self.root) if (self.root / "SHA256SUMS").exists() else {}
        for path, data in files.items():
            assert path not in sums
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_bytes(data)
            sums[path] = sha256_bytes(data)
        (self.root / "SHA256SUMS").write_bytes(format_sums(sums))

    def start(self, *, when, resolved, opened, added, simulated, notes):
        assert opened.closes == opened.origin + timedelta(days=14) and simulated
        out = run("release", "start", "--root", self.root, "--date", when.isoformat(), "--simulated", "--notes", notes)
        assert f"resolved {', '.join(r.isoformat() for r in resolved)}; open {opened.origin}" in out
        assert {p for p in added} <= self.files

    def cut_models(self, *, when, notes):
        run("release", "cut", "--root", self.root, "--kind", "models", "--date", when.isoformat(), "--notes", notes)

    def roll(self, *, when, target, opened, added, notes):
        month = next(p for p in added if "/windows/" in p).split("/")[3]
        folder = self.scratch / month
        run("release", "window", "--root", self.root, "--papers", self.new_papers, "--month", month, "--out", folder)
        for name in ("papers.parquet", "assignments.parquet"):  # release window writes the bytes the builder computed
            assert (folder / name).read_bytes() == added[f"archive/benchmark/windows/{month}/{name}"]
        out = run("release", "roll", "--root", self.root, "--window", folder, "--date", when.isoformat(), "--notes", notes)
        assert f"{target}; open {opened.origin} until {opened.closes}" in out


def test_the_plan_of_the_small_history():
    assert PLAN[0].resolved == (date(2024, 7, 1),) and PLAN[0].opened == date(2024, 11, 1)
    assert PLAN[-1].resolved[-1] == date(2024, 11, 1) and live_cutoffs(PLAN) == (date(2024, 11, 1),)


def test_the_history_cut_in_memory_is_what_the_commands_write(tmp_path):
    memory, _ = history_files(papers(), {}, TOPICS, FULL, PLAN)
    inputs = history_inputs(papers(), {}, TOPICS, FULL, PLAN)
    root = tmp_path / "ideas"
    (tmp_path / "scratch").mkdir()
    commands = CommandHistory(root, inputs.base, inputs.later_papers, tmp_path / "scratch")
    cut_history(commands, PLAN, inputs.config, TOPICS, inputs.base_rows, inputs.later_papers, inputs.units)
    written = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert sorted(written) == sorted(memory)
    assert [p for p in sorted(memory) if memory[p] != written[p]] == []
    records = sorted(p for p in memory if p.startswith("archive/releases/") and p.endswith(".json") and "croissant" not in p)
    kinds = [json.loads(memory[p])["kind"] for p in records]
    assert kinds == ["initial", "models"] + ["roll", "models"] * 4
    live = run("release", "live", "--root", root)
    assert "2024-11-01 recent-titles" in live and "2024-11-01 rising-terms" in live and live.count("revealed") == 1, live


def test_the_committed_samples_last_roll_is_what_the_command_writes(tmp_path):
    """Release 12's files of the committed sample, rolled with its 2025-06 window through the command, give release 13."""
    sample = REPO / "benchmarks/ideas"
    listed = read_root_sums(sample)
    release12 = manifest(sample, 12) | {"archive/releases/0012.SHA256SUMS": listed["archive/releases/0012.SHA256SUMS"]}
    root = tmp_path / "ideas"
    for path in release12:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample / path, root / path)
    (root / "SHA256SUMS").write_bytes(format_sums(release12))
    record = json.loads((sample / "archive/releases/0013.json").read_text())
    window = sample / "archive/benchmark/windows/2025-06-01"
    run("release", "window", "--root", root, "--papers", window / "papers.parquet", "--month", "2025-06-01", "--out", tmp_path / "w")
    run("release", "roll", "--root", root, "--window", tmp_path / "w", "--date", record["date"], "--notes", record["notes"])
    release13 = manifest(sample, 13)
    assert manifest(root, 13) == release13 and len(release13) > len(release12)
    for path in release13:
        assert (root / path).read_bytes() == (sample / path).read_bytes(), path


@pytest.mark.parametrize("n", [1, 14])
def test_score_release_n_of_the_committed_sample(tmp_path, n):
    run("score", "--benchmark", "ideas", "--release", n, "--out", tmp_path, "--resamples", "50")
    meta = json.loads((tmp_path / "scores.json").read_text())
    assert meta["release"]["number"] == n
    assert meta["counts"]["resolved_cutoffs"][-1] == ("2024-09-01" if n == 1 else "2025-03-01")
