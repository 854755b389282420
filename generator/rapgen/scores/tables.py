"""The score files as column tables (SCORING.md §7), built from the named steps' results.

Each builder returns a :class:`~rapgen.scores.outputs.Table` whose columns are
the ones :mod:`rapgen.scores.schema` declares for that file; rows are in a
fixed order (split, then the statistic order of the steps).
"""

from __future__ import annotations

import numpy as np

from rapgen.archive import SLOTS
from rapgen.scores import outputs, schema
from rapgen.scores.aggregate import Contrast
from rapgen.scores.schema import CANONICAL_POLICY, TRACKS
from rapgen.scores.counts import POLICIES, Windows
from rapgen.scores.diagnostics import UNIT_COLUMNS as DIAGNOSTIC_UNIT_COLUMNS
from rapgen.scores.kernels import mean_over
from rapgen.scores.metrics import METRIC_NAMES
from rapgen.scores.outputs import Table
from rapgen.scores.units import Entry

UNIT_COLUMNS = schema.UNITS_COLUMNS
PRIMARY_METRIC = schema.PRIMARY.metric
M_INDEX = {m: i for i, m in enumerate(METRIC_NAMES)}


def _nan_to_none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def leaderboard_table(entries, lb_keys, splits, est, nfields, intervals, field_split, track_origins, valid, base_ok, Em) -> Table:
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
    return _table(schema.LEADERBOARD_COLUMNS, [r[7] for r in rows])


def contrasts_table(contrasts: list[Contrast], ct_keys, n_lb, splits, est, nfields, intervals) -> Table:
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
    return _table(schema.CONTRASTS_COLUMNS, [r[1] for r in rows])


def field_clustered_table(entries, contrasts, lb_keys, ct_keys, splits, est, intervals) -> Table:
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
    return _table(schema.FIELD_CLUSTERED_COLUMNS, [r[1] for r in rows])


def _entry_order(entries: list[Entry]) -> list[int]:
    return sorted(range(len(entries)), key=lambda e: (entries[e].kind != "model", entries[e].entry, entries[e].condition))


def _entry_columns(entry: np.ndarray, entries: list[Entry]) -> dict[str, outputs.Coded]:
    """The entry, kind and condition columns of rows given by entry index."""
    return {name: outputs.Coded(entry, tuple(getattr(x, name) for x in entries)) for name in ("entry", "kind", "condition")}


def field_scores_table(entries, field_ids, field_split, field_scores, participates, applicable) -> Table:
    """Defined field scores only (a field without one has no row)."""
    order = np.array(_entry_order(entries), dtype=np.int64)
    split_names = sorted(set(field_split.tolist()))
    parts: dict[str, list] = {c: [] for c in schema.FIELD_SCORES_COLUMNS}
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
        **_entry_columns(entry, entries),
        "metric": outputs.Coded(stacked["metric"].astype(np.int64), METRIC_NAMES),
        "field_id": outputs.Coded(stacked["field_id"].astype(np.int64), tuple(field_ids)),
        "estimate": stacked["estimate"].astype(np.float64),
        "n_origins": stacked["n_origins"].astype(np.int64),
    }
    return Table(schema.FIELD_SCORES_COLUMNS, data)


def origin_scores_table(entries, origins, splits, field_split, values, applicable) -> Table:
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
        **_entry_columns(entry, entries),
        "metric": outputs.Coded(col["metric"].astype(np.int64), METRIC_NAMES),
        "origin": outputs.Coded(col["origin"].astype(np.int64), tuple(o.isoformat() for o in origins)),
        "estimate": col["estimate"].astype(np.float64),
        "n_fields": col["n_fields"].astype(np.int64),
    }
    return Table(schema.ORIGIN_SCORES_COLUMNS, data)


def compositions_table(field_ids, windows: Windows, counts, comps) -> Table:
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
    return Table(schema.COMPOSITIONS_COLUMNS, data)


def units_table(entries, field_ids, field_split, origins, preds, values, valid, reasons, base_ok, Em, unit_cols=None) -> tuple[Table, dict[str, str]]:
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
    canonical = p_i == POLICIES.index(CANONICAL_POLICY)
    for name in DIAGNOSTIC_UNIT_COLUMNS:
        column = np.full(len(e_i), np.nan)
        if unit_cols is not None:
            column[canonical] = np.asarray(unit_cols[name], dtype=np.float64)[e_i[canonical], f_i[canonical], o_i[canonical]]
        data[name] = column
    return Table(UNIT_COLUMNS, data), dict(schema.UNITS_TYPES)


def _table(columns: tuple[str, ...], rows: list[tuple]) -> Table:
    cols = list(zip(*rows)) if rows else [() for _ in columns]
    return Table(columns, {c: list(v) for c, v in zip(columns, cols)})
