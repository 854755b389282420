"""Reliability additions (INTERVENTIONS.md §6).

* **Posterior-predictive ceiling.** Each episode's future-rank repeatability
  (SCORING.md §6, the change-rich test's; no new draws) is averaged per field
  and field-macro'd; the ceiling is its square root, the interval the square
  roots of the interval's ends, and ``ewma_gap`` the ceiling minus EWMA's
  ``all_origin`` spearman, replicate by replicate on the same draws.
* **Gap to the ceiling.** For every entry of the leaderboard's All-Origin
  track, its spearman (canonical) minus the ceiling, also replicate by
  replicate: ``entry[r] − √repeatability[r]`` on the split's own draws, so the
  interval is a paired one (``reliability.ceiling_gap[]``).
* **Revision-target reliability.** How reliably the *change* of the target
  composition between origins T and T+h is measured: each window's counted
  papers are split in halves at random, the two halves' changes compared by
  spearman, and the mean corrected by Spearman–Brown.

Random numbers, exactly: one ``default_rng(reliability.seed)`` for all
revision pairs, ordered by horizon, ``field_id`` (byte order), T; per pair
``random((splits, n_T))`` then ``random((splits, n_{T+h}))``. A pair enters only
if both windows have at least two counted papers; others draw nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from rapgen.archive import add_months
from rapgen.scores.diagnostics.memo import NOWHERE, DrawStore
from rapgen.scores.interventions.core import ALL_SPLITS, INTERVAL_COLUMNS, SplitDraws, interval_arrays, percentile_interval, replicates
from rapgen.scores.kernels import mean_over, rounded, spearman
from rapgen.scores.metrics import SPEARMAN
from rapgen.scores.schema import ALL_ORIGIN_TRACK, CANONICAL_POLICY

REVISION_HORIZONS: tuple[int, ...] = (6, 12, 18)
TOL = 1e-12  # Spearman–Brown is undefined at r̄ = −1
# The ceiling is a property of the canonical target over every origin, scored by spearman:
# its gap exists for this track, policy and metric only.
GAP_TRACK, GAP_POLICY, GAP_METRIC = ALL_ORIGIN_TRACK, CANONICAL_POLICY, SPEARMAN


def _num(v: float) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v


def _sqrt(v: float | None) -> float | None:
    return None if v is None or v < 0 else float(np.sqrt(v))


def _row(arrays: Mapping[str, np.ndarray], i: int = 0, prefix: str = "") -> dict:
    out = {}
    for column in INTERVAL_COLUMNS:
        name = column if not prefix else (prefix if column == "estimate" else f"{prefix}_{column}")
        out[name] = int(arrays[column][i]) if column == "n_fields" else _num(arrays[column][i])
    return out


def posterior_ceiling(
    repeatability: np.ndarray, ewma_spearman: np.ndarray, draws: Mapping[str, SplitDraws]
) -> dict[str, dict]:
    """``reliability.posterior.<split>`` for every split of ``draws`` (``all`` included).

    ``repeatability``: (F, O) per-episode future-rank repeatability (NaN: undefined);
    ``ewma_spearman``: (F, O) EWMA unit spearman, canonical, every origin.
    """
    rep_fv = mean_over(np.asarray(repeatability, dtype=np.float64), axis=-1)[0]
    ewma_fv = mean_over(np.asarray(ewma_spearman, dtype=np.float64), axis=-1)[0]
    Z = np.stack([rep_fv, ewma_fv])
    out = {}
    for name, d in draws.items():
        arrays = interval_arrays(Z, d)
        row = _row(arrays)
        row["ceiling"] = _sqrt(row["estimate"])
        row["ceiling_ci_low"] = _sqrt(row["ci_low"])
        row["ceiling_ci_high"] = _sqrt(row["ci_high"])
        gap = {"estimate": np.array([np.nan]), "n_fields": np.array([int((~np.isnan(Z[:, d.columns])).all(axis=0).sum())])}
        if row["ceiling"] is not None and not np.isnan(arrays["estimate"][1]):
            gap["estimate"] = np.array([row["ceiling"] - arrays["estimate"][1]])
        for prefix, kind in (("ci", "block"), ("fc", "field")):
            reps = replicates(Z, d, kind)
            with np.errstate(invalid="ignore"):
                per_rep = np.sqrt(np.where(reps[0] >= 0, reps[0], np.nan)) - reps[1]
            gap[f"{prefix}_low"], gap[f"{prefix}_high"] = percentile_interval(per_rep[None], d.level)
        row.update(_row(gap, prefix="ewma_gap"))
        cols = d.columns
        row["n_episodes"] = int(cols.size * np.shape(repeatability)[1])
        row["n_defined"] = int((~np.isnan(np.asarray(repeatability)[cols])).sum())
        out[name] = row
    return out


def ceiling_gaps(
    repeatability: np.ndarray, entry_spearman: np.ndarray, entries: Sequence[tuple[str, str, str]],
    draws: Mapping[str, SplitDraws],
) -> list[dict]:
    """``reliability.ceiling_gap[]``: per split of ``draws`` and entry, the entry's
    All-Origin spearman minus the posterior-predictive ceiling, with both intervals.

    ``repeatability``: (F, O) as :func:`posterior_ceiling`; ``entry_spearman``: (E, F, O)
    unit spearman (canonical, every origin) of the ``entries`` ``(entry, kind, condition)``.
    The estimate is the entry's field-macro minus the ceiling (each over its own
    defined fields, as on the leaderboard); each replicate is the entry's replicate
    minus the root of the repeatability's replicate on the same count matrix.
    ``n_fields`` counts the fields where both are defined (as ``ewma_gap_n_fields``).
    """
    rep_fv = mean_over(np.asarray(repeatability, dtype=np.float64), axis=-1)[0]
    spearman = np.asarray(entry_spearman, dtype=np.float64).reshape(len(entries), *np.shape(repeatability))
    entry_fv = mean_over(spearman, axis=-1)[0]
    Z = np.vstack([rep_fv[None], entry_fv])
    rows = []
    for name, d in draws.items():
        estimate = interval_arrays(Z, d)["estimate"]
        ceiling = _sqrt(_num(estimate[0]))
        gap = {"estimate": estimate[1:] - (np.nan if ceiling is None else ceiling)}
        for prefix, kind in (("ci", "block"), ("fc", "field")):
            reps = replicates(Z, d, kind)
            with np.errstate(invalid="ignore"):
                root = np.sqrt(np.where(reps[0] >= 0, reps[0], np.nan))
            gap[f"{prefix}_low"], gap[f"{prefix}_high"] = percentile_interval(reps[1:] - root[None], d.level)
        gap["n_fields"] = (~np.isnan(Z[1:, d.columns]) & ~np.isnan(Z[:1, d.columns])).sum(axis=1)
        for i, (entry, kind, condition) in enumerate(entries):
            rows.append({"split": name, "entry": entry, "kind": kind, "condition": condition, "track": GAP_TRACK,
                         "policy": GAP_POLICY, "metric": GAP_METRIC, **_row(gap, i)})
    return sorted(rows, key=lambda r: tuple(r[k].encode("utf-8") for k in ("split", "entry", "kind", "condition")))


def _halves(counts: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Direction counts of the two halves in each split: the first half is the n // 2
    papers with the smallest keys (papers laid out as ``repeat(arange(8), counts)``)."""
    n = int(counts.sum())
    half = n // 2
    cut = np.partition(keys, half - 1, axis=1)[:, half - 1:half]
    first_mask = keys <= cut
    slot_of = np.repeat(np.arange(8), counts)
    first = np.zeros((keys.shape[0], 8))
    for slot in range(8):
        first[:, slot] = first_mask[:, slot_of == slot].sum(axis=1)
    return first, counts[None, :] - first


def _compositions(c: np.ndarray) -> np.ndarray:
    return c / c.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class RevisionPair:
    horizon: int
    field: int  # index on the archive's field axis
    first: int  # origin index of T
    second: int  # origin index of T + h
    reliability: float  # NaN where undefined


def revision_reliability(
    target_counts: np.ndarray, field_ids: Sequence[str], origins: Sequence[date],
    splits: int, seed: int, horizons: Sequence[int] = REVISION_HORIZONS, store: DrawStore = NOWHERE,
) -> list[RevisionPair]:
    """Spearman–Brown reliability of every qualifying (T, T+h) pair, in the draw order.

    ``target_counts``: (F, O, 8) canonical counts of each origin's target window. The pairs read
    these counts alone (no model output): ``store`` keeps them between runs, under a key of the
    counts, the field order, the origins and the parameters
    (:class:`~rapgen.scores.diagnostics.memo.DrawStore`; default: drawn every time).
    """
    counts = np.asarray(target_counts).astype(np.int64)
    fields = np.array(sorted(range(len(field_ids)), key=lambda i: field_ids[i].encode("utf-8")), dtype=np.int64)
    days = np.array([d.toordinal() for d in origins], dtype=np.int64)
    kept = store.get("revision_reliability", _revision_draws, (counts, fields, days),
                     {"splits": int(splits), "seed": int(seed), "horizons": tuple(int(h) for h in horizons)}, RevisionDraws)
    return [RevisionPair(int(h), int(f), int(a), int(b), float(r))
            for h, f, a, b, r in zip(kept.horizon.tolist(), kept.field.tolist(), kept.first.tolist(), kept.second.tolist(),
                                     kept.reliability.tolist())]


@dataclass
class RevisionDraws:
    """:func:`revision_reliability`'s pairs as arrays, in the draw order (what the store keeps)."""

    horizon: np.ndarray  # int64
    field: np.ndarray  # int64, index on the archive's field axis
    first: np.ndarray  # int64, origin index of T
    second: np.ndarray  # int64, origin index of T + h
    reliability: np.ndarray  # float64, NaN where undefined


def _revision_draws(counts: np.ndarray, fields: np.ndarray, days: np.ndarray, *, splits: int, seed: int,
                    horizons: tuple[int, ...]) -> RevisionDraws:
    """The draws of :func:`revision_reliability`: ``fields`` the field indices in ``field_id`` byte
    order, ``days`` the origins' proleptic ordinals."""
    origins = [date.fromordinal(int(d)) for d in days]
    position = {d: i for i, d in enumerate(origins)}
    rng = np.random.default_rng(seed)
    out: list[tuple[int, int, int, int, float]] = []
    for h in horizons:
        for fi in fields.tolist():
            for T in sorted(origins):
                later = add_months(T, h)
                if later not in position:
                    continue
                a, b = counts[fi, position[T]], counts[fi, position[later]]
                if a.sum() < 2 or b.sum() < 2:
                    continue
                u1, u2 = _halves(a, rng.random((splits, int(a.sum()))))
                v1, v2 = _halves(b, rng.random((splits, int(b.sum()))))
                d1 = rounded(_compositions(v1) - _compositions(u1))
                d2 = rounded(_compositions(v2) - _compositions(u2))
                rho = spearman(d1, d2)
                defined = rho[~np.isnan(rho)]
                value = np.nan
                if defined.size:
                    r = float(defined.mean())
                    value = 2.0 * r / (1.0 + r) if abs(1.0 + r) > TOL else np.nan
                out.append((h, fi, position[T], position[later], value))
    columns = list(zip(*out)) if out else [(), (), (), (), ()]
    return RevisionDraws(*(np.array(c, dtype=np.int64) for c in columns[:4]), np.array(columns[4], dtype=np.float64))


def revision_section(pairs: Sequence[RevisionPair], n_fields: int, draws: Mapping[str, SplitDraws]) -> dict[str, list[dict]]:
    """``reliability.revision.<split>[]``: per horizon, the field-macro reliability and its intervals."""
    out: dict[str, list[dict]] = {name: [] for name in draws}
    for h in sorted({p.horizon for p in pairs} | set(REVISION_HORIZONS)):
        mine = [p for p in pairs if p.horizon == h]
        total, n = np.zeros(n_fields), np.zeros(n_fields)
        for p in mine:
            if not np.isnan(p.reliability):
                total[p.field] += p.reliability
                n[p.field] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            fv = np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)
        for name, d in draws.items():
            in_split = set(d.columns.tolist())
            chosen = [p for p in mine if p.field in in_split]
            row = {"horizon": h, **_row(interval_arrays(fv[None], d)), "n_pairs": len(chosen),
                   "n_defined": sum(1 for p in chosen if not np.isnan(p.reliability))}
            out[name].append(row)
    return out


__all__ = ["ALL_SPLITS", "REVISION_HORIZONS", "RevisionPair", "ceiling_gaps", "posterior_ceiling", "revision_reliability", "revision_section"]
