"""Benchmark ``rapgen score`` at full scale against a per-unit reference.

Usage::

    python bench/score.py                    # synthesise a full-scale archive, then bench
    python bench/score.py --archive DIR      # bench an existing archive (repo root)
    python bench/score.py --resamples 2000   # fewer resamples (default: the ledger's 10,000)

The archive comes from ``rapgen synth --scale full`` unless ``--archive`` names
one. Each phase runs in its own process so that peak memory (``ru_maxrss``) is
the phase's own: the vectorised scorer (``compute_scores`` + ``write_scores`` on
the archive ``open_verified`` returned; verification is not timed), then the
straightforward per-unit
reference kept below. The reference counts the ledger row by row in Python,
scores every unit on its own (``scipy.stats.rankdata`` per call), averages
field scores in Python, and bootstraps one statistic at a time with the §5
formula (the count matrix built once per split and unit kind, then
``C @ S / C @ N`` and ``numpy.percentile`` per statistic). Every estimate and
both intervals (block and field-clustered) of the two must agree to 1e-9.
``--diagnostics`` also times every §6 diagnostic (``compute_diagnostics_section``)
after the scores, separately.

Figures: see docs/scoring.md (Speed); they are printed with the load average,
because the 2-core machine is shared and other work inflates wall times.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
from scipy.stats import rankdata



# ---------------------------------------------------------------- archive
def obtain_archive(workdir: Path) -> Path:
    root = workdir / "full"
    proc = subprocess.run([sys.executable, "-m", "rapgen", "synth", "--scale", "full", "--out", str(root)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"rapgen synth --scale full failed:\n{proc.stderr}")
    print("archive: rapgen synth --scale full")
    return root


# ---------------------------------------------------------------- phases
def phase_ours(root: Path, out: Path, resamples: int | None, with_diagnostics: bool) -> dict:
    from rapgen.archive import open_verified
    from rapgen.scores import compute_scores, write_scores

    # Verified first, outside the timed region (compute_scores takes the verified archive).
    archive = open_verified(root).release()
    # The §6 diagnostics are a separate contributor's code: timed apart, after the scores.
    start = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = start.ru_utime + start.ru_stime
    t0 = time.perf_counter()
    result = compute_scores(archive, resamples=resamples, diagnostics=False)
    write_scores(result, out)
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss
    if not with_diagnostics:
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime - cpu0, "maxrss_kib": peak}
    from rapgen.scores.pipeline import compute_diagnostics_section

    # Every §6 diagnostic: the per-unit alignment columns and the diagnostics.json body.
    t1 = time.perf_counter()
    c1 = resource.getrusage(resource.RUSAGE_SELF)
    compute_diagnostics_section(result.inputs)
    diag = time.perf_counter() - t1
    c2 = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime - cpu0, "maxrss_kib": peak, "diagnostics_wall": diag,
            "diagnostics_cpu": c2.ru_utime + c2.ru_stime - c1.ru_utime - c1.ru_stime,
            "diagnostics_maxrss_kib": c2.ru_maxrss}


def phase_reference(root: Path, out: Path, resamples: int | None, scores: Path) -> dict:
    tracks = json.loads((scores / "scores.json").read_text())["tracks"]
    start = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    rows = reference_scores(root, resamples, tracks)
    wall = time.perf_counter() - t0
    out.write_text(json.dumps(rows))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - start.ru_utime - start.ru_stime
    return {"wall": wall, "cpu": cpu, "maxrss_kib": usage.ru_maxrss}


# ---------------------------------------------------------------- the per-unit reference
def _const(v):
    return max(v) - min(v) <= 1e-12


def ref_spearman(a, b):
    """SCORING.md §2 spearman of one unit: scipy ranks, numpy Pearson."""
    if a is None or b is None:
        return None
    if _const(a):
        return 0.0
    if _const(b):
        return None
    ra, rb = rankdata(a, method="average"), rankdata(b, method="average")
    da, db = ra - ra.mean(), rb - rb.mean()
    return float(da @ db / math.sqrt(float(da @ da) * float(db @ db)))


def ref_tv(a, b):
    return None if a is None or b is None else 0.5 * sum(abs(x - y) for x, y in zip(a, b))


def ref_jsd(a, b):
    if a is None or b is None:
        return None
    m = [(x + y) / 2 for x, y in zip(a, b)]
    kl = lambda p: sum(pi * math.log(pi / mi) for pi, mi in zip(p, m) if pi > 0)  # noqa: E731
    return 0.5 * kl(a) + 0.5 * kl(b)


def ref_baselines(h1, h2, h3, ledger):
    h1, h2, h3 = (np.array(h) for h in (h1, h2, h3))
    w = ledger["ewma_weights"]
    phi = ledger["arima110"]["phi"]
    alpha, beta = ledger["holt"]["alpha"], ledger["holt"]["beta"]
    level, trend = h1, h2 - h1
    for x in (h2, h3):
        new = alpha * x + (1 - alpha) * (level + trend)
        trend = beta * (new - level) + (1 - beta) * trend
        level = new
    X = np.column_stack([h1, h2])
    Y = np.column_stack([h2, h3])
    lam = ledger["var_ridge"]["ratio"] * np.trace(X @ X.T) / 8
    A = (Y @ X.T + lam * np.eye(8)) @ np.linalg.inv(X @ X.T + lam * np.eye(8))
    raw = {
        "recent": h3, "ewma": w[0] * h1 + w[1] * h2 + w[2] * h3, "linear_trend": (h1 + h2 + h3) / 3 + (h3 - h1),
        "arima110": h3 + phi * (h3 - h2), "holt": level + trend, "var_ridge": A @ h3,
    }
    out = {}
    for name, v in raw.items():
        v = [max(0.0, float(x)) for x in np.round(v, 12)]
        s = sum(v)
        out[name] = [x / s for x in v] if s > 0 else [1 / 8] * 8
    return out


POLICIES = ["canonical", "split", "single", "flip"]
BASELINE_NAMES = ["recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge"]
CONTRAST_PAIRS = (("A1", "A0"), ("A3", "A1"), ("A2", "A1"), ("A4", "A3"), ("A0", "ewma"), ("A1", "ewma"), ("A3", "ewma"))


def _metrics_of(cond: str) -> list[str]:
    return ["spearman", "tv", "jsd", "state_recent" if cond in ("A2", "A4") else "pred_recent", "tv_gain"]


def ref_counts(archive) -> dict:
    """(policy, field, window start) -> eight counts, the ledger read row by row."""
    og = archive.origins
    origins = list(og.origins)
    wm = og.window_months
    m0 = origins[0].year * 12 + origins[0].month - 1
    counts: dict = {}
    con = archive.connect()
    for fid, when, prim, sec, kind in con.execute("SELECT field_id, first_submitted, \"primary\", secondary, assignment_type FROM assignments").fetchall():
        if prim == "other":
            continue
        m = when.year * 12 + when.month - 1
        m -= (m - m0) % wm  # first month of the window (grid anchored at the first origin)
        key_w = date(m // 12, m % 12 + 1, 1)
        p = int(prim[1:])
        for policy in POLICIES:
            c = counts.setdefault((policy, fid, key_w), [0.0] * 8)
            if policy == "canonical":
                c[p] += 1
            elif policy == "split":
                if sec is None:
                    c[p] += 1
                else:
                    c[p] += 0.5
                    c[int(sec[1:])] += 0.5
            elif policy == "single":
                if kind == "single":
                    c[p] += 1
            else:
                c[int(sec[1:]) if sec is not None else p] += 1
    return counts


def ref_entries(archive, tracks: dict) -> tuple[list, dict]:
    """Entries (name, kind, condition, cutoff) of the models taking part in All-Origin and every
    unit's weights (None if invalid). A panel model (scored on its own cells, never on the
    leaderboard) and a partial one take no part: ``tracks`` is scores.json's."""
    preds, entries = {}, []
    for info in archive.models:
        if info.model_id not in tracks["all_origin"]["models"]:
            continue
        units = archive.predictions(info.model_id)
        for u in units:
            preds[(info.model_id, u.condition, u.field_id, u.origin)] = list(u.weights) if u.valid else None
        for c in sorted({u.condition for u in units}):
            entries.append((info.model_id, "model", c, info.effective_cutoff))
    entries += [(b, "baseline", "BASE", None) for b in BASELINE_NAMES]
    return entries, preds


def ref_units(archive, counts: dict, entries: list, preds: dict, origins: list) -> dict:
    """(policy, entry, kind, cond, field, origin) -> {metric: value}, one unit at a time."""
    from rapgen.archive import add_months

    wm = archive.origins.window_months

    def comp(policy, fid, start):
        c = counts.get((policy, fid, start))
        if c is None or sum(c) == 0:
            return None
        total = sum(c)
        return [x / total for x in c]

    unit = {}
    for policy in POLICIES:
        for f in archive.fields:
            for o in origins:
                y = comp(policy, f.field_id, o)
                x = comp(policy, f.field_id, add_months(o, -wm))
                hs = [comp(policy, f.field_id, add_months(o, -wm * k)) for k in (3, 2, 1)]
                base = ref_baselines(*hs, archive.ledger) if all(h is not None for h in hs) else None
                e = base["ewma"] if base else None
                for name, kind, cond, _ in entries:
                    p = preds[(name, cond, f.field_id, o)] if kind == "model" else (base[name] if base else None)
                    vals = {}
                    if y is not None:
                        vals["spearman"] = ref_spearman(p, y)
                        vals["tv"] = ref_tv(p, y)
                        vals["jsd"] = ref_jsd(p, y)
                        vals["state_recent" if cond in ("A2", "A4") else "pred_recent"] = ref_spearman(p, x)
                        vals["tv_gain"] = None if (e is None or p is None) else ref_tv(e, y) - ref_tv(p, y)
                    unit[(policy, name, kind, cond, f.field_id, o)] = vals
    return unit


def ref_statistics(archive, unit: dict, entries: list, tracks: dict) -> dict:
    """Statistic key -> {field_id: field score} for every leaderboard row and contrast; each
    track's origins and models as scores.json lists them (a release history scores the
    latest release's resolved origins; Forecast-Strict takes the models whose effective
    cut-off is before its origin)."""
    fields = archive.fields
    origins = {t: [date.fromisoformat(o) for o in tracks[t]["origins"]] for t in ("all_origin", "forecast_strict")}

    def field_score(policy, name, kind, cond, fid, track_origins, metric, other=None):
        vals = []
        for o in track_origins:
            a = unit[(policy, name, kind, cond, fid, o)].get(metric)
            b = None if other is None else unit[(policy,) + other + (fid, o)].get(metric)
            if a is not None and (other is None or b is not None):
                # SCORING.md §4: positive favours the left side (the distances are right - left)
                vals.append(a if other is None else (b - a if metric in ("tv", "jsd") else a - b))
        return sum(vals) / len(vals) if vals else None

    stats = {}
    for track, t_origins in origins.items():
        for name, kind, cond, cutoff in entries:
            if kind == "model" and name not in tracks[track]["models"]:
                continue
            for policy in POLICIES:
                for metric in _metrics_of(cond):
                    stats[("lb", track, policy, name, kind, cond, metric)] = {
                        f.field_id: field_score(policy, name, kind, cond, f.field_id, t_origins, metric) for f in fields}
                if kind != "model":
                    continue
                for left, right in CONTRAST_PAIRS:
                    if cond != left:
                        continue
                    if right == "ewma":
                        other = ("ewma", "baseline", "BASE")
                    elif any(en == name and ec == right for en, _, ec, _ in entries):
                        other = (name, "model", right)
                    else:
                        continue
                    shared = [m for m in _metrics_of(left) if m in _metrics_of(other[2]) and m != "state_recent"]
                    for metric in shared:
                        stats[("ct", track, policy, name, f"{left}-{right}", metric)] = {
                            f.field_id: field_score(policy, name, kind, cond, f.field_id, t_origins, metric, other) for f in fields}
    return stats


def ref_draws(units: list, R: int, seed: int) -> np.ndarray:
    """§5 as written: a fresh default_rng(seed), draws once, the count matrix c[r, k]."""
    rng = np.random.default_rng(seed)
    d = rng.integers(0, len(units), size=(R, len(units)))
    C = np.zeros((R, len(units)))
    for k in range(len(units)):
        C[:, k] = (d == k).sum(axis=1)
    return C


def ref_interval(C: np.ndarray, units: list, defined: list, unit_key, q: tuple[float, float]) -> list:
    """One statistic at a time: stat[r] = sum_k c[r,k] S_k / sum_k c[r,k] N_k, then its percentiles."""
    pos = {u: i for i, u in enumerate(units)}
    S, N = np.zeros(len(units)), np.zeros(len(units))
    for f, v in defined:
        S[pos[unit_key(f)]] += v
        N[pos[unit_key(f)]] += 1
    num, den = C @ S, C @ N
    ok = den > 0
    if not ok.any():
        return [None, None]
    lo, hi = np.percentile(num[ok] / den[ok], list(q))
    return [float(lo), float(hi)]


def reference_scores(root: Path, resamples: int | None, tracks: dict) -> dict:
    """Every leaderboard and contrast estimate/interval, one unit at a time (``tracks``:
    the participation scores.json states; every number is recomputed here)."""
    from rapgen.archive import Archive

    archive = Archive(root)
    boot = archive.ledger["bootstrap"]
    R, seed, level = resamples or boot["resamples"], boot["seed"], boot["level"]
    entries, preds = ref_entries(archive, tracks)
    units = ref_units(archive, ref_counts(archive), entries, preds, [date.fromisoformat(o) for o in tracks["all_origin"]["origins"]])
    stats = ref_statistics(archive, units, entries, tracks)
    q = (100 * (1 - level) / 2, 100 * (1 + level) / 2)
    out = {}
    for split in sorted({f.split for f in archive.fields}):
        split_fields = [f for f in archive.fields if f.split == split]
        blocks = sorted({f.block_id for f in split_fields} | {b.block_id for b in archive.blocks if b.split == split}, key=lambda b: b.encode())
        field_units = sorted((f.field_id for f in split_fields), key=lambda x: x.encode())
        draws = {"block": (blocks, ref_draws(blocks, R, seed), lambda f: f.block_id),
                 "field": (field_units, ref_draws(field_units, R, seed), lambda f: f.field_id)}
        for key, scores in stats.items():
            defined = [(f, scores[f.field_id]) for f in split_fields if scores[f.field_id] is not None]
            record = {"estimate": sum(v for _, v in defined) / len(defined) if defined else None, "n_fields": len(defined)}
            for kind_name, (units, C, unit_key) in draws.items():
                record[kind_name] = ref_interval(C, units, defined, unit_key, q)
            out["|".join(map(str, (split,) + key))] = record
    return out


# ---------------------------------------------------------------- compare
def compare(out_dir: Path, reference: dict) -> tuple[int, float]:
    def num(s):
        return None if s == "" else float(s)

    worst = 0.0
    checked = 0
    ours = {}
    with open(out_dir / "leaderboard.csv") as h:
        for r in csv.DictReader(h):
            key = "|".join((r["split"], "lb", r["track"], r["policy"], r["entry"], r["kind"], r["condition"], r["metric"]))
            ours[key] = (num(r["estimate"]), num(r["ci_low"]), num(r["ci_high"]), int(r["n_fields"]))
    with open(out_dir / "contrasts.csv") as h:
        for r in csv.DictReader(h):
            key = "|".join((r["split"], "ct", r["track"], r["policy"], r["entry"], r["contrast"], r["metric"]))
            ours[key] = (num(r["estimate"]), num(r["ci_low"]), num(r["ci_high"]), int(r["n_fields"]))
    clustered = {}
    with open(out_dir / "field_clustered.csv") as h:
        for r in csv.DictReader(h):
            if r["table"] == "leaderboard":
                kind = "baseline" if r["condition"] == "BASE" else "model"
                key = "|".join((r["split"], "lb", r["track"], r["policy"], r["entry"], kind, r["condition"], r["metric"]))
            else:
                key = "|".join((r["split"], "ct", r["track"], r["policy"], r["entry"], r["condition"], r["metric"]))
            clustered[key] = (num(r["ci_low"]), num(r["ci_high"]))
    missing = (set(reference) ^ set(ours)) | (set(reference) ^ set(clustered))
    if missing:
        raise SystemExit(f"row sets differ: {sorted(missing)[:5]}")
    for key, rec in reference.items():
        mine = ours[key]
        mine = mine + clustered[key]
        theirs = (rec["estimate"], rec["block"][0], rec["block"][1], rec["n_fields"], rec["field"][0], rec["field"][1])
        for a, b in zip(mine, theirs):
            if (a is None) != (b is None):
                raise SystemExit(f"{key}: defined in one implementation only ({mine} vs {theirs})")
            if a is not None:
                worst = max(worst, abs(a - b))
        checked += 1
    return checked, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, help="repository root of an existing archive")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default: the ledger's)")
    parser.add_argument("--phase", choices=["ours", "reference"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--scores", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--load-average", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-reference", action="store_true", help="time the scorer only")
    parser.add_argument("--diagnostics", action="store_true", help="also time the §6 diagnostics (separately)")
    parser.add_argument("--repeat", type=int, default=3, help="scorer runs (each its own process); the median is reported (default 3)")
    args = parser.parse_args()
    if args.phase == "ours":
        print(json.dumps(phase_ours(args.archive, args.out, args.resamples, args.diagnostics)))
        return
    if args.phase == "reference":
        print(json.dumps(phase_reference(args.archive, args.out, args.resamples, args.scores)))
        return

    with tempfile.TemporaryDirectory(prefix="rapgen-bench-score-") as tmp:
        work = Path(tmp)
        root = args.archive or obtain_archive(work)
        res = ["--resamples", str(args.resamples)] if args.resamples else []
        res += ["--diagnostics"] if args.diagnostics else []

        def run(phase: str, out: Path) -> dict:
            proc = subprocess.run([sys.executable, __file__, "--phase", phase, "--archive", str(root), "--out", str(out),
                                   "--scores", str(work / "scores"), *res],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"{phase} failed:\n{proc.stderr}")
            return json.loads(proc.stdout.strip().splitlines()[-1])

        import os

        print(f"load average before: {os.getloadavg()[0]:.2f} (2-core machine; other work inflates wall times)")
        print(f"archive    : {root}")
        # The scorer is timed --repeat times (diagnostics only on the first run); the
        # median run is reported, because other jobs on the shared machine come and go.
        runs = [run("ours", work / "scores")]
        res = [r for r in res if r != "--diagnostics"]
        runs += [run("ours", work / "scores") for _ in range(max(0, args.repeat - 1))]
        ours = dict(runs[0])
        for key in ("wall", "cpu", "maxrss_kib"):
            ours[key] = sorted(r[key] for r in runs)[len(runs) // 2]
        n_units = sum(1 for _ in open(work / "scores" / "leaderboard.csv")) - 1
        walls = ", ".join(f"{r['wall']:.2f}" for r in runs)
        print(f"scorer     : {ours['wall']:8.2f} s wall, {ours['cpu']:8.2f} s CPU, peak {ours['maxrss_kib'] / 2**20:.2f} GiB  "
              f"(median of {len(runs)} runs: {walls} s; {n_units} leaderboard rows)")
        if "diagnostics_wall" in ours:
            print(f"diagnostics: {ours['diagnostics_wall']:8.2f} s wall, {ours['diagnostics_cpu']:8.2f} s CPU, "
                  f"peak {ours['diagnostics_maxrss_kib'] / 2**20:.2f} GiB  (all of SCORING.md §6, timed separately)")
        if args.skip_reference:
            return
        ref = run("reference", work / "reference.json")
        print(f"reference  : {ref['wall']:8.2f} s wall, {ref['cpu']:8.2f} s CPU, peak {ref['maxrss_kib'] / 2**20:.2f} GiB")
        checked, worst = compare(work / "scores", json.loads((work / "reference.json").read_text()))
        print(f"speed-up   : {ref['wall'] / ours['wall']:.1f}x wall, {ref['cpu'] / ours['cpu']:.1f}x CPU")
        print(f"cross-check: {checked} leaderboard+contrast rows, max |difference| {worst:.2e} ({'OK' if worst <= 1e-9 else 'FAIL'})")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if worst > 1e-9:
            raise SystemExit(1)

if __name__ == "__main__":
    main()
