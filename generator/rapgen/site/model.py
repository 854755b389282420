"""The presentation model: score outputs + archive descriptions -> plain records for templates.

Nothing here computes a score. Every number comes from the score folder
(:mod:`rapgen.site.inputs`); the archive contributes only descriptive records
(fields, codebooks, blocks, models, ARCHIVE.json, ledger, SHA256SUMS, file
sizes) and counts of what it holds (trace calls, invalid-unit reasons).
Templates receive these dataclasses and format numbers with the filters.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rapgen.archive import SLOTS, Archive
from rapgen.site import plots
from rapgen.site.filters import fmt_rank, fmt_score
from rapgen.site.inputs import ScoreOutputs

PRIMARY_METRIC = "spearman"
PRIMARY_POLICY = "canonical"
SPLITS = ("test", "dev")  # Test is the default tab
SPLIT_LABEL = {"test": "Test", "dev": "Dev"}
TRACKS = ("all_origin", "forecast_strict")
TRACK_LABEL = {"all_origin": "All-Origin", "forecast_strict": "Forecast-Strict"}
LEADER_CONDITIONS = ("A0", "A1", "A3")
CONDITION_LABEL = {"A0": "Closed (A0)", "A1": "Fixed (A1)", "A2": "Fixed, State (A2)", "A3": "Expanding (A3)",
                   "A4": "Expanding, State (A4)", "BASE": "Baseline"}
METRICS = ("spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain")
METRIC_LABEL = {"spearman": "Spearman", "tv": "TV distance", "jsd": "JS divergence", "pred_recent": "Pred–recent",
                "state_recent": "State–recent", "tv_gain": "TV gain vs EWMA"}
# True: higher is better; False: lower is better; None: descriptive.
HIGHER_IS_BETTER = {"spearman": True, "tv": False, "jsd": False, "pred_recent": None, "state_recent": None, "tv_gain": True}
POLICIES = ("canonical", "split", "single", "flip")
CONTRAST_ORDER = ("A1-A0", "A3-A1", "A2-A1", "A4-A3", "A0-ewma", "A1-ewma", "A3-ewma")


# ------------------------------------------------------------------ records
@dataclass
class Cell:
    """One table cell: an estimate with its interval, or None plus a note saying why."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    bold: bool = False
    rank: str = ""
    title: str = ""


@dataclass
class LeaderRow:
    entry: str
    name: str
    url: str | None
    kind: str
    proprietary: bool | None
    cutoff: str
    cells: dict[str, Cell]
    n_valid: int
    n_expected: int
    validity_title: str
    reference_agent: bool = False  # one of rapgen's own reference agents (model.json "reference_agent": true)


@dataclass
class LeaderPanel:
    split: str
    track: str
    table_id: str
    rows: list[LeaderRow]
    baselines: list[LeaderRow]
    chart: str
    empty_note: str = ""


@dataclass
class Link:
    label: str
    url: str


@dataclass
class SimpleTable:
    """A generic table: header strings and rows of already-chosen values (formatted by filters in templates)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    chart: str = ""
    truncated: int = 0  # rows left out of the page (still in the source file)


@dataclass
class FieldPage:
    field_id: str
    path: str
    name: str
    definition: str
    split: str
    block_id: str
    eligible_pre2024: bool
    directions: list[dict]
    neighbours: list[Link]
    area_chart: str
    ewma_chart: str
    ewma_note: str
    score_rows: list[dict]
    n_windows: int


@dataclass
class ModelPage:
    model_id: str
    path: str
    info: dict
    matrices: dict[str, list[dict]]  # split -> [{track, label, rows:[{condition, cells{metric: Cell}}], metrics}]
    origin_charts: dict[str, str]
    contrasts: dict[str, list[dict]]
    validity: dict[str, list[dict]]
    invalid_reasons: list[dict]
    search: dict | None


@dataclass
class DiagnosticSection:
    key: str
    title: str
    intro: str
    tables: list[SimpleTable]
    computed: bool


@dataclass
class SiteModel:
    info: dict
    synthetic: bool
    manifest_sha256: str
    scores_meta: dict
    counts: dict
    panels: dict[str, list[LeaderPanel]]
    field_pages: list[FieldPage]
    field_index: list[dict]
    model_pages: list[ModelPage]
    model_index: list[dict]
    diagnostics: list[DiagnosticSection]
    artifacts: list[dict]
    ledger_rows: list[tuple[str, str]]
    ledger_json: str
    strict_origin: str
    origins: list[str]
    ledger_level: float
    diagnostics_meta: dict


# ------------------------------------------------------------------ helpers
def page_url(from_page: str, to_page: str) -> str:
    """Relative URL between two Markdown pages as built with directory URLs."""

    def directory(page: str) -> str:
        stem = page[:-3] if page.endswith(".md") else page
        if stem == "index":
            return ""
        if stem.endswith("/index"):
            return stem[: -len("/index")]
        return stem

    src, dst = directory(from_page), directory(to_page)
    rel = posixpath.relpath(dst or ".", src or ".")
    return "./" if rel == "." else rel + "/"


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _int(value: Any) -> int:
    v = _num(value)
    return 0 if v is None else int(v)


def _cell(row: Any, note_if_missing: str = "no defined field score") -> Cell:
    if row is None:
        return Cell(None, note="not evaluated")
    est = _num(row["estimate"])
    return Cell(est, _num(row["ci_low"]), _num(row["ci_high"]), "" if est is not None else note_if_missing)


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain dicts of Python values (much faster than DataFrame.to_dict for wide frames)."""
    cols = list(frame.columns)
    data = [frame[c].tolist() for c in cols]
    return [dict(zip(cols, vals)) for vals in zip(*data)]


def _group(rows: list[dict], key: str) -> dict[Any, list[dict]]:
    out: dict[Any, list[dict]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return out


def _index(frame: pd.DataFrame | list[dict], keys: list[str]) -> dict[tuple, Any]:
    out: dict[tuple, Any] = {}
    for row in (frame if isinstance(frame, list) else _records(frame)):
        out[tuple(row[k] for k in keys)] = row
    return out


def _mark_best(cells: list[Cell], higher: bool | None) -> None:
    if higher is None:
        return
    values = [c.value for c in cells if c.value is not None]
    if not values:
        return
    best = max(values) if higher else min(values)
    for c in cells:
        if c.value is not None and c.value == best:
            c.bold = True


# ------------------------------------------------------------------ leaderboard
def _rank_lookup(ranks: pd.DataFrame) -> dict[tuple, tuple[float | None, bool, float | None]]:
    sel = ranks[(ranks["policy"] == PRIMARY_POLICY) & (ranks["metric"] == PRIMARY_METRIC)]
    out = {}
    groups = defaultdict(list)
    for r in _records(sel):
        groups[(r["track"], r["split"], r["condition"])].append(r)
    for key, rows in groups.items():
        counts = Counter(_num(r["rank"]) for r in rows)
        for r in rows:
            rk = _num(r["rank"])
            out[key + (r["entry"],)] = (rk, rk is not None and counts[rk] > 1, _num(r["p_first"]))
    return out


REFERENCE_AGENT_KEY = "reference_agent"


def is_reference_agent(info: Any) -> bool:
    """True for rapgen's own reference agents: model.json carries ``"reference_agent": true``
    (``rapgen agents run`` writes it; ``rapgen submit check`` rejects it in a submission)."""
    return bool(info is not None and info.extra.get(REFERENCE_AGENT_KEY) is True)


def _leader_panels(archive: Archive, out: ScoreOutputs, page: str) -> dict[str, list[LeaderPanel]]:
    lb = out.leaderboard
    lb = lb[(lb["policy"] == PRIMARY_POLICY) & (lb["metric"] == PRIMARY_METRIC)]
    idx = _index(lb, ["track", "split", "kind", "entry", "condition"])
    ranks = _rank_lookup(out.ranks)
    models = {m.model_id: m for m in archive.models}
    panels: dict[str, list[LeaderPanel]] = {}
    for split in SPLITS:
        panels[split] = []
        for track in TRACKS:
            part = lb[(lb["split"] == split) & (lb["track"] == track)]
            rows: list[LeaderRow] = []
            for entry in sorted(set(part[part["kind"] == "model"]["entry"])):
                info = models.get(entry)
                cells, n_valid, n_exp, parts = {}, 0, 0, []
                for cond in LEADER_CONDITIONS:
                    row = idx.get((track, split, "model", entry, cond))
                    cell = _cell(row)
                    rk = ranks.get((track, split, cond, entry))
                    if rk and rk[0] is not None:
                        cell.rank = fmt_rank(rk[0], rk[1])
                        cell.title = ("tied rank" if rk[1] else "rank") + (f"; P(first) {fmt_score(rk[2], 2)}" if rk[2] is not None else "")
                    cells[cond] = cell
                    if row is not None:
                        n_valid += _int(row["n_valid"])
                        n_exp += _int(row["n_episodes"])
                        parts.append(f"{cond}: {_int(row['n_valid'])}/{_int(row['n_episodes'])}")
                cutoff = info.effective_cutoff.isoformat() if info and info.effective_cutoff else ""
                rows.append(LeaderRow(entry, info.display_name if info else entry, page_url(page, f"models/{entry}.md") if info else None,
                                      "model", info.proprietary if info else None, cutoff, cells, n_valid, n_exp,
                                      "valid/expected units: " + ", ".join(parts), is_reference_agent(info)))
            baselines: list[LeaderRow] = []
            for entry in sorted(set(part[part["kind"] == "baseline"]["entry"])):
                row = idx.get((track, split, "baseline", entry, "BASE"))
                cell = _cell(row)
                # ranks.csv ranks baselines inside each condition's column; the Expanding (A3)
                # column stands for them here unless a BASE ranking exists.
                rk, among = ranks.get((track, split, "BASE", entry)), "baselines"
                if rk is None:
                    rk, among = ranks.get((track, split, "A3", entry)), "the Expanding (A3) column"
                if rk and rk[0] is not None:
                    cell.rank = fmt_rank(rk[0], rk[1])
                    cell.title = ("tied rank" if rk[1] else "rank") + f" among {among}"
                baselines.append(LeaderRow(entry, entry, None, "baseline", None, "", {"BASE": cell},
                                           _int(row["n_valid"]) if row else 0, _int(row["n_episodes"]) if row else 0,
                                           "episodes with full history / expected"))
            for cond in LEADER_CONDITIONS:
                _mark_best([r.cells[cond] for r in rows], True)
            _mark_best([r.cells["BASE"] for r in baselines], True)

            def order(r: LeaderRow) -> tuple:
                key = []
                for cond in ("A3", "A1", "A0"):
                    v = r.cells[cond].value
                    key.append(-v if v is not None else math.inf)
                return (*key, r.entry)

            rows.sort(key=order)
            baselines.sort(key=lambda r: (-(r.cells["BASE"].value if r.cells["BASE"].value is not None else -math.inf), r.entry))
            forest_rows = []
            for r in rows:
                for cond in LEADER_CONDITIONS:
                    c = r.cells[cond]
                    forest_rows.append({"label": r.name, "series": CONDITION_LABEL[cond], "estimate": c.value,
                                        "ci_low": c.ci_low, "ci_high": c.ci_high})
            for r in baselines:
                c = r.cells["BASE"]
                forest_rows.append({"label": f"{r.name} (baseline)", "series": "Baseline", "estimate": c.value,
                                    "ci_low": c.ci_low, "ci_high": c.ci_high})
            chart = ""
            if forest_rows:
                fig, height = plots.forest(forest_rows)
                chart = plots.embed(fig, height, f"Forest plot, {SPLIT_LABEL[split]}, {TRACK_LABEL[track]}")
            note = ""
            if not rows:
                note = ("No model takes part: Forecast-Strict admits only models whose knowledge cutoff (else release date) "
                        "is known and before the strict origin." if track == "forecast_strict" else "No model has been scored.")
            panels[split].append(LeaderPanel(split, track, f"leaderboard-{split}-{track.replace('_', '-')}", rows, baselines, chart, note))
    return panels


# ------------------------------------------------------------------ fields
def _field_pages(archive: Archive, out: ScoreOutputs) -> tuple[list[FieldPage], list[dict]]:
    comp = out.compositions[out.compositions["policy"] == PRIMARY_POLICY].sort_values(["field_id", "window_start"])
    comp_by_field = _group(_records(comp), "field_id")
    fs = out.field_scores[out.field_scores["policy"] == PRIMARY_POLICY]
    fs_by_field = _group(_records(fs), "field_id")
    ewma_by_field: dict[str, list[dict]] | None = None
    units = out.units
    if units is not None and all(f"p_{s}" in units.columns for s in SLOTS):
        sel = units[(units["entry"] == "ewma") & (units["kind"] == "baseline") & (units["policy"] == PRIMARY_POLICY)]
        ewma_by_field = _group(_records(sel[["field_id", "origin", *[f"p_{s}" for s in SLOTS]]].sort_values("origin")), "field_id")
    model_names = {m.model_id: m.display_name for m in archive.models}
    block_of = {b.block_id: b for b in archive.blocks}
    pages, index = [], []
    for f in archive.fields:
        path = f"fields/{f.field_id}.md"
        directions = [{"slot": d.slot, "name": d.name, "definition": d.definition, "include": d.include,
                       "exclude": d.exclude, "exemplars": list(d.exemplars)} for d in archive.codebooks.get(f.field_id, ())]
        slot_names = {d["slot"]: d["name"] for d in directions}
        block = block_of.get(f.block_id)
        neighbours = [Link(archive.field_map[n].name if n in archive.field_map else n, page_url(path, f"fields/{n}.md"))
                      for n in sorted(block.fields if block else ()) if n != f.field_id and n in archive.field_map]
        g = comp_by_field.get(f.field_id)
        area, n_windows, realised = "", 0, {}
        if g:
            windows = [str(r["window_start"]) for r in g]
            # D0..D7 are the window's composition; rows are renormalised defensively (a file
            # holding counts instead of shares gives the same picture). No papers: no composition.
            totals = [_num(r["n_total"]) or 0.0 for r in g]
            sums = [sum(_num(r[s]) or 0.0 for s in SLOTS) for r in g]
            shares = {s: [((_num(r[s]) or 0.0) / z if t > 0 and z > 0 else None) for r, t, z in zip(g, totals, sums)]
                      for s in SLOTS}
            area = plots.embed(plots.stacked_shares(windows, shares, slot_names), 340, f"Realised shares of {f.name}")
            n_windows = len(windows)
            for i, w in enumerate(windows):
                realised[w] = {s: shares[s][i] for s in SLOTS}
        eg = ewma_by_field.get(f.field_id, []) if ewma_by_field is not None else None
        ewma_chart, ewma_note = "", ""
        if eg is None:
            ewma_note = "not computed (units.parquet with the EWMA baseline's predictions is absent)"
        else:
            points = []
            for r in eg:
                y = realised.get(str(r["origin"]))
                if not y:
                    continue
                for s in SLOTS:
                    if y[s] is not None and _num(r[f"p_{s}"]) is not None:
                        points.append({"slot": s, "origin": str(r["origin"]), "realised": y[s], "ewma": _num(r[f"p_{s}"])})
            if points:
                ewma_chart = plots.embed(plots.ewma_vs_realised(points), 340, f"EWMA forecast versus realised shares, {f.name}")
            else:
                ewma_note = "no origin has both an EWMA forecast and a realised target window"
        score_rows = []
        sg = fs_by_field.get(f.field_id)
        if sg is not None:
            sidx = _index(sg, ["track", "kind", "entry", "condition", "metric"])
            keys = sorted({(r["kind"], r["entry"], r["condition"]) for r in sg},
                          key=lambda k: (k[0] != "model", k[1], k[2]))
            for kind, entry, cond in keys:
                def val(track: str, metric: str) -> float | None:
                    r = sidx.get((track, kind, entry, cond, metric))
                    return None if r is None else _num(r["estimate"])

                score_rows.append({
                    "kind": kind, "entry": entry, "name": model_names.get(entry, entry),
                    "url": page_url(path, f"models/{entry}.md") if entry in model_names else None,
                    "condition": cond, "condition_label": CONDITION_LABEL.get(cond, cond),
                    "spearman": val("all_origin", "spearman"), "spearman_strict": val("forecast_strict", "spearman"),
                    "tv": val("all_origin", "tv"),
                })
            for col, higher in (("spearman", True), ("spearman_strict", True), ("tv", False)):
                vals = [r[col] for r in score_rows if r[col] is not None]
                best = (max(vals) if higher else min(vals)) if vals else None
                for r in score_rows:
                    r[col + "_bold"] = best is not None and r[col] == best
        vals = [v for v in (_num(r["estimate"]) for r in (sg or ()) if r["track"] == "all_origin" and r["metric"] == PRIMARY_METRIC
                            and r["kind"] == "model" and r["condition"] == "A3") if v is not None]
        best = max(vals) if vals else None
        pages.append(FieldPage(f.field_id, path, f.name, f.definition, f.split, f.block_id, f.eligible_pre2024, directions,
                               neighbours, area, ewma_chart, ewma_note, score_rows, n_windows))
        index.append({"field_id": f.field_id, "name": f.name, "split": f.split, "block_id": f.block_id,
                      "url": page_url("fields/index.md", path), "best_a3": best, "eligible_pre2024": f.eligible_pre2024})
    return pages, index


# ------------------------------------------------------------------ models
def _model_pages(archive: Archive, out: ScoreOutputs) -> tuple[list[ModelPage], list[dict]]:
    lb = out.leaderboard[out.leaderboard["policy"] == PRIMARY_POLICY]
    idx = _index(lb, ["track", "split", "entry", "condition", "metric"])
    ct = out.contrasts[out.contrasts["policy"] == PRIMARY_POLICY]
    osc = out.origin_scores[(out.origin_scores["policy"] == PRIMARY_POLICY) & (out.origin_scores["metric"] == PRIMARY_METRIC)]
    origins = [o.isoformat() for o in archive.origins.origins]
    replay_models: dict[str, dict[str, dict]] = {}
    replay_note = "not computed (run 'rapgen replay --out' into the score folder to add it)"
    if out.replay is not None:
        if out.replay.get("manifest_sha256") not in (None, archive.manifest_sha256):
            replay_note = "not shown: replay.json was produced from a different archive (manifest digest differs)"
        else:
            replay_models = _replay_by_model(out.replay)
            replay_note = ""
    invalid_units = None
    u = out.units
    if u is not None and "valid" in u.columns and "reason" in u.columns:
        bad = u[(u["policy"] == PRIMARY_POLICY) & (u["kind"] == "model") & (~u["valid"].astype(bool))]
        invalid_units = _group(_records(bad[["entry", "condition", "reason"]]), "entry")
    pages, index = [], []
    for m in archive.models:
        path = f"models/{m.model_id}.md"
        mine = lb[lb["entry"] == m.model_id]
        conds = sorted(set(mine["condition"]))
        matrices, validity, origin_charts, contrasts = {}, {}, {}, {}
        for split in SPLITS:
            mats = []
            for track in TRACKS:
                rows = []
                metrics = [mt for mt in METRICS if any((track, split, m.model_id, c, mt) in idx for c in conds)]
                for cond in conds:
                    if not any((track, split, m.model_id, cond, mt) in idx for mt in metrics):
                        continue
                    rows.append({"condition": cond, "label": CONDITION_LABEL[cond],
                                 "cells": {mt: _cell(idx.get((track, split, m.model_id, cond, mt))) for mt in metrics}})
                if rows:
                    for mt in metrics:
                        _mark_best([r["cells"][mt] for r in rows if r["condition"] in LEADER_CONDITIONS], HIGHER_IS_BETTER[mt])
                    mats.append({"track": track, "label": TRACK_LABEL[track], "rows": rows,
                                 "metrics": [(mt, METRIC_LABEL[mt]) for mt in metrics]})
            matrices[split] = mats
            vrows = []
            for cond in conds:
                r = idx.get(("all_origin", split, m.model_id, cond, PRIMARY_METRIC))
                if r is None:
                    continue
                vrows.append({"condition": cond, "label": CONDITION_LABEL[cond], "expected": _int(r["n_episodes"]),
                              "valid": _int(r["n_valid"]), "invalid": _int(r["n_invalid"])})
            validity[split] = vrows
            sub = osc[(osc["split"] == split) & (((osc["entry"] == m.model_id) & (osc["kind"] == "model"))
                                                 | ((osc["entry"] == "ewma") & (osc["kind"] == "baseline")))]
            series = {}
            for (kind, entry, cond), g in sorted(sub.groupby(["kind", "entry", "condition"]), key=lambda kv: (kv[0][0] != "model", kv[0][2])):
                by_origin = {str(o): _num(e) for o, e in zip(g["origin"], g["estimate"])}
                name = CONDITION_LABEL.get(cond, cond) if kind == "model" else "EWMA baseline"
                series[name] = [by_origin.get(o) for o in origins]
            origin_charts[split] = plots.embed(plots.lines(origins, series, y_title="Spearman (field mean)", dashed=["EWMA baseline"]),
                                               320, f"Scores by origin, {SPLIT_LABEL[split]}") if series else ""
            crow = []
            cs = ct[(ct["entry"] == m.model_id) & (ct["split"] == split)]
            for r in sorted(_records(cs), key=lambda r: (TRACKS.index(r["track"]) if r["track"] in TRACKS else 9,
                                                                  CONTRAST_ORDER.index(r["contrast"]) if r["contrast"] in CONTRAST_ORDER else 99,
                                                                  r["contrast"], METRICS.index(r["metric"]) if r["metric"] in METRICS else 99)):
                cell = _cell(r)
                crow.append({"track": TRACK_LABEL.get(r["track"], r["track"]), "contrast": r["contrast"],
                             "metric": METRIC_LABEL.get(r["metric"], r["metric"]), "cell": cell, "n_fields": _int(r["n_fields"])})
            contrasts[split] = crow
        reasons: Counter = Counter()
        if invalid_units is not None:
            for r in invalid_units.get(m.model_id, ()):
                reasons[(r["condition"], r["reason"] or "unspecified")] += 1
        else:  # no units.parquet: count from the archive's records
            for u in archive.predictions(m.model_id):
                if not u.valid:
                    reasons[(u.condition, u.reason or "unspecified")] += 1
        invalid_reasons = [{"condition": c, "reason": r, "count": n} for (c, r), n in sorted(reasons.items())]
        search = None
        if archive.has_traces(m.model_id):
            per_unit = Counter()
            for call in archive.traces(m.model_id):
                per_unit[(call.condition, call.field_id, call.origin)] += 1
            srows = []
            for cond in sorted({k[0] for k in per_unit}):
                counts = [v for k, v in per_unit.items() if k[0] == cond]
                srows.append({"condition": cond, "label": CONDITION_LABEL[cond], "units": len(counts), "calls": sum(counts),
                              "mean": sum(counts) / len(counts), "max": max(counts)})
            replay = replay_models.get(m.model_id)
            # The evidence statistics are scores' diagnostics (diagnostics.json "search_evidence").
            evidence = {(r.get("entry"), r.get("condition")): r for r in ((out.diagnostics or {}).get("search_evidence") or {}).get("rows", [])}
            for row in srows:
                rp = (replay or {}).get(row["condition"])
                ev = evidence.get((m.model_id, row["condition"]), rp or {})  # an older replay.json carried them
                row["replay"] = None if rp is None else {
                    "calls": _int(rp.get("calls")), "reproduced": _int(rp.get("reproduced")), "failed": _int(rp.get("failed")),
                    "recent_share": _num(ev.get("recent_share")), "spearman_recent": _num(ev.get("spearman_recent")),
                    "spearman_future": _num(ev.get("spearman_future")),
                    "first_difference": (rp.get("first_differences") or [None])[0],
                }
            search = {"rows": srows, "replayed": replay is not None, "replay_note": replay_note}
        info = {
            "display_name": m.display_name, "provider": m.provider, "proprietary": m.proprietary,
            "knowledge_cutoff": m.knowledge_cutoff.isoformat() if m.knowledge_cutoff else "",
            "release_date": m.release_date.isoformat() if m.release_date else "",
            "effective_cutoff": m.effective_cutoff.isoformat() if m.effective_cutoff else "",
            "strict": bool(m.effective_cutoff and m.effective_cutoff < archive.origins.strict_origin),
            "cutoff_source": m.cutoff_source, "diagnostic": m.diagnostic,
            "submitted": m.submitted.isoformat() if m.submitted else "", "contact": m.contact, "notes": m.notes,
            "extra": sorted((k, json.dumps(v) if not isinstance(v, str) else v) for k, v in m.extra.items() if k != REFERENCE_AGENT_KEY),
            "reference_agent": is_reference_agent(m),
            "conditions": conds,
        }
        pages.append(ModelPage(m.model_id, path, info, matrices, origin_charts, contrasts, validity, invalid_reasons, search))
        headline = idx.get(("all_origin", "test", m.model_id, "A3", PRIMARY_METRIC))
        index.append({"model_id": m.model_id, "name": m.display_name, "provider": m.provider, "proprietary": m.proprietary,
                      "reference_agent": info["reference_agent"],
                      "cutoff": info["effective_cutoff"], "url": page_url("models/index.md", path),
                      "conditions": " ".join(conds), "headline": _cell(headline) if headline else Cell(None, note="not evaluated")})
    return pages, index


def _replay_by_model(replay: dict) -> dict[str, dict[str, dict]]:
    """replay.json (docs/search.md) -> {model_id: {condition: summary}}; models
    without per-condition records are left out."""
    out: dict[str, dict[str, dict]] = {}
    models = replay.get("models")
    if not isinstance(models, list):
        return out
    for rec in models:
        if not isinstance(rec, dict) or not isinstance(rec.get("conditions"), list):
            continue
        out[str(rec.get("model_id"))] = {str(c.get("condition")): c for c in rec["conditions"] if isinstance(c, dict)}
    return out


# ------------------------------------------------------------------ generic JSON -> tables
def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


LONG_LIST = 200  # lists longer than this are per-episode data: summarised by a chart, not listed
_GROUP_KEYS = ("statistic", "horizon")
_ORDER_KEYS = ("split", "kind", "entry", "condition")


def _is_record_list(obj: Any) -> bool:
    return isinstance(obj, list) and bool(obj) and all(isinstance(r, dict) for r in obj)


def _flat(rec: dict) -> dict:
    """One level of nested scalar dicts folded into columns ({"estimates": {"canonical": x}} -> "canonical")."""
    out: dict = {}
    for k, v in rec.items():
        if isinstance(v, dict) and all(_scalar(x) for x in v.values()):
            for kk, vv in v.items():
                out[kk if kk not in rec else f"{k}.{kk}"] = vv
        elif _scalar(v):
            out[k] = v
        elif isinstance(v, list) and all(_scalar(x) for x in v) and len(v) <= 12:
            out[k] = ", ".join("—" if x is None else str(x) for x in v)
    return out


def _with_cells(cols: list[str], rows: list[list[Any]]) -> tuple[list[str], list[list[Any]]]:
    """Merge ``X, X_ci_low, X_ci_high`` (or ``estimate, ci_low, ci_high``) into one Cell column."""
    triples = []
    for c in cols:
        lo, hi = (("ci_low", "ci_high") if c == "estimate" else (f"{c}_ci_low", f"{c}_ci_high"))
        if lo in cols and hi in cols:
            triples.append((cols.index(c), cols.index(lo), cols.index(hi)))
    if not triples:
        return cols, rows
    drop = {i for _, lo, hi in triples for i in (lo, hi)}
    main = {i: (lo, hi) for i, lo, hi in triples}
    new_cols = [c for i, c in enumerate(cols) if i not in drop]
    new_rows = []
    for r in rows:
        out = []
        for i, v in enumerate(r):
            if i in drop:
                continue
            if i in main:
                lo, hi = main[i]
                num = _num(v)
                out.append(Cell(num, _num(r[lo]), _num(r[hi]), "" if num is not None else "undefined"))
            else:
                out.append(v)
        new_rows.append(out)
    return new_cols, new_rows


def _order_key(rec: dict) -> tuple:
    split = rec.get("split")
    return (SPLITS.index(split) if split in SPLITS else 9, rec.get("kind") != "model", str(rec.get("entry", "")),
            str(rec.get("condition", "")))


def _record_tables(records: list[dict], title: str) -> list[SimpleTable]:
    """Score-like records (split, entry, condition, estimate, ...): one table per
    statistic/horizon, canonical policy and the headline metric when those vary."""
    rows = [_flat(r) for r in records]
    notes = []
    if any("policy" in r for r in rows) and any(r.get("policy") == PRIMARY_POLICY for r in rows):
        rows = [r for r in rows if r.get("policy") in (None, PRIMARY_POLICY)]
        notes.append("canonical policy")
    if len({r.get("metric") for r in rows}) > 1 and any(r.get("metric") == PRIMARY_METRIC for r in rows):
        rows = [r for r in rows if r.get("metric") in (None, PRIMARY_METRIC)]
        notes.append("Spearman")
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in _GROUP_KEYS), []).append(r)
    tables = []
    for gkey, grows in groups.items():
        label = " · ".join(f"{k} {v}" if k == "horizon" else str(v) for k, v in zip(_GROUP_KEYS, gkey) if v is not None)
        cols: list[str] = []
        for r in grows:
            for k in r:
                if k not in cols and k not in _GROUP_KEYS and not (k in ("policy", "metric") and len({x.get(k) for x in grows}) == 1):
                    cols.append(k)
        if "kind" in cols and all(r.get("kind") in ("model", "baseline") for r in grows):
            cols.remove("kind")
        grows = sorted(grows, key=_order_key)
        head = [c for c in ("split", "entry", "condition") if c in cols]
        cols = head + [c for c in cols if c not in head]
        t_cols, t_rows = _with_cells(cols, [[r.get(c) for c in cols] for r in grows])
        suffix = f" ({', '.join(notes)})" if notes else ""
        table = SimpleTable(f"{title}{' › ' + label if label else ''}{suffix}", t_cols, t_rows)
        forest_rows = [{"label": " · ".join(str(r[c]) for c in ("entry", "condition") if r.get(c) is not None) or "value",
                        "series": "estimate", "estimate": _num(r.get("estimate")), "ci_low": _num(r.get("ci_low")),
                        "ci_high": _num(r.get("ci_high"))}
                       for r in grows if r.get("split") in (None, "test")]
        if "estimate" in cols and 0 < len(forest_rows) <= 60 and any(f["estimate"] is not None for f in forest_rows):
            fig, h = plots.forest(forest_rows, x_title="estimate" + (" (test split)" if any(r.get("split") for r in grows) else ""))
            table.chart = plots.embed(fig, h, table.title)
        tables.append(table)
    return tables


def _long_list(records: list, title: str, hint: str) -> list[SimpleTable]:
    """Per-episode lists: a histogram of the section's own column when there is one, and a count."""
    table = SimpleTable(f"{title} ({len(records):,} rows, listed in diagnostics.json)", [], [])
    if _is_record_list(records) and any(hint in r for r in records):
        values = [_num(r.get(hint)) for r in records]
        values = [v for v in values if v is not None]
        if values:
            table.chart = plots.embed(plots.histogram(values, x_title=hint), 280, table.title)
    return [table]


def json_tables(obj: Any, title: str, hint: str = "") -> list[SimpleTable]:
    """Turn an arbitrary JSON section into tables (the diagnostics layout is not fixed
    by the spec): score-like record lists become per-statistic tables with forest
    plots, very long lists a histogram, a dict of scalars a key/value table, a dict
    of records a keyed table; deeper nesting recurses with the path in the title."""
    tables: list[SimpleTable] = []
    if _scalar(obj):
        return [SimpleTable(title, ["value"], [[obj]])]
    if isinstance(obj, list):
        if _is_record_list(obj) and any("estimate" in r or "estimates" in r for r in obj):
            return _record_tables(obj, title)
        if len(obj) > LONG_LIST:
            return _long_list(obj, title, hint)
        if _is_record_list(obj):
            rows = [_flat(r) for r in obj]
            cols: list[str] = []
            for r in rows:
                for k in r:
                    if k not in cols:
                        cols.append(k)
            c, rr = _with_cells(cols, [[r.get(k) for k in cols] for r in rows])
            return [SimpleTable(title, c, rr)]
        if all(_scalar(v) for v in obj):
            return [SimpleTable(title, ["value"], [[v] for v in obj])]
        for i, v in enumerate(obj):
            tables += json_tables(v, f"{title} › {i}", hint)
        return tables
    scalars = {k: v for k, v in obj.items() if _scalar(v) or (isinstance(v, list) and all(_scalar(x) for x in v) and len(v) <= 12)}
    if scalars:
        tables.append(SimpleTable(title, ["key", "value"], [[k, v] for k, v in scalars.items()]))
    nested = {k: v for k, v in obj.items() if k not in scalars}
    flat_dicts = {k: v for k, v in nested.items() if isinstance(v, dict) and v and all(_scalar(x) for x in v.values())}
    if len(flat_dicts) >= 2 or (flat_dicts and len(flat_dicts) == len(nested)):
        cols = []
        for v in flat_dicts.values():
            for k in v:
                if k not in cols:
                    cols.append(k)
        keyed = sorted(flat_dicts.items(), key=lambda kv: (SPLITS.index(kv[0]) if kv[0] in SPLITS else 9))
        c, rr = _with_cells(["key", *cols], [[k, *[v.get(x) for x in cols]] for k, v in keyed])
        table = SimpleTable(title if not scalars else f"{title} (by key)", c, rr)
        if "estimate" in cols:
            frs = [{"label": k, "series": "estimate", "estimate": _num(v.get("estimate")), "ci_low": _num(v.get("ci_low")),
                    "ci_high": _num(v.get("ci_high"))} for k, v in keyed]
            for k, v in keyed:
                for extra in cols:
                    if f"{extra}_ci_low" in cols and extra != "estimate":
                        frs.append({"label": k, "series": extra, "estimate": _num(v.get(extra)),
                                    "ci_low": _num(v.get(f"{extra}_ci_low")), "ci_high": _num(v.get(f"{extra}_ci_high"))})
            fig, h = plots.forest(frs, x_title="estimate")
            table.chart = plots.embed(fig, h, table.title)
        tables.append(table)
        nested = {k: v for k, v in nested.items() if k not in flat_dicts}
    for k, v in nested.items():
        tables += json_tables(v, title if k == "rows" else f"{title} › {k}", hint)
    return tables


MAX_TABLE_ROWS = 200


def _truncate(table: SimpleTable) -> SimpleTable:
    """Keep long diagnostic lists (e.g. every change-rich episode) from bloating the page."""
    if len(table.rows) > MAX_TABLE_ROWS:
        table.truncated = len(table.rows) - MAX_TABLE_ROWS
        table.rows = table.rows[:MAX_TABLE_ROWS]
    return table


def _attach_chart(table: SimpleTable) -> None:
    """A forest plot for tables that carry estimate/ci_low/ci_high, else a bar chart of
    the first numeric column when rows are labelled by a text column."""
    cols = table.columns
    if table.chart or not table.rows or len(table.rows) > 60 or any(isinstance(v, Cell) for r in table.rows for v in r):
        return
    label_cols = [i for i, c in enumerate(cols) if all(isinstance(r[i], str) for r in table.rows)]
    if "estimate" in cols:
        ie = cols.index("estimate")
        lo = cols.index("ci_low") if "ci_low" in cols else None
        hi = cols.index("ci_high") if "ci_high" in cols else None
        rows = []
        for r in table.rows:
            label = " · ".join(str(r[i]) for i in label_cols) or "value"
            rows.append({"label": label, "series": "estimate", "estimate": _num(r[ie]),
                         "ci_low": _num(r[lo]) if lo is not None else None, "ci_high": _num(r[hi]) if hi is not None else None})
        if any(r["estimate"] is not None for r in rows):
            fig, h = plots.forest(rows, x_title="estimate")
            table.chart = plots.embed(fig, h, table.title)
        return
    numeric = [i for i, c in enumerate(cols) if i not in label_cols and all(_num(r[i]) is not None or r[i] is None for r in table.rows)
               and any(isinstance(r[i], float) for r in table.rows)]
    if label_cols and numeric and cols != ["key", "value"] and "field_id" not in cols:  # no bar per episode
        i = numeric[0]
        labels = [" · ".join(str(r[j]) for j in label_cols) for r in table.rows]
        table.chart = plots.embed(plots.bars(labels, [_num(r[i]) for r in table.rows], y_title=cols[i]), 300, table.title)


DIAGNOSTIC_SECTIONS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("reliability", "Reliability and ceiling", ("reliability", "ceiling"),
     "Split-half reliability of the realised target compositions (Spearman–Brown corrected) and the ceiling √reliability: "
     "no forecast can be expected to correlate with a noisy target beyond it."),
    ("change-rich", "Change-rich subset", ("change_rich", "change-rich"),
     "Episodes whose future composition differs from the recent one beyond sampling noise and is itself repeatable; "
     "chosen without looking at any model output."),
    ("state-vs-forecast", "State versus Forecast", ("state_vs_forecast", "state_forecast"),
     "Diagnostic models describe the recent window (A2, A4) as well as forecasting (A1, A3); the contrasts show whether "
     "forecasting adds anything beyond carrying the present forward."),
    ("residual-alignment", "Residual alignment", ("residual_alignment", "residual"),
     "Whether a prediction's departure from the EWMA forecast points the same way as the truth's departure, corrected "
     "by the median over relabelled predictions."),
    ("revision-alignment", "Revision alignment", ("revision_alignment", "revision"),
     "Whether predictions revised between origins move with the realised compositions, and how stable both are."),
    ("baseline-family", "Baseline family", ("baseline_family", "baselines"),
     "The six mechanical baselines computed from the history windows."),
    ("policy-sensitivity", "Counting-policy sensitivity", ("policy_sensitivity", "policy"),
     "Headline scores under the four counting policies (canonical, split, single, flip)."),
    ("sampling-frame", "Sampling-frame sensitivity", ("sampling_frame", "sampling_frame_sensitivity", "eligible_pre2024"),
     "Headline scores restricted to fields eligible before 2024."),
)
_DIAG_META = {"schema_version", "manifest_sha256", "resamples", "seed", "level", "generated", "status", "search_evidence",
              "diagnostics_version", "policy", "track", "parameters"}


def _diagnostics(archive: Archive, out: ScoreOutputs) -> list[DiagnosticSection]:
    diag = out.diagnostics or {}
    used: set[str] = set()
    sections = []
    lb = out.leaderboard[(out.leaderboard["policy"] == PRIMARY_POLICY) & (out.leaderboard["track"] == "all_origin")]
    for key, title, names, intro in DIAGNOSTIC_SECTIONS:
        tables: list[SimpleTable] = []
        for name in names:
            if name in diag:
                used.add(name)
                tables += json_tables(diag[name], title, hint=name)
        # Sections the score folder itself answers (no recomputation: a re-selection of rows).
        if key == "state-vs-forecast":
            cs = out.contrasts[(out.contrasts["policy"] == PRIMARY_POLICY) & (out.contrasts["track"] == "all_origin")
                               & (out.contrasts["contrast"].isin(["A2-A1", "A4-A3"])) & (out.contrasts["metric"] == PRIMARY_METRIC)]
            if len(cs):
                rows = [[r["split"], r["entry"], r["contrast"], _num(r["estimate"]), _num(r["ci_low"]), _num(r["ci_high"]), _int(r["n_fields"])]
                        for r in _records(cs.sort_values(["split", "entry", "contrast"], key=_split_first))]
                tables.append(SimpleTable("State minus Forecast (Spearman, All-Origin, canonical)",
                                          ["split", "entry", "contrast", "estimate", "ci_low", "ci_high", "n_fields"], rows))
        if key == "baseline-family":
            b = lb[lb["kind"] == "baseline"]
            for metric in ("spearman", "tv"):
                bm = b[b["metric"] == metric]
                if len(bm):
                    rows = [[r["split"], r["entry"], _num(r["estimate"]), _num(r["ci_low"]), _num(r["ci_high"]), _int(r["n_fields"])]
                            for r in _records(bm.sort_values(["split", "entry"], key=_split_first))]
                    tables.append(SimpleTable(f"Baselines, {METRIC_LABEL[metric]} (All-Origin, canonical)",
                                              ["split", "entry", "estimate", "ci_low", "ci_high", "n_fields"], rows))
        if key == "policy-sensitivity" and not tables:  # diagnostics.json has none: re-select leaderboard rows
            sel = out.leaderboard[(out.leaderboard["track"] == "all_origin") & (out.leaderboard["metric"] == PRIMARY_METRIC)
                                  & (out.leaderboard["condition"].isin(["A0", "A1", "A3", "BASE"]))]
            if len(sel) and sel["policy"].nunique() > 1:
                pidx = _index(sel, ["split", "entry", "condition", "policy"])
                present = [p for p in POLICIES if p in set(sel["policy"])]
                keys = sorted({(r["split"], r["kind"], r["entry"], r["condition"]) for r in _records(sel)},
                              key=lambda k: (SPLITS.index(k[0]) if k[0] in SPLITS else 9, k[1] != "model", k[2], k[3]))
                rows = []
                for split, _kind, entry, cond in keys:
                    rows.append([split, entry, cond, *[_num(pidx[(split, entry, cond, p)]["estimate"]) if (split, entry, cond, p) in pidx else None
                                                       for p in present]])
                tables.append(SimpleTable("Spearman by counting policy (All-Origin)", ["split", "entry", "condition", *present], rows))
        for t in tables:
            _attach_chart(t)
            _truncate(t)
        sections.append(DiagnosticSection(key, title, intro, tables, bool(tables)))
    rest = {k: v for k, v in diag.items() if k not in used and k not in _DIAG_META}
    if rest:
        tables = []
        for k in sorted(rest):
            tables += json_tables(rest[k], k)
        for t in tables:
            _attach_chart(t)
            _truncate(t)
        sections.append(DiagnosticSection("other", "Other diagnostics", "Further sections of diagnostics.json.", tables, True))
    if isinstance(diag.get("parameters"), dict):
        sections.append(DiagnosticSection("parameters", "Parameters", "The constants the diagnostics were computed with.",
                                          json_tables(diag["parameters"], "Parameters"), True))
    return sections


def _split_first(col: pd.Series) -> pd.Series:
    if col.name == "split":
        return col.map(lambda s: SPLITS.index(s) if s in SPLITS else 9)
    return col


# ------------------------------------------------------------------ archive page
def _artifacts(archive: Archive) -> list[dict]:
    rows = []
    text = archive.read_bytes("SHA256SUMS").decode("utf-8")
    for line in text.splitlines():
        if not line.strip():
            continue
        digest, _, rel = line.partition(" ")
        rel = rel[1:] if rel.startswith((" ", "*")) else rel
        p = archive.path(rel)
        size = p.stat().st_size if p.is_file() else None
        group = "models" if rel.startswith("archive/models/") else "frozen"
        rows.append({"path": rel, "sha256": digest, "size": size, "group": group})
    return rows


def _flatten(prefix: str, obj: Any) -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        out = []
        for k in obj:
            out += _flatten(f"{prefix}.{k}" if prefix else str(k), obj[k])
        return out
    return [(prefix, json.dumps(obj))]


# ------------------------------------------------------------------ entry point
def build_site_model(archive: Archive, outputs: ScoreOutputs) -> SiteModel:
    """Assemble everything the templates need. Deterministic: every list is sorted."""
    field_pages, field_index = _field_pages(archive, outputs)
    model_pages, model_index = _model_pages(archive, outputs)
    splits = Counter(f.split for f in archive.fields)
    counts = {"fields": len(archive.fields), "test_fields": splits.get("test", 0), "dev_fields": splits.get("dev", 0),
              "blocks": len(archive.blocks), "models": len(archive.models), "origins": len(archive.origins.origins)}
    meta = {k: outputs.scores_json.get(k) for k in ("resamples", "seed", "level") if k in outputs.scores_json}
    return SiteModel(
        info=dict(archive.info),
        synthetic=archive.synthetic,
        manifest_sha256=archive.manifest_sha256,
        scores_meta=meta,
        counts=counts,
        panels=_leader_panels(archive, outputs, "leaderboard.md"),
        field_pages=field_pages,
        field_index=field_index,
        model_pages=model_pages,
        model_index=model_index,
        diagnostics=_diagnostics(archive, outputs),
        artifacts=_artifacts(archive),
        ledger_rows=_flatten("", archive.ledger),
        ledger_json=json.dumps(archive.ledger, indent=2, sort_keys=True),
        strict_origin=archive.origins.strict_origin.isoformat(),
        origins=[o.isoformat() for o in archive.origins.origins],
        ledger_level=float(archive.ledger["bootstrap"]["level"]),
        diagnostics_meta=({"present": True, **{k: str(outputs.diagnostics[k]) for k in ("policy", "track")
                                                if isinstance(outputs.diagnostics.get(k), str)}}
                          if outputs.diagnostics is not None else {}),
    )
