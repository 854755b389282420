"""Time the intervention rows (INTERVENTIONS.md §8) on generated full-scale-shaped inputs.

Fields in blocks of three, half dev and half test, 5 origins, diagnostic
models with every condition A0–A4 (six Search calls of eight ids per Search
unit), all eight replay cells and the three O conditions per episode, a
month-precision cut-off (so exposure rows exist), 10,000 bootstrap resamples.
Reports the rows made, the time of ``assemble_rows`` and of the CSV bytes,
and the peak resident memory.

    python bench/interventions.py                 # 278 fields, 4 models
    python bench/interventions.py --fields 60 --models 1
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
