"""What the bench scripts share to time this checkout against a reference revision in one run.

* :func:`source_tree`: a revision (``beabbaa``, a tag, any commit of this repository) as a
  source tree, extracted with ``git archive`` into a temporary folder (nothing is checked
  out here and no worktree is registered), or an existing tree given as a path.
* :func:`run_tree`: one command in a subprocess with ``PYTHONPATH`` on a tree's
  ``generator/``; returns its wall time, CPU seconds and peak resident memory, read from
  ``os.wait4`` for that process alone (its own children, e.g. replay workers or mkdocs,
  included as the kernel counts them: CPU summed, memory the largest single process).
* :func:`load`: the 1-minute load average, printed with every figure (the 2-core machine
  is shared, and other work inflates wall times; ratios come from runs that alternate).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REVISION = "beabbaa"  # the revision issue 21's ratios are measured against


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # user + system seconds of the process and its waited-for children
    peak_kib: int  # largest resident set of the process or one of its children
    stdout: str
    stderr: str
    load: float  # 1-minute load average when the run ended


def source_tree(reference: str, workdir: Path) -> Path:
    """``reference`` as a source tree: an existing folder with ``generator/rapgen``, or a revision
    of this repository extracted into ``workdir``."""
    path = Path(reference)
    if (path / "generator" / "rapgen").is_dir():
        return path.resolve()
    target = workdir / f"tree-{reference}"
    if not (target / "generator" / "rapgen").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as handle:
            done = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", reference], stdout=handle,
                                  stderr=subprocess.PIPE)
            if done.returncode != 0:
                sys.exit(f"--reference {reference}: not a source tree, nor a revision of {REPO} "
                         f"({done.stderr.decode(errors='replace').strip()})")
            handle.seek(0)
            with tarfile.open(fileobj=handle) as tar:
                tar.extractall(target, filter="data")
    return target


def tree_env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(tree) / "generator")}


def run_tree(tree: Path, args: list[str], *, cwd: Path | None = None) -> Run:
    """``python ARGS`` with ``tree``'s package first on the path."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, *args], env=tree_env(tree), cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args[:3])} … with {tree} failed (exit {proc.returncode}): {stderr.strip()[-600:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, stdout, stderr, load())


def load() -> float:
    return os.getloadavg()[0]


def ratio(mine: float, reference: float) -> str:
    return f"{mine / reference:.2f}x" if reference > 0 else "n/a"
