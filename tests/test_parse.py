"""Predictions and traces parsing (SUBMISSION.md, SEARCH.md): malformed lines vs invalid units."""

from __future__ import annotations

import json
from datetime import date

import pytest

from rapgen.archive.parse import parse_predictions, parse_traces

FIELDS = ["f1"]
ORIGINS = [date(2024, 1, 1)]
W = {f"D{i}": 10 for i in range(8)}


def unit(**over):
    base = {"field_id": "f1", "origin": "2024-01-01", "condition": "A0", "weights": W}
    base.update(over)
    return json.dumps(base)


def parse(*lines: str):
    return parse_predictions("p.jsonl", ("\n".join(lines) + "\n").encode(), FIELDS, ORIGINS)


@pytest.mark.parametrize(
    "line, detail",
    [
        ("not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        (unit(extra=1), "unknown key 'extra'"),
        ('{"field_id": "f1", "origin": "2024-01-01", "condition": "A0"}', "missing key 'weights'"),
        (unit(field_id="f9"), "not a field of this archive"),
        (unit(origin="2024-02-01"), "not an origin of this archive"),
        (unit(origin="2024/01/01"), "YYYY-MM-DD"),
        (unit(condition="A5"), "'condition' must be one of"),
        (unit(weights=[1, 2]), "'weights' must be an object or null"),
        (unit(weights=dict(W, D0="10")), "weight 'D0' is not a JSON number"),
        (unit(weights=dict(W, D0=True)), "weight 'D0' is not a JSON number"),
        (unit().replace('"D0": 10', '"D0": NaN'), "NaN"),
        (unit().replace('"D0": 10', '"D0": Infinity'), "Infinity"),
        (unit(status="invalid"), "must have weights null"),
        (unit(status="maybe"), "'status' must be"),
        (unit().replace('"D0": 10', '"D0": 10, "D0": 11'), "duplicate key 'D0'"),
        (unit(rationale=5), "'rationale' must be a string"),
    ],
)
def test_malformed_lines_are_findings_with_line_numbers(line, detail):
    units, findings = parse(line)
    assert units == []
    assert len(findings) >= 1
    assert findings[0].line == 1 and detail in findings[0].detail, findings


@pytest.mark.parametrize(
    "weights, reason",
    [
        (None, "weights null"),
        ({k: v for k, v in W.items() if k != "D7"}, "exactly D0–D7"),
        (dict(W, D8=1), "exactly D0–D7"),
        (dict(W, D3=-1), "negative"),
        ({k: 0 for k in W}, "total zero"),
    ],
)
def test_invalid_units_are_kept_and_counted(weights, reason):
    units, findings = parse(unit(weights=weights))
    assert findings == []
    assert len(units) == 1 and not units[0].valid and units[0].weights is None
    assert reason in units[0].reason


def test_1e400_is_an_invalid_unit_not_a_malformed_file():
    units, findings = parse(unit().replace('"D0": 10', '"D0": 1e400'))
    assert findings == [] and not units[0].valid and "not finite" in units[0].reason


def test_valid_weights_are_renormalised():
    units, findings = parse(unit(weights=dict(W, D0=30)))
    assert findings == []
    assert units[0].valid and abs(sum(units[0].weights) - 1) < 1e-15
    assert units[0].weights[0] == pytest.approx(30 / 100)


def test_invalid_status_record_is_accepted():
    units, findings = parse(unit(weights=None, status="invalid", reason="timeout"))
    assert findings == [] and units[0].reason == "timeout"


def test_duplicate_unit_and_every_bad_line_reported():
    units, findings = parse(unit(), "oops", unit(), unit(condition="A9"))
    assert [f.line for f in findings] == [2, 3, 4]
    assert "duplicate unit" in findings[1].detail and "first on line 1" in findings[1].detail


def test_partial_coverage_of_a_condition():
    units, findings = parse_predictions("p.jsonl", (unit() + "\n").encode(), ["f1", "f2"], ORIGINS)
    assert len(findings) == 1 and "does not cover every episode" in findings[0].detail and "f2" in findings[0].detail


def test_blank_line_in_the_middle_is_malformed():
    units, findings = parse(unit(), "", unit(condition="A1"))
    assert [f.line for f in findings] == [2] and findings[0].detail == "blank line"


def call(**over):
    base = {"field_id": "f1", "origin": "2024-01-01", "condition": "A1", "call_index": 0, "query": "q", "sort": "relevance",
            "date_from": None, "date_to": None, "total_hits": 3, "returned_ids": ["2301.00001"]}
    base.update(over)
    return json.dumps(base)


@pytest.mark.parametrize(
    "line, detail",
    [
        (call(call_index=20), "beyond the cap of 20"),
        (call(condition="A0"), "'condition' must be one of"),
        (call(returned_ids="x"), "'returned_ids' must be a list"),
        (call(total_hits=-1), "'total_hits' must be an integer"),
    ],
)
def test_bad_trace_lines(line, detail):
    calls, findings = parse_traces("t.jsonl", (line + "\n").encode(), FIELDS, ORIGINS, 20)
    assert calls == [] and detail in findings[0].detail and findings[0].line == 1


def test_duplicate_trace_call():
    calls, findings = parse_traces("t.jsonl", (call() + "\n" + call() + "\n").encode(), FIELDS, ORIGINS, 20)
    assert len(calls) == 1 and findings[0].line == 2 and "duplicate call 0" in findings[0].detail
