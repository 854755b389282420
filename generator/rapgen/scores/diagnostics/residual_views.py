"""Residual alignment where the paper cuts it (§3.3, §4.2, Appendix D.3 and its Table 14).

From the per-unit alignment values the diagnostics already computed (direct
cosine and Spearman, partial residual, all permutation-corrected, and
``tv_gain``; canonical policy), for the ``residual_alignment`` section:

* ``subsets`` — every entry's field-macro value on two subsets of episodes:
  ``change_rich`` (the model-output-independent change-rich episodes) and
  ``latest_origin`` (the last scored origin only, where the paper finds agent
  alignment near zero while a pre-T linear trend stays positive);
* ``contrasts`` — the retrieval contrasts on the alignment endpoints, each
  model's A1 − A0, A3 − A0 and A3 − A1 (Table 14: "All-Origin retrieval
  contrasts under the partial-residual endpoint"), paired as SCORING.md §4:
  within a field over the origins where both conditions are defined, then the
  field-macro mean. Higher alignment is better, so positive favours the left side.

Estimates are field-macro means; intervals are the split's block bootstrap
(the shared §5 count matrix), as for every other diagnostics row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rapgen.archive import CLOSED_FORECAST, EXPANDING_FORECAST, FIXED_FORECAST
from rapgen.scores.kernels import mean_over

SUBSETS: tuple[str, ...] = ("change_rich", "latest_origin")
# (left, right): Fixed − Closed, Expanding − Closed, Expanding − Fixed.
RETRIEVAL_CONTRASTS: tuple[tuple[str, str], ...] = (
    (FIXED_FORECAST, CLOSED_FORECAST), (EXPANDING_FORECAST, CLOSED_FORECAST), (EXPANDING_FORECAST, FIXED_FORECAST),
)
ALIGNMENTS: tuple[str, ...] = ("direct_cosine", "direct_spearman", "partial_residual")


def subset_masks(origins: Sequence[Any], rich: np.ndarray) -> dict[str, np.ndarray]:
    """subset -> (F, O) episodes kept: the change-rich mask, and the latest origin's column."""
    latest = np.zeros(np.shape(rich), dtype=bool)
    if len(origins):
        latest[:, int(np.argmax(np.array([o.toordinal() for o in origins])))] = True
    return {"change_rich": np.asarray(rich, dtype=bool), "latest_origin": latest}


def subset_rows(a: Any, stats: Sequence[tuple], aggs: Mapping[str, Any], masks: Mapping[str, np.ndarray]) -> list[dict]:
    """One row per (split, subset, entry, statistic); ``stats`` as :func:`sections.alignment_units`."""
    latest = max(a.origins).isoformat() if len(a.origins) else None
    rows = []
    for subset in SUBSETS:
        mask = masks[subset]
        values = [np.where(mask, s[2], np.nan) for s in stats]
        Z = np.array([mean_over(v, axis=-1)[0] for v in values]).reshape(len(stats), len(a.field_ids))
        for split, agg in aggs.items():
            cols = agg.cols
            for (ei, name, *_), v, s in zip(stats, values, agg.summarise(Z)):
                entry, kind, cond = a.entries[ei]
                rows.append({"split": split, "subset": subset, "origin": latest if subset == "latest_origin" else None,
                             "entry": entry, "kind": kind, "condition": cond, "statistic": name, **s,
                             "n_units": int(mask[cols].sum()), "n_defined": int((~np.isnan(v[cols])).sum())})
    return rows


def contrast_rows(a: Any, stats: Sequence[tuple], aggs: Mapping[str, Any]) -> list[dict]:
    """One row per (split, model, retrieval contrast, alignment statistic) the model has."""
    unit = {(a.entries[ei], name): values for ei, name, values, *_ in stats if name in ALIGNMENTS}
    keys, Z = [], []
    for entry in sorted({e for e, k, _ in a.entries if k == "model"}):
        for left, right in RETRIEVAL_CONTRASTS:
            for name in ALIGNMENTS:
                lv, rv = unit.get(((entry, "model", left), name)), unit.get(((entry, "model", right), name))
                if lv is None or rv is None:
                    continue
                keys.append((entry, f"{left}-{right}", name))
                Z.append(mean_over(np.asarray(lv, dtype=np.float64) - np.asarray(rv, dtype=np.float64), axis=-1)[0])
    rows = []
    if not keys:
        return rows
    Z = np.array(Z)
    for split, agg in aggs.items():
        for (entry, contrast, name), s in zip(keys, agg.summarise(Z)):
            rows.append({"split": split, "entry": entry, "contrast": contrast, "statistic": name, **s})
    return rows


def views(a: Any, stats: Sequence[tuple], aggs: Mapping[str, Any], rich: np.ndarray) -> dict:
    """The ``subsets`` and ``contrasts`` keys of the ``residual_alignment`` section."""
    return {"subsets": subset_rows(a, stats, aggs, subset_masks(a.origins, rich)),
            "contrasts": contrast_rows(a, stats, aggs)}
