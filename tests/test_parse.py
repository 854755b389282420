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


# ---------------------------------------------------------------- problem kinds, as data
from rapgen.archive import ProblemKind, parse_model_json, renormalise  # noqa: E402


@pytest.mark.parametrize(
    "lines, kind",
    [
        (["oops"], ProblemKind.SYNTAX),
        ([""], ProblemKind.SYNTAX),
        (['{"a": 1, "a": 2}'], ProblemKind.SYNTAX),
        ([unit(extra=1)], ProblemKind.SCHEMA),
        ([unit(), unit()], ProblemKind.DUPLICATE_UNIT),
    ],
)
def test_prediction_findings_carry_their_kind(lines, kind):
    _, findings = parse(*lines)
    assert [f.kind for f in findings] == [kind]


def test_kinds_for_coverage_encoding_cap_and_duplicate_call():
    _, findings = parse_predictions("p.jsonl", (unit() + "\n").encode(), ["f1", "f2"], ORIGINS)
    assert [f.kind for f in findings] == [ProblemKind.COVERAGE]
    _, findings = parse_predictions("p.jsonl", b"\xff\n", FIELDS, ORIGINS)
    assert [f.kind for f in findings] == [ProblemKind.ENCODING]
    _, findings = parse_traces("t.jsonl", (call(call_index=20) + "\n").encode(), FIELDS, ORIGINS, 20)
    assert [f.kind for f in findings] == [ProblemKind.CALL_CAP]
    _, findings = parse_traces("t.jsonl", (call() + "\n" + call() + "\n").encode(), FIELDS, ORIGINS, 20)
    assert [f.kind for f in findings] == [ProblemKind.DUPLICATE_CALL]


# ---------------------------------------------------------------- prompt_sha256
HEX = "ab" * 32


def test_trace_line_may_record_its_prompt():
    calls, findings = parse_traces("t.jsonl", (call(prompt_sha256=HEX) + "\n").encode(), FIELDS, ORIGINS, 20)
    assert findings == [] and calls[0].prompt_sha256 == HEX
    calls, _ = parse_traces("t.jsonl", (call() + "\n").encode(), FIELDS, ORIGINS, 20)
    assert calls[0].prompt_sha256 is None


@pytest.mark.parametrize("value", ["AB" * 32, "ab" * 31, "zz" * 32, 12, None, ""])
def test_bad_prompt_sha256_is_a_finding(value):
    _, findings = parse_traces("t.jsonl", (call(prompt_sha256=value) + "\n").encode(), FIELDS, ORIGINS, 20)
    assert len(findings) == 1 and "'prompt_sha256' must be 64 lower-case hex digits" in findings[0].detail
    assert findings[0].kind is ProblemKind.SCHEMA


def _model(**over) -> bytes:
    base = {"model_id": "m", "display_name": "M", "provider": "p", "proprietary": False, "knowledge_cutoff": None,
            "release_date": None, "cutoff_source": None, "diagnostic": False, "submitted": None, "contact": None, "notes": None}
    base.update(over)
    return json.dumps(base).encode()


def test_model_json_prompt_sha256():
    info, findings = parse_model_json("m.json", _model(prompt_sha256=HEX))
    assert findings == [] and info.extra["prompt_sha256"] == HEX
    _, findings = parse_model_json("m.json", _model(prompt_sha256="x"))
    assert len(findings) == 1 and "prompt_sha256" in findings[0].detail


# ---------------------------------------------------------------- numbers at the edges of a double
MAX = 1.7976931348623157e308
MAGNITUDES = [5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-20, 0.5, 1.0, 3.0, 1e20, 1e300, 1.7e308, MAX]


def _weights_line(values) -> str:
    return unit(weights={f"D{i}": v for i, v in enumerate(values)})


def _check_composition(u):
    assert u.valid, u.reason
    assert all(w >= 0 and w == w for w in u.weights)
    assert sum(u.weights) == pytest.approx(1.0, abs=1e-12)


def test_eight_largest_weights_renormalise_to_equal_shares():
    units, findings = parse(_weights_line([1.7e308] * 8))
    assert findings == []
    _check_composition(units[0])
    assert units[0].weights == (0.125,) * 8
    units, _ = parse(_weights_line([MAX] * 8))
    assert units[0].weights == (0.125,) * 8


def test_random_magnitudes_never_crash_and_renormalise():
    import random

    rng = random.Random(11)
    for _ in range(400):
        values = [rng.choice(MAGNITUDES + [0.0, -0.0]) * rng.choice([1, 1, 0.999, 0.5]) for _ in range(8)]
        if not any(values):
            values[rng.randrange(8)] = rng.choice(MAGNITUDES)
        units, findings = parse(_weights_line(values))
        assert findings == [], values
        _check_composition(units[0])
        top = max(range(8), key=lambda i: values[i])
        assert units[0].weights[top] == max(units[0].weights)


@pytest.mark.parametrize("value", [-0.0, 0.0, 1e-320, 5e-324])
def test_negative_zero_and_subnormals_are_fine(value):
    units, findings = parse(_weights_line([value] + [1.0] * 7))
    assert findings == [] and units[0].valid
    units, findings = parse(_weights_line([1e-320] * 7 + [value]))
    assert findings == [] and units[0].valid


@pytest.mark.parametrize("literal", ["1e400", "-1e400", str(10**400), "-" + str(10**400), str(2**1024)])
def test_numbers_beyond_a_double_are_invalid_units(literal):
    line = unit().replace('"D0": 10', f'"D0": {literal}')
    units, findings = parse(line)
    assert findings == [] and not units[0].valid and "not finite" in units[0].reason


def test_an_integer_too_long_for_python_is_a_malformed_line_not_a_crash():
    units, findings = parse(unit().replace('"D0": 10', '"D0": ' + "9" * 5000))
    assert units == [] and len(findings) == 1 and findings[0].detail.startswith("not JSON")


def test_a_huge_exact_integer_that_fits_a_double_is_valid():
    units, findings = parse(unit().replace('"D0": 10', f'"D0": {10**300}'))
    assert findings == [] and units[0].valid and units[0].weights[0] == pytest.approx(1.0)


def test_renormalise_rule():
    assert renormalise([0.0] * 8) is None
    assert renormalise([1.0, 3.0]) == (0.25, 0.75)
    assert renormalise([MAX, MAX]) == (0.5, 0.5)
    assert renormalise([MAX, 1e-320]) == (1.0, 0.0)


def test_writer_and_reader_round_trip_extreme_numbers(tmp_path):
    """rapgen.io writes the extremes as JSON numbers the parser reads back unchanged:
    1.7e308, the smallest subnormal and -0.0 stay valid; 10**400 becomes an invalid unit."""
    from rapgen.io import write_jsonl

    rows = [
        {"field_id": "f1", "origin": "2024-01-01", "condition": "A0", "weights": {f"D{i}": 1.7e308 for i in range(8)}},
        {"field_id": "f1", "origin": "2024-01-01", "condition": "A1", "weights": dict({f"D{i}": 5e-324 for i in range(8)}, D0=-0.0)},
        {"field_id": "f1", "origin": "2024-01-01", "condition": "A3", "weights": dict(W, D0=10**400)},
    ]
    path = tmp_path / "p.jsonl"
    write_jsonl(path, rows)
    units, findings = parse_predictions("p.jsonl", path.read_bytes(), FIELDS, ORIGINS)
    assert findings == []
    assert units[0].weights == (0.125,) * 8
    assert units[1].valid and units[1].weights[0] == 0.0 and sum(units[1].weights) == pytest.approx(1.0)
    assert not units[2].valid and units[2].reason == "a weight is not finite"
    with pytest.raises(ValueError):
        write_jsonl(tmp_path / "nan.jsonl", [{"weights": {"D0": float("nan")}}])  # the writer never emits NaN
