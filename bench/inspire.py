"""Benchmark Inspire at full size: score and replay a synthetic archive, against references run alongside.

Usage::

    python bench/inspire.py                     # generate the full-size archive under a temporary folder
    python bench/inspire.py --root DIR          # an archive already written (rapgen synth --kind inspire --scale full)
    python bench/inspire.py --root DIR --reference e0eb92b --repeat 2   # the commands against a revision
    python bench/inspire.py --keep DIR          # generate into DIR (kept) for later --root runs

The archive is ``write_synthetic_inspire(DIR, "full", seed)``: 1,000 instances, a
20,000-paper corpus, four models, 30 search calls per unit (120,000 calls).
Every stage prints wall and CPU seconds (CPU of this process and of the
workers it forked) with the load average, since the 2-core machine is shared:

* read: every file parsed and checked (``read_files``); the archive must have no finding;
* score: ``score_board`` — the 15 metrics, 3 funnel diagnostics and G(p) of every
  model, split, view, gain map and cluster kind, with the ledger's 10,000 resamples;
  reference: the per-unit scorer (``score_units`` + ``item_sums`` /
  ``diagnostic_sums`` / ``progress_sums``) for the per-item stage, which must give
  identical (A, B) arrays;
* replay: the in-memory index and ``replay_files`` of every call over ``--jobs``
  workers, every call reproduced; reference: ``replay_calls`` one by one on
  ``--reference-calls`` calls spread over the archive, extrapolated per call.

On an otherwise idle machine the scorer's wall time is at most its CPU time, and
the replay's about its serial CPU plus the workers' CPU divided by the jobs;
both estimates are printed next to the goals (10 s and 30 s on 2 cores).

With ``--root`` the commands themselves are timed too, against ``--reference``
(a revision of this repository, extracted with ``git archive``, or a source tree)
in the same run: ``rapgen replay --root DIR`` (index cache warm, shared by both
trees) and ``rapgen score --root DIR``, one warm-up each, then ``--repeat`` runs
alternating between the trees; the best wall and CPU of each and their ratio
(this checkout / reference) are printed, and the two trees' replay.json and score
files must be byte-identical. ``--reference none`` skips this stage.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def say(msg: str) -> None:
    print(msg, flush=True)


class Clock:
    """Wall and CPU seconds (this process, and its reaped workers) of one stage."""

    def __enter__(self) -> "Clock":
        self.t, self.own, self.kids = time.perf_counter(), *self._cpu()
        self.load = os.getloadavg()[0]
        return self

    def __exit__(self, *exc) -> None:
        own, kids = self._cpu()
        self.wall, self.cpu_own, self.cpu_kids = time.perf_counter() - self.t, own - self.own, kids - self.kids

    @staticmethod
    def _cpu() -> tuple[float, float]:
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime, b.ru_utime + b.ru_stime

    def line(self, what: str) -> str:
        kids = f" + workers {self.cpu_kids:.1f}" if self.cpu_kids > 0.05 else ""
        return f"{what}: wall {self.wall:.1f} s, CPU {self.cpu_own:.1f}{kids} s (load {self.load:.1f} -> {os.getloadavg()[0]:.1f})"


def reference_item_sums(files, entries, maps) -> dict:
    """The per-unit scorer's (A, B) of every entry, condition and gain map."""
    from rapgen.kinds.inspire.scores import diagnostic_sums, item_sums, progress_sums, score_units

    ledger, out = files.ledger, {}
    for e in entries:
        for condition in sorted({p.condition for p in e.predictions}):
            table = score_units(e.entry_id, condition, files.instances, files.judgements, e.predictions, e.calls, files.corpus,
                                K=ledger.K, gain_maps=maps)
            for m in maps:
                parts = (item_sums(table, m), diagnostic_sums(table, files.judgements, prefix=ledger.exposure_prefix, gain_map=m),
                         progress_sums(table, files.judgements, K=ledger.K, steps=ledger.progress_steps, gain_map=m))
                out[(e.entry_id, condition, m)] = (np.vstack([a for a, _ in parts]), np.vstack([b for _, b in parts]))
    return out


def new_item_sums(files, entries, maps) -> dict:
    from rapgen.kinds.inspire.scores.columns import Codes, item_arrays, label_table, metric_sums, unit_columns
    from rapgen.kinds.inspire.scores.funnel import funnel_sums, progress_arrays

    ledger, out = files.ledger, {}
    labels, codes = label_table(files.instances, files.judgements), Codes()
    cutoffs = {i.instance_id: i.cutoff for i in files.instances}
    for e in entries:
        for condition in sorted({p.condition for p in e.predictions}):
            cols = unit_columns(e.entry_id, condition, labels, e.predictions, e.calls, files.corpus, cutoffs, K=ledger.K, codes=codes)
            for m in maps:
                arrays = item_arrays(cols, labels, m, ledger.K)
                parts = (metric_sums(arrays), funnel_sums(cols, labels, arrays, m, prefix=ledger.exposure_prefix),
                         progress_arrays(cols, labels, arrays, m, K=ledger.K, steps=ledger.progress_steps))
                out[(e.entry_id, condition, m)] = (np.vstack([a for a, _ in parts]), np.vstack([b for _, b in parts]))
    return out


def kind_stages(root: Path, resamples: int | None) -> None:
    """What ``rapgen verify`` and ``rapgen score`` do for an Inspire root: verify (hashing, every check),
    then the kind's score (board, pairs, units, releases) and its score folder."""
    from rapgen.archive import verify_archive
    from rapgen.kinds import Registry
    from rapgen.kinds.inspire import KIND

    with Clock() as verify:
        report = verify_archive(root, kinds=Registry([KIND]).formats)
    say(verify.line(f"verify (ok: {report.ok})"))
    with Clock() as scored:
        result = KIND.score(report.verified.release(), resamples=resamples)
    with Clock() as written, tempfile.TemporaryDirectory(prefix="inspire-scores-") as out:
        files = KIND.write_scores(result, out)
        size = sum(p.stat().st_size for p in files)
    say(scored.line(f"KIND.score ({len(result.board.rows)} rows, {len(result.board.scored['target'].pairs)} pairs)"))
    say(written.line(f"  write_scores ({len(files)} files, {size / 1e6:.1f} MB)"))


def command_stages(root: Path, reference: str, repeat: int, jobs: int) -> bool:
    """``rapgen replay`` and ``rapgen score`` of ``root`` by this checkout and by ``reference``,
    alternately; True when both trees wrote the same bytes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from reference import REPO, ratio, run_tree, source_tree

    same = True
    with tempfile.TemporaryDirectory(prefix="inspire-bench-cmds-") as tmp:
        work = Path(tmp)
        trees = {"this checkout": REPO, "reference": source_tree(reference, work)}
        cache = work / "cache"
        commands = {
            "replay": lambda name: ["-m", "rapgen", "replay", "--root", str(root), "--cache-dir", str(cache), "--jobs", str(jobs),
                                    "--out", str(work / f"replay-{name[:4]}")],
            "score": lambda name: ["-m", "rapgen", "score", "--root", str(root), "--out", str(work / f"score-{name[:4]}")],
        }
        for what, command in commands.items():
            for name, tree in trees.items():
                run_tree(tree, command(name))  # warm-up: the page cache, and the index cache for replay
            runs: dict[str, list] = {name: [] for name in trees}
            for i in range(repeat):
                for name in (list(trees) if i % 2 == 0 else list(reversed(list(trees)))):
                    run = run_tree(trees[name], command(name))
                    runs[name].append(run)
                    say(f"  {what} run {i + 1} {name:14s} wall {run.wall:6.2f} s, CPU {run.cpu:6.2f} s, "
                        f"peak {run.peak_kib / 2**20:.2f} GiB (load {run.load:.1f})")
            (mw, mc), (rw, rc) = ((min(r.wall for r in runs[n]), min(r.cpu for r in runs[n])) for n in trees)
            outputs = [sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file())
                       for d in (work / f"{what}-this", work / f"{what}-refe")]
            identical = outputs[0] == outputs[1] and all(
                (work / f"{what}-this" / p).read_bytes() == (work / f"{what}-refe" / p).read_bytes() for p in outputs[0])
            same &= identical
            say(f"rapgen {what} (best of {repeat}): this checkout wall {mw:.2f} s, CPU {mc:.2f} s; {reference} wall {rw:.2f} s, "
                f"CPU {rc:.2f} s; ratio {ratio(mw, rw)} wall, {ratio(mc, rc)} CPU; outputs byte-identical: {identical}")
    return same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="an existing full-size synthetic Inspire archive")
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=None, help="default: the ledger's (10,000)")
    ap.add_argument("--reference-calls", type=int, default=3000)
    ap.add_argument("--reference", default="e0eb92b",
                    help="with --root: the revision (or source tree) the replay and score commands are timed against; none: skip")
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs of each command per tree (with --reference)")
    ap.add_argument("--kind", action="store_true", help="also time the kind's own path: verify, KIND.score and its score folder")
    args = ap.parse_args()

    from rapgen.kinds.inspire.archive import read_files
    from rapgen.kinds.inspire.sample.synth import write_synthetic_inspire
    from rapgen.kinds.inspire.scores.board import Entry, score_board
    from rapgen.kinds.inspire.search import MemoryBackend, replay_calls, replay_files

    say(f"cores {os.cpu_count()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    tmp = None
    root = args.root
    if root is None:
        if args.keep is None:
            tmp = tempfile.TemporaryDirectory(prefix="inspire-bench-")
        root = args.keep or Path(tmp.name) / "full"
        with Clock() as c:
            summary = write_synthetic_inspire(root, "full", args.seed, jobs=args.jobs, check=False, force=args.keep is not None)
        say(c.line(f"generate ({summary['instances']} instances, {summary['corpus']} papers, {len(summary['models'])} models, "
                   f"{summary['calls']} calls, {summary['bytes'] / 1e6:.1f} MB)"))

    with Clock() as read:
        files = read_files(root)
    say(read.line(f"read and check ({len(files.findings)} findings)"))
    if files.findings:
        say(f"  first: {sorted(files.findings)[0].path}: {sorted(files.findings)[0].detail}")
        return 1
    entries = [Entry(m.model_id, "reference" if m.is_reference else "model", m.predictions, m.calls) for m in files.models.values()]
    maps = files.ledger.gain_maps

    with Clock() as score:
        board = score_board(files.instances, files.targets, files.judgements, files.corpus, files.ledger, entries,
                            resamples=args.resamples)
    say(score.line(f"score ({len(board.rows)} rows, {args.resamples or files.ledger.resamples} resamples)"))
    with Clock() as new:
        fast = new_item_sums(files, entries, maps)
    with Clock() as old:
        slow = reference_item_sums(files, entries, maps)
    same = all(np.array_equal(fast[k][0], slow[k][0]) and np.array_equal(fast[k][1], slow[k][1]) for k in slow)
    say(new.line("  per-item stage, vectorised"))
    say(old.line("  per-item stage, per-unit reference"))
    say(f"  per-item (A, B) identical: {same}; reference / vectorised CPU: {old.cpu_own / max(new.cpu_own, 1e-9):.1f}x")

    if args.kind:
        kind_stages(root, args.resamples)

    with Clock() as index:
        backend = MemoryBackend(files.corpus, files.instances, top_k=files.ledger.top_k, k1=files.ledger.k1, b=files.ledger.b)
    say(index.line("index"))
    traces = {m.traces_path: m.calls for m in files.models.values()}
    with Clock() as replay:
        results = replay_files(traces, backend, jobs=args.jobs)
    n_calls = sum(r.n_calls for r in results.values())
    ok = all(r.ok for r in results.values())
    say(replay.line(f"replay {n_calls} calls over {args.jobs} workers (all reproduced: {ok})"))
    every = [c for calls in traces.values() for c in calls]
    sample = every[:: max(1, len(every) // args.reference_calls)][: args.reference_calls]
    with Clock() as ref:
        assert replay_calls(sample, backend).ok
    per_new = (replay.cpu_own + replay.cpu_kids) / n_calls * 1e6
    per_ref = ref.cpu_own / len(sample) * 1e6
    say(ref.line(f"  reference: replay_calls one by one on {len(sample)} calls"))
    say(f"  CPU per call: {per_new:.0f} µs grouped, {per_ref:.0f} µs one by one ({per_ref / per_new:.2f}x); "
        f"one by one for every call would take {per_ref * n_calls / 1e6:.0f} s CPU")

    idle_score = score.cpu_own
    idle_replay = index.cpu_own + replay.cpu_own + replay.cpu_kids / args.jobs
    say(f"estimate on an idle machine with {args.jobs} cores: score ≤ {idle_score:.1f} s (goal 10 s), "
        f"replay ≈ {idle_replay:.1f} s after reading (goal 30 s); reading and checking took {read.cpu_own:.1f} s CPU")
    if tmp is not None:
        tmp.cleanup()
    commands_same = True
    if args.root is not None and args.reference != "none":
        commands_same = command_stages(root, args.reference, args.repeat, args.jobs)
    return 0 if same and ok and commands_same else 1


if __name__ == "__main__":
    sys.exit(main())
