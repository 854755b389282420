"""The Paper page: the "Paper ↔ site" table in both languages and in docs/paper.md, the tables
behind Figure 3 with the paper's interval kinds, Table 18 on every mask, the model pages' strict
masks and unit provenance, and the baseline family's field-clustered intervals (Table 15)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rapgen.scores import DIAGNOSTIC_SECTIONS, SCORE_FILES
from rapgen.site.i18n import load_catalogues, speaking
from rapgen.site.pages.diagnostics import _baseline_family
from rapgen.site.pages.interventions import build_figure3
from rapgen.site.pages.paper_map import PAPER_MAP, paper_map_rows
from rapgen.site.pages.paper_tables import mask_table, provenance_table
from test_site_interventions import R, _frame, _outputs

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "paper.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the table
def test_docs_paper_lists_every_item_with_the_same_files():
    with speaking(load_catalogues()["en"]):
        rows = paper_map_rows()
    assert len(rows) == len(PAPER_MAP) == 33  # Figures 1, 2, 3 (a)–(d) and Tables 1–27
    for item, row in zip(PAPER_MAP, rows):
        line = next((x for x in DOC.splitlines() if x.startswith(f"| {row['item']} |")), None)
        assert line is not None, row["item"]
        assert f"| {item.files} |" in line, row["item"]


def test_every_item_is_labelled_in_both_languages():
    cats = load_catalogues()
    with speaking(cats["en"]):
        en = paper_map_rows()
    with speaking(cats["zh"]):
        zh = paper_map_rows()
    assert [r["files"] for r in en] == [r["files"] for r in zh]
    for a, b in zip(en, zh):
        assert a["what"] != b["what"] and a["semantics"] != b["semantics"] and b["item"].startswith(("图", "表"))


def test_the_tables_anchors_exist():
    fig = build_figure3(_outputs({"interventions/contrasts.csv": _frame("interventions/contrasts.csv", [])}))
    paper = {"paper-site", "residual-cuts", "exposure", "paper-tables", fig.strict_exposed.key,
             *(p.key.replace("_", "-") for p in fig.tables)}
    diagnostics = {"figure-3", *(p.key for p in fig.panels), *(s.key.replace("_", "-") for s in DIAGNOSTIC_SECTIONS),
                   "state-vs-forecast", "baseline-family"}
    pages = {"index.md", "fields/index.md", "leaderboard.md", "models/index.md", "archive.md"}
    for item in PAPER_MAP:
        page, _, anchor = item.page.partition("#")
        if not item.page:
            assert item.files == "—" or item.key in ("t6", "t7", "t8", "t12")
        elif page == "":
            assert anchor in paper, item.key
        elif page == "diagnostics.md":
            assert anchor in diagnostics, item.key
        else:
            assert page in pages and not anchor, item.key


# ---------------------------------------------------------------- the tables behind Figure 3
def _tables(interventions: dict) -> dict:
    return {p.key: p for p in build_figure3(_outputs(interventions)).tables}


def test_table21_arms_with_field_clustered_intervals():
    cf = _frame("interventions/option_counterfactual.csv", [
        ("test", "m", "expanding", "matched", side, arm, metric, 0.1 * k, 0.0, 0.5, -0.2 + k * 0.01, 0.4, 3, 9)
        for k, (side, arm, metric) in enumerate((s, a, m) for m in ("align_recent", "align_future", "recent_share")
                                               for s, a in (("forecast", "native"), ("forecast", "common"), ("forecast", "gain"),
                                                            ("delta", "native"), ("delta", "common"), ("state", "gain")))
    ])
    t = _tables({"interventions/option_counterfactual.csv": cf})["t21"].tables["test"]
    assert t.columns[:3] == ["entry", "budget", "metric"] and len(t.columns) == 8
    assert [r[2] for r in t.rows] == ["align_recent", "align_future"]  # recent_share is not an alignment
    gain = t.rows[1][5]  # align_future, Forecast gain: k = 8
    assert gain.value == pytest.approx(0.8) and (gain.ci_low, gain.ci_high) == (pytest.approx(-0.12), 0.4)


def test_table22_puts_each_file_row_in_its_column():
    cells = _frame("interventions/cells.csv", [
        ("oracle", "all_origin", "test", "m", "all", "O2", "direct_spearman_corrected", 0.33, 0.2, 0.4, 0.1, 0.5, 3, 9, 9, 0),
        ("oracle", "all_origin", "test", "m", "all", "O2", "spearman", 0.8, 0.7, 0.9, 0.6, 0.95, 3, 9, 9, 0),  # a level: no column
    ])
    contrasts = _frame("interventions/contrasts.csv", [
        ("oracle", "all_origin", "test", "m", "all", "O2-ewma", "spearman", 0.05, 0.0, 0.1, -0.1, 0.2, 3),
        ("oracle", "all_origin", "test", "m", "all", "O2-ewma", "tv", 0.02, 0.01, 0.03, 0.0, 0.04, 3),
        ("oracle", "all_origin", "test", "m", "all", "O3-O2", "spearman", 0.006, 0.003, 0.009, 0.0, 0.01, 3),
        ("oracle", "all_origin", "test", "m", "all", "O2-A3", "spearman", 0.3, 0.2, 0.4, 0.1, 0.5, 3),
    ])
    t = _tables({"interventions/cells.csv": cells, "interventions/contrasts.csv": contrasts})["t22"].tables["test"]
    cols = t.columns
    by = {row[3]: dict(zip(cols, row)) for row in t.rows}
    o2, o3 = by["O2"], by["O3"]
    assert o2["− EWMA"].value == 0.05 and o2["− EWMA"].ci_low == 0.0  # block interval (Table 22)
    assert o2["residual alignment"].value == 0.33 and o2["TV improvement over EWMA"].value == 0.02
    assert o2["− own Search condition"].value == 0.3 and o2["O3 − O2"].value is None
    assert o3["O3 − O2"].value == 0.006 and o3["− EWMA"].value is None


def test_table20_is_the_expanding_pairs():
    sig = _frame("interventions/signature.csv", [
        ("test", "m", regime, side, "distinct", *R, 7) for regime in ("expanding", "fixed") for side in ("forecast", "state", "delta")])
    t = _tables({"interventions/signature.csv": sig})["t20"].tables["test"]
    assert t.columns[:2] == ["entry", "metric"] and len(t.rows) == 1
    assert t.rows[0][2].ci_low == -0.1  # field-clustered


def test_table18_shows_the_quoted_contrasts_under_every_mask():
    ex = _frame("interventions/exposure.csv", [
        ("test", "m", mask, contrast, "spearman", stratum, *R, 2)
        for mask, contrast in (("forecast", "A1-A0"), ("forecast_boundary_in", "A1-A0"), ("joint", "acquisition:all"),
                               ("joint_boundary_in", "A4-A3"), ("joint", "pipeline:all"))
        for stratum in ("strict", "exposed", "difference")])
    p = build_figure3(_outputs({"interventions/exposure.csv": ex})).strict_exposed
    labels = {r[0] for r in p.tables["test"].rows}
    assert labels == {"m · A1-A0 (forecast)", "m · A1-A0 (forecast_boundary_in)", "m · acquisition:all (joint)",
                      "m · A4-A3 (joint_boundary_in)"}  # pipeline:all is not one of the paper's rows


# ---------------------------------------------------------------- model pages
def test_mask_table_and_provenance_table():
    masks = _frame("interventions/strict_masks.csv", [
        ("m", "2024-01-01", False, False, True, False), ("m", "2024-07-01", True, False, False, True),
        ("other", "2024-07-01", True, True, False, False)])
    t = mask_table("m", _outputs({"interventions/strict_masks.csv": masks}))
    assert t.rows == [["2024-01-01", "no", "no", "yes", "no"], ["2024-07-01", "yes", "no", "no", "yes"]]
    assert mask_table("nobody", _outputs({"interventions/strict_masks.csv": masks})) is None
    out = _outputs({})
    out.diagnostics = {"unit_provenance": {"rows": [
        {"entry": "m", "file": "replays", "units": 4, "response_models": "x (4)", "attempts_max": 2, "retried": 1,
         "unit_attempt_max": None, "rerun": 0, "with_usage": 0, "input_tokens": None, "output_tokens": None,
         "reasoning_tokens": None, "max_output_tokens": None}]}}
    p = provenance_table("m", out)
    assert p.rows == [["readouts", 4, "x (4)", 2, 1, "—", 0, 0, "—", "—", "—", "—"]]
    assert provenance_table("other", out) is None


# ---------------------------------------------------------------- Table 15
def test_baseline_family_carries_field_clustered_intervals_and_the_paired_difference_from_ewma():
    lb_cols, fc_cols, pair_cols = SCORE_FILES["leaderboard.csv"], SCORE_FILES["field_clustered.csv"], SCORE_FILES["pairs.csv"]
    lb = pd.DataFrame([("all_origin", "test", "canonical", e, "baseline", "BASE", "spearman", v, v - 0.05, v + 0.05, 3, 9, 9, 0)
                       for e, v in (("arima110", 0.805), ("ewma", 0.8))], columns=list(lb_cols))
    fc = pd.DataFrame([("leaderboard", "all_origin", "test", "canonical", e, "BASE", "spearman", v, v - 0.1, v + 0.1)
                       for e, v in (("arima110", 0.805), ("ewma", 0.8))], columns=list(fc_cols))
    pairs = pd.DataFrame([("all_origin", "test", "canonical", "BASE", "spearman", "arima110", "baseline", "ewma", "baseline",
                           0.005, -0.001, 0.012, 3),
                          ("all_origin", "test", "canonical", "BASE", "spearman", "ewma", "baseline", "holt", "baseline",
                           0.04, 0.01, 0.07, 3)], columns=list(pair_cols))
    out = _outputs({})
    out.leaderboard, out.field_clustered, out.pairs = lb, fc, pairs
    family, paired = _baseline_family(out).tables
    arima = family.rows[0]
    assert arima[1] == "arima110" and (arima[2].ci_low, arima[2].ci_high) == (pytest.approx(0.705), pytest.approx(0.905))
    assert arima[3:5] == [pytest.approx(0.755), pytest.approx(0.855)]  # the block bounds beside
    rows = {r[1]: r[2] for r in paired.rows}
    assert rows["arima110"].value == 0.005  # stored as arima110 − ewma
    assert rows["holt"].value == -0.04 and (rows["holt"].ci_low, rows["holt"].ci_high) == (-0.07, -0.01)  # ewma − holt, negated
    assert not re.search(r"\brange\b", " ".join(family.columns))
