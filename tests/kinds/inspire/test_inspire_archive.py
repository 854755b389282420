"""Inspire's parsers and invariants: good files parse clean, each bad input is one finding."""

from __future__ import annotations

import dataclasses
import json
from datetime import date

import pytest

from inspire_fixture import (
    A, LEDGER, X, call_line, calls, corpus, instance_line, instances, judgements, jsonl, parquet, prediction_line, predictions,
    targets,
)
from rapgen.archive import Category, ProblemKind
from rapgen.kinds.inspire.archive import (
    Reference, build_manifest, canon, check_benchmark, check_manifest, check_traces, cutoff_of, expected_statuses, layout,
    parse_archive_json, parse_instances, parse_judgements, parse_ledger, parse_manifest, parse_predictions, parse_references,
    parse_targets, parse_traces, shift_months,
)
from rapgen.kinds.inspire.archive.benchmark import JUDGEMENT_COLUMNS, REFERENCE_COLUMNS, TARGET_COLUMNS


# ---------------------------------------------------------------- ids and calendar
@pytest.mark.parametrize("raw, key, canonical, versioned", [
    ("2301.00011", "2301.00011", True, False),
    ("2301.00011v2", "2301.00011", True, True),
    ("2301.0001", "2301.0001", True, False),  # four-digit sequence numbers (before 2015)
    ("hep-th/9901001v3", "hep-th/9901001", True, True),
    ("math.AG/0101001", "math.AG/0101001", True, False),
    ("arXiv:2301.00011", "arXiv:2301.00011", False, False),  # no prefix stripping
    (" 2301.00011", " 2301.00011", False, False),  # no trimming
    ("2301.00011\n", "2301.00011\n", False, False),  # a trailing newline is not an id
    ("2301.000111", "2301.000111", False, False),
    ("２３０１.00011", "２３０１.00011", False, False),  # full-width digits
    ("2301.00011v", "2301.00011v", False, False),
    ("", "", False, False),
])
def test_canon(raw, key, canonical, versioned):
    assert tuple(canon(raw)) == (key, canonical, versioned)


@pytest.mark.parametrize("d, m, want", [
    (date(2025, 5, 31), -3, date(2025, 2, 28)),
    (date(2024, 5, 31), -3, date(2024, 2, 29)),
    (date(2025, 6, 15), -3, date(2025, 3, 15)),
    (date(2025, 1, 10), -3, date(2024, 10, 10)),
    (date(2024, 2, 29), -48, date(2020, 2, 29)),
    (date(2025, 2, 28), -48, date(2021, 2, 28)),
    (date(2025, 3, 31), -1, date(2025, 2, 28)),
    (date(2024, 11, 30), 3, date(2025, 2, 28)),
])
def test_shift_months_clamps_to_the_month_end(d, m, want):
    assert shift_months(d, m) == want


# ---------------------------------------------------------------- documents
def test_ledger_parses_and_rejects_shape_changes():
    ledger, findings = parse_ledger(json.dumps(layout.LEDGER).encode())
    assert findings == [] and ledger.K == 10 and ledger.gain("infrastructural", "T2") == 2.0 and ledger.max_calls == 50
    bad = json.loads(json.dumps(layout.LEDGER))
    bad["search"]["top_k"] = "10"
    _, findings = parse_ledger(json.dumps(bad).encode())
    assert [f.detail for f in findings] == ["LEDGER.search.top_k must be a non-negative integer, found \"10\""]
    bad = json.loads(json.dumps(layout.LEDGER))
    bad["extra"] = 1
    assert "unknown key 'extra'" in parse_ledger(json.dumps(bad).encode())[1][0].detail


def test_archive_json_names_the_kind():
    good = {"format": "inspire-archive", "format_version": 1, "name": "n", "description": "d", "created": "2026-01-01",
            "synthetic": True, "source": "s", "license": "l"}
    assert parse_archive_json(json.dumps(good).encode()) == (good, [])
    _, findings = parse_archive_json(json.dumps({**good, "format": "rap-archive"}).encode())
    assert [f.detail for f in findings] == ["'format' must be 'inspire-archive', found \"rap-archive\""]


# ---------------------------------------------------------------- instances
def _instances_bytes(mutate=None) -> bytes:
    rows = [instance_line(i) for i in instances()]
    if mutate:
        mutate(rows)
    return jsonl(rows)


@pytest.mark.parametrize("mutate, detail", [
    (lambda r: r[1].update(instance_id="insp-12"), "'instance_id' 'insp-12' does not match ^insp-[0-9]{4,6}$"),
    (lambda r: r[1].update(split="test"), "'split' must be one of train, dev, eval, found \"test\""),
    (lambda r: r[1].update(brief="  "), "'brief' is empty"),
    (lambda r: r[1].update(brief=r[1]["brief"] + "!"), "'brief_sha256' is not the SHA-256 of 'brief'"),
    (lambda r: r[1].update(cutoff="2025-02-30"), "'cutoff' '2025-02-30' is not a calendar date"),
    (lambda r: r[1].update(extra=1), "unknown key 'extra'"),
    (lambda r: r.append(dict(r[0])), "duplicate instance insp-0001 (first on line 1)"),
])
def test_bad_instances_are_one_finding_each(mutate, detail):
    parsed, findings = parse_instances(_instances_bytes(mutate))
    assert len(findings) == 1 and findings[0].category == Category.MALFORMED
    assert findings[0].detail.startswith(detail)
    assert len(parsed) in (2, 3)


def test_instances_round_trip():
    parsed, findings = parse_instances(_instances_bytes())
    assert findings == [] and [dataclasses.replace(p, line=0) for p in parsed] == [dataclasses.replace(i, line=0) for i in instances()]


# ---------------------------------------------------------------- evaluator tables
def _table(records, columns) -> bytes:
    rows = [dataclasses.asdict(r) for r in records]
    return parquet({k: [r[k] for r in rows] for k in columns}, columns)


def _references() -> list[Reference]:
    return [Reference(j.instance_id, j.arxiv_id, date(2024, 1, 1), "graded", j.tier, j.role) for j in judgements()]


def _benchmark(refs=None, judged=None, targs=None, insts=None):
    return check_benchmark(insts or instances(), targs or targets(), judged if judged is not None else judgements(),
                           refs if refs is not None else _references(), corpus(), LEDGER)


def test_tables_round_trip_and_the_benchmark_is_consistent():
    t, f1 = parse_targets(_table(targets(), TARGET_COLUMNS))
    j, f2 = parse_judgements(_table(judgements(), JUDGEMENT_COLUMNS))
    r, f3 = parse_references(_table(_references(), REFERENCE_COLUMNS))
    assert f1 == f2 == f3 == [] and (t, j, r) == (targets(), judgements(), _references())
    assert _benchmark() == []


def test_a_parquet_with_a_wrong_column_type_is_malformed():
    columns = dict(JUDGEMENT_COLUMNS, gain="string")
    rows = [dataclasses.asdict(j) | {"gain": str(j.gain)} for j in judgements()]
    _, findings = parse_judgements(parquet({k: [r[k] for r in rows] for k in columns}, columns))
    assert [f.detail for f in findings] == ["column 'gain' must be DOUBLE, found string"]
    _, findings = parse_judgements(b"not parquet")
    assert findings[0].detail.startswith("not a readable parquet file")


def test_judgement_rules():
    bad = [dataclasses.replace(j, gain=5.0) if j.arxiv_id == A else j for j in judgements()]
    details = [f.detail for f in _benchmark(judged=bad)]
    assert details == [f"insp-0001 {A}: gain 5 is not gains[conceptual][T3] = 7"]
    few = [j for j in judgements() if j.instance_id != "insp-0002" or j.tier == "T1"]
    details = [f.detail for f in _benchmark(judged=few, refs=[r for r in _references() if r.instance_id != "insp-0002" or r.tier == "T1"])]
    assert details == ["instance insp-0002 has 1 graded antecedents; expected 2 to 10"]


@pytest.mark.parametrize("extra, want", [
    (Reference("insp-0001", "2399.00001", date(2025, 3, 15), "concurrent", None, None), []),  # on the cutoff: concurrent
    (Reference("insp-0001", "2399.00001", date(2025, 3, 14), "concurrent", "T1", "conceptual"),
     ["insp-0001 2399.00001: status 'concurrent' should be 'graded'"]),
    (Reference("insp-0001", "2101.00001", date(2021, 6, 14), "older", None, None), []),  # before shift(t_P, -48) = 2021-06-15
    (Reference("insp-0001", "2101.00001", date(2021, 6, 15), "older", None, None),
     ["insp-0001: reference 2101.00001 lies in [2021-06-15, 2025-03-15) but is not judged (tier null)"]),
    (Reference("insp-0001", "2399.00002", date(2024, 1, 1), "t0", "T0", "conceptual"), []),
    (Reference("insp-0001", "2399.00002", date(2024, 1, 1), "graded", "T0", "conceptual"),
     ["insp-0001 2399.00002: status 'graded' should be 't0'",
      "insp-0001 2399.00002: a graded reference missing from judgements.parquet"]),
])
def test_reference_status_rules(extra, want):
    details = [f.detail for f in _benchmark(refs=_references() + [extra]) if "differs from the corpus" not in f.detail]
    assert details == want


def test_the_cap_keeps_the_first_ten_by_gain_then_id():
    refs = [Reference("insp-0001", f"2400.{n:05d}", date(2024, 1, 1), "", "T1", "conceptual") for n in range(12)]
    refs.append(Reference("insp-0001", "2400.99999", date(2024, 1, 1), "", "T3", "infrastructural"))
    want, problems = expected_statuses(refs, date(2025, 6, 15), LEDGER)
    assert problems == []
    assert want["2400.99999"] == "graded"  # gain 4 first
    assert [want[f"2400.{n:05d}"] for n in range(12)] == ["graded"] * 9 + ["overflow"] * 3


def test_graded_references_must_equal_the_judgements():
    refs = [dataclasses.replace(r, status="overflow") if r.arxiv_id == A else r for r in _references()]
    details = [f.detail for f in _benchmark(refs=refs)]
    assert f"insp-0001 {A}: status 'overflow' should be 'graded'" in details
    assert f"insp-0001 {A}: judged in judgements.parquet but not a graded reference" in details


def test_target_rules():
    wrong_view = [dataclasses.replace(t, view="clean") if t.instance_id == "insp-0002" else t for t in targets()]
    assert [f.detail for f in _benchmark(targs=wrong_view)] == [
        "insp-0002: view 'clean' should be 'flagged' (audit_named True, audit_confidence 0.9, flag at 0.5)"]
    late = [dataclasses.replace(i, cutoff=date(2025, 3, 16)) if i.instance_id == "insp-0003" else i for i in instances()]
    assert [f.detail for f in _benchmark(insts=late)] == ["insp-0003: cutoff 2025-03-16 is not shift(2025-06-15, -3) = 2025-03-15"]


# ---------------------------------------------------------------- manifest
def test_manifest_is_rebuilt_per_instance():
    rows = build_manifest(instances(), corpus())
    assert rows[0] == {"instance_id": "insp-0001", "date_to": "2025-03-15", "n_papers": 16, "min_date": "2024-01-01",
                       "max_date": "2024-01-01", "ids_sha256": rows[0]["ids_sha256"]}
    parsed, findings = parse_manifest(jsonl(rows))
    assert findings == [] and check_manifest(parsed, instances(), corpus()) == []
    rows[1]["n_papers"] = 15
    parsed, _ = parse_manifest(jsonl(rows))
    (f,) = check_manifest(parsed, instances(), corpus())
    assert (f.line, f.detail, f.expected, f.actual) == (2, "insp-0002: n_papers does not match the corpus before 2025-03-15", "16", "15")


# ---------------------------------------------------------------- predictions
def _pred_bytes(mutate=None) -> bytes:
    rows = [prediction_line(p) for p in predictions()]
    if mutate:
        mutate(rows)
    return jsonl(rows)


@pytest.mark.parametrize("mutate, detail, kind", [
    (lambda r: r[0]["ranking"].append({"arxiv_id": 2301.00011}), "ranking[7]: 'arxiv_id' must be a string, found 2301.00011", ProblemKind.SCHEMA),
    (lambda r: r[0]["ranking"].append({"arxiv_id": "x", "score": 1}), "ranking[7]: unknown key 'score'", ProblemKind.SCHEMA),
    (lambda r: r[0].update(condition="A1"), "'condition' must be one of detailed, terse, found \"A1\"", ProblemKind.SCHEMA),
    (lambda r: r[0].update(instance_id="insp-9999"), "instance_id 'insp-9999' is not an instance of this archive", ProblemKind.SCHEMA),
    (lambda r: r[2].update(ranking=[]), "a unit with status \"failed\" must have ranking null", ProblemKind.SCHEMA),
    (lambda r: r[0].update(ranking=None), "'ranking' must be a list for a submitted unit, found null", ProblemKind.SCHEMA),
    (lambda r: r[0].pop("cost_usd"), "missing key 'cost_usd'", ProblemKind.SCHEMA),
    (lambda r: r.append(dict(r[1])), "duplicate unit insp-0002 detailed (first on line 2)", ProblemKind.DUPLICATE_UNIT),
])
def test_malformed_prediction_lines(mutate, detail, kind):
    _, findings = parse_predictions(_pred_bytes(mutate), instances())
    assert findings[0].detail == detail and findings[0].kind == kind


def test_coverage_of_a_claimed_condition_and_eval_detailed():
    def terse_for_one(rows):
        rows.append(dict(rows[0], condition="terse"))

    _, findings = parse_predictions(_pred_bytes(terse_for_one), instances())
    assert [f.detail for f in findings] == ["eval × terse is claimed but misses 2 instance(s), first insp-0002"]
    only_terse = jsonl([dict(prediction_line(p), condition="terse") for p in predictions()])
    _, findings = parse_predictions(only_terse, instances())
    assert [f.kind for f in findings] == [ProblemKind.COVERAGE] and "no eval × detailed" in findings[0].detail


def test_bad_ids_are_not_malformed_lines():
    """Over ten, duplicate, versioned, malformed and post-cutoff ids are scored, not rejected."""
    ids = [f"2400.{n:05d}v1" for n in range(14)] + ["2400.00000", "not-an-id", "2506.00001"]
    rows = [prediction_line(p) for p in predictions()]
    rows[0]["ranking"] = [{"arxiv_id": i} for i in ids]
    parsed, findings = parse_predictions(jsonl(rows), instances())
    assert findings == [] and len(parsed[0].ranking) == 17


# ---------------------------------------------------------------- traces
def _trace_findings(lines, preds=None):
    parsed, findings = parse_traces(jsonl(lines), instances(), LEDGER.max_calls)
    return findings + check_traces(parsed, preds or predictions(), instances(), corpus(), LEDGER.top_k)


def test_good_traces_have_no_findings():
    assert _trace_findings([call_line(c) for c in calls()]) == []


def test_a_gap_names_the_missing_call():
    lines = [call_line(c) for c in calls() if not (c.instance_id == "insp-0001" and c.call_index == 1)]
    (f,) = _trace_findings(lines)
    assert (f.category, f.kind) == (Category.INVARIANT, ProblemKind.TRACE)
    assert f.detail == "call 1 of insp-0001 detailed is missing: the trace has a gap (calls 0, 2 recorded)"
    lines = [call_line(c) for c in calls() if c.call_index == 0 or c.instance_id != "insp-0001"]
    lines[0]["call_index"] = 2  # the unit's only call is numbered 2
    assert _trace_findings(lines)[0].detail.startswith("call 0 of insp-0001 detailed is missing")


@pytest.mark.parametrize("edit, detail", [
    (lambda c: c.update(returned_ids=["2506.00001"]), "returned '2506.00001', which is not a corpus paper"),
    (lambda c: c.update(returned_ids=[A, A]), "returned the same id twice"),
    (lambda c: c.update(total_hits=0), "reports total_hits 0 but returned 4 ids"),
    (lambda c: c.update(returned_ids=[X(1)] * 0 + [f"2399.0000{n}" for n in range(1, 6)] + [A, "2302.00022", "2303.00033",
                                                                                          "2304.00044", "2305.00055", "2306.00066"]),
     "returned 11 ids, more than top_k 10"),
])
def test_edited_results_name_the_call(edit, detail):
    lines = [call_line(c) for c in calls()]
    edit(lines[0])
    (f,) = _trace_findings(lines)
    assert f.detail == f"call 0 of insp-0001 detailed {detail}: the recorded result was edited or is not from the frozen backend"
    assert f.line == 1


def test_a_post_cutoff_paper_in_a_result_is_outside_the_shard():
    late = dict(corpus())
    late[X(1)] = dataclasses.replace(late[X(1)], first_submitted=date(2025, 3, 15))
    parsed, _ = parse_traces(jsonl([call_line(c) for c in calls()]), instances(), LEDGER.max_calls)
    (f,) = check_traces(parsed, predictions(), instances(), late, LEDGER.top_k)
    assert "returned 2399.00001, dated 2025-03-15, outside its shard (the corpus before 2025-03-15)" in f.detail


def test_call_cap_and_duplicate_calls():
    lines = [call_line(c) for c in calls()]
    lines.append(dict(lines[0], call_index=50))
    lines.append(dict(lines[1]))
    parsed, findings = parse_traces(jsonl(lines), instances(), LEDGER.max_calls)
    assert [(f.kind, f.detail) for f in findings] == [
        (ProblemKind.CALL_CAP, "call 50 of insp-0001 detailed is beyond the cap of 50 calls per unit"),
        (ProblemKind.DUPLICATE_CALL, "duplicate call 1 of insp-0001 detailed (first on line 2)"),
    ]


def test_a_traced_unit_without_a_prediction():
    lines = [call_line(c) for c in calls()] + [dict(call_line(calls()[3]), condition="terse")]
    (f,) = _trace_findings(lines)
    assert f.detail == "call 0 of insp-0002 terse: the unit insp-0002 terse has no line in predictions.jsonl"


def test_cutoff_of_matches_the_fixture():
    assert cutoff_of(date(2025, 6, 15)) == date(2025, 3, 15) == instances()[0].cutoff
