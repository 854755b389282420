"""The Diagnostics page's Figure 3 panels and Strict vs exposed, from stand-in score folders."""

from __future__ import annotations

import pandas as pd
import pytest

from rapgen.scores import SCORE_FILES
from rapgen.scores.schema import OPTIONAL_SCORE_FILES
from rapgen.site.inputs import ScoreOutputs
from rapgen.site.pages.interventions import build_figure3, model_interventions

R = (0.1, 0.0, 0.2, -0.1, 0.3, 5)


def _frame(name: str, rows: list[tuple]) -> pd.DataFrame:
    cols = OPTIONAL_SCORE_FILES.get(name) or SCORE_FILES[name]
    return pd.DataFrame(rows, columns=list(cols))


def _outputs(interventions: dict[str, pd.DataFrame], contrasts: list[tuple] = ()) -> ScoreOutputs:
    empty = {n: _frame(n, []) for n in ("leaderboard.csv", "ranks.csv", "field_scores.csv", "origin_scores.csv", "compositions.csv")}
    return ScoreOutputs(folder=None, leaderboard=empty["leaderboard.csv"], contrasts=_frame("contrasts.csv", list(contrasts)),
                        ranks=empty["ranks.csv"], field_scores=empty["field_scores.csv"], origin_scores=empty["origin_scores.csv"],
                        compositions=empty["compositions.csv"], scores_json={}, interventions=interventions)


def test_no_interventions_folder_no_figure():
    assert build_figure3(_outputs({})) is None


def test_panels_present_from_their_rows_and_absent_with_a_note():
    ic = _frame("interventions/contrasts.csv", [
        ("replay", "all_origin", "test", "m", "all", "acquisition:matched", "spearman", *R),
        ("replay", "all_origin", "test", "m", "all", "readout:matched", "spearman", *R),
        ("replay", "all_origin", "test", "m", "change_rich", "readout:matched", "spearman", *R),  # not the all subset
        ("replay", "all_origin", "test", "m", "all", "readout:matched", "tv", *R),  # not the headline metric
    ])
    state = [("all_origin", "test", "canonical", "m", "A4-A3", "spearman", .2, .1, .3, 5),
             ("all_origin", "dev", "canonical", "m", "A2-A1", "spearman", .2, .1, .3, 5)]
    fig = build_figure3(_outputs({"interventions/contrasts.csv": ic}, state))
    a, b, c, d = fig.panels
    assert a.present and len(a.tables["test"].rows) == 1 and len(a.tables["dev"].rows) == 1 and a.charts["test"]
    assert b.present and [r[1] for r in b.tables["test"].rows] == ["acquisition:matched", "readout:matched"]
    assert b.tables["dev"].rows == [] and "dev" not in b.charts
    assert not c.present and c.note.startswith("No model has paired")
    assert not d.present and "oracle.jsonl" in d.note
    assert not fig.strict_exposed.present and fig.strict_exposed.note
    # (b) is Table 24's: the cell (and the bars) carry the field-clustered interval, the block bounds follow
    row = b.tables["test"].rows[0]
    assert b.tables["test"].columns[3:5] == ["block low", "block high"]
    assert row[2].value == pytest.approx(0.1) and (row[2].ci_low, row[2].ci_high) == (-0.1, 0.3) and row[3:5] == [0.0, 0.2]
    # (a) is on contrasts.csv, block intervals only
    assert a.tables["test"].rows[0][2].ci_low == pytest.approx(0.1) and len(a.tables["test"].columns) == 4


def test_recent_share_with_and_without_counterfactual():
    sig = _frame("interventions/signature.csv", [
        ("test", "m", "expanding", side, "recent_share", *R, 7) for side in ("forecast", "state", "delta", "pair")])
    fig = build_figure3(_outputs({"interventions/signature.csv": sig}))
    c = fig.panels[2]
    assert [r[1] for r in c.tables["test"].rows] == ["Forecast recent share", "State recent share", "State − Forecast recent share"]
    assert "rapgen replay" in c.note
    cf = _frame("interventions/option_counterfactual.csv", [
        ("test", "m", "expanding", "matched", "forecast", "gain", "recent_share", *R, 7),  # 1 − native by construction: not shown
        ("test", "m", "expanding", "matched", "forecast", "gain", "align_future", 0.155, 0.0, 0.2, 0.03, 0.3, 5, 7),
        ("test", "m", "expanding", "matched", "delta", "common", "align_future", 0.004, 0.0, 0.2, -0.01, 0.02, 5, 7),
        ("test", "m", "expanding", "matched", "delta", "native", "align_future", 0.2, 0.0, 0.2, 0.1, 0.3, 5, 7),  # not the annotation
        ("test", "m", "expanding", "all", "forecast", "gain", "align_future", *R, 7),  # not the matched budget
    ])
    c = build_figure3(_outputs({"interventions/signature.csv": sig, "interventions/option_counterfactual.csv": cf})).panels[2]
    rows = c.tables["test"].rows
    assert [r[1] for r in rows][3:] == ["Forecast evidence–future alignment gain, common options",
                                        "State − Forecast evidence–future alignment, common options"] and c.note == ""
    assert rows[3][2].value == 0.155 and (rows[3][2].ci_low, rows[3][2].ci_high) == (0.03, 0.3)  # field-clustered
    assert rows[4][2].value == 0.004


def test_strict_vs_exposed_strata_in_order_and_empty_stratum_undefined():
    ex = _frame("interventions/exposure.csv", [
        ("test", "m", "forecast", "A3-A1", "spearman", "exposed", *R, 3),
        ("test", "m", "forecast", "A3-A1", "spearman", "strict", None, None, None, None, None, 0, 0),
        ("test", "m", "forecast", "A3-A1", "spearman", "difference", *R, 3),
    ])
    p = build_figure3(_outputs({"interventions/exposure.csv": ex})).strict_exposed
    rows = p.tables["test"].rows
    assert [r[1] for r in rows] == ["strict", "exposed", "difference"]
    assert rows[0][2].value is None and "undefined" in rows[0][2].note


def test_model_page_pieces_replay_oracle_panel_and_inference():
    cells = _frame("interventions/cells.csv", [
        ("replay", "all_origin", "test", "m", "all", "S->F:matched", "spearman", *R, 9, 8, 1),
        ("replay", "all_origin", "test", "m", "all", "F->F:all", "spearman", *R, 9, 9, 0),
        ("replay", "all_origin", "test", "other", "all", "F->F:all", "spearman", *R, 9, 9, 0),  # another model
        ("oracle", "all_origin", "test", "m", "all", "O2", "spearman", *R, 9, 9, 0),
    ])
    contrasts = _frame("interventions/contrasts.csv", [
        ("panel", "panel", "test", "m", "all", "pooled:model-base", "spearman", *R),
        ("panel", "panel", "test", "m", "all", "A1:model-base", "spearman", *R),
    ])
    out = _outputs({"interventions/cells.csv": cells, "interventions/contrasts.csv": contrasts})
    got = model_interventions("m", {"base_model": "base", "inference": {"temperature": 0.0, "seed": None}}, out)
    titles = [t.title for t in got["tables"]["test"]]
    assert titles == ["Replay cells (evidence→readout:budget)", "Exact-history conditions",
                      "Paired contrast against the base model base"]
    replay, _, panel = got["tables"]["test"]
    assert [r[0] for r in replay.rows] == ["F->F:all", "S->F:matched"] and replay.rows[1][-2:] == [8, 9]
    assert [r[0] for r in panel.rows] == ["A1:model-base", "pooled:model-base"]
    assert got["tables"]["dev"] == []
    assert got["inference"] == [("seed", "null (unset)"), ("temperature", "0.0")]
    assert model_interventions("nobody", {}, out) is None
