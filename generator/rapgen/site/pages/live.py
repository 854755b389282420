"""The leaderboard's Live tab and the partial models of All-Origin (RELEASES.md, "Tracks").

Live scores are the scored release's ``live`` rows of ``releases.csv`` (the headline
metric and policy) with the origin sets of ``scores.json`` ``release.live``; sealed
entries not yet resolved come from the verified archive's ``live_entries`` (their
commitment's digest and receipt date), unrevealed ones stay listed. Partial models
(``release.partial``) are shown unranked with their last complete release's row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rapgen.archive.history.live import LiveStatus
from rapgen.scores import PRIMARY
from rapgen.scores.schema import LIVE_TRACK
from rapgen.site.cells import LEADER_CONDITIONS, Cell, LeaderPanel, LeaderRow, mark_best, num, page_url, records
from rapgen.site.i18n import t
from rapgen.site.pages.releases import headline_rows



@dataclass
class SealedRow:
    model_id: str
    origin: str
    status: str
    digest: str
    receipt_date: str
    on_time: bool


@dataclass
class LiveExtras:
    """What the Live panel shows beyond the ranked rows."""

    simulated: bool
    sealed: list[SealedRow] = field(default_factory=list)


def _cell(row: dict | None) -> Cell:
    if row is None:
        return Cell(None, note=t("lb.not_on_time"))
    c = Cell(num(row["estimate"]), num(row["ci_low"]), num(row["ci_high"]))
    c.rank = num(row["rank"])
    return c


def _rows(head: pd.DataFrame, current: int, split: str, meta: dict, names: dict, page: str) -> list[LeaderRow]:
    part = head[(head["release"] == current) & (head["split"] == split)]
    by = {(r["entry"], r["condition"]): r for r in records(part)}
    live = meta.get("live") or {}
    rows = []
    for entry in sorted({e for e, _ in by if e in live}):
        origins = live.get(entry, [])
        cells = {c: _cell(by.get((entry, c))) for c in LEADER_CONDITIONS}
        url = page_url(page, f"models/{entry}.md") if entry in names else None
        rows.append(LeaderRow(entry, names.get(entry, entry), url, "model", None, "", cells, len(origins), len(origins),
                              t("lb.on_time_origins", origins=", ".join(origins))))
    for cond in LEADER_CONDITIONS:
        mark_best([r.cells[cond] for r in rows], True)
    rows.sort(key=lambda r: (-(r.cells["A3"].value if r.cells["A3"].value is not None else -9.0), r.entry))
    return rows


def _sealed(archive: Any, current: int) -> list[SealedRow]:
    out = []
    for e in archive.live_entries(as_of=current):
        if e.status in (LiveStatus.SEALED, LiveStatus.PENDING, LiveStatus.UNREVEALED) and e.sealed:
            out.append(SealedRow(e.model_id, e.origin.isoformat(), e.status.value, e.digest,
                                 e.receipt_date.isoformat() if e.receipt_date else "", bool(e.on_time)))
    return sorted(out, key=lambda r: (r.origin, r.model_id))


def live_panels(archive: Any, out: Any, names: dict[str, str], page: str = "leaderboard.md") -> dict[str, LeaderPanel]:
    """split -> the Live panel, for a format-2 archive whose score folder has releases.csv; {} otherwise."""
    meta = out.scores_json.get("release") or {}
    if not getattr(archive, "is_history", False) or out.releases is None or not meta:
        return {}
    current = int(meta["number"])
    head = headline_rows(out.releases, LIVE_TRACK)
    extras = LiveExtras(bool(meta.get("simulated")), _sealed(archive, current))
    panels = {}
    for split in ("test", "dev"):
        rows = _rows(head, current, split, meta, names, page)
        panels[split] = LeaderPanel(split, LIVE_TRACK, f"leaderboard-{split}-live", rows, [], "", "" if rows else t("lb.live_note"),
                                    live=extras)
    return panels


def partial_rows(out: Any, split: str, names: dict[str, str], page: str = "leaderboard.md") -> list[LeaderRow]:
    """All-Origin's partial models: unranked, each with its last complete release's row, dimmed and labelled."""
    meta = out.scores_json.get("release") or {}
    partial = meta.get("partial") or {}
    if not partial or out.releases is None:
        return []
    head = headline_rows(out.releases, PRIMARY.track)
    head = head[head["split"] == split]
    rows = []
    for entry in sorted(partial):
        conds = partial[entry]
        cells = {}
        label_parts = []
        for c in LEADER_CONDITIONS:
            info = conds.get(c) or {}
            last = info.get("last_complete_release")
            got = records(head[(head["entry"] == entry) & (head["condition"] == c) & (head["release"] == last)]) if last else []
            cell = Cell(num(got[0]["estimate"]), num(got[0]["ci_low"]), num(got[0]["ci_high"])) if got else Cell(None, note=t("lb.never_complete"))
            cells[c] = cell
            if info:
                label_parts.append(t("lb.partial_part", condition=c, origins=info.get("origins"), of=info.get("of"))
                                   + (t("lb.partial_row", release=last) if last else t("lb.partial_never")))
        any_info = next(iter(conds.values()), {})
        label = t("lb.partial_label", origins=any_info.get("origins"), of=any_info.get("of"))
        url = page_url(page, f"models/{entry}.md") if entry in names else None
        rows.append(LeaderRow(entry, names.get(entry, entry), url, "model", None, "", cells, 0, 0, "; ".join(label_parts),
                              partial_label=label))
    return rows
