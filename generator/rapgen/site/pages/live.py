"""The leaderboard's Live tab and the partial models of All-Origin (RELEASES.md, "Tracks").

Live scores are the rows of ``live.csv`` (the scored release's Live track) under the headline
metric and policy: each model over its on-time origins (``origins``), ranked only against rows
over the same origins, and each baseline over every live origin. Sealed entries not yet resolved
come from the verified archive's ``live_entries`` (their commitment's digest and receipt date);
unrevealed ones stay listed. Partial models (``scores.json`` ``release.partial``) are shown
unranked with their last complete release's row (``releases.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import LiveStatus
from rapgen.errors import SiteError
from rapgen.scores import BASELINE_CONDITION as BASE, PRIMARY, LIVE_TRACK
from rapgen.site.cells import LEADER_CONDITIONS, SPLITS, Cell, LeaderPanel, LeaderRow, mark_best, num, page_url, ranked_cell, records
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
    return ranked_cell(row, "lb.not_on_time")


def _live_rows(live: pd.DataFrame, split: str, kind: str) -> list[dict]:
    """live.csv rows of one split and kind under the headline policy and metric."""
    part = live[(live["split"] == split) & (live["kind"] == kind) & (live["policy"] == PRIMARY.policy)
                & (live["metric"] == PRIMARY.metric)]
    return records(part)


def _origins(row: dict) -> tuple[str, ...]:
    return tuple(str(row["origins"] or "").split())


def _rows(live: pd.DataFrame, split: str, n_live: int, names: dict, page: str) -> list[LeaderRow]:
    """One row per (model, origin set): its Live cells, ranked within that origin set."""
    by: dict[tuple[str, tuple[str, ...]], dict[str, dict]] = {}
    for r in _live_rows(live, split, "model"):
        by.setdefault((r["entry"], _origins(r)), {})[r["condition"]] = r
    rows = []
    for (entry, origins), conds in by.items():
        cells = {c: _cell(conds.get(c)) for c in LEADER_CONDITIONS}
        url = page_url(page, f"models/{entry}.md") if entry in names else None
        rows.append(LeaderRow(entry, names.get(entry, entry), url, "model", None, "", cells, len(origins), n_live,
                              t("lb.on_time_origins", origins=", ".join(origins))))
    for cond in LEADER_CONDITIONS:
        mark_best([r.cells[cond] for r in rows], True)
    a3 = lambda r: r.cells[PRIMARY.condition].value if r.cells[PRIMARY.condition].value is not None else -9.0  # noqa: E731
    rows.sort(key=lambda r: (-r.n_valid, r.validity_title, -a3(r), r.entry))
    return rows


def _baselines(live: pd.DataFrame, split: str) -> tuple[list[LeaderRow], int]:
    """Each baseline's own row (over every live origin) and that origin count."""
    own = _live_rows(live, split, "baseline")
    n_live = max((len(_origins(r)) for r in own), default=0)
    rows = []
    for r in own:
        origins = _origins(r)
        if len(origins) != n_live:
            continue  # a baseline scored over a model's origin set: only for that set's ranks
        rows.append(LeaderRow(r["entry"], r["entry"], None, "baseline", None, "", {BASE: _cell(r)}, len(origins), n_live,
                              t("lb.every_live_origin", origins=", ".join(origins))))
    mark_best([r.cells[BASE] for r in rows], True)
    rows.sort(key=lambda r: (-(r.cells[BASE].value if r.cells[BASE].value is not None else -9.0), r.entry))
    return rows, n_live


def _sealed(archive: Any, current: int) -> list[SealedRow]:
    out = []
    for e in archive.live_entries(as_of=current):
        if e.status in (LiveStatus.SEALED, LiveStatus.PENDING, LiveStatus.UNREVEALED) and e.sealed:
            out.append(SealedRow(e.model_id, e.origin.isoformat(), e.status.value, e.digest,
                                 e.receipt_date.isoformat() if e.receipt_date else "", bool(e.on_time)))
    return sorted(out, key=lambda r: (r.origin, r.model_id))


def live_panels(archive: Any, out: Any, names: dict[str, str], page: str = "leaderboard.md") -> dict[str, LeaderPanel]:
    """split -> the Live panel, for a format-2 archive with a scored release; {} otherwise."""
    meta = out.scores_json.get("release") or {}
    if not archive.is_history or not meta:
        return {}
    if out.live is None:
        raise SiteError(f"{out.folder / 'live.csv'}: missing; run 'rapgen score --out {out.folder}' first")
    current = int(meta["number"])
    extras = LiveExtras(bool(meta.get("simulated")), _sealed(archive, current))
    panels = {}
    for split in SPLITS:  # test first
        baselines, n_live = _baselines(out.live, split)
        rows = _rows(out.live, split, n_live, names, page)
        panels[split] = LeaderPanel(split, LIVE_TRACK, f"leaderboard-{split}-live", rows, baselines if rows else [], "",
                                    "" if rows else t("lb.live_note"), live=extras)
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
        conds = {c: info for c, info in partial[entry].items() if c in LEADER_CONDITIONS}
        if not conds:
            continue  # partial only in a condition the leaderboard does not show (A2, A4)
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
