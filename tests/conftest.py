"""Shared fixtures: a tiny valid archive, built once per session and copied per test."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from factory import TinyArchive, make_archive  # noqa: E402


@pytest.fixture(scope="session")
def _tiny_template(tmp_path_factory) -> TinyArchive:
    return make_archive(tmp_path_factory.mktemp("tiny-template"))


@pytest.fixture
def tiny_archive(_tiny_template: TinyArchive, tmp_path: Path) -> TinyArchive:
    """A fresh, writable copy of the tiny archive for one test."""
    dest = tmp_path / "repo"
    shutil.copytree(_tiny_template.root, dest, symlinks=True)
    return TinyArchive(dest, _tiny_template.field_ids, _tiny_template.model_ids)


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def _history_made(tmp_path_factory):
    from history_factory import make_history

    return make_history(tmp_path_factory.mktemp("history-made"))


@pytest.fixture
def history_copy(_history_made, tmp_path: Path) -> Path:
    """A fresh, writable copy of history_factory's three-release history for one test."""
    dest = tmp_path / "history"
    shutil.copytree(_history_made.root, dest)
    return dest


@pytest.fixture(scope="session")
def portal_build(tmp_path_factory):
    """``rapgen build`` as the README runs it, in a copy of this repository's rapgen.toml and committed
    benchmarks (RAP at ., Inspire and Ideas under benchmarks/): the portal, into the copy's build/ and
    site/. 200 resamples, the count the output baselines were recorded with (tests/test_outputs_golden.py);
    built once per session. Returns (repo, result of the command)."""
    from click.testing import CliRunner

    from rapgen.cli import cli

    source = Path(__file__).resolve().parent.parent
    repo = tmp_path_factory.mktemp("portal") / "repo"
    repo.mkdir()
    for name in ("rapgen.toml", "SHA256SUMS"):
        shutil.copy2(source / name, repo / name)
    for name in ("archive", "benchmarks"):
        shutil.copytree(source / name, repo / name)
    mp = pytest.MonkeyPatch()
    mp.chdir(repo)
    try:
        result = CliRunner().invoke(cli, ["build", "--resamples", "200"], catch_exceptions=False)
    finally:
        mp.undo()
    assert result.exit_code == 0, result.output
    return repo, result
