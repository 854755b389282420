"""Figure 3's panels (the Diagnostics page), "Strict vs exposed" and the paper's Appendix F tables
(the Paper page), and a model page's intervention pieces (INTERVENTIONS.md §1-§5, §8).

Each panel is a re-selection of rows the scorer wrote — ``contrasts.csv`` and the
declared files of ``DIR/interventions/`` (``rapgen.scores.schema.INTERVENTION_FILES``) —
shown per model and split as a forest plot with its table (one row per model and
series, never per episode). Nothing is recomputed. A panel whose rows are absent says
so in one line. The section appears only when the score folder has ``interventions/``.

Each panel carries the interval kind of the paper's table behind it: Figure 3 (b), (c) and
Tables 20, 21, 24 and 25 are field-clustered (the ``fc_*`` columns), everything else is
the dependency-block bootstrap (``ci_*``); the other kind is shown beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import (
    CLOSED_FORECAST, EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST, ORACLE_CONDITIONS, ORACLE_HISTORY, ORACLE_SEARCH,
)
from rapgen.scores import PRIMARY, STATE_CONTRASTS
from rapgen.site import plots
from rapgen.site.cells import SPLIT_LABEL, SPLITS, SimpleTable, num, records
from rapgen.site.i18n import t, term
from rapgen.site.inputs import ScoreOutputs
from rapgen.site.pages.paper_tables import BLOCK, BOUNDS, FIELD, Panel, appendix_tables, interval_cell, mask_table, model_tables

I_CONTRASTS, I_CELLS, SIGNATURE, COUNTERFACTUAL, EXPOSURE = (
    "interventions/contrasts.csv", "interventions/cells.csv", "interventions/signature.csv",
    "interventions/option_counterfactual.csv", "interventions/exposure.csv")
REPLAY_CONTRASTS = ("acquisition:matched", "readout:matched", "pipeline:matched")
EWMA_ORACLE_CONTRASTS = tuple(f"{c}-ewma" for c in ORACLE_CONDITIONS)  # Ok − EWMA
REOPENED_SEARCH = f"{ORACLE_SEARCH}-{ORACLE_HISTORY}"  # O3 − O2, the effect of reopening Search
SIGNATURE_SIDES = ("forecast", "state", "delta")
STRATA = ("strict", "exposed", "difference")
RESIDUAL = "direct_spearman_corrected"  # Figure 3 (d)'s middle series (F.3: "corrected residual Spearman")
ALIGN_FUTURE = "align_future"
# Strict vs exposed (Table 18, E.4–E.5): the retrieval gains, the gain over EWMA, State − Forecast, the replay
# decomposition at both budgets and exact history with Search against EWMA; every mask, boundary-in included.
EXPOSURE_CONTRASTS = (
    f"{FIXED_FORECAST}-{CLOSED_FORECAST}", f"{EXPANDING_FORECAST}-{FIXED_FORECAST}", f"{EXPANDING_FORECAST}-ewma",
    f"{EXPANDING_STATE}-{EXPANDING_FORECAST}", "acquisition:all", "readout:all", "acquisition:matched", "readout:matched",
    f"{ORACLE_SEARCH}-ewma",
)


@dataclass
class Figure3:
    panels: list[Panel]
    strict_exposed: Panel
    downloads: list[str] = field(default_factory=list)  # file names under downloads/interventions/
    tables: list[Panel] = field(default_factory=list)  # the paper's tables behind it (20, 21, 24, 25, 22–23, 26)


def _series_rows(frame: pd.DataFrame, label: str, series: str, order: tuple[str, ...]) -> list[dict]:
    rows = [r for r in records(frame) if r[series] in order]
    rows.sort(key=lambda r: (str(r[label]), order.index(r[series])))
    return rows


def _fill(panel: Panel, frame: pd.DataFrame | None, label: str, series: str, order: tuple[str, ...], x_title: str,
          note: str, interval: str = BLOCK) -> Panel:
    """One forest plot and one table per split: a row per (label, series) of ``frame``, the cell and the
    bars with the ``interval`` kind, the other kind's bounds beside it where the file has them."""
    other = FIELD if interval == BLOCK else BLOCK
    for split in SPLITS:
        part = frame[frame["split"] == split] if frame is not None and len(frame) else None
        rows = _series_rows(part, label, series, order) if part is not None else []
        has_other = bool(rows) and BOUNDS[other][0] in rows[0]
        other_cols = [f"{'field-clustered' if other == FIELD else 'block'} {end}" for end in ("low", "high")]
        columns = [term(c) for c in (label, series, "estimate", *(other_cols if has_other else []), "n_fields")]
        table_rows = []
        for r in rows:
            c = interval_cell(r, interval, t("fig3.undefined"))
            table_rows.append([r[label], r[series], c, *([num(r[k]) for k in BOUNDS[other]] if has_other else []),
                               int(num(r["n_fields"]) or 0)])
        panel.tables[split] = SimpleTable(t("fig3.table_title", title=panel.title, split=SPLIT_LABEL[split]), columns, table_rows)
        forest = [{"label": str(r[label]), "series": str(r[series]), "estimate": c.value, "ci_low": c.ci_low, "ci_high": c.ci_high}
                  for r, c in ((r, row[2]) for r, row in zip(rows, table_rows))]
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


def _analysis(out: ScoreOutputs, analysis: str, name: str = I_CONTRASTS, metric: str = PRIMARY.metric) -> pd.DataFrame | None:
    f = out.interventions.get(name)
    if f is None:
        return None
    return f[(f["analysis"] == analysis) & (f["subset"] == "all") & (f["metric"] == metric)]


def _replay(out: ScoreOutputs) -> Panel:
    p = Panel("fig3-b", t("fig3.b_title"), t("fig3.b_intro"))
    return _fill(p, _analysis(out, "replay"), "entry", "contrast", REPLAY_CONTRASTS, t("fig3.delta_axis"), t("fig3.b_none"),
                 interval=FIELD)


def _recent_share(out: ScoreOutputs) -> Panel:
    """(c): the matched-call recent-window share of each side, annotated with the counterfactual's
    evidence–future alignment gain of the Forecast queries and the State-query advantage under the
    common options (the paper's annotation; the recent share's own gain is 1 − native by construction)."""
    import pandas as pd
    p = Panel("fig3-c", t("fig3.c_title"), t("fig3.c_intro"))
    sig = out.interventions.get(SIGNATURE)
    shares = {"forecast": t("fig3.c_share_forecast"), "state": t("fig3.c_share_state"), "delta": t("fig3.c_share_delta")}
    frames = []
    if sig is not None:
        s = sig[(sig["regime"] == "expanding") & (sig["metric"] == "recent_share")].copy()
        frames.append(s.assign(series=s["side"].map(lambda side: shares.get(side, side))))
    cf = out.interventions.get(COUNTERFACTUAL)
    annotation = (t("fig3.c_gain_forecast"), t("fig3.c_common_delta"))
    if cf is not None and len(cf):
        g = cf[(cf["regime"] == "expanding") & (cf["budget"] == "matched") & (cf["metric"] == ALIGN_FUTURE)]
        gain = g[(g["side"] == "forecast") & (g["arm"] == "gain")]
        common = g[(g["side"] == "delta") & (g["arm"] == "common")]
        frames += [gain.assign(series=annotation[0]), common.assign(series=annotation[1])]
    frame = pd.concat(frames, ignore_index=True) if frames else None
    order = (*(shares[s] for s in SIGNATURE_SIDES), *annotation)
    p = _fill(p, frame, "entry", "series", order, t("fig3.recent_axis"), t("fig3.c_none"), interval=FIELD)
    if p.present and (cf is None or not len(cf)):
        p.note = t("fig3.c_no_counterfactual")
    return p


def _oracle(out: ScoreOutputs) -> Panel:
    """(d): Ok − EWMA, the O cells' corrected residual alignment, and O3 − O2 (reopening Search)."""
    import pandas as pd
    p = Panel("fig3-d", t("fig3.d_title"), t("fig3.d_intro"))
    frames = []
    contrasts = _analysis(out, "oracle")
    if contrasts is not None:
        c = contrasts[(contrasts["track"] == PRIMARY.track) & contrasts["contrast"].isin((*EWMA_ORACLE_CONTRASTS, REOPENED_SEARCH))]
        frames.append(c.assign(series=c["contrast"]))
    cells = _analysis(out, "oracle", I_CELLS, RESIDUAL)
    if cells is not None:
        c = cells[cells["track"] == PRIMARY.track]
        frames.append(c.assign(series=c["cell"].map(lambda k: t("fig3.d_residual", cell=k))))
    frame = pd.concat(frames, ignore_index=True) if frames else None
    order = (*EWMA_ORACLE_CONTRASTS, *(t("fig3.d_residual", cell=k) for k in ORACLE_CONDITIONS), REOPENED_SEARCH)
    return _fill(p, frame, "entry", "series", order, t("fig3.d_axis"), t("fig3.d_none"))


def _strict_exposed(out: ScoreOutputs) -> Panel:
    p = Panel("strict-vs-exposed", t("fig3.se_title"), t("fig3.se_intro"))
    ex = out.interventions.get(EXPOSURE)
    frame = None
    if ex is not None:
        frame = ex[(ex["metric"] == PRIMARY.metric) & ex["contrast"].isin(EXPOSURE_CONTRASTS)].copy()
        frame["label"] = frame["entry"] + " · " + frame["contrast"] + " (" + frame["mask"] + ")"
    return _fill(p, frame, "label", "stratum", STRATA, t("fig3.delta_axis"), t("fig3.se_none"))


def build_figure3(out: ScoreOutputs) -> Figure3 | None:
    """Figure 3's four panels, the Appendix F tables and Strict vs exposed; None when the score
    folder has no interventions/."""
    if not out.interventions:
        return None
    names = sorted(name.split("/", 1)[1] for name in out.interventions)
    return Figure3([_state_minus_forecast(out), _replay(out), _recent_share(out), _oracle(out)], _strict_exposed(out), names,
                   appendix_tables(out))


def model_interventions(model_id: str, extra: dict, out: ScoreOutputs) -> dict | None:
    """A model page's intervention tables (:func:`paper_tables.model_tables`) and the inference
    configuration (model.json, shown as text)."""
    tables = model_tables(model_id, extra, out)
    inference = extra.get("inference")
    inference_rows = sorted((str(k), t("md.null_unset") if v is None else str(v)) for k, v in inference.items()) \
        if isinstance(inference, dict) else []
    masks = mask_table(model_id, out)
    if not any(tables.values()) and not inference_rows and masks is None:
        return None
    return {"tables": tables, "inference": inference_rows, "masks": masks,
            "mask_note": t("md.masks_note", precision=extra.get("cutoff_precision") or "day", bound=extra.get("c_eff") or "—")}
