"""The paper's intervention tables as the pages show them: Tables 20–26 on the Paper page
(every model side by side) and per model on its page, with the TV/JSD and change-rich
columns the score files hold, each model's strict masks (Table 10) and its unit provenance
(INTERVENTIONS.md §7).

A *matrix* is a table whose rows are keys of a score file (model, metric, subset, …) and
whose columns are one more key (a side, a contrast, a metric): each cell is the row's
estimate with its interval. The interval kind is the paper's for that table: field-clustered
(``fc_*``) for the Appendix F.2/F.4 tables (20, 21, 24, 25), the dependency-block bootstrap
(``ci_*``) for 22, 23 and 26. Nothing is recomputed: rows are re-selected from the files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import CONDITIONS, EXPANDING_FORECAST, FIXED_FORECAST, ORACLE_CONDITIONS, ORACLE_HISTORY
from rapgen.scores import ALL_ORIGIN_TRACK, FORECAST_STRICT_TRACK, JSD, ORACLE_CONTRASTS, PRED_RECENT, SPEARMAN, TV, TV_GAIN
from rapgen.site.cells import METRIC_LABEL, SPLIT_LABEL, SPLITS, Cell, SimpleTable, count, num, records
from rapgen.site.i18n import Labels, t, term
from rapgen.site.inputs import ScoreOutputs

BLOCK, FIELD = "block", "field"
BOUNDS = {BLOCK: ("ci_low", "ci_high"), FIELD: ("fc_low", "fc_high")}
CELLS, CONTRASTS, SIGNATURE, COUNTERFACTUAL, MASKS = (
    "interventions/cells.csv", "interventions/contrasts.csv", "interventions/signature.csv",
    "interventions/option_counterfactual.csv", "interventions/strict_masks.csv")
MASK_COLUMNS = ("forecast_strict", "joint_strict", "forecast_boundary", "joint_boundary")
DISTANCES = (SPEARMAN, TV, JSD)
REPLAY_CELLS = ("F->F:all", "F->S:all", "S->F:all", "S->S:all", "F->F:matched", "F->S:matched", "S->F:matched", "S->S:matched")
REPLAY_CONTRASTS = tuple(f"{c}:{b}" for b in ("all", "matched") for c in ("acquisition", "readout", "pipeline")) + (
    "native_shift_F", "native_shift_S")
ORACLE_CELLS = ORACLE_CONDITIONS
ORACLE_CELL_METRICS = (SPEARMAN, TV, JSD, TV_GAIN, "direct_spearman_corrected", "direct_cos_corrected",
                       "partial_residual_corrected", "adapt_6")
ORACLE_CONTRAST_METRICS = (SPEARMAN, TV, JSD, TV_GAIN, "direct_spearman_corrected", "adapt_6")
PANEL_CONDITIONS = (FIXED_FORECAST, EXPANDING_FORECAST)  # the paper's panel (INTERVENTIONS.md §3)
PANEL_CONTRASTS = (*(f"{c}:model-base" for c in PANEL_CONDITIONS), "pooled:model-base")
PANEL_METRICS = (SPEARMAN, TV, JSD, "partial_residual_corrected", "adapt_6", PRED_RECENT, "calls_per_unit")
PANEL_CELL_METRICS = (SPEARMAN, PRED_RECENT, "calls_per_unit")
SIDE_METRICS = ("recent_share", "distinct", "duplicate_share", "sort_date", "bounded", "recent_bounded", "align_recent",
                "align_future", "jaccard", "matched_calls")
SIDES = ("forecast", "state", "delta", "pair")
ARMS = (("forecast", "native"), ("forecast", "common"), ("forecast", "gain"), ("delta", "native"), ("delta", "common"))
ALIGNMENTS = ("align_recent", "align_future")
AUDIT = (("pair", "matched_calls"), ("delta", "distinct"), ("pair", "jaccard"))
PROVENANCE_COLUMNS = ("file", "units", "response_models", "attempts_max", "retried", "unit_attempt_max", "rerun", "with_usage",
                      "input_tokens", "output_tokens", "reasoning_tokens", "max_output_tokens")
# The site's words for this vocabulary (catalogue groups iv.*, read whole like the metric labels).
SIDE_LABEL = Labels("iv.side", SIDES)
ARM_LABEL = Labels("iv.arm", tuple(f"{s}_{a}" for s, a in ARMS))
AUDIT_LABEL = Labels("iv.audit", tuple(m for _, m in AUDIT))
FILE_LABEL = Labels("iv.file", ("predictions", "replays", "oracle"))
PROVENANCE_LABEL = Labels("iv.prov", PROVENANCE_COLUMNS)
MASK_LABEL = Labels("iv.mask", MASK_COLUMNS)
IV_METRIC_LABEL = Labels("iv.metric", ("direct_spearman_corrected", "direct_cos_corrected", "partial_residual_corrected",
                                       "adapt_6", "adapt_12", "adapt_18", "calls_per_unit"))


@dataclass
class Panel:
    """A page block (a Figure 3 panel or a table behind it): per split a table and, for Figure 3, a forest plot."""

    key: str
    title: str
    intro: str
    charts: dict[str, str] = field(default_factory=dict)
    tables: dict[str, SimpleTable] = field(default_factory=dict)
    note: str = ""

    @property
    def present(self) -> bool:
        return any(t.rows for t in self.tables.values())


def interval_cell(r: dict | None, kind: str, missing: str = "") -> Cell:
    """A row's estimate with the ``kind`` interval (block ``ci_*`` or field-clustered ``fc_*``)."""
    if r is None:
        return Cell(None, note=missing or t("common.not_evaluated"))
    low, high = BOUNDS[kind]
    est = num(r.get("estimate"))
    return Cell(est, num(r.get(low)), num(r.get(high)), "" if est is not None else (missing or t("common.undefined")))


def metric_label(metric: str) -> str:
    """The site's word for a score-file metric (the registry's, else the interventions' own)."""
    return METRIC_LABEL[metric] if metric in METRIC_LABEL else IV_METRIC_LABEL.get(metric, metric)


def matrix(title: str, rows: Sequence[dict], keys: Sequence[str], column: Callable[[dict], str | None],
           columns: Sequence[tuple[str, str]], interval: str, order: Callable[[tuple], Any] | None = None,
           counts: Sequence[str] = ()) -> SimpleTable:
    """One row per distinct ``keys`` tuple, one cell per ``columns`` id (``column(row)`` names a row's
    column, None: not shown); ``counts`` are plain columns taken from the row's first record."""
    found: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        col = column(r)
        if col is not None:
            found.setdefault(tuple(r[k] for k in keys), {})[col] = r
    body = []
    for key in sorted(found, key=order):
        cells = found[key]
        first = next(iter(cells.values()))
        body.append([*key, *(interval_cell(cells.get(c), interval) for c, _ in columns), *(count(first.get(k)) for k in counts)])
    return SimpleTable(title, [*(term(k) for k in keys), *(h for _, h in columns), *(term(k) for k in counts)], body)


def _position(order: Sequence[str]) -> Callable[[Any], int]:
    return lambda v: order.index(v) if v in order else len(order)


# Row order of the secondary keys: the primary track, subset, regime and budget first.
_RANK = {ALL_ORIGIN_TRACK: 0, FORECAST_STRICT_TRACK: 1, "all": 0, "change_rich": 1, "expanding": 0, "fixed": 1, "matched": 0}


def _rank(v: Any) -> tuple[int, str]:
    return _RANK.get(v, 9), str(v)


def _keyed(*positions: Callable[[Any], Any]) -> Callable[[tuple], tuple]:
    """A row order: ``positions[i]`` ranks key i; keys beyond them by :func:`_rank`."""
    return lambda key: tuple((positions[i] if i < len(positions) else _rank)(v) for i, v in enumerate(key))


def _frame(out: ScoreOutputs, name: str) -> pd.DataFrame | None:
    f = out.interventions.get(name)
    return f if f is not None and len(f) else None


def _split_rows(frame: pd.DataFrame | None, split: str, **where: Any) -> list[dict]:
    if frame is None:
        return []
    sel = frame[frame["split"] == split]
    for k, v in where.items():
        sel = sel[sel[k].isin(v)] if isinstance(v, tuple) else sel[sel[k] == v]
    return records(sel)


def _panel(key: str, title: str, intro: str, build: Callable[[str, str], SimpleTable], note: str) -> Panel:
    """A table block: ``build(split, table title)`` for each split; ``note`` when no split has rows."""
    p = Panel(key, title, intro)
    for split in SPLITS:
        p.tables[split] = build(split, t("fig3.table_title", title=title, split=SPLIT_LABEL[split]))
    if not p.present:
        p.note = note
    return p


# ---------------------------------------------------------------- the Paper page (every model)
def _signature(out: ScoreOutputs) -> Panel:
    frame = _frame(out, SIGNATURE)
    pos = _position(SIDE_METRICS)
    return _panel("t20", t("pt.t20_title"), t("pt.t20_intro"), lambda split, title: matrix(
        title, _split_rows(frame, split, regime="expanding"), ("entry", "metric"), lambda r: r["side"],
        [(s, SIDE_LABEL[s]) for s in SIDES], FIELD, order=_keyed(str, pos)),
        t("fig3.c_none"))


def _counterfactual(out: ScoreOutputs) -> Panel:
    frame = _frame(out, COUNTERFACTUAL)
    arms = {f"{s}/{a}": (s, a) for s, a in ARMS}
    return _panel("t21", t("pt.t21_title"), t("pt.t21_intro"), lambda split, title: matrix(
        title, _split_rows(frame, split, regime="expanding", metric=ALIGNMENTS), ("entry", "budget", "metric"),
        lambda r: f"{r['side']}/{r['arm']}" if (r["side"], r["arm"]) in ARMS else None,
        [(k, ARM_LABEL[f"{s}_{a}"]) for k, (s, a) in arms.items()], FIELD,
        order=_keyed(str, _rank, _position(ALIGNMENTS))), t("pt.t21_none"))


def _replay_matrix(out: ScoreOutputs, name: str, key: str, order: Sequence[str], panel: str, title: str, intro: str) -> Panel:
    """Tables 24 and 25: a replay file's rows by (model, subset, metric), one column per contrast or cell."""
    frame = _frame(out, name)
    return _panel(panel, title, intro, lambda split, caption: matrix(
        caption, _split_rows(frame, split, analysis="replay", metric=DISTANCES), ("entry", "subset", "metric"),
        lambda r: r[key] if r[key] in order else None, [(c, c) for c in order], FIELD,
        order=_keyed(str, _rank, _position(DISTANCES))), t("fig3.b_none"))


def _replay_audit(out: ScoreOutputs) -> Panel:
    frame = _frame(out, SIGNATURE)
    wanted = {f"{s}/{m}" for s, m in AUDIT}
    return _panel("t24_audit", t("pt.t24_audit_title"), t("pt.t24_audit_intro"), lambda split, title: matrix(
        title, _split_rows(frame, split, regime="expanding"), ("entry",),
        lambda r: f"{r['side']}/{r['metric']}" if f"{r['side']}/{r['metric']}" in wanted else None,
        [(f"{s}/{m}", AUDIT_LABEL[m]) for s, m in AUDIT], FIELD), t("fig3.c_none"))


def _oracle(out: ScoreOutputs) -> Panel:
    """Tables 22–23: per O condition, − EWMA, the residual alignment (the O cell), the TV improvement,
    TV gain, Adapt_6, − Recent, against the Search condition and O3 − O2."""
    cells, contrasts = _frame(out, CELLS), _frame(out, CONTRASTS)
    columns = [(f"ewma/{SPEARMAN}", t("pt.o_ewma")), ("cell/direct_spearman_corrected", t("pt.o_residual")),
               (f"ewma/{TV}", t("pt.o_ewma_tv")), (f"cell/{TV_GAIN}", metric_label(TV_GAIN)), ("cell/adapt_6", metric_label("adapt_6")),
               (f"recent/{SPEARMAN}", t("pt.o_recent")), (f"natural/{SPEARMAN}", t("pt.o_natural")),
               (f"{ORACLE_HISTORY}/{SPEARMAN}", t("pt.o_search"))]
    wanted = {c for c, _ in columns}

    def column(r: dict) -> str | None:
        if "cell" in r and isinstance(r.get("cell"), str):
            key = f"cell/{r['metric']}"
        else:
            left, _, right = str(r["contrast"]).partition("-")
            key = f"{'natural' if right in CONDITIONS else right}/{r['metric']}"
        return key if key in wanted else None

    def rows(split: str) -> list[dict]:
        out_rows = [dict(r, condition=r["cell"]) for r in _split_rows(cells, split, analysis="oracle") if r["cell"] in ORACLE_CELLS]
        for r in _split_rows(contrasts, split, analysis="oracle", contrast=ORACLE_CONTRASTS):
            out_rows.append({k: v for k, v in r.items() if k != "cell"} | {"condition": str(r["contrast"]).split("-")[0]})
        return out_rows

    return _panel("t22", t("pt.t22_title"), t("pt.t22_intro"), lambda split, title: matrix(
        title, rows(split), ("entry", "track", "subset", "condition"), column, columns, BLOCK,
        order=_keyed(str)), t("fig3.d_none"))


def _panel_contrasts(out: ScoreOutputs) -> Panel:
    frame = _frame(out, CONTRASTS)
    return _panel("t26", t("pt.t26_title"), t("pt.t26_intro"), lambda split, title: matrix(
        title, _split_rows(frame, split, analysis="panel"), ("entry", "contrast", "subset"),
        lambda r: r["metric"] if r["metric"] in PANEL_METRICS else None, [(m, metric_label(m)) for m in PANEL_METRICS], BLOCK,
        order=_keyed(str, _position(PANEL_CONTRASTS))),
        t("pt.t26_none"))


def _panel_levels(out: ScoreOutputs) -> Panel:
    frame = _frame(out, CELLS)
    return _panel("t26_levels", t("pt.t26_levels_title"), t("pt.t26_levels_intro"), lambda split, title: matrix(
        title, _split_rows(frame, split, analysis="panel"), ("entry", "cell", "subset"),
        lambda r: r["metric"] if r["metric"] in PANEL_CELL_METRICS else None,
        [(m, metric_label(m)) for m in PANEL_CELL_METRICS], BLOCK,
        order=_keyed(str, str), counts=("n_valid", "n_invalid", "n_units")),
        t("pt.t26_none"))


def appendix_tables(out: ScoreOutputs) -> list[Panel]:
    """The Paper page's tables behind Figure 3: 20, 21, 24 (both panels), 25, 22–23 and 26."""
    return [_signature(out), _counterfactual(out),
            _replay_matrix(out, CONTRASTS, "contrast", REPLAY_CONTRASTS, "t24", t("pt.t24_title"), t("pt.t24_intro")),
            _replay_audit(out),
            _replay_matrix(out, CELLS, "cell", REPLAY_CELLS, "t25", t("pt.t25_title"), t("pt.t25_intro")),
            _oracle(out), _panel_contrasts(out), _panel_levels(out)]


# ---------------------------------------------------------------- a model's page
def _model_matrix(frame: pd.DataFrame | None, model_id: str, analysis: str, key: str, order: Sequence[str], split: str,
                  title: str, metrics: Sequence[str], interval: str, counts: Sequence[str] = ()) -> SimpleTable | None:
    rows = [r for r in _split_rows(frame, split, analysis=analysis, entry=model_id) if r[key] in order]
    if not rows:
        return None
    keys = (key, "track", "subset") if analysis == "oracle" else (key, "subset")
    return matrix(title, rows, keys, lambda r: r["metric"] if r["metric"] in metrics else None,
                  [(m, metric_label(m)) for m in metrics], interval, order=_keyed(_position(order)), counts=counts)


def model_tables(model_id: str, extra: dict, out: ScoreOutputs) -> dict[str, list[SimpleTable]]:
    """Per split: the model's replay cells and contrasts (field-clustered), exact-history cells and
    contrasts and its panel against the base (block), every metric and both subsets."""
    cells, contrasts = _frame(out, CELLS), _frame(out, CONTRASTS)
    valid = ("n_valid", "n_units")
    tables: dict[str, list[SimpleTable]] = {}
    for split in SPLITS:
        found = [
            _model_matrix(cells, model_id, "replay", "cell", REPLAY_CELLS, split, t("fig3.m_replay_cells"), DISTANCES, FIELD, valid),
            _model_matrix(contrasts, model_id, "replay", "contrast", REPLAY_CONTRASTS, split, t("fig3.m_replay"), DISTANCES, FIELD),
            _model_matrix(cells, model_id, "oracle", "cell", ORACLE_CELLS, split, t("fig3.m_oracle_cells"), ORACLE_CELL_METRICS,
                          BLOCK, valid),
            _model_matrix(contrasts, model_id, "oracle", "contrast", ORACLE_CONTRASTS, split, t("fig3.m_oracle"),
                          ORACLE_CONTRAST_METRICS, BLOCK),
            _model_matrix(cells, model_id, "panel", "cell", tuple(f"{w}:{c}" for w in ("model", "base") for c in PANEL_CONDITIONS),
                          split, t("fig3.m_panel_cells"), PANEL_CELL_METRICS, BLOCK, ("n_valid", "n_invalid", "n_units")),
            _model_matrix(contrasts, model_id, "panel", "contrast", PANEL_CONTRASTS, split,
                          t("fig3.m_panel", base=extra.get("base_model", "")).rstrip(), PANEL_METRICS, BLOCK),
        ]
        tables[split] = [x for x in found if x is not None]
    return tables


def mask_table(model_id: str, out: ScoreOutputs) -> SimpleTable | None:
    """Table 10 for one model: each origin's Forecast-Strict and Joint-Strict mask and boundary flags
    (strict_masks.csv; no rows without a cut-off or release date)."""
    frame = out.interventions.get(MASKS)
    rows = records(frame[frame["entry"] == model_id]) if frame is not None else []
    if not rows:
        return None
    yes = lambda v: t("common.yes") if str(v).lower() == "true" else t("common.no")  # noqa: E731
    body = [[r["origin"], *(yes(r[c]) for c in MASK_COLUMNS)] for r in sorted(rows, key=lambda r: str(r["origin"]))]
    return SimpleTable(t("md.masks"), [t("md.col_origin"), *(MASK_LABEL[c] for c in MASK_COLUMNS)], body)



def provenance_table(model_id: str, out: ScoreOutputs) -> SimpleTable | None:
    """The model's rows of diagnostics.json ``unit_provenance`` (None without that section)."""
    section = (out.diagnostics or {}).get("unit_provenance")
    rows = section.get("rows") if isinstance(section, dict) else None
    if not isinstance(rows, list):
        return None
    mine = [r for r in rows if isinstance(r, dict) and r.get("entry") == model_id]
    if not mine:
        return None
    body = [[FILE_LABEL.get(r.get("file"), r.get("file")),
             *(("—" if r.get(k) is None else r.get(k)) for k in PROVENANCE_COLUMNS[1:])] for r in mine]
    return SimpleTable(t("md.provenance"), [PROVENANCE_LABEL[k] for k in PROVENANCE_COLUMNS], body)
