"""Time the intervention rows (INTERVENTIONS.md §8) on generated full-scale-shaped inputs.

Fields in blocks of three, half dev and half test, 5 origins, diagnostic
models with every condition A0–A4 (six Search calls of eight ids per Search
unit), all eight replay cells and the three O conditions per episode, a
month-precision cut-off (so exposure rows exist), 10,000 bootstrap resamples.
Reports the rows made, the time of ``assemble_rows`` and of the CSV bytes,
and the peak resident memory.

    python bench/interventions.py                 # 278 fields, 4 models, against beabbaa
    python bench/interventions.py --fields 60 --models 1 --reference none

The same inputs (same seed) are timed with this checkout and with ``--reference`` (a
revision or source tree; default beabbaa), each in its own process, alternately
(``--repeat`` times each), and the ratio is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time
from datetime import date, timedelta

import numpy as np

from rapgen.archive.calendar import add_months
from rapgen.archive.interventions import OracleUnit, Readout
from rapgen.archive.records import TraceCall, Unit
from rapgen.scores.interventions import intervention_files, split_draws
from rapgen.scores.interventions.assemble import Grid, ModelRecords, assemble_rows

HEX = "0" * 64


def _model(name: str, fields: list[str], origins: list[date], ids: list[str], rng: np.random.Generator) -> ModelRecords:
    def w() -> tuple[float, ...]:
        return tuple(rng.dirichlet(np.ones(8)))

    units, traces, readouts, oracle = [], [], [], []
    for f in fields:
        for T in origins:
            for c in ("A0", "A1", "A2", "A3", "A4"):
                units.append(Unit(f, T, c, w(), True))
                if c != "A0":
                    for k in range(6):
                        got = tuple(rng.choice(ids, 8, replace=False))
                        traces.append(TraceCall(f, T, c, k, "q", ("relevance", "date")[k % 2], None, None, 8, got))
            for s in ("A3", "A4"):
                for r in ("forecast", "state"):
                    for b in ("all", "matched"):
                        readouts.append(Readout(f, T, s, r, b, 0, HEX, HEX, w(), True))
            oracle += [OracleUnit(f, T, c, w(), True, HEX, HEX) for c in ("O1", "O2", "O3")]
    return ModelRecords(name, units, traces, readouts, oracle, knowledge_cutoff=date(2024, 6, 1), cutoff_precision="month")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, default=278)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--reference", default="beabbaa", help="revision or source tree to time against ('none': skip)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.one:
        compare(args)
        return
    rng = np.random.default_rng(0)
    F, O = args.fields, 5
    fields = [f"f{i:03d}" for i in range(F)]
    splits = ["dev" if i % 2 else "test" for i in range(F)]
    blocks = [f"b{i // 3}" for i in range(F)]
    origins = [add_months(date(2024, 1, 1), 6 * k) for k in range(O)]
    y, x, ewma, recent = (rng.dirichlet(np.ones(8), size=(F, O)) for _ in range(4))
    papers = {f"p{i}": date(2023, 1, 1) + timedelta(days=int(d)) for i, d in enumerate(rng.integers(0, 1200, 5000))}
    ids = sorted(papers)
    labels = {f: {ids[i]: int(rng.integers(0, 8)) for i in rng.choice(len(ids), 300, replace=False)} for f in fields}
    models = [_model(f"m{m}", fields, origins, ids, rng) for m in range(args.models)]
    grid = Grid(fields, splits, blocks, origins, 6, origins[-1], y, x, ewma, recent, rng.random((F, O)) < 0.3, papers, labels,
                split_draws(fields, splits, blocks, args.resamples, 0, 0.95))
    start = time.perf_counter()
    rows = assemble_rows(grid, models, lambda call: False)
    middle = time.perf_counter()
    files = intervention_files(rows)
    end = time.perf_counter()
    size = sum(len(b) for b in files.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{F} fields x {O} origins, {args.models} models, {args.resamples} resamples: "
          f"{sum(len(v) for v in rows.values())} rows ({size / 1e6:.1f} MB CSV); "
          f"assemble {middle - start:.1f} s, CSV {end - middle:.1f} s; peak RSS {peak:.0f} MiB")
    print(f"ASSEMBLE {middle - start:.6f} {hashlib.sha256(b''.join(files[k] for k in sorted(files))).hexdigest()}")


def compare(args) -> None:
    """Run the measurement in this checkout and in the reference, alternately, each in its own process."""
    import sys
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from reference import REPO, load, ratio, run_tree, source_tree

    one = [__file__, "--one", "--fields", str(args.fields), "--models", str(args.models), "--resamples", str(args.resamples)]
    with tempfile.TemporaryDirectory(prefix="rapgen-bench-interventions-") as tmp:
        trees = {"this checkout": REPO}
        if args.reference != "none":
            trees["reference"] = source_tree(args.reference, Path(tmp))
        best: dict[str, tuple[float, str]] = {}
        for i in range(args.repeat):
            for name in (list(trees) if i % 2 == 0 else list(reversed(trees))):
                run = run_tree(trees[name], one)
                seconds, digest = run.stdout.split("ASSEMBLE ")[1].split()
                print(f"{name:14s} {run.stdout.splitlines()[0]} (load {run.load:.1f})", flush=True)
                if name not in best or float(seconds) < best[name][0]:
                    best[name] = (float(seconds), digest)
    if "reference" in best:
        (mine, mine_digest), (ref, ref_digest) = best["this checkout"], best["reference"]
        same = "the same CSV bytes" if mine_digest == ref_digest else "DIFFERENT CSV bytes"
        print(f"assemble_rows: {mine:.1f} s against {ref:.1f} s: ratio {ratio(mine, ref)} ({same}; load {load():.1f})")


if __name__ == "__main__":
    main()
