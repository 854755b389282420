"""Temporal exposure (INTERVENTIONS.md §4): strict origins from each model's cut-off.

c is ``knowledge_cutoff``, else ``release_date``; ``cutoff_precision`` fixes
the effective bound c_eff (``day``: c itself; ``month``: c is the 1st and
c_eff the last day of its month, the conservative reading of a month-only
cut-off). With w = ``window_months``:

* Forecast-Strict(T) ⇔ T > c_eff: the model cannot have seen the target window;
* Joint-Strict(T) ⇔ T − w months > c_eff: nor the recent window a State answer reads.

A *boundary* origin is strict when the bound is taken as c − 1 day but not
under c_eff: the origins a month-precision rule gives up.
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from rapgen.archive import add_months
from rapgen.scores.interventions.core import Statistic, field_values
from rapgen.scores.schema import CONTRASTS, ORACLE_CONTRASTS, STATE_CONTRASTS

MASK_KINDS: tuple[str, ...] = ("forecast", "joint")
STRATA: tuple[str, ...] = ("strict", "exposed", "difference")
# The leaderboard's contrasts (scores.schema) by the answers they involve: forecasts only, or a State answer.
FORECAST_CONTRASTS: frozenset[str] = frozenset(CONTRASTS) - frozenset(STATE_CONTRASTS)  # A1-A0, A3-A1, Ak-ewma
JOINT_CONTRASTS: frozenset[str] = frozenset(STATE_CONTRASTS)  # A2-A1, A4-A3


def effective_cutoff(knowledge_cutoff: date | None, release_date: date | None, precision: str = "day") -> date | None:
    """c_eff, or None when neither date is known. ``month`` needs c on the 1st (ValueError otherwise)."""
    c = knowledge_cutoff or release_date
    if c is None:
        return None
    if precision == "day":
        return c
    if precision != "month":
        raise ValueError(f"cutoff_precision must be 'day' or 'month', found {precision!r}")
    if c.day != 1:
        raise ValueError(f"a month-precision cut-off must be the 1st of a month, found {c}")
    return c.replace(day=calendar.monthrange(c.year, c.month)[1])


def forecast_strict(origin: date, c_eff: date | None) -> bool:
    return c_eff is not None and origin > c_eff


def joint_strict(origin: date, c_eff: date | None, window_months: int) -> bool:
    return c_eff is not None and add_months(origin, -window_months) > c_eff


@dataclass(frozen=True)
class MaskRow:
    """One strict_masks.csv row."""

    entry: str
    origin: date
    forecast_strict: bool
    joint_strict: bool
    forecast_boundary: bool
    joint_boundary: bool


def strict_mask_rows(
    entry: str, knowledge_cutoff: date | None, release_date: date | None, precision: str,
    origins: Sequence[date], window_months: int,
) -> list[MaskRow]:
    """Every origin's masks for one model; no rows when it has no c."""
    c = knowledge_cutoff or release_date
    c_eff = effective_cutoff(knowledge_cutoff, release_date, precision)
    if c is None or c_eff is None:
        return []
    loose = c - timedelta(days=1)
    rows = []
    for T in origins:
        fs, js = forecast_strict(T, c_eff), joint_strict(T, c_eff, window_months)
        rows.append(MaskRow(entry, T, fs, js, forecast_strict(T, loose) and not fs,
                            joint_strict(T, loose, window_months) and not js))
    return rows


def masks_of(rows: Sequence[MaskRow]) -> dict[str, np.ndarray]:
    """Mask name -> (O,) strict origins: ``forecast``, ``joint`` and, where a boundary
    origin exists, ``forecast_boundary_in`` / ``joint_boundary_in`` (boundary origins as strict)."""
    if not rows:
        return {}
    out: dict[str, np.ndarray] = {}
    for kind in MASK_KINDS:
        strict = np.array([getattr(r, f"{kind}_strict") for r in rows], dtype=bool)
        boundary = np.array([getattr(r, f"{kind}_boundary") for r in rows], dtype=bool)
        out[kind] = strict
        if boundary.any():
            out[f"{kind}_boundary_in"] = strict | boundary
    return out


def mask_kind(contrast: str) -> str:
    """``forecast`` for A1-A0, A3-A1, Ak-ewma and every O contrast; ``joint`` for
    anything involving a State answer (A2-A1, A4-A3 and every §1 replay contrast)."""
    if contrast in FORECAST_CONTRASTS or contrast in ORACLE_CONTRASTS:
        return "forecast"
    return "joint"


def exposure_statistics(
    entry: str, contrasts: Mapping[str, Mapping[str, np.ndarray]], masks: Mapping[str, np.ndarray]
) -> list[Statistic]:
    """exposure.csv statistics: per contrast (unit differences (F, O) per metric), per
    applicable mask, the strict and exposed strata and their paired difference.
    ``adapt_h`` metrics are skipped: a revision pair can straddle the two strata."""
    out = []
    for name, by_metric in contrasts.items():
        kind = mask_kind(name)
        for mask_name, strict in masks.items():
            if not mask_name.startswith(kind):
                continue
            strict = np.asarray(strict, dtype=bool)
            n = {"strict": int(strict.sum()), "exposed": int((~strict).sum()), "difference": int(strict.size)}
            for metric, diff in by_metric.items():
                if metric.startswith("adapt_"):
                    continue  # a revision pair (T, T+h) can straddle the strata
                s_fv = field_values(diff, strict[None, :])
                e_fv = field_values(diff, ~strict[None, :])
                values = {"strict": s_fv, "exposed": e_fv, "difference": s_fv - e_fv}
                for stratum in STRATA:
                    key = {"entry": entry, "mask": mask_name, "contrast": name, "metric": metric, "stratum": stratum}
                    out.append(Statistic(key, values[stratum], extra={"n_origins": n[stratum]}))
    return out
