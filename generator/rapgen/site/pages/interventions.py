"""The Diagnostics page's Figure 3 panels and "Strict vs exposed" (INTERVENTIONS.md §1-§5, §8).

Each panel is a re-selection of rows the scorer wrote — ``contrasts.csv`` and the
declared files of ``DIR/interventions/`` (``rapgen.scores.schema.INTERVENTION_FILES``) —
shown per model and split as a forest plot with its table (one row per model and
series, never per episode). Nothing is recomputed. A panel whose rows are absent says
so in one line. The section appears only when the score folder has ``interventions/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rapgen.scores import PRIMARY, STATE_CONTRASTS
from rapgen.site import plots
from rapgen.site.cells import SPLIT_LABEL, SPLITS, Cell, SimpleTable, num, records
from rapgen.site.i18n import t, term
from rapgen.site.inputs import ScoreOutputs

I_CONTRASTS, SIGNATURE, COUNTERFACTUAL, EXPOSURE = (
    "interventions/contrasts.csv", "interventions/signature.csv", "interventions/option_counterfactual.csv",
    "interventions/exposure.csv")
REPLAY_CONTRASTS = ("acquisition:matched", "readout:matched", "pipeline:matched")
ORACLE_CONTRASTS = ("O1-ewma", "O2-ewma", "O3-ewma")
SIGNATURE_SIDES = ("forecast", "state", "delta")
STRATA = ("strict", "exposed", "difference")
# The contrasts Strict vs exposed shows (the rest are in exposure.csv): the Search gain, the gain over
# EWMA, State − Forecast, the replay decomposition and exact history with Search against EWMA.
EXPOSURE_CONTRASTS = ("A3-A1", "A3-ewma", "A4-A3", "acquisition:matched", "readout:matched", "O3-ewma")


@dataclass
class Panel:
    key: str
    title: str
    intro: str
    charts: dict[str, str] = field(default_factory=dict)  # split -> forest plot
    tables: dict[str, SimpleTable] = field(default_factory=dict)  # split -> table
    note: str = ""  # one line when the archive has no such records

    @property
    def present(self) -> bool:
        return any(t.rows for t in self.tables.values())


@dataclass
class Figure3:
    panels: list[Panel]
    strict_exposed: Panel
    downloads: list[str] = field(default_factory=list)  # file names under downloads/interventions/


def _series_rows(frame: pd.DataFrame, label: str, series: str, order: tuple[str, ...]) -> list[dict]:
    rows = [r for r in records(frame) if r[series] in order]
    rows.sort(key=lambda r: (str(r[label]), order.index(r[series])))
    return rows


def _fill(panel: Panel, frame: pd.DataFrame | None, label: str, series: str, order: tuple[str, ...], x_title: str,
          note: str) -> Panel:
    """One forest plot and one table per split: a row per (label, series) of ``frame``."""
    for split in SPLITS:
        part = frame[frame["split"] == split] if frame is not None and len(frame) else None
        rows = _series_rows(part, label, series, order) if part is not None else []
        has_fc = bool(rows) and "fc_low" in rows[0]
        columns = [term(c) for c in (label, series, "estimate", *(["field-clustered low", "field-clustered high"] if has_fc else []),
                                     "n_fields")]
        table_rows = []
        for r in rows:
            c = Cell(num(r["estimate"]), num(r["ci_low"]), num(r["ci_high"]),
                     "" if num(r["estimate"]) is not None else t("fig3.undefined"))
            table_rows.append([r[label], r[series], c, *([num(r["fc_low"]), num(r["fc_high"])] if has_fc else []),
                               int(num(r["n_fields"]) or 0)])
        panel.tables[split] = SimpleTable(t("fig3.table_title", title=panel.title, split=SPLIT_LABEL[split]), columns, table_rows)
        forest = [{"label": str(r[label]), "series": str(r[series]), "estimate": num(r["estimate"]),
                   "ci_low": num(r["ci_low"]), "ci_high": num(r["ci_high"])} for r in rows]
        if any(f["estimate"] is not None for f in forest):
            fig, height = plots.forest(forest, x_title=x_title)
            panel.charts[split] = plots.embed(fig, height, t("fig3.table_title", title=panel.title, split=SPLIT_LABEL[split]))
    if not panel.present:
        panel.note = note
    return panel


def _state_minus_forecast(out: ScoreOutputs) -> Panel:
    c = out.contrasts
    sel = c[(c["track"] == PRIMARY.track) & (c["policy"] == PRIMARY.policy) & (c["metric"] == PRIMARY.metric)]
    p = Panel("fig3-a", t("fig3.a_title"), t("fig3.a_intro"))
    return _fill(p, sel, "entry", "contrast", STATE_CONTRASTS, t("fig3.delta_axis"), t("fig3.a_none"))


def _analysis(out: ScoreOutputs, analysis: str) -> pd.DataFrame | None:
    f = out.interventions.get(I_CONTRASTS)
    if f is None:
        return None
    return f[(f["analysis"] == analysis) & (f["subset"] == "all") & (f["metric"] == PRIMARY.metric)]


def _replay(out: ScoreOutputs) -> Panel:
    p = Panel("fig3-b", t("fig3.b_title"), t("fig3.b_intro"))
    return _fill(p, _analysis(out, "replay"), "entry", "contrast", REPLAY_CONTRASTS, t("fig3.delta_axis"), t("fig3.b_none"))


def _recent_share(out: ScoreOutputs) -> Panel:
    p = Panel("fig3-c", t("fig3.c_title"), t("fig3.c_intro"))
    sig = out.interventions.get(SIGNATURE)
    frames = []
    if sig is not None:
        s = sig[(sig["regime"] == "expanding") & (sig["metric"] == "recent_share")].copy()
        frames.append(s.assign(series=s["side"]))
    cf = out.interventions.get(COUNTERFACTUAL)
    if cf is not None and len(cf):
        g = cf[(cf["regime"] == "expanding") & (cf["budget"] == "matched") & (cf["arm"] == "gain")
               & (cf["metric"] == "recent_share")].copy()
        frames.append(g.assign(series="counterfactual gain, " + g["side"]))
    frame = pd.concat(frames, ignore_index=True) if frames else None
    order = (*SIGNATURE_SIDES, *(f"counterfactual gain, {s}" for s in SIGNATURE_SIDES))
    p = _fill(p, frame, "entry", "series", order, t("fig3.recent_axis"), t("fig3.c_none"))
    if p.present and (cf is None or not len(cf)):
        p.note = t("fig3.c_no_counterfactual")
    return p


def _oracle(out: ScoreOutputs) -> Panel:
    p = Panel("fig3-d", t("fig3.d_title"), t("fig3.d_intro"))
    return _fill(p, _analysis(out, "oracle"), "entry", "contrast", ORACLE_CONTRASTS, t("fig3.delta_axis"), t("fig3.d_none"))


def _strict_exposed(out: ScoreOutputs) -> Panel:
    p = Panel("strict-vs-exposed", t("fig3.se_title"), t("fig3.se_intro"))
    ex = out.interventions.get(EXPOSURE)
    frame = None
    if ex is not None:
        frame = ex[(ex["metric"] == PRIMARY.metric) & ex["contrast"].isin(EXPOSURE_CONTRASTS)
                   & ex["mask"].isin(("forecast", "joint"))].copy()
        frame["label"] = frame["entry"] + " · " + frame["contrast"] + " (" + frame["mask"] + ")"
    return _fill(p, frame, "label", "stratum", STRATA, t("fig3.delta_axis"), t("fig3.se_none"))


def build_figure3(out: ScoreOutputs) -> Figure3 | None:
    """Figure 3's four panels and Strict vs exposed; None when the score folder has no interventions/."""
    if not out.interventions:
        return None
    names = sorted(name.split("/", 1)[1] for name in out.interventions)
    return Figure3([_state_minus_forecast(out), _replay(out), _recent_share(out), _oracle(out)], _strict_exposed(out), names)


# ------------------------------------------------------------------ model pages
CELLS = "interventions/cells.csv"
REPLAY_CELLS = ("F->F:all", "F->S:all", "S->F:all", "S->S:all", "F->F:matched", "F->S:matched", "S->F:matched", "S->S:matched")
ORACLE_CELLS = ("O1", "O2", "O3")
ORACLE_MODEL_CONTRASTS = ("O1-ewma", "O2-ewma", "O3-ewma", "O1-recent", "O2-recent", "O3-recent", "O1-A1", "O2-A3", "O3-A3", "O3-O2")
PANEL_CONTRASTS = ("A1:model-base", "A3:model-base", "pooled:model-base")


def _model_table(frame: pd.DataFrame | None, model_id: str, analysis: str, key: str, order: tuple[str, ...], split: str,
                 title: str, counts: bool) -> SimpleTable | None:
    if frame is None:
        return None
    sel = frame[(frame["analysis"] == analysis) & (frame["entry"] == model_id) & (frame["split"] == split)
                & (frame["subset"] == "all") & (frame["metric"] == PRIMARY.metric)]
    rows = [r for r in records(sel) if r[key] in order]
    if not rows:
        return None
    rows.sort(key=lambda r: (order.index(r[key]), str(r["track"])))
    out = []
    for r in rows:
        c = Cell(num(r["estimate"]), num(r["ci_low"]), num(r["ci_high"]), "" if num(r["estimate"]) is not None else t("common.undefined"))
        out.append([r[key], r["track"], c, num(r["fc_low"]), num(r["fc_high"]), int(num(r["n_fields"]) or 0),
                    *([int(num(r["n_valid"]) or 0), int(num(r["n_units"]) or 0)] if counts else [])])
    cols = [term(key), term("track"), t("metric.spearman"), term("field-clustered low"), term("field-clustered high"), term("n_fields"),
            *([term("valid"), term("units")] if counts else [])]
    return SimpleTable(title, cols, out)


def model_interventions(model_id: str, extra: dict, out: ScoreOutputs) -> dict | None:
    """A model page's intervention pieces: replay cells, oracle rows, the panel's paired contrast
    against its base (rows of interventions/), and the inference configuration (model.json, shown as text)."""
    cells, contrasts = out.interventions.get(CELLS), out.interventions.get(I_CONTRASTS)
    tables: dict[str, list[SimpleTable]] = {}
    for split in SPLITS:
        found = [
            _model_table(cells, model_id, "replay", "cell", REPLAY_CELLS, split, t("fig3.m_replay_cells"), True),
            _model_table(contrasts, model_id, "replay", "contrast", REPLAY_CONTRASTS, split, t("fig3.m_replay"), False),
            _model_table(cells, model_id, "oracle", "cell", ORACLE_CELLS, split, t("fig3.m_oracle_cells"), True),
            _model_table(contrasts, model_id, "oracle", "contrast", ORACLE_MODEL_CONTRASTS, split, t("fig3.m_oracle"), False),
            _model_table(contrasts, model_id, "panel", "contrast", PANEL_CONTRASTS, split,
                         t("fig3.m_panel", base=extra.get("base_model", "")).rstrip(), False),
        ]
        tables[split] = [t for t in found if t is not None]
    inference = extra.get("inference")
    inference_rows = sorted((str(k), t("md.null_unset") if v is None else str(v)) for k, v in inference.items()) \
        if isinstance(inference, dict) else []
    if not any(tables.values()) and not inference_rows:
        return None
    return {"tables": tables, "inference": inference_rows}
