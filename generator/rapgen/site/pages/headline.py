"""The leaderboard's headline strip: the best model, its gap to EWMA and the reliability ceiling.

Every number is read from the score outputs: the model's estimate from the
leaderboard panel, the gap to EWMA from ``contrasts.csv`` (``A3-ewma``), the
ceiling from ``diagnostics.json`` (``reliability.splits``) and, when the scorer
wrote it, the ceiling's own gap to EWMA (``reliability.posterior``). The site
subtracts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapgen.scores import PRIMARY
from rapgen.site.cells import Cell, LeaderPanel, cell, index, num
from rapgen.site.i18n import t
from rapgen.site.inputs import ScoreOutputs

HEADLINE_CONDITION = "A3"


@dataclass
class Headline:
    entry: str
    name: str
    url: str | None
    estimate: Cell
    gap_to_ewma: Cell
    ceiling: Cell
    ceiling_gap_to_ewma: Cell


def _diag_cell(doc: dict | None, path: tuple[str, ...], key: str) -> Cell:
    node = doc
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or num(node.get(key)) is None:
        return Cell(None, note=t("lb.not_in_diagnostics"))
    low, high = ("ci_low", "ci_high") if key == "estimate" else (f"{key}_ci_low", f"{key}_ci_high")
    return Cell(num(node.get(key)), num(node.get(low)), num(node.get(high)))


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
        )
    return found
