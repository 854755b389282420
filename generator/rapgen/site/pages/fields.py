"""The field pages and the fields index: codebook text, realised shares, the EWMA
baseline against the truth, and every entry's score on the field."""

from __future__ import annotations

import json
from typing import Any

from rapgen.archive import SLOTS, Field, RapRelease
from rapgen.scores import BASELINE_CONDITION, PRIMARY, SPEARMAN, TRACKS, TV
from rapgen.site import plots
from rapgen.site.cells import CONDITION_LABEL, HIGHER, FieldPage, Link, group, index, num, page_url, records
from rapgen.site.escape import clean
from rapgen.site.i18n import current, t
from rapgen.site.inputs import ScoreOutputs

FORECAST_CONDITION = PRIMARY.condition  # the models' forecasts a field page's picker offers
ALL_ORIGIN, STRICT = TRACKS
# (column, track, metric, higher is better): the field table's score columns
SCORE_COLUMNS = ((SPEARMAN, ALL_ORIGIN, SPEARMAN, HIGHER[SPEARMAN]), ("spearman_strict", STRICT, SPEARMAN, HIGHER[SPEARMAN]),
                 (TV, ALL_ORIGIN, TV, HIGHER[TV]))


def _realised(rows: list[dict] | None, name: str, slot_names: dict) -> tuple[str, int, dict[str, dict]]:
    """The stacked-area chart of a field's realised shares, its window count and the shares by window."""
    if not rows:
        return "", 0, {}
    windows = [str(r["window_start"]) for r in rows]
    # D0..D7 are the window's composition; rows are renormalised defensively (a file
    # holding counts instead of shares gives the same picture). No papers: no composition.
    totals = [num(r["n_total"]) or 0.0 for r in rows]
    sums = [sum(num(r[s]) or 0.0 for s in SLOTS) for r in rows]
    shares = {s: [((num(r[s]) or 0.0) / z if t > 0 and z > 0 else None) for r, t, z in zip(rows, totals, sums)] for s in SLOTS}
    area = plots.embed(plots.stacked_shares(windows, shares, slot_names), 340, t("fd.realised_title", name=name))
    return area, len(windows), {w: {s: shares[s][i] for s in SLOTS} for i, w in enumerate(windows)}


def _ewma(rows: list[dict] | None, realised: dict[str, dict], name: str) -> tuple[str, str]:
    if rows is None:
        return "", t("fd.ewma_absent")
    points = []
    for r in rows:
        y = realised.get(str(r["origin"]))
        if not y:
            continue
        for s in SLOTS:
            if y[s] is not None and num(r[f"p_{s}"]) is not None:
                points.append({"slot": s, "origin": str(r["origin"]), "realised": y[s], "ewma": num(r[f"p_{s}"])})
    if not points:
        return "", t("fd.ewma_no_points")
    return plots.embed(plots.ewma_vs_realised(points), 340, t("fd.ewma_title", name=name)), ""


def _forecasts(rows: list[dict] | None, realised: dict[str, dict], labels: dict[tuple, str]) -> str:
    """Every entry's forecast shares (``p_D*`` in units.parquet) against the realised
    window at each origin, for the field page's model picker: {"origins": [...],
    "realised": {slot: [share per origin]}, "options": [[key, label]], "points": {key:
    {slot: [forecast per origin]}}} (null where missing). Copied, not computed."""
    origins = sorted({str(r["origin"]) for r in rows or () if realised.get(str(r["origin"]))})
    if not origins:
        return ""
    at = {o: i for i, o in enumerate(origins)}
    points: dict[str, dict] = {}
    for r in rows:
        key, o = f"{r['entry']}/{r['condition']}", str(r["origin"])
        if o not in at or (r["entry"], r["condition"]) not in labels:
            continue
        per = points.setdefault(key, {s: [None] * len(origins) for s in SLOTS})
        for s in SLOTS:
            p = num(r[f"p_{s}"])
            per[s][at[o]] = None if p is None else round(p, 3)
    options = [[f"{e}/{c}", label] for (e, c), label in labels.items() if f"{e}/{c}" in points]
    if len(options) < 2:
        return ""
    real = {s: [None if realised[o][s] is None else round(realised[o][s], 3) for o in origins] for s in SLOTS}
    doc = {"origins": origins, "realised": real, "options": options, "points": points, "text": current().js("fd.js")}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _entry_labels(out: ScoreOutputs, model_names: dict[str, str]) -> dict[tuple, str]:
    """(entry, condition) -> picker label: each model's Expanding (A3) forecast, then the
    baselines, EWMA first. (Every condition would double a full-scale field page.)"""
    lb = out.leaderboard[out.leaderboard["condition"].isin([FORECAST_CONDITION, BASELINE_CONDITION])]
    pairs = sorted({(r["kind"], r["entry"], r["condition"]) for r in records(lb[["kind", "entry", "condition"]])},
                   key=lambda k: (k[0] != "model" and k[1] != "ewma", k[0] != "model", k[1], k[2]))
    return {(e, c): clean(f"{model_names.get(e, e)} · {CONDITION_LABEL.get(c, c)}" if k == "model"
                          else t("common.baseline_suffix", name=e))
            for k, e, c in pairs}


def _score_rows(rows: list[dict] | None, path: str, model_names: dict[str, str]) -> list[dict]:
    if rows is None:
        return []
    sidx = index(rows, ["track", "kind", "entry", "condition", "metric"])
    keys = sorted({(r["kind"], r["entry"], r["condition"]) for r in rows}, key=lambda k: (k[0] != "model", k[1], k[2]))
    out = []
    for kind, entry, cond in keys:
        row: dict[str, Any] = {
            "kind": kind, "entry": entry, "name": model_names.get(entry, entry),
            "url": page_url(path, f"models/{entry}.md") if entry in model_names else None,
            "condition": cond, "condition_label": CONDITION_LABEL.get(cond, cond),
        }
        for col, track, metric, _ in SCORE_COLUMNS:
            r = sidx.get((track, kind, entry, cond, metric))
            row[col] = None if r is None else num(r["estimate"])
        out.append(row)
    for col, _, _, higher in SCORE_COLUMNS:
        vals = [r[col] for r in out if r[col] is not None]
        best = (max(vals) if higher else min(vals)) if vals else None
        for r in out:
            r[col + "_bold"] = best is not None and r[col] == best
    return out


def _best_a3(rows: list[dict] | None) -> float | None:
    vals = [v for v in (num(r["estimate"]) for r in (rows or ()) if r["track"] == PRIMARY.track and r["metric"] == PRIMARY.metric
                        and r["kind"] == "model" and r["condition"] == PRIMARY.condition) if v is not None]
    return max(vals) if vals else None


def _ewma_by_field(out: ScoreOutputs) -> dict[str, list[dict]] | None:
    units = out.units
    if units is None or not all(f"p_{s}" in units.columns for s in SLOTS):
        return None
    sel = units[(units["entry"] == "ewma") & (units["kind"] == "baseline") & (units["policy"] == PRIMARY.policy)]
    return group(records(sel[["field_id", "origin", *[f"p_{s}" for s in SLOTS]]].sort_values("origin")), "field_id")


def _units_by_field(out: ScoreOutputs) -> dict[str, list[dict]]:
    units = out.units
    if units is None or not all(f"p_{s}" in units.columns for s in SLOTS):
        return {}
    sel = units[units["policy"] == PRIMARY.policy]
    cols = ["field_id", "entry", "condition", "origin", *[f"p_{s}" for s in SLOTS]]
    return group(records(sel[cols].sort_values(["field_id", "entry", "condition", "origin"])), "field_id")


def _page(f: Field, archive: RapRelease, comp: dict, scores: dict, ewma: dict | None, model_names: dict,
          block_of: dict, units: dict, labels: dict) -> FieldPage:
    path = f"fields/{f.field_id}.md"
    directions = [{"slot": d.slot, "name": d.name, "definition": d.definition, "include": d.include,
                   "exclude": d.exclude, "exemplars": list(d.exemplars)} for d in archive.codebooks.get(f.field_id, ())]
    block = block_of.get(f.block_id)
    neighbours = [Link(archive.field_map[n].name, page_url(path, f"fields/{n}.md"))
                  for n in sorted(block.fields if block else ()) if n != f.field_id and n in archive.field_map]
    area, n_windows, realised = _realised(comp.get(f.field_id), f.name, {d["slot"]: d["name"] for d in directions})
    ewma_chart, ewma_note = _ewma(ewma.get(f.field_id, []) if ewma is not None else None, realised, f.name)
    return FieldPage(f.field_id, path, f.name, f.definition, f.split, f.block_id, f.eligible_pre2024, directions, neighbours,
                     area, ewma_chart, ewma_note, _score_rows(scores.get(f.field_id), path, model_names), n_windows,
                     _forecasts(units.get(f.field_id), realised, labels) if ewma_chart else "")


def build_field_pages(archive: RapRelease, out: ScoreOutputs) -> tuple[list[FieldPage], list[dict]]:
    """Every field's page and the index table's rows, in archive order."""
    comp = out.compositions[out.compositions["policy"] == PRIMARY.policy].sort_values(["field_id", "window_start"])
    comp_by_field = group(records(comp), "field_id")
    scores_by_field = group(records(out.field_scores[out.field_scores["policy"] == PRIMARY.policy]), "field_id")
    ewma = _ewma_by_field(out)
    model_names = {m.model_id: m.display_name for m in archive.models}
    block_of = {b.block_id: b for b in archive.blocks}
    units, labels = _units_by_field(out), _entry_labels(out, model_names)
    pages, rows = [], []
    for f in archive.fields:
        page = _page(f, archive, comp_by_field, scores_by_field, ewma, model_names, block_of, units, labels)
        pages.append(page)
        rows.append({"field_id": f.field_id, "name": f.name, "split": f.split, "block_id": f.block_id,
                     "url": page_url("fields/index.md", page.path), "best_a3": _best_a3(scores_by_field.get(f.field_id)),
                     "eligible_pre2024": f.eligible_pre2024})
    return pages, rows
