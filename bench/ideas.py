"""Benchmark: verify and score a full-size synthetic Ideas archive, against the code before it was vectorised.

The archive is generated once (``write_synthetic_ideas(..., "full")``: 52 topics
× 12 cutoffs × 6 strategies × 5 ideas × 10 candidates × 2 judges). Then, each in
a fresh process with its imports done before the clock starts:

* **ours** — *verify*: the engine's hashing stages (``verify_archive(root,
  invariants=False)``: SHA256SUMS, path policy, walk, every digest), reading
  the listed files, and ``check_archive`` (every Ideas invariant, every cache
  key recomputed); *score*: ``score_files`` (eight metrics, both gates, both
  judges, both tracks, the topic bootstrap with the ledger's 10,000
  resamples, ranks, ``p_first``, pairs);
* **reference** — the same ``check_archive`` and ``score_files`` of the Ideas
  kind as first built (``--reference REV``, default the last commit before the
  column checks), extracted with ``git archive`` and imported instead of the
  working tree. Its hashing stages are the same engine code, so they are not
  run twice.

Both processes write ``leaderboard.csv`` and ``pairs.csv``; the bench checks
that the bytes are identical, then prints wall and CPU seconds per phase, the
speed-up and the load average (the machine is shared: compare CPU seconds when
the load is high).

    python bench/ideas.py [--seed 0] [--repeat 3] [--reference REV | --no-reference] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = "66e347c"  # the Ideas kind before its evaluator checks, credit and rebuilds ran on columns
GOAL_SECONDS = 10.0


def _warm_imports() -> None:
    """What every rapgen process has loaded before it reads an archive (pyarrow's pandas bridge and dataset layer)."""
    import pyarrow as pa
    import pyarrow.dataset  # noqa: F401

    pa.array(["x"])


def phase(root: Path, out: Path) -> dict:
    """Check and score the archive under ``root`` with whichever rapgen is importable; times in seconds."""
    from rapgen.kinds.ideas.archive.check import check_archive
    from rapgen.kinds.ideas.scores.score import score_files

    _warm_imports()
    times: dict[str, float] = {}

    def clock(name: str, fn):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        times[f"{name}_wall"], times[f"{name}_cpu"] = time.perf_counter() - wall, time.process_time() - cpu
        return value

    listed = [line.split("  ", 1)[1] for line in (root / "SHA256SUMS").read_text("utf-8").splitlines()]
    files = clock("read", lambda: {p: (root / p).read_bytes() for p in listed})
    archive, findings = clock("check", lambda: check_archive(files))
    if findings:
        raise SystemExit(f"check_archive found {len(findings)} problems, the first: {findings[0]}")
    outputs = clock("score", lambda: score_files(archive))
    for name, data in outputs.items():
        (out / name).write_bytes(data)
    return times


def hashing(root: Path) -> dict:
    """The engine's verify stages 1–4 (unchanged by this work): hashing every listed file."""
    from rapgen.archive.verify import verify_archive

    wall, cpu = time.perf_counter(), time.process_time()
    report = verify_archive(root, invariants=False)
    bad = [f for f in report.findings if f.category.value != "WARNING"]
    if bad:
        raise SystemExit(f"hashing stages failed: {bad[0]}")
    return {"hash_wall": time.perf_counter() - wall, "hash_cpu": time.process_time() - cpu}


def run_phase(kind: str, root: Path, out: Path, env: dict | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, __file__, "--phase", kind, "--root", str(root), "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} phase failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reference_tree(rev: str, work: Path) -> Path:
    """``generator/`` of revision ``rev``, extracted under ``work``."""
    target = work / "reference"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "generator"], capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {rev}: {archive.stderr.decode().strip()} (pass --reference REV or --no-reference)")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / "generator"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _row(label: str, ours: dict, key: str, ref: dict | None) -> str:
    line = f"  {label:<22} {ours[f'{key}_wall']:7.2f} s wall {ours[f'{key}_cpu']:7.2f} s CPU"
    if ref is not None and f"{key}_cpu" in ref:
        line += (f"   reference {ref[f'{key}_wall']:7.2f} s wall {ref[f'{key}_cpu']:7.2f} s CPU"
                 f"   {ref[f'{key}_wall'] / ours[f'{key}_wall']:5.1f}x wall {ref[f'{key}_cpu'] / ours[f'{key}_cpu']:5.1f}x CPU")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of our phase; the median is reported")
    parser.add_argument("--reference", default=REFERENCE, help="git revision whose Ideas code is the reference")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this folder instead of a temporary one")
    parser.add_argument("--phase", choices=["ours", "reference"], help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        times = phase(args.root, args.out)
        if args.phase == "ours":
            times.update(hashing(args.root))
        print(json.dumps(times))
        return

    from rapgen.kinds.ideas.sample.synth import IDEAS_SCALES, write_synthetic_ideas

    with tempfile.TemporaryDirectory(prefix="rapgen-bench-ideas-") as tmp:
        work = Path(tmp)
        root = args.keep or work / "full"
        print(f"load average before: {_load()} ({os.cpu_count()} cores, shared: high load inflates wall times, not CPU times)")
        if not (root / "SHA256SUMS").is_file():
            t = time.perf_counter()
            summary = write_synthetic_ideas(root, "full", args.seed)
            s = IDEAS_SCALES["full"]
            print(f"archive: {s.topics} topics x {s.cutoffs} cutoffs = {summary.episodes} episodes, {s.models} model x {s.strategies} strategies, "
                  f"{summary.ideas:,} ideas, {summary.judgments:,} judgments, {summary.papers:,} papers; "
                  f"{summary.size / 1e6:.1f} MB in {len(summary.files)} files, generated in {time.perf_counter() - t:.1f} s (seed {args.seed})")
        print(f"archive folder: {root}")
        runs = [run_phase("ours", root, work / f"ours-{k}") for k in range(max(1, args.repeat))]
        ours = {key: sorted(r[key] for r in runs)[len(runs) // 2] for key in runs[0]}
        ref = None
        if not args.no_reference:
            env = dict(os.environ, PYTHONPATH=str(reference_tree(args.reference, work)))
            ref = run_phase("reference", root, work / "reference", env)
        for key in ("wall", "cpu"):
            ours[f"verify_{key}"] = ours[f"hash_{key}"] + ours[f"read_{key}"] + ours[f"check_{key}"]
            ours[f"total_{key}"] = ours[f"verify_{key}"] + ours[f"score_{key}"]
            if ref is not None:
                ref[f"hash_{key}"] = ours[f"hash_{key}"]  # the same engine code: run once
                ref[f"verify_{key}"] = ref[f"hash_{key}"] + ref[f"read_{key}"] + ref[f"check_{key}"]
                ref[f"total_{key}"] = ref[f"verify_{key}"] + ref[f"score_{key}"]
        print(f"ours: median of {len(runs)} runs" + (f"; reference: {args.reference} (one run)" if ref else ""))
        for label, key in (("verify: hash (engine)", "hash"), ("verify: read files", "read"), ("verify: check_archive", "check"),
                           ("verify", "verify"), ("score: score_files", "score"), ("verify + score", "total")):
            print(_row(label, ours, key, ref))
        verdict = "met" if ours["total_wall"] <= GOAL_SECONDS else "missed (wall)"
        print(f"goal: verify + score <= {GOAL_SECONDS:.0f} s on 2 cores: {verdict}; CPU {ours['total_cpu']:.2f} s")
        if ref is not None:
            same = all((work / "ours-0" / n).read_bytes() == (work / "reference" / n).read_bytes() for n in ("leaderboard.csv", "pairs.csv"))
            rows = sum(1 for _ in open(work / "ours-0" / "leaderboard.csv")) - 1
            pairs = sum(1 for _ in open(work / "ours-0" / "pairs.csv")) - 1
            print(f"outputs: leaderboard.csv ({rows} rows) and pairs.csv ({pairs} rows) {'byte-identical to' if same else 'DIFFER from'} "
                  f"the reference's")
        print(f"load average after: {_load()}")
        if ref is not None and not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
