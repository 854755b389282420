"""Benchmark: history verification and release operations on a replayed history.

Builds (or reuses) a format-1 synthetic archive, replays it as a history with
``rapgen release sample-history`` (two origins resolved in release 1, one roll
per later window, models releases with sealed and open Live entries), then reports

* every release operation's wall time (each includes verifying the archive
  before and after, as ``rapgen release roll``/``cut`` do), the rolls' maximum
  against the 60 s target;
* plain ``verify_archive`` (which runs every history check) on the format-1
  source against the same call on the history (best of ``--repeat``, both with
  the Search validator), the ratio against the 1.5x target.
* with ``--score``: ``compute_scores`` + ``write_scores`` on the history with
  releases.csv for every release, against the same with releases.csv for the
  latest release alone (best of ``--repeat``), the ratio against the 2x target.
  ``--history DIR`` reuses a history built before (skips the build and verify timings).

    python bench/releases.py [--scale full|small] [--source DIR] [--repeat 3] [--keep DIR] [--score] [--history DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "generator"))


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def time_scoring(root: Path, repeat: int, resamples: int | None) -> None:
    """rapgen score with releases.csv for every release against the latest release alone (diagnostics included)."""
    from rapgen.archive import open_verified
    from rapgen.scores import compute_scores, write_scores
    from rapgen.search import validate_call

    archive = open_verified(root, validate_call=validate_call).release()
    n = max(archive.releases)
    out = Path(tempfile.mkdtemp(prefix="rapgen-bench-score-"))
    try:
        def run(every: bool) -> None:
            write_scores(compute_scores(archive, resamples=resamples, every_release=every), out / ("all" if every else "latest"))

        latest = best(lambda: run(False), repeat)
        every = best(lambda: run(True), repeat)
        rows = sum(1 for _ in open(out / "all" / "releases.csv")) - 1
        print(f"score, releases.csv for release {n} alone: {latest:.2f} s; for all {n} releases ({rows} rows): {every:.2f} s; "
              f"ratio {every / latest:.2f} (target <= 2)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", choices=("full", "small"), default="full")
    parser.add_argument("--source", type=Path, default=None, help="an existing format-1 archive root (skips rapgen synth)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temporary one)")
    parser.add_argument("--score", action="store_true", help="also time rapgen score with releases.csv for every release")
    parser.add_argument("--history", type=Path, default=None, help="an existing history (only the --score timing runs)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples for --score (default: the ledger's)")
    args = parser.parse_args()
    if args.history is not None:
        time_scoring(args.history, args.repeat, args.resamples)
        return 0

    from rapgen.archive.verify import verify_archive
    from rapgen.search import validate_call
    from rapgen.sample.history import build_sample_history

    work = args.keep or Path(tempfile.mkdtemp(prefix="rapgen-bench-releases-"))
    try:
        source = args.source
        if source is None:
            source = work / "source"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "rapgen", "synth", "--scale", args.scale, "--no-history", "--out", str(source)],
                           check=True, env={"PYTHONPATH": str(REPO / "generator"), "PATH": "/usr/bin:/bin"})
            print(f"synth --scale {args.scale}: {time.perf_counter() - start:.1f} s")
        out = work / "history"
        if out.exists():
            shutil.rmtree(out)
        built = build_sample_history(source, out, open_submitter="synth-eta")
        for result, seconds in zip(built.releases, built.seconds):
            print(f"release {result.record.release:>2} {result.record.kind.value:<8} {seconds:6.1f} s  ({len(result.added)} files)")
        rolls = [s for r, s in zip(built.releases, built.seconds) if r.record.kind.value == "roll"]
        print(f"slowest roll: {max(rolls):.1f} s (target <= 60 s)")
        plain = best(lambda: verify_archive(source, validate_call=validate_call), args.repeat)
        history = best(lambda: verify_archive(out, validate_call=validate_call), args.repeat)
        if not verify_archive(out, validate_call=validate_call).ok:
            print("the history does not verify", file=sys.stderr)
            return 1
        print(f"verify format-1 source: {plain:.2f} s; verify with history: {history:.2f} s; ratio {history / plain:.2f} (target <= 1.5)")
        if args.score:
            time_scoring(out, args.repeat, args.resamples)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
