"""Full ``rapgen build`` of this checkout against a reference revision, on one archive, in one run.

Issue 21's measure: the full-scale build of this checkout at most 0.4x the time of revision
beabbaa. Both source trees build the same archive, written by the *reference's* ``rapgen
synth`` (so an archive made before a change keeps working after it), each warmed once
(untimed: the Search shard cache and the page cache), then alternately ``--repeat`` times.
Every run is ``python -m rapgen build --json`` in its own process with PYTHONPATH on the
tree's ``generator/``, into fresh work and site folders; the stage seconds come from its
``--json`` report (verify, score, replay, render, mkdocs), the CPU seconds and the peak
resident memory from ``os.wait4`` (replay workers and mkdocs included). Printed: every run
with the load average, each stage's best and median per tree, and the ratios (this /
reference, best against best) for every stage, the whole build, its CPU and its peak.

    python bench/build.py                                   # reference beabbaa, archive synthesised by it
    python bench/build.py --reference beabbaa --archive /tmp/full [--repeat 2] [--resamples N]
    python bench/build.py --reference /path/to/tree --keep /tmp/bench-build

``--reference`` is a revision of this repository (extracted with ``git archive``) or a
source tree. ``--archive`` names an archive root; if it holds no archive yet, the
reference writes one there with ``rapgen synth --scale full``. Full scale takes a few
minutes per build: the default is one warm-up and two timed builds per tree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import DEFAULT_REVISION, REPO, Run, load, ratio, run_tree, source_tree  # noqa: E402

STAGES = ("verify", "score", "replay", "render", "mkdocs")


def synthesise(tree: Path, root: Path) -> None:
    print(f"writing the full-scale archive with the reference's rapgen synth into {root} (load {load():.1f}) …", flush=True)
    run = run_tree(tree, ["-m", "rapgen", "synth", "--scale", "full", "--out", str(root)])
    print(f"  {run.stdout.strip().splitlines()[-1]} ({run.wall:.0f} s)")


def build(tree: Path, archive: Path, base: Path, resamples: int | None) -> tuple[Run, dict[str, float]]:
    """One timed build: the run and its stage seconds."""
    work = Path(tempfile.mkdtemp(dir=base))
    args = ["-m", "rapgen", "build", "--json", "--root", str(archive), "--work-dir", str(work / "work"),
            "--site-dir", str(work / "site")]
    if resamples:
        args += ["--resamples", str(resamples)]
    run = run_tree(tree, args, cwd=base)
    stages = json.loads(run.stdout)["seconds"]
    return run, {k: float(stages.get(k, 0.0)) for k in STAGES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", default=DEFAULT_REVISION, help=f"revision or source tree (default {DEFAULT_REVISION})")
    ap.add_argument("--archive", type=Path, default=None, help="archive root (default: one the reference synthesises)")
    ap.add_argument("--repeat", type=int, default=2, help="timed builds per tree, alternating (default 2)")
    ap.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default: the ledger's)")
    ap.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rapgen-bench-build-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        trees = {"this checkout": REPO, "reference": source_tree(args.reference, base)}
        archive = args.archive or base / "full"
        if not (archive / "SHA256SUMS").is_file():
            synthesise(trees["reference"], archive)
        print(f"full rapgen build of {archive}: this checkout ({REPO}) against {args.reference} ({trees['reference']})")
        for name, tree in trees.items():  # warm: the shard cache and the OS page cache
            run, _ = build(tree, archive, base, args.resamples)
            print(f"  warm-up {name:14s} {run.wall:7.1f} s (load {run.load:.1f})", flush=True)
        runs: dict[str, list[tuple[Run, dict[str, float]]]] = {name: [] for name in trees}
        for i in range(args.repeat):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))  # alternate who goes first
            for name in order:
                run, stages = build(trees[name], archive, base, args.resamples)
                runs[name].append((run, stages))
                parts = ", ".join(f"{k} {stages[k]:.1f}" for k in STAGES)
                print(f"  run {i + 1} {name:14s} {run.wall:7.1f} s wall, {run.cpu:7.1f} s CPU, peak {run.peak_kib / 2**20:.2f} GiB"
                      f" ({parts}; load {run.load:.1f})", flush=True)
        report(runs)


def report(runs: dict[str, list[tuple[Run, dict[str, float]]]]) -> None:
    print(f"\n{'':16s}" + "".join(f"{k:>16s}" for k in (*STAGES, "build", "CPU", "peak GiB")))
    best: dict[str, dict[str, float]] = {}
    for name, items in runs.items():
        columns = {k: [s[k] for _, s in items] for k in STAGES}
        columns["build"] = [r.wall for r, _ in items]
        columns["CPU"] = [r.cpu for r, _ in items]
        columns["peak GiB"] = [r.peak_kib / 2**20 for r, _ in items]
        best[name] = {k: min(v) for k, v in columns.items()}
        print(f"{name:16s}" + "".join(f"{min(v):7.1f} ({statistics.median(v):6.1f})" for v in columns.values()))
    mine, ref = best["this checkout"], best["reference"]
    print(f"{'ratio (best)':16s}" + "".join(f"{ratio(mine[k], ref[k]):>16s}" for k in mine))
    print("  figures: best (median) seconds; ratio = this checkout / reference; "
          f"render + mkdocs: {mine['render'] + mine['mkdocs']:.1f} s against {ref['render'] + ref['mkdocs']:.1f} s")


if __name__ == "__main__":
    main()
