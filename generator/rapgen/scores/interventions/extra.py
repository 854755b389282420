"""The unit metrics the interventions take from the diagnostics: the three
EWMA-corrected alignments and ``adapt_h`` (h = 6, 12, 18), for any (F, O, 8)
prediction array, computed exactly as diagnostics.json computes them for the
scored entries (same permutations, same rounding).

``adapt_h`` is stored at the pair's first origin T (see :mod:`conditions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import numpy as np

from rapgen.scores.diagnostics.episodes import revision_alignment
from rapgen.scores.diagnostics.residual import direct_alignment, direct_permutations, partial_residual
from rapgen.scores.interventions.assemble import ExtraMetrics
from rapgen.scores.interventions.reliability import REVISION_HORIZONS


# The direct alignment of a unit depends on that unit's rows alone, so these can be taken from the
# diagnostics' run; the partial residual's null is computed per distinct episode group of the rows
# passed in (its products and medians then add in another order), so it is always computed here.
CORRECTED = ("direct_cos_corrected", "direct_spearman_corrected")
# A prediction array whose direct alignments are already known: (p (F, O, 8), {CORRECTED name: (F, O)}).
Known = tuple[np.ndarray, Mapping[str, np.ndarray]]


def unit_extras(ledger: Mapping, y: np.ndarray, ewma: np.ndarray, origins: Sequence[date],
                known: Sequence[Known] = ()) -> ExtraMetrics:
    """A function p -> {metric: (F, O) array} over the episode grid of ``y`` (F, O, 8).

    ``known``: prediction arrays the diagnostics already aligned on this grid (the scored
    entries); a unit row of p equal to one of theirs at the same episode (NaN where it is NaN)
    takes its direct alignments, which are what the same computation on the same row gives."""
    residual = ledger["residual"]
    perms = direct_permutations(int(residual["direct_permutations"]), int(residual["seed"]))
    F, O = y.shape[:2]
    month = np.tile(np.array([d.year * 12 + d.month - 1 for d in origins], dtype=np.int64), F)
    series = np.repeat(np.arange(F), O)
    y_rows, e_rows = y.reshape(-1, 8), ewma.reshape(-1, 8)
    known_rows = [(np.asarray(q, dtype=np.float64).reshape(-1, 8), {name: np.asarray(cols[name], dtype=np.float64).reshape(-1)
                                                                   for name in CORRECTED}) for q, cols in known]

    def extras(p: np.ndarray, is_state: bool) -> dict[str, np.ndarray]:
        rows = np.asarray(p, dtype=np.float64).reshape(-1, 8)
        out = _direct_corrected(rows, e_rows, y_rows, perms, known_rows)
        out = {name: value.reshape(F, O) for name, value in out.items()}
        out["partial_residual_corrected"] = partial_residual(rows, e_rows, y_rows).corrected.reshape(F, O)
        for h in REVISION_HORIZONS:
            rev = revision_alignment(rows, y_rows, series, month, h)
            value = np.full(F * O, np.nan)
            value[rev.first] = rev.adapt
            out[f"adapt_{h}"] = value.reshape(F, O)
        return out

    return extras


def _direct_corrected(rows: np.ndarray, e_rows: np.ndarray, y_rows: np.ndarray, perms: np.ndarray,
                      known_rows: Sequence[tuple[np.ndarray, Mapping[str, np.ndarray]]]) -> dict[str, np.ndarray]:
    """The two EWMA-corrected direct alignments of every unit row. A unit's alignment is a
    function of its own (p, e, y) rows alone (the same permutations, the same per-row
    arithmetic whatever rows share its block), so a row equal to a known prediction's row at the
    same episode (NaN where it is NaN) takes that row's values; only the other rows are aligned."""
    n = rows.shape[0]
    out = {name: np.full(n, np.nan) for name in CORRECTED}
    todo = np.ones(n, dtype=bool)
    row_nan = np.isnan(rows)
    for q, cols in known_rows:
        if not todo.any():
            break
        same = todo & ((rows == q) | (row_nan & np.isnan(q))).all(axis=1)
        for name in CORRECTED:
            out[name][same] = cols[name][same]
        todo &= ~same
    idx = np.flatnonzero(todo)
    if idx.size:
        d = direct_alignment(rows[idx], e_rows[idx], y_rows[idx], perms)
        out["direct_cos_corrected"][idx] = d.cos_corrected
        out["direct_spearman_corrected"][idx] = d.spearman_corrected
    return out
