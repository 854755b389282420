"""Shared fixtures: a tiny valid archive, built once per session and copied per test."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import blas_kernel  # noqa: E402 - sets the OpenBLAS kernel before numpy is first imported
from factory import TinyArchive, make_archive  # noqa: E402


# The files whose tests take longest (whole builds, the browser scans, the synthetic histories),
# longest first. Under pytest-xdist they are handed out first, so the run does not end with one
# worker busy on a long file while the other has nothing left to do; every other file follows in
# the usual order (pyproject.toml turns off xdist's own reordering by test count).
LONG_FILES = (
    "tests/test_synth.py", "tests/test_site_a11y.py", "tests/test_sample.py", "tests/test_site_build.py",
    "tests/test_outputs_golden.py", "tests/test_kit_history.py", "tests/test_croissant_load.py",
    "tests/test_site_search_parser.py", "tests/kinds/inspire/test_inspire_site.py", "tests/test_portal.py",
    "tests/test_site_releases.py", "tests/test_site_browser_escaping.py", "tests/test_interventions_sample.py",
    "tests/test_submit_check.py", "tests/kinds/ideas/test_ideas_coverage.py", "tests/test_site_escaping.py",
)


def pytest_report_header(config):
    kernel = os.environ.get("OPENBLAS_CORETYPE") or "OpenBLAS's own choice"
    held = "the output baselines compared" if blas_kernel.BLAS_KERNEL == blas_kernel.BASELINE_KERNEL else "the output baselines skipped"
    return f"BLAS kernel: {kernel} ({held})"


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: each file's order kept


@pytest.fixture(scope="session")
def _tiny_template(tmp_path_factory) -> TinyArchive:
    return make_archive(tmp_path_factory.mktemp("tiny-template"))


@pytest.fixture
def tiny_archive(_tiny_template: TinyArchive, tmp_path: Path) -> TinyArchive:
    """A fresh, writable copy of the tiny archive for one test."""
    dest = tmp_path / "repo"
    shutil.copytree(_tiny_template.root, dest, symlinks=True)
    return TinyArchive(dest, _tiny_template.field_ids, _tiny_template.model_ids)


@pytest.fixture(scope="session")
def replayable(_tiny_template, tmp_path_factory):
    """The tiny archive with a reference agent and recorded traces for two models (read only):
    (root, the number of calls written per model)."""
    from datetime import date

    from factory import reseal

    from rapgen.agents import add_agents_to_archive
    from rapgen.sample import generate_traces

    root = tmp_path_factory.mktemp("replayable") / "repo"
    shutil.copytree(_tiny_template.root, root)
    add_agents_to_archive(root, agent_ids=["ref-recent-hits"], submitted=date(2026, 11, 29))
    written = generate_traces(root, ["model-a", "model-b"], seed=3)
    reseal(root)
    return root, written


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


class BuildResult(NamedTuple):
    """What the tests read of a CliRunner result, kept so that another worker can read it too."""

    exit_code: int
    stdout: str
    output: str


def _run_portal_build(repo: Path) -> BuildResult:
    from click.testing import CliRunner

    from rapgen.cli import cli

    source = Path(__file__).resolve().parent.parent
    repo.mkdir(parents=True)
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
    return BuildResult(result.exit_code, result.stdout, result.output)


@pytest.fixture(scope="session")
def portal_build(tmp_path_factory):
    """``rapgen build`` as the README runs it, in a copy of this repository's rapgen.toml and committed
    benchmarks (RAP at ., Inspire and Ideas under benchmarks/): the portal, into the copy's build/ and
    site/. 200 resamples, the count the output baselines were recorded with (tests/test_outputs_golden.py).
    Built once per run: under pytest-xdist the first worker to ask builds it in the run's shared
    temporary folder, holding a lock, and the others wait for it and read the same folder (so the
    two cores do not both spend a minute on the same build). The tests only read it.
    Returns (repo, result of the command)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        repo = tmp_path_factory.mktemp("portal") / "repo"
        result = _run_portal_build(repo)
        assert result.exit_code == 0, result.output
        return repo, result
    shared = tmp_path_factory.getbasetemp().parent / "portal-shared"
    shared.mkdir(exist_ok=True)
    done = shared / "result.json"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(shared / "repo", ignore_errors=True)  # what a worker's failed build left
            result = _run_portal_build(shared / "repo")
            tmp = done.with_suffix(".tmp")
            tmp.write_text(json.dumps(result._asdict()), encoding="utf-8")
            tmp.replace(done)
    result = BuildResult(**json.loads(done.read_text(encoding="utf-8")))
    assert result.exit_code == 0, result.output
    return shared / "repo", result
