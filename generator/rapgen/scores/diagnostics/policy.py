"""Counting-policy sensitivity as the paper's Table 5 states it.

For the ``policy_sensitivity`` section of diagnostics.json, from the §2 unit
values under every counting policy (All-Origin, field-macro):

* ``max_change`` of a cell (entry, condition, metric): the largest absolute
  change of its estimate from the canonical policy, max over the other
  policies of |estimate(policy) − estimate(canonical)| (not max − min: the
  two differ whenever canonical is not an extreme);
* :func:`orderings` — per model, whether each policy keeps the model's complete
  canonical ordering of its conditions by Spearman: every pair of conditions
  keeps the sign of its difference (a difference within 1e-12 counts as a tie,
  and a tie must stay a tie). ``order_stable`` counts the policies that keep
  it, canonical included (the paper's "15 of 16 model–policy combinations");
  ``max_change`` is the model's largest cell-wise change;
* :func:`contrast_signs` — the paired Spearman contrasts A1 − A0, A3 − A1 and
  A4 − A3 under each policy (paired as SCORING.md §4: within a field over the
  origins both sides define), their signs and whether every policy keeps the
  canonical sign.

Estimates only: the paper's table reports levels and signs, not intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rapgen.archive import CLOSED_FORECAST, EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST
from rapgen.scores.kernels import CONSTANT_TOL, mean_over
from rapgen.scores.metrics import SPEARMAN
from rapgen.scores.schema import CANONICAL_POLICY

# The paper's three structural comparisons (Fixed − Closed, Expanding − Fixed, Expanding State − Forecast).
STRUCTURAL_CONTRASTS: tuple[tuple[str, str], ...] = (
    (FIXED_FORECAST, CLOSED_FORECAST), (EXPANDING_FORECAST, FIXED_FORECAST), (EXPANDING_STATE, EXPANDING_FORECAST),
)


def _num(v: float) -> float | None:
    return None if v is None or np.isnan(v) else float(v)


def max_change(by_policy: Mapping[str, float | None]) -> float | None:
    """The largest |estimate(policy) − estimate(canonical)| over the other policies (None
    without a canonical estimate or without any other defined one)."""
    base = by_policy.get(CANONICAL_POLICY)
    changes = [abs(v - base) for p, v in by_policy.items() if p != CANONICAL_POLICY and v is not None] if base is not None else []
    return max(changes) if changes else None


def _sign(d: float) -> int:
    return 0 if abs(d) <= CONSTANT_TOL else (1 if d > 0 else -1)


def ordering(estimates: Mapping[str, float]) -> str:
    """The conditions by descending estimate, ties joined by "=" (``A1 > A3 > A2 = A4 > A0``)."""
    order = sorted(estimates, key=lambda c: (-estimates[c], c))
    out = order[:1]
    for prev, cur in zip(order, order[1:]):
        out.append((" = " if _sign(estimates[prev] - estimates[cur]) == 0 else " > ") + cur)
    return "".join(out)


def same_order(reference: Mapping[str, float], other: Mapping[str, float]) -> bool:
    """True if every pair of the reference's conditions keeps the sign of its difference in ``other``."""
    conds = sorted(reference)
    if any(c not in other for c in conds):
        return False
    return all(_sign(reference[a] - reference[b]) == _sign(other[a] - other[b]) for i, a in enumerate(conds) for b in conds[i + 1:])


def _sign_text(v: float | None) -> str | None:
    return None if v is None else {1: "+", -1: "−", 0: "0"}[_sign(v)]


def orderings(estimates: Mapping[tuple[str, str], Mapping[str, Mapping[str, float | None]]],
              policies: Sequence[str]) -> list[dict]:
    """One row per (split, model): ``estimates[(split, entry)][condition][policy]``, Spearman."""
    rows = []
    for (split, entry), by_condition in estimates.items():
        per_policy = {p: {c: v[p] for c, v in by_condition.items() if v.get(p) is not None} for p in policies}
        reference = per_policy.get(CANONICAL_POLICY, {})
        if len(reference) < 2:
            continue
        kept = [p for p in policies if same_order(reference, per_policy[p])]
        changes = [m for m in (max_change(v) for v in by_condition.values()) if m is not None]
        rows.append({
            "split": split, "entry": entry, "conditions": " ".join(sorted(reference)),
            "canonical_order": ordering(reference), "n_policies": len(policies), "order_stable": len(kept),
            "changed_policies": " ".join(p for p in policies if p not in kept),
            "max_change": max(changes) if changes else None,
        })
    return rows


def paired_contrast(values: np.ndarray, left: int, right: int, cols: np.ndarray) -> np.ndarray:
    """Field-macro paired contrast of entries ``left`` − ``right`` per policy over the fields ``cols``:
    ``values`` (E, P, F, O) one metric's unit values."""
    diff = values[left][:, cols] - values[right][:, cols]  # (P, F, O), NaN unless both defined
    field_scores, _ = mean_over(diff, axis=-1)  # (P, F)
    estimate, _ = mean_over(field_scores, axis=-1)
    return estimate


def contrast_signs(a: Any, split_cols: Mapping[str, np.ndarray]) -> list[dict]:
    """One row per (split, model, structural contrast) the model has (``a``: DiagnosticArrays)."""
    m = list(a.metric_names).index(SPEARMAN)
    values = np.asarray(a.values)[:, :, m]  # (E, P, F, O)
    index = {(e, k, c): i for i, (e, k, c) in enumerate(a.entries)}
    models = sorted({e for e, k, _ in a.entries if k == "model"})
    rows = []
    for split, cols in split_cols.items():
        for entry in models:
            for left, right in STRUCTURAL_CONTRASTS:
                li, ri = index.get((entry, "model", left)), index.get((entry, "model", right))
                if li is None or ri is None:
                    continue
                est = paired_contrast(values, li, ri, cols)
                by_policy = {p: _num(est[pi]) for pi, p in enumerate(a.policies)}
                signs = {p: _sign_text(v) for p, v in by_policy.items()}
                canonical = signs.get(CANONICAL_POLICY)
                rows.append({"split": split, "entry": entry, "contrast": f"{left}-{right}", "metric": SPEARMAN,
                             "estimates": by_policy, "signs": signs,
                             "sign_kept": canonical is not None and all(s == canonical for s in signs.values())})
    return rows
