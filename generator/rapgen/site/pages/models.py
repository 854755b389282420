"""The model pages and the models index: score matrices, scores by origin, contrasts,
validity accounting, invalid-unit reasons and Search behaviour.

Participation in Forecast-Strict is read from scores.json (the scorer applies the
rule); Search call counts and evidence come from diagnostics.json's
``search_evidence`` section and the replay status from replay.json — the site
counts nothing in the archive's traces.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import TEST_SPLIT, ModelInfo, RapRelease
from rapgen.scores import FORECAST_STRICT_TRACK, METRIC_NAMES, PRIMARY, TRACKS
from rapgen.site import plots
from rapgen.site.cells import (
    CONDITION_LABEL, CONTRAST_ORDER, HIGHER, LEADER_CONDITIONS, METRIC_LABEL, SPLIT_LABEL, SPLITS, TRACK_LABEL, Cell, ModelPage,
    cell, count, group, index, mark_best, num, page_url, records,
)
from rapgen.site.escape import safe_url
from rapgen.site.i18n import t
from rapgen.site.inputs import ScoreOutputs
from rapgen.site.pages.leaderboard import REFERENCE_AGENT_KEY, is_reference_agent



def _matrices(model_id: str, conds: list[str], idx: dict, split: str) -> list[dict]:
    mats = []
    for track in TRACKS:
        metrics = [mt for mt in METRIC_NAMES if any((track, split, model_id, c, mt) in idx for c in conds)]
        rows = [{"condition": cond, "label": CONDITION_LABEL[cond],
                 "cells": {mt: cell(idx.get((track, split, model_id, cond, mt))) for mt in metrics}}
                for cond in conds if any((track, split, model_id, cond, mt) in idx for mt in metrics)]
        if rows:
            for mt in metrics:
                mark_best([r["cells"][mt] for r in rows if r["condition"] in LEADER_CONDITIONS], HIGHER[mt])
            mats.append({"track": track, "label": TRACK_LABEL[track], "rows": rows,
                         "metrics": [(mt, METRIC_LABEL[mt]) for mt in metrics]})
    return mats


def _validity(model_id: str, conds: list[str], idx: dict, split: str) -> list[dict]:
    rows = []
    for cond in conds:
        r = idx.get((PRIMARY.track, split, model_id, cond, PRIMARY.metric))
        if r is not None:
            rows.append({"condition": cond, "label": CONDITION_LABEL[cond], "expected": count(r["n_episodes"]),
                         "valid": count(r["n_valid"]), "invalid": count(r["n_invalid"])})
    return rows


def _origin_chart(model_id: str, osc: pd.DataFrame, origins: list[str], split: str) -> str:
    sub = osc[(osc["split"] == split) & (((osc["entry"] == model_id) & (osc["kind"] == "model"))
                                         | ((osc["entry"] == "ewma") & (osc["kind"] == "baseline")))]
    series = {}
    for (kind, _entry, cond), g in sorted(sub.groupby(["kind", "entry", "condition"]), key=lambda kv: (kv[0][0] != "model", kv[0][2])):
        by_origin = {str(o): num(e) for o, e in zip(g["origin"], g["estimate"])}
        name = CONDITION_LABEL.get(cond, cond) if kind == "model" else t("md.ewma_baseline")
        series[name] = [by_origin.get(o) for o in origins]
    if not series:
        return ""
    return plots.embed(plots.lines(origins, series, y_title=t("md.origin_axis"), dashed=[t("md.ewma_baseline")]),
                       320, t("md.origin_title", split=SPLIT_LABEL[split]))


def _contrast_key(r: dict) -> tuple:
    return (TRACKS.index(r["track"]) if r["track"] in TRACKS else 9,
            CONTRAST_ORDER.index(r["contrast"]) if r["contrast"] in CONTRAST_ORDER else 99, r["contrast"],
            METRIC_NAMES.index(r["metric"]) if r["metric"] in METRIC_NAMES else 99)


def _contrasts(model_id: str, ct: pd.DataFrame, split: str) -> list[dict]:
    rows = records(ct[(ct["entry"] == model_id) & (ct["split"] == split)])
    return [{"track": TRACK_LABEL.get(r["track"], r["track"]), "contrast": r["contrast"],
             "metric": METRIC_LABEL.get(r["metric"], r["metric"]), "cell": cell(r), "n_fields": count(r["n_fields"])}
            for r in sorted(rows, key=_contrast_key)]


def _invalid_units(out: ScoreOutputs) -> dict[str, list[dict]] | None:
    u = out.units
    if u is None or "valid" not in u.columns or "reason" not in u.columns:
        return None
    bad = u[(u["policy"] == PRIMARY.policy) & (u["kind"] == "model") & (~u["valid"].astype(bool))]
    return group(records(bad[["entry", "condition", "reason"]]), "entry")


def _reasons(model_id: str, invalid: dict[str, list[dict]] | None) -> list[dict] | None:
    """Counts of invalid units by (condition, reason), from units.parquet; None without it."""
    if invalid is None:
        return None
    reasons: Counter = Counter((r["condition"], r["reason"] or t("md.unspecified")) for r in invalid.get(model_id, ()))
    return [{"condition": c, "reason": r, "count": n} for (c, r), n in sorted(reasons.items())]


def _replay_by_model(replay: dict) -> dict[str, dict[str, dict]]:
    """replay.json (docs/search.md) -> {model_id: {condition: summary}}."""
    out: dict[str, dict[str, dict]] = {}
    models = replay.get("models")
    for rec in models if isinstance(models, list) else ():
        if isinstance(rec, dict) and isinstance(rec.get("conditions"), list):
            out[str(rec.get("model_id"))] = {str(c.get("condition")): c for c in rec["conditions"] if isinstance(c, dict)}
    return out


def _evidence_by_model(diagnostics: dict | None) -> dict[str, list[dict]]:
    section = (diagnostics or {}).get("search_evidence")
    rows = section.get("rows") if isinstance(section, dict) else None
    return group([r for r in rows if isinstance(r, dict)], "entry") if isinstance(rows, list) else {}


def _search(evidence: list[dict], replay: dict[str, dict] | None, note: str) -> dict | None:
    """The Search table: per condition, the calls and calls per unit the scorer counted
    (``search_evidence``), with the replay outcome and the evidence statistics."""
    if not evidence:
        return None
    rows = []
    for ev in sorted(evidence, key=lambda r: str(r.get("condition"))):
        cond = str(ev.get("condition"))
        rp = (replay or {}).get(cond)
        rows.append({"condition": cond, "label": CONDITION_LABEL.get(cond, cond), "units": count(ev.get("called_units")),
                     "calls": count(ev.get("calls")), "mean": num(ev.get("calls_per_unit_mean")),
                     "max": count(ev.get("calls_per_unit_max")),
                     "replay": None if rp is None else {
                         "calls": count(rp.get("calls")), "reproduced": count(rp.get("reproduced")),
                         "failed": count(rp.get("failed")), "recent_share": num(ev.get("recent_share")),
                         "spearman_recent": num(ev.get("spearman_recent")), "spearman_future": num(ev.get("spearman_future")),
                         "first_difference": (rp.get("first_differences") or [None])[0]}})
    return {"rows": rows, "replayed": replay is not None, "replay_note": note}


def _info(m: ModelInfo, conds: list[str], strict: bool) -> dict[str, Any]:
    return {
        "display_name": m.display_name, "provider": m.provider, "proprietary": m.proprietary,
        "knowledge_cutoff": m.knowledge_cutoff.isoformat() if m.knowledge_cutoff else "",
        "release_date": m.release_date.isoformat() if m.release_date else "",
        "effective_cutoff": m.effective_cutoff.isoformat() if m.effective_cutoff else "",
        "strict": strict, "cutoff_source": m.cutoff_source, "diagnostic": m.diagnostic,
        "submitted": m.submitted.isoformat() if m.submitted else "", "contact": m.contact, "notes": m.notes,
        "extra": sorted((k, json.dumps(v) if not isinstance(v, str) else v) for k, v in m.extra.items() if k != REFERENCE_AGENT_KEY),
        "reference_agent": is_reference_agent(m),
        "url": safe_url(m.extra["url"]) if isinstance(m.extra.get("url"), str) else None,
        "conditions": conds,
    }


def _strict_models(scores_json: dict) -> set[str]:
    """The models scores.json lists on the Forecast-Strict track."""
    track = (scores_json.get("tracks") or {}).get(FORECAST_STRICT_TRACK) or {}
    return {str(m) for m in track.get("models") or ()}


def _replay(archive: RapRelease, out: ScoreOutputs) -> tuple[dict[str, dict[str, dict]], str]:
    if out.replay is None:
        return {}, t("md.replay_absent")
    if out.replay.get("manifest_sha256") not in (None, archive.manifest_sha256):
        return {}, t("md.replay_stale")
    return _replay_by_model(out.replay), ""


def build_model_pages(archive: RapRelease, out: ScoreOutputs, origins: list[str]) -> tuple[list[ModelPage], list[dict]]:
    """Every model's page and the index table's rows, in archive order; ``origins``: the resolved
    origins of the release shown (the x axis of "Scores by origin")."""
    lb = out.leaderboard[out.leaderboard["policy"] == PRIMARY.policy]
    idx = index(lb, ["track", "split", "entry", "condition", "metric"])
    ct = out.contrasts[out.contrasts["policy"] == PRIMARY.policy]
    osc = out.origin_scores[(out.origin_scores["policy"] == PRIMARY.policy) & (out.origin_scores["metric"] == PRIMARY.metric)]
    replay_models, replay_note = _replay(archive, out)
    evidence, invalid, strict = _evidence_by_model(out.diagnostics), _invalid_units(out), _strict_models(out.scores_json)
    pages, rows = [], []
    for m in archive.models:
        path = f"models/{m.model_id}.md"
        conds = sorted(set(lb[lb["entry"] == m.model_id]["condition"]))
        info = _info(m, conds, m.model_id in strict)
        info["has_traces"] = archive.has_traces(m.model_id)
        pages.append(ModelPage(
            m.model_id, path, info,
            {s: _matrices(m.model_id, conds, idx, s) for s in SPLITS},
            {s: _origin_chart(m.model_id, osc, origins, s) for s in SPLITS},
            {s: _contrasts(m.model_id, ct, s) for s in SPLITS},
            {s: _validity(m.model_id, conds, idx, s) for s in SPLITS},
            _reasons(m.model_id, invalid),
            _search(evidence.get(m.model_id, []), replay_models.get(m.model_id), replay_note),
        ))
        headline = idx.get((PRIMARY.track, TEST_SPLIT, m.model_id, PRIMARY.condition, PRIMARY.metric))
        rows.append({"model_id": m.model_id, "name": m.display_name, "provider": m.provider, "proprietary": m.proprietary,
                     "reference_agent": info["reference_agent"], "cutoff": info["effective_cutoff"],
                     "url": page_url("models/index.md", path), "conditions": " ".join(conds),
                     "headline": cell(headline) if headline else Cell(None, note=t("common.not_evaluated"))})
    return pages, rows
