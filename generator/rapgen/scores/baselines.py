"""The six mechanical baselines (SCORING.md §3), vectorised over episodes.

Inputs are the three history compositions h1, h2, h3 (oldest first) with the
slots on the last axis; a missing window is a row of NaN and makes the
episode's baselines missing. Each formula is rounded to 12 decimals straight
away, then clipped at 0 and renormalised (uniform if nothing is left).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from rapgen.errors import ScoringError

BASELINES: tuple[str, ...] = ("recent", "ewma", "linear_trend", "arima110", "holt", "var_ridge")
ROUND_DECIMALS = 12


def finish(v: np.ndarray) -> np.ndarray:
    """Round to 12 decimals, clip at 0, renormalise; uniform where nothing is left."""
    v = np.clip(np.round(v, ROUND_DECIMALS), 0.0, None)
    total = v.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, v / np.where(total > 0, total, 1.0), 1.0 / v.shape[-1])
    return np.where(np.isnan(total), np.nan, out)


def recent(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    return h3 + 0.0


def ewma(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    w1, w2, w3 = (float(w) for w in ledger["ewma_weights"])
    return w1 * h1 + w2 * h2 + w3 * h3


def linear_trend(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    # Least-squares line through (1,h1),(2,h2),(3,h3) evaluated at 4.
    return (h1 + h2 + h3) / 3.0 + (h3 - h1)


def arima110(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    phi = float(ledger["arima110"]["phi"])
    return h3 + phi * (h3 - h2)


def holt(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    alpha = float(ledger["holt"]["alpha"])
    beta = float(ledger["holt"]["beta"])
    level, trend = h1, h2 - h1
    for x in (h2, h3):
        new_level = alpha * x + (1 - alpha) * (level + trend)
        trend = beta * (new_level - level) + (1 - beta) * trend
        level = new_level
    return level + trend


def var_ridge(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    # X = [h1 h2], Y = [h2 h3] (8x2); lambda = ratio * trace(X X^T) / 8;
    # A = (Y X^T + lambda I)(X X^T + lambda I)^-1; forecast A h3. Batched.
    ratio = float(ledger["var_ridge"]["ratio"])
    d = h1.shape[-1]
    lead = h1.shape[:-1]
    ok = ~(np.isnan(h1).any(-1) | np.isnan(h2).any(-1) | np.isnan(h3).any(-1))
    out = np.full(h1.shape, np.nan)
    if not ok.any():
        return out
    a1, a2, a3 = h1[ok], h2[ok], h3[ok]
    X = np.stack([a1, a2], axis=-1)  # (n, 8, 2)
    Y = np.stack([a2, a3], axis=-1)
    XXt = X @ np.swapaxes(X, -1, -2)
    YXt = Y @ np.swapaxes(X, -1, -2)
    lam = ratio * np.trace(XXt, axis1=-2, axis2=-1) / d
    eye = np.eye(d)
    ridge = lam[:, None, None] * eye
    A = (YXt + ridge) @ np.linalg.inv(XXt + ridge)
    out[ok] = (A @ a3[..., None])[..., 0]
    return out.reshape(lead + (d,))


FORMULAS: dict[str, Callable[..., np.ndarray]] = {
    "recent": recent,
    "ewma": ewma,
    "linear_trend": linear_trend,
    "arima110": arima110,
    "holt": holt,
    "var_ridge": var_ridge,
}


def check_ledger(ledger: dict) -> None:
    if len(ledger.get("ewma_weights", ())) != 3:
        raise ScoringError(
            "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json: 'ewma_weights' must have exactly 3 weights (one per history window)"
        )


def compute_baselines(h1: np.ndarray, h2: np.ndarray, h3: np.ndarray, ledger: dict) -> np.ndarray:
    """Every baseline for every episode: shape ``(6,) + h1.shape``, NaN rows where
    any history window is missing."""
    check_ledger(ledger)
    h1, h2, h3 = (np.asarray(h, dtype=float) for h in (h1, h2, h3))
    missing = np.isnan(h1).any(-1) | np.isnan(h2).any(-1) | np.isnan(h3).any(-1)
    out = []
    with np.errstate(invalid="ignore"):
        for name in BASELINES:
            v = finish(FORMULAS[name](h1, h2, h3, ledger))
            out.append(np.where(missing[..., None], np.nan, v))
    return np.stack(out)
