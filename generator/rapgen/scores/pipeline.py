"""``compute_scores(archive) -> ScoreResult`` and ``write_scores(result, out_dir)``.

Steps: counts by policy (DuckDB) -> compositions -> baselines -> unit values
for every entry -> field scores per track -> statistics (leaderboard rows and
contrasts) -> per-split field-macro estimates and bootstrap intervals (block
and field-clustered) -> ranks -> tables -> §6 diagnostics (whose per-unit
alignment columns join units.parquet on the canonical rows).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

from rapgen.archive import SLOTS, Archive
from rapgen.errors import ScoringError
from rapgen.scores import outputs, schema
from rapgen.scores.aggregate import (
    TRACKS,
    Contrast,
    build_contrasts,
    metric_higher_is_better,
    probability_first,
    rank_by_intervals,
)
from rapgen.scores.baselines import BASELINES, compute_baselines
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts, unit_sums
from rapgen.scores.counts import POLICIES, Windows, build_windows, compositions, compute_counts
from rapgen.scores.kernels import mean_over, single_threaded_blas
from rapgen.scores.diagnostics import UNIT_COLUMNS as DIAGNOSTIC_UNIT_COLUMNS
from rapgen.scores.diagnostics import compute_diagnostics, compute_unit_diagnostics
from rapgen.scores.diagnostics.evidence import search_evidence
from rapgen.scores.metrics import METRIC_NAMES
from rapgen.scores.outputs import Table
from rapgen.scores.units import BASELINE, Entry, baseline_entries, compute_unit_values, read_model_units

UNIT_KINDS: tuple[str, ...] = ("block", "field")  # primary, then the field-clustered sensitivity
PRIMARY_METRIC = "spearman"
M_INDEX = {m: i for i, m in enumerate(METRIC_NAMES)}


@dataclass
class DiagnosticsInputs:
    """What scoring hands to the §6 diagnostics (all arrays share the axis order
    policy P, field F, window W / origin O, slot 8; entries E as in ``entries``)."""

    archive: Archive
    field_ids: list[str]
    field_split: np.ndarray  # (F,) split name per field
    field_block: np.ndarray  # (F,) block id per field
    origins: tuple[date, ...]
    policies: tuple[str, ...]
    windows: Windows
    counts: np.ndarray  # (P, F, W, 8) exact direction counts
    target_counts: np.ndarray  # (P, F, O, 8)
    recent_counts: np.ndarray  # (P, F, O, 8)
    y: np.ndarray  # (P, F, O, 8) target compositions (NaN rows: missing)
    x: np.ndarray  # (P, F, O, 8) recent-window compositions
    ewma: np.ndarray  # (P, F, O, 8) EWMA baseline
    entries: list[Entry]
    predictions: np.ndarray  # (E, P, F, O, 8) unit prediction vectors (NaN rows: invalid / no baseline)
    values: np.ndarray  # (E, P, M, F, O) unit metric values, M in METRIC_NAMES order
    draws: dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray]]  # (split, unit kind) -> (unit ids, C (R, K))
    resamples: int
    seed: int
    level: float


@dataclass
class ScoreResult:
    meta: dict
    tables: dict[str, Table]  # file name -> table (CSV files)
    units: Table  # units.parquet
    unit_types: dict[str, str]
    diagnostics: dict
    inputs: DiagnosticsInputs | None = field(default=None, repr=False)


def _ledger_bootstrap(ledger: dict, resamples: int | None) -> tuple[int, int, float]:
    boot = ledger["bootstrap"]
    n = int(boot["resamples"]) if resamples is None else int(resamples)
    if n < 1:
        raise ScoringError(f"the number of bootstrap resamples must be at least 1, found {n}")
    return n, int(boot["seed"]), float(boot["level"])


def compute_scores(archive: Archive, resamples: int | None = None, *, diagnostics: bool = True) -> ScoreResult:
    """Every leaderboard number of SCORING.md §1-§5 and §7, recomputed from ``archive``.

    ``resamples`` overrides the ledger's bootstrap.resamples (seed and level
    always come from the ledger). ``diagnostics=False`` skips the §6
    diagnostics (diagnostics.json then says they were not computed).
    """
    ledger = archive.ledger
    R, seed, level = _ledger_bootstrap(ledger, resamples)
    og = archive.origins
    if og.history_windows != 3:
        raise ScoringError(f"archive/benchmark/origins.json: the baselines need history_windows = 3, found {og.history_windows}")
    origins = tuple(og.origins)
    if og.strict_origin not in origins:
        raise ScoringError(f"archive/benchmark/origins.json: strict_origin {og.strict_origin} is not one of the origins")
    fields = archive.fields
    if not fields:
        raise ScoringError("archive/benchmark/fields.jsonl: no fields; nothing to score")
    field_ids = [f.field_id for f in fields]
    field_split = np.array([f.split for f in fields], dtype=object)
    field_block = np.array([f.block_id for f in fields], dtype=object)
    F, O, P = len(field_ids), len(origins), len(POLICIES)

    # §5 resampling units of every (split, unit kind): sorted ids, and each field's unit.
    splits = sorted(set(field_split.tolist()))
    units_of = _resampling_units(archive, field_ids, field_split, field_block, splits)

    # §1 counts (DuckDB) and the §5 count matrices run in worker threads (both
    # release the GIL) while the predictions are parsed; then compositions and
    # the §3 baselines.
    windows = build_windows(origins, og.window_months, og.history_windows)
    with ThreadPoolExecutor(max_workers=2) as pool:
        counting = pool.submit(compute_counts, archive, field_ids, windows)
        # A fresh default_rng(seed) per (split, unit kind), drawn once.
        drawing = {key: pool.submit(draw_counts, len(unit_ids), R, seed) for key, (unit_ids, _) in units_of.items()}
        mu = read_model_units(archive, field_ids, origins)
        counts = counting.result()
        draws = {key: (units_of[key][0], future.result()) for key, future in drawing.items()}
    comps = compositions(counts)
    y = comps[:, :, windows.target]
    hist = comps[:, :, windows.history]  # (P, F, O, 3, 8)
    x = hist[..., -1, :]
    base = compute_baselines(hist[..., 0, :], hist[..., 1, :], hist[..., 2, :], ledger)  # (6, P, F, O, 8)
    ewma = base[BASELINES.index("ewma")]

    # §2 units.
    entries = mu.entries + baseline_entries()
    Em, E = len(mu.entries), len(mu.entries) + len(BASELINES)
    preds = np.concatenate([np.broadcast_to(mu.weights[:, None], (Em, P, F, O, len(SLOTS))), base], axis=0)
    values = compute_unit_values(entries, preds, y, x, ewma)  # (E, P, M, F, O)
    base_ok = ~np.isnan(base).any(axis=-1)  # (6, P, F, O)

    # §4 tracks and participation.
    strict_index = origins.index(og.strict_origin)
    track_origins = {"all_origin": np.arange(O), "forecast_strict": np.array([strict_index])}
    participates = {
        "all_origin": np.ones(E, dtype=bool),
        "forecast_strict": np.array(
            [e.kind == BASELINE or (e.cutoff is not None and e.cutoff < og.strict_origin) for e in entries], dtype=bool
        ),
    }
    applicable = np.array([[m in e.metrics() for m in METRIC_NAMES] for e in entries], dtype=bool)  # (E, M)
    contrasts = build_contrasts(entries)
    contrast_values = np.full((len(contrasts), P, len(METRIC_NAMES), F, O), np.nan)
    for c, con in enumerate(contrasts):
        for name in con.metrics:
            m = M_INDEX[name]
            # Only origins where both sides are defined: NaN propagates through the difference.
            contrast_values[c, :, m] = values[con.left, :, m] - values[con.right, :, m]
    contrast_applicable = np.array([[m in con.metrics for m in METRIC_NAMES] for con in contrasts], dtype=bool).reshape(
        len(contrasts), len(METRIC_NAMES)
    )

    # Statistics: one field-score vector per (track, entry, policy, metric) and per contrast row.
    field_scores: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    lb_rows: list[np.ndarray] = []
    ct_rows: list[np.ndarray] = []
    lb_keys: list[tuple[int, int, int, int]] = []  # (track, entry, policy, metric)
    ct_keys: list[tuple[int, int, int, int]] = []  # (track, contrast, policy, metric)
    for t, track in enumerate(TRACKS):
        idx = track_origins[track]
        fs, n_orig = mean_over(values[..., idx], axis=-1)  # (E, P, M, F)
        field_scores[track] = (fs, n_orig)
        cs, _ = mean_over(contrast_values[..., idx], axis=-1)  # (C, P, M, F)
        sel = participates[track][:, None, None] & applicable[:, None, :] & np.ones((1, P, 1), dtype=bool)
        e_i, p_i, m_i = np.nonzero(sel)
        lb_keys.extend((t, int(a), int(b), int(c)) for a, b, c in zip(e_i, p_i, m_i))
        lb_rows.append(fs[e_i, p_i, m_i])
        if contrasts:
            csel = participates[track][[con.left for con in contrasts]][:, None, None] & contrast_applicable[:, None, :] & np.ones((1, P, 1), dtype=bool)
            c_i, p_i, m_i = np.nonzero(csel)
            ct_keys.extend((t, int(a), int(b), int(c)) for a, b, c in zip(c_i, p_i, m_i))
            ct_rows.append(cs[c_i, p_i, m_i])
    # Row order of Z: every leaderboard statistic (lb_keys order), then every contrast (ct_keys order).
    Z = np.concatenate(lb_rows + ct_rows, axis=0) if lb_rows + ct_rows else np.zeros((0, F))
    n_lb = len(lb_keys)
    rank_stats = np.array([i for i, k in enumerate(lb_keys) if k[3] == M_INDEX[PRIMARY_METRIC]], dtype=np.int64)

    # §5 per split: estimates and bootstrap intervals under both unit kinds.
    est = {}
    nfields = {}
    intervals: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    kept: dict[str, dict[int, np.ndarray]] = {}
    jobs: dict[tuple[str, str], tuple] = {}
    for split in splits:
        cols = np.flatnonzero(field_split == split)
        Zs = Z[:, cols]
        est[split], nfields[split] = mean_over(Zs, axis=1)
        for kind in UNIT_KINDS:
            unit_ids, unit_of = units_of[(split, kind)]
            S, N = unit_sums(Zs, unit_of, len(unit_ids))
            jobs[(split, kind)] = (draws[(split, kind)][1], S, N, rank_stats if kind == "block" else None)
    # The (split, unit kind) jobs are independent; numpy releases the GIL in its
    # products, divisions and partitions, so two run side by side while this
    # thread builds the tables that need no interval. The job threads are the
    # parallelism: BLAS runs on one thread here (a threaded BLAS under two job
    # threads only spins, which measurably cost CPU), and the limit ends with the block.
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(bootstrap_intervals, C, S, N, level, keep) for key, (C, S, N, keep) in jobs.items()}
        plain = {
            "field_scores.csv": _field_scores_table(entries, field_ids, field_split, field_scores, participates, applicable),
            "origin_scores.csv": _origin_scores_table(entries, origins, splits, field_split, values, applicable),
            "compositions.csv": _compositions_table(field_ids, windows, counts, comps),
        }
        for (split, kind), future in futures.items():
            result = future.result()
            intervals[(split, kind)] = (result.low, result.high)
            if kind == "block":
                kept[split] = result.replicates

    # ---------------------------------------------------------------- tables
    tables: dict[str, Table] = {}
    tables["leaderboard.csv"] = _leaderboard_table(
        entries, lb_keys, splits, est, nfields, intervals, field_split, track_origins, mu.valid, base_ok, Em
    )
    tables["contrasts.csv"] = _contrasts_table(contrasts, ct_keys, n_lb, splits, est, nfields, intervals)
    tables["ranks.csv"] = _ranks_table(entries, lb_keys, splits, est, intervals, kept)
    tables["field_clustered.csv"] = _field_clustered_table(entries, contrasts, lb_keys, ct_keys, splits, est, intervals)
    tables.update(plain)

    inputs = DiagnosticsInputs(
        archive=archive, field_ids=field_ids, field_split=field_split, field_block=field_block, origins=origins,
        policies=POLICIES, windows=windows, counts=counts, target_counts=counts[:, :, windows.target],
        recent_counts=counts[:, :, windows.history[:, -1]], y=y, x=x, ewma=ewma, entries=entries,
        predictions=preds, values=values, draws=draws, resamples=R, seed=seed, level=level,
    )
    meta = {
        "schema_version": outputs.SCHEMA_VERSION,
        "manifest_sha256": archive.manifest_sha256,
        "archive": {"name": archive.info.get("name"), "synthetic": archive.synthetic},
        "resamples": R,
        "seed": seed,
        "level": level,
        "policies": list(POLICIES),
        "tracks": {
            track: {
                "origins": [origins[i].isoformat() for i in track_origins[track]],
                "models": sorted({e.entry for e, ok in zip(entries, participates[track]) if ok and e.kind != BASELINE}),
            }
            for track in TRACKS
        },
        "counts": {
            "fields": {s: int((field_split == s).sum()) for s in splits},
            "blocks": {s: len(draws[(s, "block")][0]) for s in splits},
            "origins": O,
            "models": len({e.entry for e in mu.entries}),
            "entries": E,
            "units": E * P * F * O,
            **{name.rsplit(".", 1)[0] + "_rows": len(table) for name, table in tables.items()},
        },
    }
    if diagnostics:
        section, unit_cols = compute_diagnostics_section(inputs)
    else:
        section, unit_cols = _diagnostics_head(inputs) | {"status": "not computed"}, None
    units, unit_types = _units_table(entries, field_ids, field_split, origins, preds, values, mu.valid, mu.reasons, base_ok, Em, unit_cols)
    return ScoreResult(meta, tables, units, unit_types, section, inputs)


def _resampling_units(archive: Archive, field_ids, field_split, field_block, splits) -> dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray]]:
    """(split, unit kind) -> (unit ids sorted in byte order, the unit index of each of the split's fields)."""
    blocks_by_split: dict[str, list[str]] = {}
    for block in archive.blocks:
        blocks_by_split.setdefault(block.split, []).append(block.block_id)
    out = {}
    for split in splits:
        cols = np.flatnonzero(field_split == split)
        for kind in UNIT_KINDS:
            if kind == "block":
                unit_ids = tuple(sorted(blocks_by_split.get(split, []), key=lambda b: b.encode("utf-8")))
                position = {b: i for i, b in enumerate(unit_ids)}
                missing = [c for c in cols if field_block[c] not in position]
                if missing:
                    raise ScoringError(
                        f"archive/benchmark/fields.jsonl: field {field_ids[missing[0]]!r} names block {field_block[missing[0]]!r}, "
                        f"which is not a {split} block in blocks.jsonl"
                    )
                unit_of = np.array([position[field_block[c]] for c in cols], dtype=np.int64)
            else:
                unit_ids = tuple(sorted((field_ids[c] for c in cols), key=lambda f: f.encode("utf-8")))
                position = {f: i for i, f in enumerate(unit_ids)}
                unit_of = np.array([position[field_ids[c]] for c in cols], dtype=np.int64)
            out[(split, kind)] = (unit_ids, unit_of)
    return out


def compute_diagnostics_section(inputs: DiagnosticsInputs) -> tuple[dict, dict[str, np.ndarray]]:
    """The single call site of the §6 diagnostics (``rapgen.scores.diagnostics``).

    Returns the diagnostics.json body (headed by the schema version and the
    archive's identity) and the per-unit alignment columns of units.parquet
    (``{name: (E, F, O) array}``, canonical policy), computed once and shared.
    """
    unit_cols = compute_unit_diagnostics(inputs)
    body = compute_diagnostics(inputs, unit_diagnostics=unit_cols)
    body["search_evidence"] = search_evidence(inputs.archive)
    return {**_diagnostics_head(inputs), **body}, unit_cols


def _diagnostics_head(inputs: DiagnosticsInputs) -> dict:
    return {"schema_version": outputs.SCHEMA_VERSION, "manifest_sha256": inputs.archive.manifest_sha256}


def write_scores(result: ScoreResult, out_dir: str | Path) -> list[Path]:
    """Write every output file of ``rapgen score`` into ``out_dir``."""
    # Arrow encodes and compresses the parquet file outside the GIL, next to the CSV formatting.
    with ThreadPoolExecutor(max_workers=1) as pool:
        parquet = pool.submit(outputs.parquet_bytes, result.units, result.unit_types, "units.parquet")
        files = {name: outputs.csv_bytes(table, name) for name, table in result.tables.items()}
        files["units.parquet"] = parquet.result()
    files["scores.json"] = outputs.json_bytes(result.meta)
    files["diagnostics.json"] = outputs.json_bytes(result.diagnostics)
    return outputs.write_folder(out_dir, files)


# ---------------------------------------------------------------- table builders
def _nan_to_none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def _leaderboard_table(entries, lb_keys, splits, est, nfields, intervals, field_split, track_origins, valid, base_ok, Em) -> Table:
    rows = []
    for split in splits:
        cols = field_split == split
        lo, hi = intervals[(split, "block")]
        for i, (t, e, p, m) in enumerate(lb_keys):
            track = TRACKS[t]
            idx = track_origins[track]
            entry = entries[e]
            n_episodes = int(cols.sum()) * len(idx)
            if e < Em:
                v = valid[e][cols][:, idx]
                n_valid, n_invalid = int(v.sum()), int(v.size - v.sum())
            else:
                n_valid, n_invalid = int(base_ok[e - Em, p][cols][:, idx].sum()), 0
            rows.append((
                t, split, p, 0 if entry.kind == "model" else 1, entry.entry, entry.condition, m,
                (track, split, POLICIES[p], entry.entry, entry.kind, entry.condition, METRIC_NAMES[m],
                 _nan_to_none(est[split][i]), _nan_to_none(lo[i]), _nan_to_none(hi[i]), int(nfields[split][i]),
                 n_episodes, n_valid, n_invalid),
            ))
    rows.sort(key=lambda r: r[:7])
    return _table(outputs.LEADERBOARD_COLUMNS, [r[7] for r in rows])


def _contrasts_table(contrasts: list[Contrast], ct_keys, n_lb, splits, est, nfields, intervals) -> Table:
    rows = []
    for split in splits:
        lo, hi = intervals[(split, "block")]
        for j, (t, c, p, m) in enumerate(ct_keys):
            i = n_lb + j
            con = contrasts[c]
            rows.append((
                (t, split, p, con.entry, c, m),
                (TRACKS[t], split, POLICIES[p], con.entry, con.name, METRIC_NAMES[m],
                 _nan_to_none(est[split][i]), _nan_to_none(lo[i]), _nan_to_none(hi[i]), int(nfields[split][i])),
            ))
    rows.sort(key=lambda r: r[0])
    return _table(outputs.CONTRASTS_COLUMNS, [r[1] for r in rows])


def _ranks_table(entries: list[Entry], lb_keys, splits, est, intervals, kept) -> Table:
    """One group per (track, split, policy, model condition): the models with
    that condition together with the baselines, on the primary metric."""
    m_primary = M_INDEX[PRIMARY_METRIC]
    higher = metric_higher_is_better(PRIMARY_METRIC)
    by_key = {k: i for i, k in enumerate(lb_keys)}
    rows = []
    for split in splits:
        lo, hi = intervals[(split, "block")]
        for t, track in enumerate(TRACKS):
            for p, policy in enumerate(POLICIES):
                conditions = sorted({entries[e].condition for (tt, e, pp, m) in lb_keys
                                     if tt == t and pp == p and m == m_primary and entries[e].kind == "model"})
                baseline_idx = [e for e, entry in enumerate(entries) if entry.kind == BASELINE and (t, e, p, m_primary) in by_key]
                for condition in conditions:
                    members = [e for e, entry in enumerate(entries)
                               if entry.kind == "model" and entry.condition == condition and (t, e, p, m_primary) in by_key]
                    members += baseline_idx
                    stat = np.array([by_key[(t, e, p, m_primary)] for e in members], dtype=np.int64)
                    ranks = rank_by_intervals(lo[stat], hi[stat], higher)
                    reps = np.stack([kept[split][int(s)] for s in stat], axis=1)
                    p_first = probability_first(reps, higher)
                    for k, e in enumerate(members):
                        entry = entries[e]
                        rows.append((
                            (t, split, p, condition, 0 if entry.kind == "model" else 1, entry.entry),
                            (track, split, policy, condition, entry.entry, _nan_to_none(est[split][stat[k]]),
                             None if np.isnan(ranks[k]) else int(ranks[k]), _nan_to_none(p_first[k])),
                        ))
    rows.sort(key=lambda r: r[0])
    return _table(outputs.RANKS_COLUMNS, [r[1] for r in rows])


def _field_clustered_table(entries, contrasts, lb_keys, ct_keys, splits, est, intervals) -> Table:
    rows = []
    n_lb = len(lb_keys)
    for split in splits:
        lo, hi = intervals[(split, "field")]
        for i, (t, e, p, m) in enumerate(lb_keys):
            entry = entries[e]
            rows.append((
                (0, t, split, p, 0 if entry.kind == "model" else 1, entry.entry, entry.condition, m),
                ("leaderboard", TRACKS[t], split, POLICIES[p], entry.entry, entry.condition, METRIC_NAMES[m],
                 _nan_to_none(est[split][i]), _nan_to_none(lo[i]), _nan_to_none(hi[i])),
            ))
        for j, (t, c, p, m) in enumerate(ct_keys):
            con = contrasts[c]
            i = n_lb + j
            rows.append((
                (1, t, split, p, 0, con.entry, str(c).zfill(6), m),
                ("contrasts", TRACKS[t], split, POLICIES[p], con.entry, con.name, METRIC_NAMES[m],
                 _nan_to_none(est[split][i]), _nan_to_none(lo[i]), _nan_to_none(hi[i])),
            ))
    rows.sort(key=lambda r: r[0])
    return _table(outputs.FIELD_CLUSTERED_COLUMNS, [r[1] for r in rows])


def _entry_order(entries: list[Entry]) -> list[int]:
    return sorted(range(len(entries)), key=lambda e: (entries[e].kind != "model", entries[e].entry, entries[e].condition))


def _field_scores_table(entries, field_ids, field_split, field_scores, participates, applicable) -> Table:
    """Defined field scores only (a field without one has no row)."""
    order = np.array(_entry_order(entries), dtype=np.int64)
    split_names = sorted(set(field_split.tolist()))
    parts: dict[str, list] = {c: [] for c in outputs.FIELD_SCORES_COLUMNS}
    for t, track in enumerate(TRACKS):
        fs, n_orig = field_scores[track]  # (E, P, M, F)
        for s, split in enumerate(split_names):
            cols = np.flatnonzero(field_split == split)
            # Row order: policy, entry (output order), metric, field -- np.nonzero walks it in C order.
            sub = fs[order][:, :, :, cols].transpose(1, 0, 2, 3)  # (P, E, M, Fs)
            keep = ~np.isnan(sub) & (participates[track][order][:, None] & applicable[order])[None, :, :, None]
            p_i, e_k, m_i, f_k = np.nonzero(keep)
            e_i = order[e_k]
            parts["track"].append(np.full(len(p_i), t, dtype=np.int64))
            parts["split"].append(np.full(len(p_i), s, dtype=np.int64))
            parts["policy"].append(p_i)
            parts["entry"].append(e_i)
            parts["metric"].append(m_i)
            parts["field_id"].append(cols[f_k])
            parts["estimate"].append(fs[e_i, p_i, m_i, cols[f_k]])
            parts["n_origins"].append(n_orig[e_i, p_i, m_i, cols[f_k]].astype(np.int64))
    stacked = {name: np.concatenate(v) if v else np.zeros(0) for name, v in parts.items()}
    entry = stacked["entry"].astype(np.int64)
    data = {
        "track": outputs.Coded(stacked["track"].astype(np.int64), TRACKS),
        "split": outputs.Coded(stacked["split"].astype(np.int64), tuple(split_names)),
        "policy": outputs.Coded(stacked["policy"].astype(np.int64), POLICIES),
        "entry": outputs.Coded(entry, tuple(x.entry for x in entries)),
        "kind": outputs.Coded(entry, tuple(x.kind for x in entries)),
        "condition": outputs.Coded(entry, tuple(x.condition for x in entries)),
        "metric": outputs.Coded(stacked["metric"].astype(np.int64), METRIC_NAMES),
        "field_id": outputs.Coded(stacked["field_id"].astype(np.int64), tuple(field_ids)),
        "estimate": stacked["estimate"].astype(np.float64),
        "n_origins": stacked["n_origins"].astype(np.int64),
    }
    return Table(outputs.FIELD_SCORES_COLUMNS, data)


def _origin_scores_table(entries, origins, splits, field_split, values, applicable) -> Table:
    """Field-macro per origin (every origin, every entry; no track filter)."""
    order = np.array(_entry_order(entries), dtype=np.int64)
    O = len(origins)
    parts: dict[str, list] = {c: [] for c in ("split", "policy", "entry", "metric", "origin", "estimate", "n_fields")}
    for s, split in enumerate(splits):
        cols = np.flatnonzero(field_split == split)
        mean, n = mean_over(values[:, :, :, cols, :], axis=3)  # (E, P, M, O)
        # Row order: policy, entry (output order), applicable metric, origin.
        keep = np.broadcast_to(applicable[order][None, :, :, None], (len(POLICIES), len(order), applicable.shape[1], O))
        p_i, e_k, m_i, o_i = np.nonzero(keep)
        e_i = order[e_k]
        parts["split"].append(np.full(len(p_i), s, dtype=np.int64))
        for name, v in (("policy", p_i), ("entry", e_i), ("metric", m_i), ("origin", o_i)):
            parts[name].append(v)
        parts["estimate"].append(mean[e_i, p_i, m_i, o_i])
        parts["n_fields"].append(n[e_i, p_i, m_i, o_i].astype(np.int64))
    col = {name: (np.concatenate(v) if v else np.zeros(0, dtype=np.int64)) for name, v in parts.items()}
    entry = col["entry"].astype(np.int64)
    data = {
        "split": outputs.Coded(col["split"].astype(np.int64), tuple(splits)),
        "policy": outputs.Coded(col["policy"].astype(np.int64), POLICIES),
        "entry": outputs.Coded(entry, tuple(x.entry for x in entries)),
        "kind": outputs.Coded(entry, tuple(x.kind for x in entries)),
        "condition": outputs.Coded(entry, tuple(x.condition for x in entries)),
        "metric": outputs.Coded(col["metric"].astype(np.int64), METRIC_NAMES),
        "origin": outputs.Coded(col["origin"].astype(np.int64), tuple(o.isoformat() for o in origins)),
        "estimate": col["estimate"].astype(np.float64),
        "n_fields": col["n_fields"].astype(np.int64),
    }
    return Table(outputs.ORIGIN_SCORES_COLUMNS, data)


def _compositions_table(field_ids, windows: Windows, counts, comps) -> Table:
    """Every window's shares, by field, policy and window (empty shares: no counted papers)."""
    F, W = len(field_ids), len(windows.starts)
    f_i, p_i, w_i = (g.ravel() for g in np.meshgrid(np.arange(F), np.arange(len(POLICIES)), np.arange(W), indexing="ij"))
    data: dict[str, object] = {
        "field_id": outputs.Coded(f_i, tuple(field_ids)),
        "policy": outputs.Coded(p_i, POLICIES),
        "window_start": outputs.Coded(w_i, tuple(d.isoformat() for d in windows.starts)),
        "window_end": outputs.Coded(w_i, tuple(d.isoformat() for d in windows.ends)),
        "n_total": counts.sum(axis=-1)[p_i, f_i, w_i],
    }
    for k in range(len(SLOTS)):
        data[f"D{k}"] = comps[p_i, f_i, w_i, k]
    return Table(outputs.COMPOSITIONS_COLUMNS, data)


UNIT_COLUMNS = schema.UNITS_COLUMNS


def _units_table(entries, field_ids, field_split, origins, preds, values, valid, reasons, base_ok, Em, unit_cols=None) -> tuple[Table, dict[str, str]]:
    """One row per (policy, entry, kind, condition, field_id, origin).

    ``unit_cols``: the §6 per-unit alignment columns ({name: (E, F, O)}, canonical
    policy) placed on the canonical rows; every other row, and every row when
    the diagnostics were not computed, holds null there."""
    E, P, F, O = preds.shape[:4]
    order = np.array(_entry_order(entries), dtype=np.int64)
    # index grids in output order: policy, entry (ordered), field, origin
    p_i, e_o, f_i, o_i = np.meshgrid(np.arange(P), np.arange(E), np.arange(F), np.arange(O), indexing="ij")
    p_i, f_i, o_i = p_i.ravel(), f_i.ravel(), o_i.ravel()
    e_i = order[e_o.ravel()]
    entry_name = np.array([e.entry for e in entries], dtype=object)
    entry_kind = np.array([e.kind for e in entries], dtype=object)
    entry_cond = np.array([e.condition for e in entries], dtype=object)
    is_model = e_i < Em
    model_valid = valid[np.minimum(e_i, max(Em - 1, 0)), f_i, o_i] if Em else np.zeros(len(e_i), dtype=bool)
    base_valid = base_ok[np.maximum(e_i - Em, 0), p_i, f_i, o_i]
    unit_valid = np.where(is_model, model_valid, base_valid)
    reason = np.where(
        is_model,
        reasons[np.minimum(e_i, max(Em - 1, 0)), f_i, o_i] if Em else "",
        np.where(base_valid, "", "a history window has no counted papers"),
    )
    data: dict[str, object] = {
        "policy": outputs.Coded(p_i, POLICIES),
        "entry": outputs.Coded(e_i, tuple(entry_name)),
        "kind": outputs.Coded(e_i, tuple(entry_kind)),
        "condition": outputs.Coded(e_i, tuple(entry_cond)),
        "field_id": outputs.Coded(f_i, tuple(field_ids)),
        "origin": outputs.Coded(o_i, tuple(origins)),
        "split": outputs.Coded(f_i, tuple(field_split.tolist())),
        "valid": unit_valid.astype(bool),
        "reason": reason.astype(object),
    }
    for m, name in enumerate(METRIC_NAMES):
        data[name] = values[e_i, p_i, m, f_i, o_i]
    for s, slot in enumerate(SLOTS):
        data[f"p_{slot}"] = preds[e_i, p_i, f_i, o_i, s]
    canonical = p_i == POLICIES.index("canonical")
    for name in DIAGNOSTIC_UNIT_COLUMNS:
        column = np.full(len(e_i), np.nan)
        if unit_cols is not None:
            column[canonical] = np.asarray(unit_cols[name], dtype=np.float64)[e_i[canonical], f_i[canonical], o_i[canonical]]
        data[name] = column
    return Table(UNIT_COLUMNS, data), dict(schema.UNITS_TYPES)


def _table(columns: tuple[str, ...], rows: list[tuple]) -> Table:
    cols = list(zip(*rows)) if rows else [() for _ in columns]
    return Table(columns, {c: list(v) for c, v in zip(columns, cols)})
