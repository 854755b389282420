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
    assert pr[True]["pull_request_target"]["paths"] == ["archive/models/**", "archive/commitments/**"]  # YAML 1.1 reads the key `on` as True
    assert any("github-script" in s.get("uses", "") for s in pr["jobs"]["check"]["steps"])
    assert site[True]["push"]["branches"] == ["main"]
    site_steps = " ".join(s.get("run", "") for s in site["jobs"]["build"]["steps"])
    assert ".ci/submit-check site" in site_steps
    assert any("deploy-pages" in s.get("uses", "") for s in site["jobs"]["deploy"]["steps"])


# ---------------------------------------------------------------- a pull request cannot vouch for itself
def _pr_workflow_steps() -> list[dict]:
    pr = yaml.safe_load((REPO / ".github" / "workflows" / "pr-check.yml").read_text())
    return pr["jobs"]["check"]["steps"]


def test_pr_workflow_installs_the_checker_from_the_base_checkout() -> None:
    pr = yaml.safe_load((REPO / ".github" / "workflows" / "pr-check.yml").read_text())
    # pull_request_target: GitHub takes this workflow file from the base branch too.
    assert set(pr[True]) == {"pull_request_target"}
    steps = _pr_workflow_steps()
    checkouts = {s["with"]["path"]: s["with"] for s in steps if s.get("uses", "").startswith("actions/checkout@")}
    assert set(checkouts) == {"base", "pr"}
    assert checkouts["base"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert checkouts["pr"]["ref"] == "refs/pull/${{ github.event.pull_request.number }}/merge"
    assert all(c["persist-credentials"] is False for c in checkouts.values())
    runs = [s.get("run", "") for s in steps]
    installs = [line.strip() for run in runs for line in run.splitlines() if "pip install" in line]
    assert installs == ["python -m pip install -e ./base"], installs  # nothing from pr/ is installed
    assert any("is_relative_to(pathlib.Path('base')" in run for run in runs)  # and the import is proved to come from base/
    check = next(s for s in steps if s.get("id") == "check")
    assert check["env"]["RAPGEN"] == "rapgen"  # the console script of the base install, not `python -m` from a working dir
    assert "bash base/.ci/submit-check pr --root pr --base HEAD^1" in check["run"]  # the base's script, over the pr's data
    for run in runs:
        assert "pr/.ci" not in run and "pr/generator" not in run and "./pr" not in run
        assert "${{" not in run, f"expressions belong in env:, not in a shell script: {run}"


def test_a_pull_request_that_rigs_the_checker_is_still_judged_by_the_base(pr_repo, tmp_path) -> None:
    """The workflow's layout run locally: the base's script and package over a pull request that replaces both."""
    rigged = "import sys\nprint('## ✅ rigged: passes')\nsys.exit(0)\n"
    for package in (pr_repo / "rapgen", pr_repo / "generator" / "rapgen"):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(rigged)
    (pr_repo / ".ci").mkdir()
    (pr_repo / ".ci" / "submit-check").write_text("#!/usr/bin/env bash\necho rigged; exit 0\n")
    (pr_repo / "archive" / "models" / NEW_ID / "predictions.jsonl").write_text("not json\n")
    git(pr_repo, "add", "-A")
    git(pr_repo, "commit", "-q", "-m", "rig the checker")
    report = tmp_path / "report.md"
    env = {**os.environ, "RAPGEN": f"{sys.executable} -m rapgen", "PYTHONPATH": str(REPO / "generator")}
    done = subprocess.run(["bash", str(SCRIPT), "pr", "--root", str(pr_repo), "--base", "main", "--report", str(report)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    text = report.read_text()
    assert "rigged" not in text and "rigged" not in done.stdout
    assert "**MALFORMED**" in text and "**TOUCHED**" in text  # the bad line, and the edits outside the folder


def test_pr_mode_shows_a_stray_model_name_only_as_safe_text(pr_repo, tmp_path) -> None:
    """A file (not a folder) under archive/models/ with markup in its name: its name reaches the report sanitised."""
    (pr_repo / "archive" / "models" / "x<b>`## y").write_text("{}\n")
    git(pr_repo, "add", "-A")
    git(pr_repo, "commit", "-q", "-m", "stray file")
    report = tmp_path / "report.md"
    done = run_script("pr", "--root", str(pr_repo), "--base", "main", "--report", str(report), "--resamples", "50")
    assert done.returncode == 1, done.stdout + done.stderr
    text = report.read_text()
    assert "`archive/models/x?b?????y/` is missing, was removed or changed into a file" in text
    import markdown

    assert "<b>" not in markdown.markdown(text, extensions=["tables"])  # elsewhere only inside code spans
