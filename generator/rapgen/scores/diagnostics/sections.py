"""SCORING.md §6 diagnostics: reliability, change-rich episodes, EWMA-residual
alignment, revision alignment, policy and sampling-frame sensitivity.

Two entry points:

* :func:`compute_unit_diagnostics` — per-unit alignment values, (E, F, O)
  arrays meant as extra columns of ``units.parquet``;
* :func:`compute_diagnostics` — the JSON-ready ``diagnostics.json`` body
  (deterministic: same archive, same bytes).

Both take either the scoring stage's ``DiagnosticsInputs`` (read by attribute
only) or a :class:`DiagnosticArrays` of plain numpy arrays. Everything is
computed under the ``canonical`` policy on the ``all_origin`` track, except the
two sensitivity sections, which cover every policy. Intervals use the split's
block bootstrap count matrix (SCORING.md §5, common random numbers); the
estimate is the plain field-macro mean. See docs/diagnostics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from rapgen.archive import STATE_CONDITIONS
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts, unit_sums
from rapgen.scores.diagnostics.episodes import (
    ChangeRich,
    Reliability,
    change_rich_episodes,
    revision_alignment,
    split_half_reliability,
)
from rapgen.scores.diagnostics.memo import NOWHERE, DrawStore
from rapgen.scores.diagnostics.policy import contrast_signs, max_change, orderings
from rapgen.scores.diagnostics.residual import direct_alignment, direct_permutations, partial_residual
from rapgen.scores.diagnostics.residual_views import views as residual_views
from rapgen.scores.kernels import mean_over, single_threaded_blas
from rapgen.scores.kernels import missing as missing_rows
from rapgen.scores.metrics import JSD, REGISTRY, SPEARMAN, TV_GAIN, applies
from rapgen.scores.schema import ALL_ORIGIN_TRACK, CANONICAL_POLICY, UNIT_DIAGNOSTIC_COLUMNS

DIAGNOSTICS_VERSION = 1
REVISION_HORIZONS: tuple[int, ...] = (6, 12, 18)  # months (SCORING.md §6)
# Per-unit columns of compute_unit_diagnostics, in output order.
UNIT_COLUMNS: tuple[str, ...] = UNIT_DIAGNOSTIC_COLUMNS
ALIGNMENT_STATISTICS: tuple[tuple[str, str, str, str], ...] = (
    # (statistic, corrected column, raw column, null column)
    ("direct_cosine", "direct_cos_corrected", "direct_cos", "direct_cos_null"),
    ("direct_spearman", "direct_spearman_corrected", "direct_spearman", "direct_spearman_null"),
    ("partial_residual", "partial_residual_corrected", "partial_residual", "partial_residual_null"),
)


@dataclass(frozen=True)
class DiagnosticArrays:
    """Everything the diagnostics read, as plain arrays.

    Axes: entry E (model conditions and baselines), policy P, metric M, field F,
    origin O, slot 8. Rows of NaN mark a missing composition or an invalid unit.
    """

    field_ids: Sequence[str]  # (F,)
    field_split: np.ndarray  # (F,) "dev" / "test"
    field_block: np.ndarray  # (F,) block id
    eligible_pre2024: np.ndarray  # (F,) bool
    origins: Sequence[date]  # (O,) ascending
    entries: Sequence[tuple[str, str, str]]  # (E,) (entry, kind, condition); kind "model"/"baseline"
    target_counts: np.ndarray  # (F, O, 8) canonical counts of the target window
    recent_counts: np.ndarray  # (F, O, 8) canonical counts of the recent window
    y: np.ndarray  # (F, O, 8) canonical target composition
    ewma: np.ndarray  # (F, O, 8) canonical EWMA composition
    predictions: np.ndarray  # (E, F, O, 8) canonical unit predictions
    policies: Sequence[str]  # (P,)
    metric_names: Sequence[str]  # (M,)
    values: np.ndarray  # (E, P, M, F, O) §2 unit metric values
    draws: Mapping[str, tuple[Sequence[str], np.ndarray]] | None  # split -> (sorted block ids, C (R, K))
    resamples: int
    seed: int
    level: float


def arrays_from_score_inputs(inputs: Any) -> DiagnosticArrays:
    """Adapt the scoring stage's ``DiagnosticsInputs`` (attribute access only)."""
    c = list(inputs.policies).index(CANONICAL_POLICY)
    field_map = {f.field_id: f for f in inputs.archive.fields}
    from rapgen.scores.metrics import METRIC_NAMES

    draws = {split: (tuple(ids), C) for (split, kind), (ids, C) in inputs.draws.items() if kind == "block"}
    return DiagnosticArrays(
        field_ids=list(inputs.field_ids),
        field_split=np.asarray(inputs.field_split, dtype=object),
        field_block=np.asarray(inputs.field_block, dtype=object),
        eligible_pre2024=np.array([bool(field_map[f].eligible_pre2024) for f in inputs.field_ids], dtype=bool),
        origins=tuple(inputs.origins),
        entries=[(e.entry, e.kind, e.condition) for e in inputs.entries],
        target_counts=np.asarray(inputs.target_counts[c]),
        recent_counts=np.asarray(inputs.recent_counts[c]),
        y=np.asarray(inputs.y[c]),
        ewma=np.asarray(inputs.ewma[c]),
        predictions=np.asarray(inputs.predictions[:, c]),
        policies=tuple(inputs.policies),
        metric_names=tuple(METRIC_NAMES),
        values=np.asarray(inputs.values),
        draws=draws,
        resamples=int(inputs.resamples),
        seed=int(inputs.seed),
        level=float(inputs.level),
    )


def _as_arrays(inputs: Any) -> DiagnosticArrays:
    return inputs if isinstance(inputs, DiagnosticArrays) else arrays_from_score_inputs(inputs)


def _ledger(inputs: Any, ledger: Mapping | None) -> Mapping:
    if ledger is not None:
        return ledger
    archive = getattr(inputs, "archive", None)
    if archive is None:
        raise ValueError("compute_diagnostics needs the parameter ledger when given DiagnosticArrays")
    return archive.ledger


# ----------------------------------------------------------------------------- per unit


def compute_unit_diagnostics(inputs: Any, ledger: Mapping | None = None) -> dict[str, np.ndarray]:
    """Per-unit direct and partial-residual alignment (canonical policy), each an
    (E, F, O) float array (NaN where undefined), keyed by :data:`UNIT_COLUMNS`."""
    a = _as_arrays(inputs)
    led = _ledger(inputs, ledger)
    E, F, O = a.predictions.shape[:3]
    p = a.predictions.reshape(-1, 8)
    e = np.broadcast_to(a.ewma[None], (E, F, O, 8)).reshape(-1, 8)
    y = np.broadcast_to(a.y[None], (E, F, O, 8)).reshape(-1, 8)
    residual = led["residual"]
    perms = direct_permutations(int(residual["direct_permutations"]), int(residual["seed"]))
    d = direct_alignment(p, e, y, perms)
    pr = partial_residual(p, e, y)
    cols = {
        "direct_cos": d.cos, "direct_cos_null": d.cos_null, "direct_cos_corrected": d.cos_corrected,
        "direct_spearman": d.spearman, "direct_spearman_null": d.spearman_null,
        "direct_spearman_corrected": d.spearman_corrected,
        "partial_residual": pr.c, "partial_residual_null": pr.null, "partial_residual_corrected": pr.corrected,
    }
    return {name: cols[name].reshape(E, F, O) for name in UNIT_COLUMNS}


# ----------------------------------------------------------------------------- aggregation


class SplitAggregator:
    """Field-macro estimates and block-bootstrap intervals for one split.

    ``summarise(Z)`` takes field scores (n_stats, F) over *all* fields (NaN where
    a field has no score) and uses only the split's fields.
    """

    def __init__(self, a: DiagnosticArrays, split: str):
        self.split = split
        self.cols = np.flatnonzero(np.asarray(a.field_split) == split)
        if a.draws is not None and split in a.draws:
            unit_ids, C = a.draws[split]
            unit_ids = tuple(unit_ids)
        else:
            unit_ids = tuple(sorted({str(b) for b in np.asarray(a.field_block)[self.cols]}, key=lambda b: b.encode("utf-8")))
            C = draw_counts(len(unit_ids), a.resamples, a.seed)
        position = {b: i for i, b in enumerate(unit_ids)}
        self.unit_of = np.array([position[str(a.field_block[c])] for c in self.cols], dtype=np.int64)
        self.n_units = len(unit_ids)
        self.C = np.asarray(C, dtype=np.float64)
        self.level = a.level

    def summarise(self, Z: np.ndarray) -> list[dict]:
        """Estimate, interval and field count of every row of Z (the shared §5 bootstrap)."""
        Z = np.asarray(Z, dtype=np.float64).reshape(-1, np.asarray(Z).shape[-1])[:, self.cols]
        est, n = mean_over(Z, axis=1)
        S, N = unit_sums(Z, self.unit_of, self.n_units)
        with single_threaded_blas():
            boot = bootstrap_intervals(self.C, S, N, self.level)
        return [
            {"estimate": _num(est[i]), "ci_low": _num(boot.low[i]), "ci_high": _num(boot.high[i]), "n_fields": int(n[i])}
            for i in range(Z.shape[0])
        ]


def _num(v: Any) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v


def _splits(a: DiagnosticArrays) -> list[str]:
    return sorted({str(s) for s in np.asarray(a.field_split)})


def _episode_order(a: DiagnosticArrays) -> np.ndarray:
    """Flat (F*O) episode indices in (field_id byte order, origin) order: the RNG order."""
    F, O = len(a.field_ids), len(a.origins)
    forder = sorted(range(F), key=lambda i: a.field_ids[i].encode("utf-8"))
    oorder = sorted(range(O), key=lambda j: a.origins[j])
    return np.array([f * O + o for f in forder for o in oorder], dtype=np.int64)


def _applicable(condition: str, metric: str) -> bool:
    return applies(REGISTRY[metric], condition in STATE_CONDITIONS)


# ----------------------------------------------------------------------------- sections


def _reliability_section(a, led, aggs, store: DrawStore = NOWHERE) -> dict:
    F, O = len(a.field_ids), len(a.origins)
    order = _episode_order(a)
    par = led["reliability"]
    rel = store.get("split_half_reliability", split_half_reliability, (a.target_counts.reshape(-1, 8)[order],),
                    {"splits": int(par["splits"]), "seed": int(par["seed"])}, Reliability)
    flat = np.full(F * O, np.nan)
    flat[order] = rel.reliability
    field_scores, _ = mean_over(flat.reshape(F, O), axis=1)
    splits = {}
    for split, agg in aggs.items():
        s = agg.summarise(field_scores[None])[0]
        cols = agg.cols
        s["ceiling"] = _sqrt_or_none(s["estimate"])
        s["ceiling_ci_low"] = _sqrt_or_none(s["ci_low"])
        s["ceiling_ci_high"] = _sqrt_or_none(s["ci_high"])
        s["n_episodes"] = int(cols.size * O)
        s["n_defined"] = int((~np.isnan(flat.reshape(F, O)[cols])).sum())
        splits[split] = s
    episodes = []
    for k, ep in enumerate(order):
        f, o = divmod(int(ep), O)
        episodes.append({
            "field_id": a.field_ids[f], "origin": a.origins[o].isoformat(), "split": str(a.field_split[f]),
            "n_papers": int(rel.n_papers[k]), "r_bar": _num(rel.r_bar[k]),
            "n_splits_defined": int(rel.n_defined[k]), "reliability": _num(rel.reliability[k]),
        })
    return {"splits": splits, "episodes": episodes}


def _sqrt_or_none(v: float | None) -> float | None:
    return None if v is None or v < 0 else float(np.sqrt(v))


def change_rich_draws(inputs: Any, ledger: Mapping | None = None, store: DrawStore = NOWHERE) -> ChangeRich:
    """The change-rich test of every episode, in the order of its random numbers
    (:func:`_episode_order`): the one part of the section that draws, which reads the
    counts alone (so it can run while the scores are bootstrapped). ``store``: where
    results are kept between runs (:class:`~rapgen.scores.diagnostics.memo.DrawStore`)."""
    a = _as_arrays(inputs)
    par = _ledger(inputs, ledger)["change_rich"]
    order = _episode_order(a)
    params = {"p_max": float(par["p_max"]), "repeatability_min": float(par["repeatability_min"]),
              "null_draws": int(par["null_draws"]), "seed": int(par["seed"])}
    arrays = (a.recent_counts.reshape(-1, 8)[order], a.target_counts.reshape(-1, 8)[order])
    return store.get("change_rich_episodes", change_rich_episodes, arrays, params, ChangeRich)


def _change_rich_section(a, led, aggs, drawn: Callable[[], ChangeRich] | None = None,
                         store: DrawStore = NOWHERE) -> tuple[dict, np.ndarray]:
    F, O = len(a.field_ids), len(a.origins)
    order = _episode_order(a)
    cr = drawn() if drawn is not None else change_rich_draws(a, led, store)
    rich = np.zeros(F * O, dtype=bool)
    rich[order] = cr.change_rich
    rich = rich.reshape(F, O)
    episodes = []
    for k, ep in enumerate(order):
        f, o = divmod(int(ep), O)
        episodes.append({
            "field_id": a.field_ids[f], "origin": a.origins[o].isoformat(), "split": str(a.field_split[f]),
            JSD: _num(cr.jsd[k]), "p_value": _num(cr.p_value[k]), "repeatability": _num(cr.repeatability[k]),
            "change_rich": bool(cr.change_rich[k]),
        })
    defined = np.zeros(F * O, dtype=bool)
    defined[order] = ~np.isnan(cr.p_value) & ~np.isnan(cr.repeatability)
    defined = defined.reshape(F, O)
    # Every entry's §2 scores (canonical) on the change-rich episodes only.
    c = list(a.policies).index(CANONICAL_POLICY)
    vals = np.where(rich[None, None], a.values[:, c], np.nan)  # (E, M, F, O)
    field_scores, _ = mean_over(vals, axis=-1)  # (E, M, F)
    keys = [(ei, mi) for ei, (_, _, cond) in enumerate(a.entries) for mi, m in enumerate(a.metric_names) if _applicable(cond, m)]
    Z = np.array([field_scores[ei, mi] for ei, mi in keys]).reshape(len(keys), F)
    splits, scores = {}, []
    for split, agg in aggs.items():
        cols = agg.cols
        splits[split] = {
            "n_episodes": int(cols.size * O), "n_defined": int(defined[cols].sum()),
            "n_change_rich": int(rich[cols].sum()), "n_fields": int(rich[cols].any(axis=1).sum()),
        }
        for (ei, mi), s in zip(keys, agg.summarise(Z)):
            entry, kind, cond = a.entries[ei]
            sub = vals[ei, mi][cols]
            scores.append({"split": split, "entry": entry, "kind": kind, "condition": cond,
                           "metric": a.metric_names[mi], **s,
                           "n_units": int(rich[cols].sum()), "n_defined": int((~np.isnan(sub)).sum())})
    return {"splits": splits, "episodes": episodes, "scores": scores}, rich


def alignment_units(a, unit_cols) -> list[tuple]:
    """(entry index, statistic, corrected unit values (F, O), raw (F, O) | None, null (F, O) | None)
    for every entry: the three alignments and ``tv_gain`` (canonical)."""
    c = list(a.policies).index(CANONICAL_POLICY)
    tvg = list(a.metric_names).index(TV_GAIN) if TV_GAIN in a.metric_names else None
    stats = []
    for ei in range(len(a.entries)):
        for name, corr, raw, null in ALIGNMENT_STATISTICS:
            stats.append((ei, name, unit_cols[corr][ei], unit_cols[raw][ei], unit_cols[null][ei]))
        if tvg is not None:
            stats.append((ei, TV_GAIN, a.values[ei, c, tvg], None, None))
    return stats


def _alignment_section(a, unit_cols, aggs, rich) -> dict:
    rows = []
    stats = alignment_units(a, unit_cols)
    Z = np.array([mean_over(s[2], axis=-1)[0] for s in stats])
    Zraw = np.array([mean_over(np.where(np.isnan(s[2]), np.nan, s[3] if s[3] is not None else s[2]), axis=-1)[0] for s in stats])
    Znull = np.array([mean_over(np.where(np.isnan(s[2]), np.nan, s[4] if s[4] is not None else s[2]), axis=-1)[0] for s in stats])
    for split, agg in aggs.items():
        cols = agg.cols
        raw_est, _ = mean_over(Zraw[:, cols], axis=1)
        null_est, _ = mean_over(Znull[:, cols], axis=1)
        for k, ((ei, name, est, raw, null), s) in enumerate(zip(stats, agg.summarise(Z))):
            entry, kind, cond = a.entries[ei]
            units = est[cols]
            pred_ok = ~missing_rows(a.predictions[ei][cols])
            rows.append({
                "split": split, "entry": entry, "kind": kind, "condition": cond, "statistic": name, **s,
                "raw": _num(raw_est[k]) if raw is not None else None,
                "null": _num(null_est[k]) if null is not None else None,
                "n_units": int(units.size), "n_valid": int(pred_ok.sum()), "n_defined": int((~np.isnan(units)).sum()),
            })
    return {"rows": rows, **residual_views(a, stats, aggs, rich)}


def _months(origins: Sequence[date]) -> np.ndarray:
    return np.array([d.year * 12 + d.month - 1 for d in origins], dtype=np.int64)


def _revision_section(a, aggs) -> dict:
    E, F, O = a.predictions.shape[:3]
    month = _months(a.origins)
    rows, truth = [], []
    for h in REVISION_HORIZONS:
        # Models and baselines: one series per (entry, field).
        p = a.predictions.reshape(-1, 8)
        yb = np.broadcast_to(a.y[None], (E, F, O, 8)).reshape(-1, 8)
        series = np.repeat(np.arange(E * F), O)
        rev = revision_alignment(p, yb, series, np.tile(month, E * F), h)
        pair_field = (rev.first // O) % F
        pair_entry = rev.first // (F * O)
        stat_list = []
        for name, vals in (("adapt", rev.adapt), ("prediction_stability", rev.prediction_stability)):
            fs = _pair_field_scores(vals, pair_entry * F + pair_field, E * F).reshape(E, F)
            stat_list.append((name, vals, fs))
        # Truth: one series per field.
        trev = revision_alignment(a.y.reshape(-1, 8), a.y.reshape(-1, 8), np.repeat(np.arange(F), O), np.tile(month, F), h)
        t_field = trev.first // O
        t_fs = _pair_field_scores(trev.truth_stability, t_field, F)
        for split, agg in aggs.items():
            cols = agg.cols
            in_split = np.isin(pair_field, cols)
            for name, vals, fs in stat_list:
                for ei, s in enumerate(agg.summarise(fs)):
                    entry, kind, cond = a.entries[ei]
                    sel = in_split & (pair_entry == ei)
                    rows.append({"split": split, "entry": entry, "kind": kind, "condition": cond, "horizon": h,
                                 "statistic": name, **s, "n_pairs": int(sel.sum()),
                                 "n_defined": int((~np.isnan(vals[sel])).sum())})
            t_sel = np.isin(t_field, cols)
            s = agg.summarise(t_fs[None])[0]
            truth.append({"split": split, "horizon": h, "statistic": "truth_stability", **s,
                          "n_pairs": int(t_sel.sum()), "n_defined": int((~np.isnan(trev.truth_stability[t_sel])).sum())})
    return {"horizons": list(REVISION_HORIZONS), "rows": rows, "truth_stability": truth}


def _pair_field_scores(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    defined = ~np.isnan(values)
    total = np.bincount(group[defined], weights=values[defined], minlength=n_groups)
    n = np.bincount(group[defined], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)


def _sensitivity_sections(a, aggs) -> tuple[dict, dict]:
    """Policy sensitivity (every policy's field-macro estimate side by side) and
    the sampling-frame restriction to ``eligible_pre2024`` fields (all policies)."""
    field_scores, _ = mean_over(a.values, axis=-1)  # (E, P, M, F)
    E, P, M, F = field_scores.shape
    keys = [(ei, mi) for ei, (_, _, cond) in enumerate(a.entries) for mi, m in enumerate(a.metric_names) if _applicable(cond, m)]
    eligible = np.asarray(a.eligible_pre2024, dtype=bool)
    policy_rows, frame_rows, frame_fields = [], [], {}
    by_model: dict[tuple[str, str], dict[str, dict[str, float | None]]] = {}  # Spearman, for the orderings
    for split, agg in aggs.items():
        cols = agg.cols
        est_all, _ = mean_over(field_scores[..., cols], axis=-1)  # (E, P, M)
        for ei, mi in keys:
            entry, kind, cond = a.entries[ei]
            by_policy = {a.policies[pi]: _num(est_all[ei, pi, mi]) for pi in range(P)}
            policy_rows.append({"split": split, "entry": entry, "kind": kind, "condition": cond,
                                "metric": a.metric_names[mi], "estimates": by_policy, "max_change": max_change(by_policy)})
            if kind == "model" and a.metric_names[mi] == SPEARMAN:
                by_model.setdefault((split, entry), {})[cond] = by_policy
        restricted = np.where(eligible[None, None, None, :], field_scores, np.nan)
        stat_keys = [(ei, pi, mi) for ei, mi in keys for pi in range(P)]
        Z = np.array([restricted[ei, pi, mi] for ei, pi, mi in stat_keys]).reshape(len(stat_keys), F)
        for (ei, pi, mi), s in zip(stat_keys, agg.summarise(Z)):
            entry, kind, cond = a.entries[ei]
            frame_rows.append({"split": split, "policy": a.policies[pi], "entry": entry, "kind": kind,
                               "condition": cond, "metric": a.metric_names[mi], **s,
                               "estimate_all_fields": _num(est_all[ei, pi, mi])})
        frame_fields[split] = {"n_fields": int(cols.size), "n_eligible": int(eligible[cols].sum())}
    sensitivity = {"track": ALL_ORIGIN_TRACK, "rows": policy_rows,
                   "orderings": orderings(by_model, list(a.policies)),
                   "contrast_signs": contrast_signs(a, {split: agg.cols for split, agg in aggs.items()})}
    return sensitivity, {"track": ALL_ORIGIN_TRACK, "fields": frame_fields, "rows": frame_rows}


def compute_diagnostics(
    inputs: Any,
    ledger: Mapping | None = None,
    *,
    unit_diagnostics: Mapping[str, np.ndarray] | Callable[[], Mapping[str, np.ndarray]] | None = None,
    change_rich: Callable[[], ChangeRich] | None = None,
    store: DrawStore = NOWHERE,
) -> dict:
    """The ``diagnostics.json`` body (schema in docs/diagnostics.md).

    ``inputs``: the scoring stage's ``DiagnosticsInputs`` or a
    :class:`DiagnosticArrays`; ``ledger``: the parameter ledger (default:
    ``inputs.archive.ledger``); ``unit_diagnostics``: the result of
    :func:`compute_unit_diagnostics` if already computed, or a function that
    returns it (called only when the residual-alignment section needs it, so
    that the result can be computed meanwhile in another thread); ``change_rich``: a function
    returning :func:`change_rich_draws` of the same inputs, likewise; ``store``: where the
    draws that read the counts alone are kept between runs (default: nowhere).
    """
    a = _as_arrays(inputs)
    led = _ledger(inputs, ledger)

    def unit_cols() -> dict[str, np.ndarray]:
        if unit_diagnostics is None:
            return compute_unit_diagnostics(a, led)
        return dict(unit_diagnostics() if callable(unit_diagnostics) else unit_diagnostics)

    aggs = {split: SplitAggregator(a, split) for split in _splits(a)}
    change_rich, rich = _change_rich_section(a, led, aggs, change_rich, store)
    policy, frame = _sensitivity_sections(a, aggs)
    return {
        "diagnostics_version": DIAGNOSTICS_VERSION,
        "policy": CANONICAL_POLICY,
        "track": ALL_ORIGIN_TRACK,
        "parameters": {
            "reliability": {k: led["reliability"][k] for k in ("splits", "seed")},
            "change_rich": {k: led["change_rich"][k] for k in ("p_max", "repeatability_min", "null_draws", "seed")},
            "residual": {k: led["residual"][k] for k in ("direct_permutations", "seed")},
            "partial_permutations": 40320,
            "revision_horizons": list(REVISION_HORIZONS),
            "tie_decimals": 12,
            "bootstrap": {"unit": "block", "resamples": int(a.resamples), "seed": int(a.seed), "level": float(a.level)},
        },
        "reliability": _reliability_section(a, led, aggs, store),
        "change_rich": change_rich,
        "residual_alignment": _alignment_section(a, unit_cols(), aggs, rich),
        "revision_alignment": _revision_section(a, aggs),
        "policy_sensitivity": policy,
        "sampling_frame": frame,
    }
