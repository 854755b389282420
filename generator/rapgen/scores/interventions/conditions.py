"""Exact-history conditions (INTERVENTIONS.md §2) and partial-coverage panels (§3).

Both are condition-level analyses over unit values the scorer already knows
how to compute (the §2 metrics, ``tv_gain``, the corrected alignments,
``adapt_h``, ``calls_per_unit``): the caller passes them per condition as
:class:`UnitValues`, one ``(F, O)`` array per metric. ``adapt_h`` is stored at
the pair's first origin T, so pairing by origin pairs revision pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rapgen.archive import ORACLE_CONDITIONS
from rapgen.scores.interventions.core import Statistic, field_values, paired_values
from rapgen.scores.schema import ORACLE_BASELINES, ORACLE_MODEL_CONTRASTS  # §2's contrasts, declared with the score files

PANEL_TRACK = "panel"
# INTERVENTIONS.md §3 lists adapt_6 as a panel's only revision metric, per condition only: the
# paper's panel reports within-regime six-month transitions and defines no pooled revision contrast.
PANEL_PER_CONDITION_ONLY: tuple[str, ...] = ("adapt_6",)
PANEL_UNLISTED: tuple[str, ...] = ("adapt_12", "adapt_18")


@dataclass(frozen=True)
class UnitValues:
    """One entry-condition's unit values on the (F, O) grid.

    ``present``/``valid`` count units (a baseline passes None: it has no records).
    """

    values: Mapping[str, np.ndarray]  # metric -> (F, O), NaN where undefined or invalid
    present: np.ndarray | None = None
    valid: np.ndarray | None = None


def _restrict(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, np.asarray(values, dtype=np.float64), np.nan)


def _counts(units: UnitValues, mask: np.ndarray) -> dict[str, np.ndarray]:
    if units.present is None:
        return {}
    present = units.present & mask
    valid = units.valid & mask if units.valid is not None else present
    return {"n_units": present.sum(axis=1), "n_valid": valid.sum(axis=1), "n_invalid": (present & ~valid).sum(axis=1)}


def cell_statistics(
    base_key: Mapping[str, str], cells: Mapping[str, UnitValues], masks: Mapping[str, np.ndarray]
) -> list[Statistic]:
    """One statistic per (subset, cell, metric): ``masks`` maps subset -> (F, O) episodes kept."""
    out = []
    for subset, mask in masks.items():
        for cell, units in cells.items():
            counts = _counts(units, mask)
            for metric, values in units.values.items():
                key = {**base_key, "subset": subset, "cell": cell, "metric": metric}
                out.append(Statistic(key, field_values(_restrict(values, mask)), counts))
    return out


def contrast_statistics(
    base_key: Mapping[str, str],
    pairs: Sequence[tuple[str, UnitValues, UnitValues]],
    masks: Mapping[str, np.ndarray],
    metrics: Sequence[str] | None = None,
) -> list[Statistic]:
    """Paired contrasts (left − right, within a field over origins where both are defined)
    for every metric both sides have (optionally limited to ``metrics``)."""
    out = []
    for subset, mask in masks.items():
        for name, left, right in pairs:
            for metric in left.values:
                if metric not in right.values or (metrics is not None and metric not in metrics):
                    continue
                diff = _restrict(paired_values(left.values[metric], right.values[metric], metric), mask)
                key = {**base_key, "subset": subset, "contrast": name, "metric": metric}
                out.append(Statistic(key, field_values(diff)))
    return out


def oracle_statistics(
    entry: str,
    o_units: Mapping[str, UnitValues],
    a_units: Mapping[str, UnitValues],
    baselines: Mapping[str, UnitValues],
    subsets: Mapping[str, np.ndarray],
    tracks: Mapping[str, np.ndarray],
) -> tuple[list[Statistic], list[Statistic]]:
    """cells.csv and contrasts.csv statistics of one model's O conditions.

    ``tracks``: track -> (O,) origin mask (``forecast_strict``: the strict origin,
    present only when the model takes part under its c_eff, §4).
    """
    cells: list[Statistic] = []
    contrasts: list[Statistic] = []
    have = {c: o_units[c] for c in ORACLE_CONDITIONS if c in o_units}
    pairs: list[tuple[str, UnitValues, UnitValues]] = []
    for c, units in have.items():
        for name in ORACLE_BASELINES:
            if name in baselines:
                pairs.append((f"{c}-{name}", units, baselines[name]))
    for left, right in ORACLE_MODEL_CONTRASTS:
        other = have.get(right) or a_units.get(right)
        if left in have and other is not None:
            pairs.append((f"{left}-{right}", have[left], other))
    for track, origin_mask in tracks.items():
        masks = {s: np.asarray(m, dtype=bool) & np.asarray(origin_mask, dtype=bool)[None, :] for s, m in subsets.items()}
        key = {"analysis": "oracle", "track": track, "entry": entry}
        cells += cell_statistics(key, have, masks)
        contrasts += contrast_statistics(key, pairs, masks)
    return cells, contrasts


def pooled_field_values(differences: Sequence[np.ndarray]) -> np.ndarray:
    """``pooled:model-base``: per field, the mean of the defined differences over every
    (origin, condition) cell at once (not a mean of per-condition means)."""
    stacked = np.concatenate([np.asarray(d, dtype=np.float64) for d in differences], axis=1)
    return field_values(stacked)


def _without(units: Mapping[str, UnitValues], metrics: Sequence[str]) -> dict[str, UnitValues]:
    return {c: UnitValues({k: v for k, v in u.values.items() if k not in metrics}, u.present, u.valid) for c, u in units.items()}


def panel_statistics(
    entry: str,
    model: Mapping[str, UnitValues],
    base: Mapping[str, UnitValues],
    cells_mask: np.ndarray,
    subsets: Mapping[str, np.ndarray],
    per_condition_only: Sequence[str] = PANEL_PER_CONDITION_ONLY,
    unlisted: Sequence[str] = PANEL_UNLISTED,
) -> tuple[list[Statistic], list[Statistic]]:
    """§3 cells (model and base on P, track ``panel``) and the paired contrasts
    ``c:model-base`` per listed condition and ``pooled:model-base``.

    Cell names are ``model:<c>`` and ``base:<c>`` so that two panels sharing a
    base never collide. Fields outside P contribute nothing; the draws are the split's.
    Metrics in ``unlisted`` (the revision horizons §3 does not list) get no row;
    those in ``per_condition_only`` get no pooled row.
    """
    model, base = _without(model, unlisted), _without(base, unlisted)
    conditions = [c for c in model if c in base]
    masks = {s: np.asarray(m, dtype=bool) & np.asarray(cells_mask, dtype=bool) for s, m in subsets.items()}
    key = {"analysis": "panel", "track": PANEL_TRACK, "entry": entry}
    named = {f"model:{c}": model[c] for c in conditions} | {f"base:{c}": base[c] for c in conditions}
    cells = cell_statistics(key, named, masks)
    contrasts = contrast_statistics(key, [(f"{c}:model-base", model[c], base[c]) for c in conditions], masks)
    shared = [m for m in model[conditions[0]].values if m not in per_condition_only] if conditions else []
    for subset, mask in masks.items():
        for metric in shared:
            diffs = [_restrict(paired_values(model[c].values[metric], base[c].values[metric], metric), mask)
                     for c in conditions if metric in model[c].values and metric in base[c].values]
            if diffs:
                contrasts.append(Statistic({**key, "subset": subset, "contrast": "pooled:model-base", "metric": metric},
                                           pooled_field_values(diffs)))
    return cells, contrasts
