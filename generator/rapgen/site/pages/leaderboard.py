"""The leaderboard page: one panel per split and track, models and baselines, ranked
columns and a forest plot, all under the headline metric and policy."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import ModelInfo
from rapgen.scores import BASELINE_CONDITION as BASE, FORECAST_STRICT_TRACK, PRIMARY, TRACKS
from rapgen.site import plots
from rapgen.site.cells import (
    CONDITION_LABEL, LEADER_CONDITIONS, SPLIT_LABEL, SPLITS, TRACK_LABEL, Cell, LeaderPanel, LeaderRow, cell, count, index,
    mark_best, num, page_url, records,
)
from rapgen.site.i18n import t
from rapgen.site.inputs import ScoreOutputs

# A model row sorts by the headline condition, then the other forecasts right to left (A3, A1, A0).
SORT_CONDITIONS = (PRIMARY.condition, *(c for c in reversed(LEADER_CONDITIONS) if c != PRIMARY.condition))

REFERENCE_AGENT_KEY = "reference_agent"
Rank = tuple[float | None, bool, float | None]  # rank, tied, p_first


def is_reference_agent(info: Any) -> bool:
    """True for rapgen's own reference agents: model.json carries ``"reference_agent": true``
    (``rapgen reference-agents run`` writes it; ``rapgen submit check`` rejects it in a submission)."""
    return bool(info is not None and info.extra.get(REFERENCE_AGENT_KEY) is True)


def rank_lookup(ranks: pd.DataFrame) -> dict[tuple, Rank]:
    """(track, split, condition, entry) -> (rank, tied, p_first) under the headline policy and metric."""
    groups = defaultdict(list)
    for r in records(ranks[(ranks["policy"] == PRIMARY.policy) & (ranks["metric"] == PRIMARY.metric)]):
        groups[(r["track"], r["split"], r["condition"])].append(r)
    out = {}
    for key, rows in groups.items():
        counts = Counter(num(r["rank"]) for r in rows)
        for r in rows:
            rk = num(r["rank"])
            out[key + (r["entry"],)] = (rk, rk is not None and counts[rk] > 1, num(r["p_first"]))
    return out


def _ranked(c: Cell, rank: Rank | None, among: str = "") -> Cell:
    if rank and rank[0] is not None:
        c.rank, c.tied, c.p_first, c.rank_among = rank[0], rank[1], rank[2], among
    return c


def _model_row(entry: str, info: ModelInfo | None, idx: dict, ranks: dict, track: str, split: str, page: str) -> LeaderRow:
    cells, n_valid, n_exp, parts = {}, 0, 0, []
    for cond in LEADER_CONDITIONS:
        row = idx.get((track, split, "model", entry, cond))
        cells[cond] = _ranked(cell(row), ranks.get((track, split, cond, entry)))
        if row is not None:
            n_valid += count(row["n_valid"])
            n_exp += count(row["n_episodes"])
            parts.append(f"{cond}: {count(row['n_valid'])}/{count(row['n_episodes'])}")
    cutoff = info.effective_cutoff.isoformat() if info and info.effective_cutoff else ""
    return LeaderRow(entry, info.display_name if info else entry, page_url(page, f"models/{entry}.md") if info else None,
                     "model", info.proprietary if info else None, cutoff, cells, n_valid, n_exp,
                     t("lb.validity_title", parts=", ".join(parts)), is_reference_agent(info))


def _baseline_row(entry: str, idx: dict, ranks: dict, track: str, split: str) -> LeaderRow:
    row = idx.get((track, split, "baseline", entry, BASE))
    # ranks.csv ranks baselines inside each condition's column; the Expanding (A3)
    # column stands for them here unless a BASE ranking exists.
    rank, among = ranks.get((track, split, BASE, entry)), t("lb.among_baselines")
    if rank is None:
        rank, among = ranks.get((track, split, PRIMARY.condition, entry)), t("lb.among_a3")
    return LeaderRow(entry, entry, None, "baseline", None, "", {BASE: _ranked(cell(row), rank, among)},
                     count(row["n_valid"]) if row else 0, count(row["n_episodes"]) if row else 0,
                     t("lb.baseline_validity"))


def _order(r: LeaderRow) -> tuple:
    key = [-v if (v := r.cells[cond].value) is not None else math.inf for cond in SORT_CONDITIONS]
    return (*key, r.entry)


def _chart(rows: list[LeaderRow], baselines: list[LeaderRow], split: str, track: str) -> str:
    forest_rows = [{"label": r.name, "series": CONDITION_LABEL[cond], "estimate": r.cells[cond].value,
                    "ci_low": r.cells[cond].ci_low, "ci_high": r.cells[cond].ci_high}
                   for r in rows for cond in LEADER_CONDITIONS]
    forest_rows += [{"label": t("common.baseline_suffix", name=r.name), "series": CONDITION_LABEL[BASE], "estimate": r.cells[BASE].value,
                     "ci_low": r.cells[BASE].ci_low, "ci_high": r.cells[BASE].ci_high} for r in baselines]
    if not forest_rows:
        return ""
    fig, height = plots.forest(forest_rows)
    return plots.embed(fig, height, t("lb.forest_title", split=SPLIT_LABEL[split], track=TRACK_LABEL[track]))


def build_leaderboard(models: list[ModelInfo], out: ScoreOutputs, page: str = "leaderboard.md") -> dict[str, list[LeaderPanel]]:
    """split -> one panel per track (headline metric and policy)."""
    lb = out.leaderboard
    lb = lb[(lb["policy"] == PRIMARY.policy) & (lb["metric"] == PRIMARY.metric)]
    idx = index(lb, ["track", "split", "kind", "entry", "condition"])
    ranks = rank_lookup(out.ranks)
    by_id = {m.model_id: m for m in models}
    panels: dict[str, list[LeaderPanel]] = {}
    for split in SPLITS:
        panels[split] = []
        for track in TRACKS:
            part = lb[(lb["split"] == split) & (lb["track"] == track)]
            rows = [_model_row(e, by_id.get(e), idx, ranks, track, split, page)
                    for e in sorted(set(part[part["kind"] == "model"]["entry"]))]
            baselines = [_baseline_row(e, idx, ranks, track, split) for e in sorted(set(part[part["kind"] == "baseline"]["entry"]))]
            for cond in LEADER_CONDITIONS:
                mark_best([r.cells[cond] for r in rows], True)
            mark_best([r.cells[BASE] for r in baselines], True)
            rows.sort(key=_order)
            baselines.sort(key=lambda r: (-(v if (v := r.cells[BASE].value) is not None else -math.inf), r.entry))
            note = "" if rows else t("lb.strict_note" if track == FORECAST_STRICT_TRACK else "lb.no_model")
            panels[split].append(LeaderPanel(split, track, f"leaderboard-{split}-{track.replace('_', '-')}", rows, baselines,
                                             _chart(rows, baselines, split, track), note))
    return panels
