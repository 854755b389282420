"""The paper's definitions, each against a hand-computed case (issue 24).

* paired contrasts: positive favours the left side, so TV and JS are reference minus candidate;
* Table 5: the largest change from the canonical policy (not max − min), the ordering-stability
  count and the structural contrasts' signs under every policy;
* residual alignment on the change-rich subset and at the latest origin, and the retrieval
  contrasts on the residual endpoints (Table 14);
* a panel's revision metric: adapt_6 per condition only, nothing pooled, no unlisted horizon;
* per-unit provenance (INTERVENTIONS.md §7) summarised per file;
* the sample builder's declared cut-off.
"""

from __future__ import annotations

import json
import math
from datetime import date
from types import SimpleNamespace

import numpy as np
import pytest

from rapgen.scores.diagnostics import policy, residual_views
from rapgen.scores.diagnostics.provenance import summarise
from rapgen.scores.interventions.conditions import UnitValues, contrast_statistics, panel_statistics
from rapgen.scores.interventions.replay import CellUnits, readout_values, replay_statistics
from rapgen.scores.metrics import contrast_difference

NAN = float("nan")


# ---------------------------------------------------------------- contrast orientation
@pytest.mark.parametrize("metric,left,right,expected", [
    ("spearman", 0.6, 0.4, 0.2),  # higher is better: left − right
    ("tv", 0.2, 0.3, 0.1),  # the left side is closer by 0.1: reference (right) minus candidate (left)
    ("tv", 0.35, 0.3, -0.05),  # the left side is farther
    ("jsd", 0.05, 0.02, -0.03),
    ("tv_gain", 0.1, -0.1, 0.2),  # already a gain: left − right
    ("pred_recent", 0.5, 0.7, -0.2),  # descriptive: left − right
    ("direct_cos_corrected", 0.3, 0.1, 0.2),  # the interventions' own metrics: higher is better
    ("calls_per_unit", 3.0, 8.0, -5.0),
    ("tv", NAN, 0.3, NAN),  # undefined unless both sides are
])
def test_contrast_difference_table(metric, left, right, expected):
    got = float(contrast_difference(metric, np.array(left), np.array(right)))
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-15)


def test_equal_distances_give_positive_zero():
    """right − left, not −(left − right): a CSV never says -0.0."""
    assert math.copysign(1.0, float(contrast_difference("tv", np.array(0.25), np.array(0.25)))) == 1.0


def _units(**metrics) -> UnitValues:
    return UnitValues({k: np.array(v, dtype=float) for k, v in metrics.items()})


def test_intervention_contrast_rows_orient_tv_as_reference_minus_candidate():
    # one field, two origins: tv of the left side 0.2, 0.4; of the right side 0.3, 0.1
    left, right = _units(spearman=[[0.5, 0.7]], tv=[[0.2, 0.4]]), _units(spearman=[[0.4, 0.9]], tv=[[0.3, 0.1]])
    stats = contrast_statistics({"entry": "m"}, [("L-R", left, right)], {"all": np.ones((1, 2), dtype=bool)})
    by_metric = {s.key["metric"]: float(s.values[0]) for s in stats}
    assert by_metric["spearman"] == pytest.approx(((0.5 - 0.4) + (0.7 - 0.9)) / 2)  # −0.05
    assert by_metric["tv"] == pytest.approx(((0.3 - 0.2) + (0.1 - 0.4)) / 2)  # −0.1: the left side is farther


def test_replay_acquisition_tv_is_positive_when_state_evidence_is_closer():
    y = np.array([[[0.5, 0.5, 0, 0, 0, 0, 0, 0]]])
    far, near = [[[1.0, 0, 0, 0, 0, 0, 0, 0]]], [[[0.6, 0.4, 0, 0, 0, 0, 0, 0]]]  # tv 0.5 and 0.1
    present = np.ones((1, 1), dtype=bool)
    cells = {"F->F:all": CellUnits(np.array(far), present), "S->F:all": CellUnits(np.array(near), present)}
    values = readout_values(cells, np.array(far), np.array(far), y)
    _, contrasts = replay_statistics("m", values, cells, {"all": present})
    acquisition = {s.key["metric"]: float(s.values[0]) for s in contrasts if s.key["contrast"] == "acquisition:all"}
    assert acquisition["tv"] == pytest.approx(0.5 - 0.1)  # F->F's distance minus S->F's
    assert acquisition["spearman"] > 0


def test_panel_pools_no_revision_metric_and_drops_the_unlisted_horizons():
    mask = np.ones((1, 2), dtype=bool)
    model = {c: _units(spearman=[[0.6, 0.8]], tv=[[0.2, 0.1]], adapt_6=[[0.3, NAN]], adapt_12=[[0.1, NAN]], adapt_18=[[NAN, NAN]])
             for c in ("A1", "A3")}
    base = {c: _units(spearman=[[0.5, 0.5]], tv=[[0.3, 0.3]], adapt_6=[[0.1, NAN]], adapt_12=[[0.0, NAN]], adapt_18=[[NAN, NAN]])
            for c in ("A1", "A3")}
    cells, contrasts = panel_statistics("m", model, base, mask, {"all": mask})
    keys = {(s.key["contrast"], s.key["metric"]) for s in contrasts}
    assert ("A1:model-base", "adapt_6") in keys and ("pooled:model-base", "adapt_6") not in keys
    assert not {m for _, m in keys} & {"adapt_12", "adapt_18"}
    assert not {s.key["metric"] for s in cells} & {"adapt_12", "adapt_18"}
    pooled = {s.key["metric"]: float(s.values[0]) for s in contrasts if s.key["contrast"] == "pooled:model-base"}
    assert pooled["spearman"] == pytest.approx((0.1 + 0.3 + 0.1 + 0.3) / 4)
    assert pooled["tv"] == pytest.approx((0.1 + 0.2 + 0.1 + 0.2) / 4)  # base's distance minus the panel model's


# ---------------------------------------------------------------- Table 5
@pytest.mark.parametrize("estimates,expected", [
    ({"canonical": 0.5, "split": 0.49, "single": 0.52, "flip": 0.47}, 0.03),  # max − min would say 0.05
    ({"canonical": 0.5, "split": 0.7, "single": 0.1, "flip": None}, 0.4),  # canonical inside the range: 0.4, not 0.6
    ({"canonical": 0.2, "split": 0.2, "single": 0.2, "flip": 0.2}, 0.0),
    ({"canonical": None, "split": 0.3, "single": 0.4, "flip": 0.5}, None),  # nothing to change from
    ({"canonical": 0.3, "split": None, "single": None, "flip": None}, None),
])
def test_max_change_is_the_largest_change_from_canonical(estimates, expected):
    got = policy.max_change(estimates)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("estimates,text", [
    ({"A0": 0.3, "A1": 0.5, "A3": 0.4}, "A1 > A3 > A0"),
    ({"A0": 0.3, "A1": 0.5, "A2": 0.5, "A3": 0.4, "A4": 0.5}, "A1 = A2 = A4 > A3 > A0"),
    ({"A0": 0.1}, "A0"),
])
def test_ordering_text(estimates, text):
    assert policy.ordering(estimates) == text


CANONICAL = {"A0": 0.30, "A1": 0.50, "A2": 0.45, "A3": 0.40, "A4": 0.45}


@pytest.mark.parametrize("other,same", [
    ({"A0": 0.20, "A1": 0.60, "A2": 0.46, "A3": 0.41, "A4": 0.46}, True),  # levels move, the order holds
    ({"A0": 0.30, "A1": 0.40, "A2": 0.45, "A3": 0.41, "A4": 0.45}, False),  # A1 drops below A3 (and A2, A4)
    ({"A0": 0.30, "A1": 0.50, "A2": 0.45, "A3": 0.40, "A4": 0.46}, False),  # the A2 = A4 tie breaks
    ({"A0": 0.30, "A1": 0.50, "A2": 0.45, "A3": 0.40}, False),  # a condition lost its estimate
])
def test_same_order(other, same):
    assert policy.same_order(CANONICAL, other) is same


def test_orderings_count_policies_keeping_the_canonical_order_and_the_models_largest_change():
    by_condition = {  # condition -> policy -> estimate; "single" swaps A1 and A3 (the paper's GPT-OSS case)
        "A0": {"canonical": 0.30, "split": 0.31, "single": 0.28, "flip": 0.30},
        "A1": {"canonical": 0.50, "split": 0.52, "single": 0.382, "flip": 0.47},
        "A3": {"canonical": 0.40, "split": 0.41, "single": 0.384, "flip": 0.38},
    }
    rows = policy.orderings({("test", "m"): by_condition}, ["canonical", "split", "single", "flip"])
    assert rows == [{"split": "test", "entry": "m", "conditions": "A0 A1 A3", "canonical_order": "A1 > A3 > A0",
                     "n_policies": 4, "order_stable": 3, "changed_policies": "single",
                     "max_change": pytest.approx(0.118)}]


def test_contrast_signs_are_the_paired_contrasts_under_every_policy():
    # entries m·A0, m·A1; policies canonical, flip; one metric; two fields × two origins
    values = np.full((2, 2, 1, 2, 2), NAN)
    values[0, 0, 0] = [[0.1, 0.3], [0.5, NAN]]  # A0, canonical
    values[1, 0, 0] = [[0.2, 0.5], [0.6, 0.9]]  # A1, canonical: field f1 (0.1 + 0.2)/2, f2 0.1 (origin 2 unpaired)
    values[0, 1, 0] = [[0.4, 0.4], [0.5, 0.5]]  # A0, flip
    values[1, 1, 0] = [[0.3, 0.3], [0.5, 0.5]]  # A1, flip: f1 −0.1, f2 0
    a = SimpleNamespace(metric_names=("spearman",), values=values, entries=[("m", "model", "A0"), ("m", "model", "A1")],
                        policies=("canonical", "flip"))
    (row,) = policy.contrast_signs(a, {"test": np.array([0, 1])})
    assert row["contrast"] == "A1-A0" and row["estimates"]["canonical"] == pytest.approx((0.15 + 0.1) / 2)
    assert row["estimates"]["flip"] == pytest.approx(-0.05)
    assert row["signs"] == {"canonical": "+", "flip": "−"} and row["sign_kept"] is False


# ---------------------------------------------------------------- residual cuts and Table 14
class _Agg:
    """A split aggregator stand-in: the plain field-macro mean, no interval."""

    def __init__(self, cols):
        self.cols = np.asarray(cols)

    def summarise(self, Z):
        Z = np.asarray(Z, dtype=float)[:, self.cols]
        out = []
        for row in Z:
            ok = row[~np.isnan(row)]
            out.append({"estimate": float(ok.mean()) if ok.size else None, "ci_low": None, "ci_high": None, "n_fields": int(ok.size)})
        return out


def _arrays():
    origins = (date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1))
    entries = [("m", "model", "A0"), ("m", "model", "A1"), ("m", "model", "A3")]
    return SimpleNamespace(origins=origins, entries=entries, field_ids=["f1", "f2"])


def test_residual_cuts_on_the_change_rich_episodes_and_the_latest_origin():
    a = _arrays()
    cos = np.array([[0.1, 0.2, 0.3], [0.5, NAN, 0.7]])  # A1's corrected residual cosine, fields × origins
    stats = [(1, "direct_cosine", cos, None, None)]
    rich = np.array([[False, True, True], [True, True, False]])
    rows = residual_views.subset_rows(a, stats, {"test": _Agg([0, 1])}, residual_views.subset_masks(a.origins, rich))
    by = {r["subset"]: r for r in rows}
    assert by["change_rich"]["estimate"] == pytest.approx(((0.2 + 0.3) / 2 + 0.5) / 2)  # f2's second episode is undefined
    assert by["change_rich"]["n_units"] == 4 and by["change_rich"]["n_defined"] == 3
    assert by["latest_origin"]["estimate"] == pytest.approx((0.3 + 0.7) / 2) and by["latest_origin"]["origin"] == "2025-01-01"
    assert by["latest_origin"]["condition"] == "A1"


def test_retrieval_contrasts_on_the_residual_endpoints_are_paired_within_field():
    a = _arrays()
    closed = np.array([[0.1, 0.1, NAN], [0.0, 0.2, 0.4]])
    fixed = np.array([[0.3, 0.2, 0.5], [0.1, NAN, 0.1]])
    expanding = np.array([[0.2, 0.2, 0.2], [0.0, 0.0, 0.0]])
    stats = [(0, "partial_residual", closed, None, None), (1, "partial_residual", fixed, None, None),
             (2, "partial_residual", expanding, None, None), (1, "tv_gain", fixed, None, None)]
    rows = {r["contrast"]: r for r in residual_views.contrast_rows(a, stats, {"test": _Agg([0, 1])})}
    assert set(rows) == {"A1-A0", "A3-A0", "A3-A1"} and {r["statistic"] for r in rows.values()} == {"partial_residual"}
    # A1 − A0: f1 over origins 1, 2 (origin 3 unpaired) = (0.2 + 0.1)/2; f2 over origins 1, 3 = (0.1 − 0.3)/2
    assert rows["A1-A0"]["estimate"] == pytest.approx((0.15 + (-0.1)) / 2)
    assert rows["A3-A1"]["estimate"] == pytest.approx(((-0.1 + 0.0 - 0.3) / 3 + (-0.1 - 0.1) / 2) / 2)


# ---------------------------------------------------------------- INTERVENTIONS.md §7
def test_unit_provenance_summary():
    lines = [
        {"weights": {}, "response_model": "gpt-x-2026", "attempts": 1, "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"weights": {}, "response_model": "gpt-x-2026", "attempts": 3, "unit_attempt": 2, "max_output_tokens": 1600,
         "usage": {"input_tokens": 50, "output_tokens": 5, "reasoning_tokens": 7}},
        {"weights": {}, "response_model": "gpt-x-2025", "max_output_tokens": 1600},
        {"weights": None, "status": "invalid"},
    ]
    assert summarise(lines) == {
        "units": 4, "with_response_model": 3, "response_models": "gpt-x-2025 (1); gpt-x-2026 (2)",
        "with_attempts": 2, "attempts_max": 3, "retried": 1, "unit_attempt_max": 2, "rerun": 1,
        "with_usage": 2, "input_tokens": 150, "output_tokens": 15, "reasoning_tokens": 7, "max_output_tokens": "1600 (2)",
    }
    assert summarise([{"weights": {}}])["response_models"] is None and summarise([{"weights": {}}])["input_tokens"] is None


# ---------------------------------------------------------------- the sample's declared cut-off
def test_declare_cutoff_keeps_the_other_keys_in_order(tmp_path):
    from rapgen.sample.committed import CUTOFF, CUTOFF_MODEL, declare_cutoff

    folder = tmp_path / "archive" / "models" / CUTOFF_MODEL
    folder.mkdir(parents=True)
    record = {"model_id": CUTOFF_MODEL, "knowledge_cutoff": None, "release_date": None, "cutoff_source": "n/a", "notes": "x"}
    (folder / "model.json").write_text(json.dumps(record))
    declare_cutoff(tmp_path, CUTOFF_MODEL, CUTOFF)
    got = json.loads((folder / "model.json").read_text())
    assert list(got) == ["model_id", "knowledge_cutoff", "release_date", "cutoff_source", "notes", "cutoff_precision"]
    assert (got["knowledge_cutoff"], got["cutoff_precision"]) == ("2024-01-01", "month") and got["notes"] == "x"


def test_unit_provenance_counts_the_scored_units_of_the_listed_files():
    from rapgen.archive.interventions import OracleUnit
    from rapgen.archive.records import Unit
    from rapgen.scores.diagnostics.provenance import unit_provenance

    o1, o2, o3 = date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1)
    units = [Unit("f", o1, "A1", None, False, provenance={"attempts": 2}), Unit("f", o2, "A1", None, False),
             Unit("f", o3, "A1", None, False, provenance={"attempts": 5, "usage": {"input_tokens": 9, "output_tokens": 1}})]
    oracle = [OracleUnit("f", o1, "O1", None, False, "0" * 64, "0" * 64, provenance={"response_model": "x"})]

    class Archive:
        model_ids = ["m"]

        def predictions(self, model_id):
            return units

        def interventions(self, model_id):
            return SimpleNamespace(readouts=(), oracle=oracle)

    def rows(**kw):
        return {r["file"]: (r["units"], r["attempts_max"], r["input_tokens"]) for r in unit_provenance(Archive(), **kw)["rows"]}

    assert rows() == {"predictions": (3, 5, 9), "oracle": (1, None, None)}
    assert rows(origins=[o1, o2]) == {"predictions": (2, 2, None), "oracle": (1, None, None)}
    # release 1 listed the model's 2024-01 units and not oracle.jsonl
    assert rows(keep=lambda model, origin: origin == o1, files={"archive/models/m/predictions.jsonl"}) == {
        "predictions": (1, 2, None)}


def test_the_parsed_records_keep_the_shown_provenance_keys():
    from rapgen.archive.parse import parse_predictions

    line = {"field_id": "f", "origin": "2024-01-01", "condition": "A1", "weights": {f"D{i}": 1 for i in range(8)},
            "response_model": "m-2026", "attempts": 2, "prompt_sha256": "a" * 64, "usage": {"input_tokens": 3, "output_tokens": 4}}
    field = SimpleNamespace(field_id="f")
    (unit,), findings = parse_predictions("p.jsonl", (json.dumps(line) + "\n").encode(), {"f": field}, [date(2024, 1, 1)],
                                          coverage=False)
    assert findings == [] and unit.provenance == {"response_model": "m-2026", "attempts": 2,
                                                  "usage": {"input_tokens": 3, "output_tokens": 4}}
    (bare,), _ = parse_predictions("p.jsonl", (json.dumps({k: line[k] for k in ("field_id", "origin", "condition", "weights")})
                                               + "\n").encode(), {"f": field}, [date(2024, 1, 1)], coverage=False)
    assert bare.provenance is None and bare == unit  # provenance never takes part in equality
