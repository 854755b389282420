""".ci/submit-check, the script the GitHub workflows call, run locally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from test_submit_support import NEW_ID, append_sums, git, git_init, write_submission

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "submit-check"


def run_script(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "RAPGEN": f"{sys.executable} -m rapgen", **(env or {})}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=full, timeout=300)


@pytest.fixture
def pr_repo(tiny_archive, tmp_path, monkeypatch) -> Path:
    """A git repository whose main holds the tiny archive, on a branch 'pr' that adds a model."""
    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path / "cache"))
    repo = tiny_archive.root
    (repo / "README.md").write_text("test repo\n")
    git_init(repo)
    git(repo, "checkout", "-q", "-b", "pr")
    write_submission(repo / "archive" / "models" / NEW_ID, repo, traces=False)
    append_sums(repo, NEW_ID)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add newbie")
    return repo


def test_pr_mode_passes_a_clean_submission(pr_repo, tmp_path) -> None:
    report = tmp_path / "report.md"
    done = run_script("pr", "--root", str(pr_repo), "--base", "main", "--report", str(report), "--resamples", "100")
    assert done.returncode == 0, done.stdout + done.stderr
    text = report.read_text()
    assert text.startswith("<!-- rapgen-submit-check -->\n## ✅ Submission `newbie` passes")
    assert "| Scores with intervals | ✅ passed |" in text
    assert done.stdout == text


def test_pr_mode_fails_and_reports_a_touched_file(pr_repo, tmp_path) -> None:
    (pr_repo / "README.md").write_text("sneaky change\n")
    report = tmp_path / "report.md"
    done = run_script("pr", "--root", str(pr_repo), "--base", "main", "--report", str(report))
    assert done.returncode == 1
    text = report.read_text()
    assert "**TOUCHED**" in text and "`README.md`: changed since" in text


def test_pr_mode_without_a_model_folder_fails(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    git_init(repo)
    report = tmp_path / "report.md"
    done = run_script("pr", "--root", str(repo), "--base", "main", "--report", str(report))
    assert done.returncode == 1 and "No model folder changed" in report.read_text()


def test_pr_mode_with_an_unknown_base(pr_repo, tmp_path) -> None:
    done = run_script("pr", "--root", str(pr_repo), "--base", "nope", "--report", str(tmp_path / "r.md"))
    assert done.returncode == 2 and "no merge base between nope and HEAD" in done.stderr


def test_site_mode_verifies_then_builds(tmp_path) -> None:
    log = tmp_path / "calls.txt"
    stub = tmp_path / "rapgen-stub"
    stub.write_text(f'#!/usr/bin/env bash\necho "$*" >> {log}\n')
    stub.chmod(0o755)
    done = run_script("site", "--root", "R", "--site-dir", "S", "--site-url", "https://x.example/", env={"RAPGEN": str(stub)})
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == ["verify --root R", "build --root R --site-dir S --site-url https://x.example/"]


def test_usage() -> None:
    assert run_script().returncode == 2
    assert run_script("pr", "--bogus").returncode == 2


def test_workflows_call_the_script() -> None:
    pr = yaml.safe_load((REPO / ".github" / "workflows" / "pr-check.yml").read_text())
    site = yaml.safe_load((REPO / ".github" / "workflows" / "site.yml").read_text())
    assert pr[True]["pull_request"]["paths"] == ["archive/models/**"]  # YAML 1.1 reads the key `on` as True
    pr_steps = " ".join(s.get("run", "") for s in pr["jobs"]["check"]["steps"])
    assert ".ci/submit-check pr --base" in pr_steps and "pip install -e ." in pr_steps
    assert any("github-script" in s.get("uses", "") for s in pr["jobs"]["check"]["steps"])
    assert site[True]["push"]["branches"] == ["main"]
    site_steps = " ".join(s.get("run", "") for s in site["jobs"]["build"]["steps"])
    assert ".ci/submit-check site" in site_steps
    assert any("deploy-pages" in s.get("uses", "") for s in site["jobs"]["deploy"]["steps"])
