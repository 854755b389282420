"""Time every SCORING.md §6 diagnostic at full scale, against brute-force references.

Full-scale-shaped inputs are generated in code: 278 fields (67 dev, 211 test,
in ~110 blocks), 5 origins (1,390 episodes), 7 models with 3-5 conditions
each plus the 6 mechanical baselines (~40k units), 4 policies, 10,000
bootstrap resamples, the benchmark's ledger. Model weights are integer
percentages, so ties are as common as in real model output.

Each diagnostic is timed on the full input, then a brute-force reference
(plain Python loops over permutations / splits / draws, scipy ranks) is timed
on a small subset and extrapolated per unit; the ratio is reference time per
unit over vectorised time per unit. Results of the two are compared.

    python bench/diagnostics.py            # full scale
    python bench/diagnostics.py --quick    # a tenth of the fields
"""

from __future__ import annotations

import argparse
import itertools
import time
from datetime import date

import numpy as np
from scipy.stats import rankdata

from rapgen.scores.diagnostics.episodes import change_rich_episodes, revision_alignment, split_half_reliability
from rapgen.scores.diagnostics.residual import direct_alignment, direct_permutations, partial_residual
from rapgen.scores.diagnostics import DiagnosticArrays, compute_diagnostics, compute_unit_diagnostics

LEDGER = {
    "bootstrap": {"resamples": 10000, "seed": 0, "level": 0.95},
    "ewma_weights": [0.25, 0.25, 0.5],
    "residual": {"direct_permutations": 2048, "seed": 0},
    "change_rich": {"p_max": 0.05, "repeatability_min": 0.5, "null_draws": 2000, "seed": 0},
    "reliability": {"splits": 200, "seed": 0},
}
ORIGINS = [date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1), date(2025, 7, 1), date(2026, 1, 1)]
METRICS = ("spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain")
POLICIES = ("canonical", "split", "single", "flip")
BASELINES = ("recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge")


def _finish(v: np.ndarray) -> np.ndarray:
    v = np.clip(np.round(v, 12), 0, None)
    s = v.sum(axis=-1, keepdims=True)
    return np.where(s > 0, v / np.where(s > 0, s, 1), 1 / 8)


def make_inputs(n_dev: int = 67, n_test: int = 211, seed: int = 1) -> DiagnosticArrays:
    rng = np.random.default_rng(seed)
    F, O, W = n_dev + n_test, len(ORIGINS), len(ORIGINS) + 3
    field_ids = [f"field-{i:03d}" for i in range(F)]
    split = np.array(["dev"] * n_dev + ["test"] * n_test, dtype=object)
    block = np.array([f"{s}-b{i // 3 if s == 'test' else i // 2:03d}" for i, s in enumerate(split)], dtype=object)
    eligible = rng.random(F) < 0.8
    # Window counts: a drifting composition per field, lognormal volume (median ~150 papers).
    base = rng.dirichlet(np.full(8, 0.8), size=F)
    drift = rng.dirichlet(np.full(8, 0.8), size=F)
    t = np.linspace(0, 1, W)[None, :, None]
    comp = (1 - 0.6 * t) * base[:, None] + 0.6 * t * drift[:, None]
    volume = np.exp(rng.normal(np.log(150), 0.8, size=(F, 1, 1)))
    counts = rng.poisson(comp * volume).astype(float)  # (F, W, 8)
    # Window w+3 is origin w's target; w, w+1, w+2 its history.
    hist = np.stack([counts[:, o:o + 3] for o in range(O)], axis=1)  # (F, O, 3, 8)
    target = counts[:, 3:3 + O]
    recent = hist[:, :, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        hcomp = hist / hist.sum(-1, keepdims=True)
        y = np.where(target.sum(-1, keepdims=True) > 0, target / target.sum(-1, keepdims=True), np.nan)
    h1, h2, h3 = hcomp[:, :, 0], hcomp[:, :, 1], hcomp[:, :, 2]
    base_preds = {
        "recent": _finish(h3),
        "ewma": _finish(0.25 * h1 + 0.25 * h2 + 0.5 * h3),
        "linear_trend": _finish((h1 + h2 + h3) / 3 + h3 - h1),
        "arima110": _finish(h3 - 0.4 * (h3 - h2)),
        "holt": _finish(h3 + 0.5 * (h3 - h2)),
        "var_ridge": _finish(0.9 * h3 + 0.1 * h2),
    }
    ewma = base_preds["ewma"]
    entries, preds = [], []
    conditions = ("A0", "A1", "A2", "A3", "A4")
    for m in range(7):
        n_cond = 3 + m % 3
        for cond in conditions[:n_cond]:
            noise = rng.dirichlet(np.full(8, 1.0), size=(F, O))
            mix = 0.5 * ewma + 0.3 * y + 0.2 * noise
            w = np.round(np.nan_to_num(mix, nan=1 / 8) * 20) * 5  # integer percentages in steps of 5
            w[w.sum(-1) == 0] = 1
            p = w / w.sum(-1, keepdims=True)
            invalid = rng.random((F, O)) < 0.02
            p[invalid] = np.nan
            entries.append((f"model-{m}", "model", cond))
            preds.append(p)
    for name in BASELINES:
        entries.append((name, "baseline", "BASE"))
        preds.append(base_preds[name])
    predictions = np.stack(preds)  # (E, F, O, 8)
    E = len(entries)
    values = rng.normal(0.3, 0.3, size=(E, len(POLICIES), len(METRICS), F, O))
    values[rng.random(values.shape) < 0.03] = np.nan
    return DiagnosticArrays(
        field_ids=field_ids, field_split=split, field_block=block, eligible_pre2024=eligible, origins=ORIGINS,
        entries=entries, target_counts=target, recent_counts=recent, y=y, ewma=ewma, predictions=predictions,
        policies=POLICIES, metric_names=METRICS, values=values, draws=None,
        resamples=LEDGER["bootstrap"]["resamples"], seed=0, level=0.95,
    )


# ----------------------------------------------------------------------------- brute-force references


def _sp(a, b):
    if np.ptp(a) <= 1e-12:
        return 0.0
    if np.ptp(b) <= 1e-12:
        return np.nan
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def brute_direct(p, e, y, perms):
    dp, dy = p - e, y - e
    if np.abs(dp).max() <= 1e-12 or np.abs(dy).max() <= 1e-12:
        return np.nan, np.nan
    cos = lambda a, b: a @ b / np.sqrt(a @ a * b @ b)  # noqa: E731
    cs, ss = [], []
    for m in perms:
        a = p[m] - e
        if np.abs(a).max() <= 1e-12:
            continue
        cs.append(cos(a, dy))
        ss.append(_sp(np.round(a, 12), np.round(dy, 12)))
    return cos(dp, dy) - np.median(cs), _sp(np.round(dp, 12), np.round(dy, 12)) - np.median(ss)


def brute_partial(p, e, y):
    X = np.column_stack([np.ones(8), rankdata(e)])
    R = np.eye(8) - X @ np.linalg.pinv(X)
    rp, ry = R @ rankdata(p), R @ rankdata(y)
    if rp @ rp <= 1e-12 or ry @ ry <= 1e-12:
        return np.nan
    qp = rankdata(p)
    vals = []
    for m in itertools.permutations(range(8)):
        r = R @ qp[list(m)]
        if r @ r > 1e-12:
            vals.append(r @ ry / np.sqrt(r @ r * (ry @ ry)))
    return rp @ ry / np.sqrt(rp @ rp * (ry @ ry)) - np.median(vals)


def brute_reliability(counts, splits, seed):
    rng = np.random.default_rng(seed)
    out = []
    for c in counts:
        c = c.astype(int)
        n = int(c.sum())
        if n < 2:
            out.append(np.nan)
            continue
        labels = np.repeat(np.arange(8), c)
        keys = rng.random((splits, n))
        rs = []
        for s in range(splits):
            order = np.argsort(keys[s], kind="stable")
            first = np.bincount(labels[order[: n // 2]], minlength=8)
            v = _sp(first, c - first)
            if not np.isnan(v):
                rs.append(v)
        r = np.mean(rs)
        out.append(2 * r / (1 + r))
    return np.array(out)


CPU: dict[str, float] = {}


def _timed(fn, *args, **kw):
    """Wall-clock seconds; the process CPU seconds go to CPU[fn name] (they show
    what the run costs when other work shares the machine)."""
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    CPU[getattr(fn, "__name__", "?")] = time.process_time() - c
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a tenth of the fields")
    args = ap.parse_args()
    a = make_inputs(7, 21) if args.quick else make_inputs()
    E, F, O = a.predictions.shape[:3]
    U = E * F * O
    print(f"inputs: {F} fields x {O} origins = {F * O} episodes; {E} entry-conditions; {U} units")
    flat_e = np.broadcast_to(a.ewma[None], a.predictions.shape).reshape(-1, 8)
    flat_y = np.broadcast_to(a.y[None], a.predictions.shape).reshape(-1, 8)
    flat_p = a.predictions.reshape(-1, 8)
    perms = direct_permutations(2048, 0)
    rows = []

    rel, t_rel = _timed(split_half_reliability, a.target_counts.reshape(-1, 8), 200, 0)
    sub = 20
    ref, t_ref = _timed(brute_reliability, a.target_counts.reshape(-1, 8)[:sub], 200, 0)
    err = np.nanmax(np.abs(ref - rel.reliability[:sub]))
    rows.append(("reliability (200 splits)", t_rel, F * O, t_ref, sub, err, CPU["split_half_reliability"]))

    cr, t_cr = _timed(change_rich_episodes, a.recent_counts.reshape(-1, 8), a.target_counts.reshape(-1, 8),
                      p_max=0.05, repeatability_min=0.5, null_draws=2000, seed=0)
    rows.append(("change-rich (2000 draws)", t_cr, F * O, None, None, None, CPU["change_rich_episodes"]))
    print(f"  change-rich episodes: {int(cr.change_rich.sum())} of {F * O}")

    d, t_d = _timed(direct_alignment, flat_p, flat_e, flat_y, perms)
    c_d = CPU["direct_alignment"]
    sub = 12
    pick = np.linspace(0, U - 1, sub).astype(int)
    ref, t_ref = _timed(lambda: np.array([brute_direct(flat_p[u], flat_e[u], flat_y[u], perms) for u in pick]))
    err = np.nanmax(np.abs(ref - np.column_stack([d.cos_corrected[pick], d.spearman_corrected[pick]])))
    rows.append(("direct alignment (2048 perms)", t_d, U, t_ref, sub, err, c_d))

    pr, t_p = _timed(partial_residual, flat_p, flat_e, flat_y)
    c_p = CPU["partial_residual"]
    sub = 2
    pick = np.array([i for i in range(U) if not np.isnan(pr.c[i])])[:: max(1, U // 7)][:sub]
    ref, t_ref = _timed(lambda: np.array([brute_partial(flat_p[u], flat_e[u], flat_y[u]) for u in pick]))
    err = np.nanmax(np.abs(ref - pr.corrected[pick]))
    rows.append(("partial residual (40,320 perms)", t_p, U, t_ref, sub, err, c_p))

    month = np.array([d_.year * 12 + d_.month - 1 for d_ in a.origins])
    series = np.repeat(np.arange(E * F), O)

    def revisions():
        return [revision_alignment(flat_p, flat_y, series, np.tile(month, E * F), h) for h in (6, 12, 18)]

    _, t_rev = _timed(revisions)
    rows.append(("revision alignment (h = 6, 12, 18)", t_rev, U, None, None, None, CPU["revisions"]))

    unit_cols = {"direct_cos": d.cos, "direct_cos_null": d.cos_null, "direct_cos_corrected": d.cos_corrected,
                 "direct_spearman": d.spearman, "direct_spearman_null": d.spearman_null,
                 "direct_spearman_corrected": d.spearman_corrected, "partial_residual": pr.c,
                 "partial_residual_null": pr.null, "partial_residual_corrected": pr.corrected}
    unit_cols = {k: v.reshape(E, F, O) for k, v in unit_cols.items()}
    out, t_all = _timed(compute_diagnostics, a, LEDGER, unit_diagnostics=unit_cols)
    c_all = CPU["compute_diagnostics"]
    t_units = _timed(compute_unit_diagnostics, a, LEDGER)[1]
    c_units = CPU["compute_unit_diagnostics"]
    print(f"  diagnostics.json: {sum(len(v) for k, v in out.items() if isinstance(v, dict))} top-level keys in sections")

    print()
    print(f"{'diagnostic':36s} {'wall s':>7s} {'cpu s':>6s} {'per unit':>9s} {'brute/unit':>10s} {'ratio':>7s} {'max|diff|':>9s}")
    for name, t, n, tr, nr, err, cpu in rows:
        per = t / n
        tail = "" if tr is None else f"{tr / nr * 1e3:8.1f}ms {tr / nr / per:6.0f}x {err:9.1e}"
        print(f"{name:36s} {t:7.2f} {cpu:6.2f} {per * 1e6:7.1f}us {tail}")
    print(f"{'unit diagnostics (direct + partial)':36s} {t_units:7.2f} {c_units:6.2f}")
    print(f"{'sections + bootstrap (10k resamples)':36s} {t_all:7.2f} {c_all:6.2f}  reliability, change-rich, revision, sensitivity")
    print(f"{'TOTAL = the two lines above':36s} {t_units + t_all:7.2f} {c_units + c_all:6.2f}  goal <= 60 s")


if __name__ == "__main__":
    main()
