"""Time ``rapgen score`` with and without the interventions, and ``rapgen replay`` with and
without the Search-option counterfactual, on one archive in one run (issue 15's speed rules).

    rapgen synth --scale full --seed 0 --out /tmp/synth
    python bench/interventions_score.py --root /tmp/synth [--resamples N] [--cache-dir DIR]

Each measurement runs in its own process (so each peak resident memory is its own):
``score-plain`` is ``compute_scores`` + ``write_scores`` with the interventions off,
``score-interventions`` the same with them on (every ``interventions/`` file and the §6
additions); ``replay-plain`` re-executes every recorded call (warm index cache),
``replay-counterfactual`` also re-runs every well-formed A1–A4 call with the common
options (its ``seconds``), then builds option_counterfactual.csv (``csv_seconds``, apart). Verification is timed apart and left out.
Prints one JSON object with every figure and the two ratios.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _measure(mode: str, root: str, resamples: int | None, cache_dir: str, out: str) -> dict:
    from rapgen.archive import open_verified
    from rapgen.search import call_is_malformed, validate_call

    t0 = time.perf_counter()
    archive = open_verified(root, validate_call=validate_call).release()
    verify_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if mode.startswith("score"):
        from rapgen.scores import compute_scores, write_scores

        malformed = call_is_malformed if mode == "score-interventions" else None
        result = compute_scores(archive, resamples=resamples, malformed=malformed)
        write_scores(result, out)
        extra = {"files": sorted(result.files), "rows": {k: v.count(b"\n") - 1 for k, v in result.files.items()}}
    else:
        from rapgen.kinds.rap import intervention_records, write_counterfactual
        from rapgen.search import replay_archive

        counterfactual = mode == "replay-counterfactual"
        report = replay_archive(archive, cache_dir=cache_dir, counterfactual=counterfactual)
        extra = {"calls": report.data["calls"], "reruns": len(report.reruns or ())}
        if counterfactual:  # the scorer's part (option_reruns.json -> option_counterfactual.csv), timed apart
            t1 = time.perf_counter()
            write_counterfactual(archive, intervention_records(archive), report, out)
            extra["csv_seconds"] = round(time.perf_counter() - t1, 2)
            t0 += time.perf_counter() - t1
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # KiB -> GiB
    return {"mode": mode, "seconds": round(seconds, 2), "verify_seconds": round(verify_s, 2), "peak_gib": round(peak, 3), **extra}


def _run(mode: str, args: argparse.Namespace, out: Path) -> dict:
    cmd = [sys.executable, __file__, "--one", mode, "--root", args.root, "--cache-dir", args.cache_dir, "--out", str(out)]
    if args.resamples is not None:
        cmd += ["--resamples", str(args.resamples)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--resamples", type=int, default=None)
    ap.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "rapgen-bench-cache"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_measure(args.one, args.root, args.resamples, args.cache_dir, args.out)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        res = {}
        _run("replay-plain", args, Path(tmp) / "warm")  # builds the shard indexes: not timed
        for mode in ("score-plain", "score-interventions", "replay-plain", "replay-counterfactual"):
            res[mode] = _run(mode, args, Path(tmp) / mode)
    sp, si = res["score-plain"]["seconds"], res["score-interventions"]["seconds"]
    rp, rc = res["replay-plain"]["seconds"], res["replay-counterfactual"]["seconds"]
    res["score_ratio"] = round(si / sp, 3)  # rule: <= 2
    res["counterfactual_reruns_over_plain_replay"] = round((rc - rp) / rp, 3)  # the re-runs alone; rule: <= 1.5
    res["replay_ratio"] = round(rc / rp, 3)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
