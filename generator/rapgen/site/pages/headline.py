"""The leaderboard's headline strip: the best model, its gap to EWMA and the reliability ceiling.

Every number is read from the score outputs: the model's estimate from the
leaderboard panel, the gap to EWMA from ``contrasts.csv`` (``A3-ewma``), the
split-half ceiling from ``diagnostics.json`` (``reliability.splits``) and, when
the scorer wrote them, the posterior-predictive ceiling with its own gap to
EWMA (``reliability.posterior``) and the model's gap to it, paired on the same
draws (``reliability.ceiling_gap``). The site subtracts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapgen.scores import PRIMARY, CEILING_GAP_TABLE, table_records
from rapgen.site.cells import Cell, LeaderPanel, cell, index, num
from rapgen.site.i18n import t
from rapgen.site.inputs import ScoreOutputs

HEADLINE_CONDITION = PRIMARY.condition


@dataclass
class Headline:
    entry: str
    name: str
    url: str | None
    estimate: Cell
    gap_to_ewma: Cell
    ceiling: Cell
    ceiling_gap_to_ewma: Cell
    posterior_ceiling: Cell  # reliability.posterior.<split>.ceiling
    gap_to_ceiling: Cell  # the model's spearman minus the posterior ceiling (reliability.ceiling_gap)


def _diag_cell(doc: dict | None, path: tuple[str, ...], key: str) -> Cell:
    node = doc
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or num(node.get(key)) is None:
        return Cell(None, note=t("lb.not_in_diagnostics"))
    low, high = ("ci_low", "ci_high") if key == "estimate" else (f"{key}_ci_low", f"{key}_ci_high")
    return Cell(num(node.get(key)), num(node.get(low)), num(node.get(high)))


def _gap_cell(doc: dict | None, split: str, entry: str) -> Cell:
    for row in table_records(CEILING_GAP_TABLE, doc or {}):
        if (row.get("split"), row.get("entry"), row.get("kind"), row.get("condition")) == (split, entry, "model", HEADLINE_CONDITION):
            value = num(row.get("estimate"))
            return Cell(value, num(row.get("ci_low")), num(row.get("ci_high")), "" if value is not None else t("common.undefined"))
    return Cell(None, note=t("lb.not_in_diagnostics"))


def build_headline(panels: dict[str, list[LeaderPanel]], out: ScoreOutputs) -> dict[str, Headline]:
    """split -> the headline strip of its All-Origin panel (its first row: the best Expanding estimate)."""
    contrasts = out.contrasts
    contrasts = contrasts[(contrasts["policy"] == PRIMARY.policy) & (contrasts["metric"] == PRIMARY.metric)]
    idx = index(contrasts, ["track", "split", "entry", "contrast"])
    found = {}
    for split, split_panels in panels.items():
        panel = next((p for p in split_panels if p.track == PRIMARY.track and p.rows), None)
        if panel is None:
            continue
        best = panel.rows[0]
        gap = idx.get((PRIMARY.track, split, best.entry, f"{HEADLINE_CONDITION}-ewma"))
        found[split] = Headline(
            best.entry, best.name, best.url, best.cells[HEADLINE_CONDITION],
            cell(gap, t("lb.no_contrast")) if gap is not None else Cell(None, note=t("lb.not_in_contrasts")),
            _diag_cell(out.diagnostics, ("reliability", "splits", split), "ceiling"),
            _diag_cell(out.diagnostics, ("reliability", "posterior", split), "ewma_gap"),
            _diag_cell(out.diagnostics, ("reliability", "posterior", split), "ceiling"),
            _gap_cell(out.diagnostics, split, best.entry),
        )
    return found
