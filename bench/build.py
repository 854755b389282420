"""Full `rapgen build` wall time of this checkout against another revision, in one run.

The redesign of the package had to leave the full-scale build no slower. This bench runs
`rapgen build` on the same archive with two source trees, alternating them so that both
see the same machine load, and prints the best and median wall times and their ratio.

Usage:
    rapgen synth --scale full --out /tmp/full          # once
    git worktree add /tmp/before <rev>                  # the reference revision
    python bench/build.py --archive /tmp/full --reference /tmp/before [--repeat 3] [--resamples N]

Each build runs as `python -m rapgen build` in a subprocess with PYTHONPATH pointing at the
tree's `generator/`, into fresh work and site folders, so nothing is shared between runs
except the Search shard cache (warmed by one untimed build of each tree first).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _build(tree: Path, archive: Path, base: Path, resamples: int | None) -> tuple[float, float]:
    """Wall and CPU seconds (the build and every process it starts) of one build."""
    work = Path(tempfile.mkdtemp(dir=base))
    cmd = [sys.executable, "-m", "rapgen", "build", "--root", str(archive),
           "--work-dir", str(work / "work"), "--site-dir", str(work / "site")]
    if resamples:
        cmd += ["--resamples", str(resamples)]
    env = {**os.environ, "PYTHONPATH": str(tree / "generator")}
    cpu0, t0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=base)
    elapsed, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if done.returncode != 0:
        sys.exit(f"build with {tree} failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return elapsed, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", type=Path, required=True, help="repository root of the archive to build")
    ap.add_argument("--reference", type=Path, required=True, help="source tree of the reference revision")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default: the ledger's)")
    args = ap.parse_args()
    trees = {"this checkout": REPO, "reference": args.reference.resolve()}
    times: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="rapgen-bench-build-") as tmp:
        base = Path(tmp)
        for tree in trees.values():  # warm the shard cache and the OS page cache
            _build(tree, args.archive, base, args.resamples)
        for _ in range(args.repeat):
            for name, tree in trees.items():
                wall, cpu = _build(tree, args.archive, base, args.resamples)
                times[name].append(wall)
                cpus[name].append(cpu)
    load = os.getloadavg()[0]
    print(f"full rapgen build of {args.archive} ({args.repeat} runs each, load {load:.1f})")
    for name, values in times.items():
        print(f"  {name:14s} wall best {min(values):6.1f} s, median {statistics.median(values):6.1f} s;"
              f" CPU best {min(cpus[name]):6.1f} s")
    ratio = min(times["this checkout"]) / min(times["reference"])
    cpu_ratio = min(cpus["this checkout"]) / min(cpus["reference"])
    print(f"  ratio (this / reference, best): wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x")


if __name__ == "__main__":
    main()
