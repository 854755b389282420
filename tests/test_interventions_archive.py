"""Intervention records in the archive (INTERVENTIONS.md §0–§3, §7): both §9 hashes, the
evidence and exact-history builders, and every malformed case as a line-numbered finding."""

from __future__ import annotations

import json
from datetime import date

import pytest

from rapgen.archive.evidence import (
    MALFORMED_CALL,
    PaperText,
    build_evidence,
    build_oracle_block,
    canonical_counts,
    canonical_hash,
    canonical_json,
    oracle_windows,
)
from rapgen.archive.intervention_checks import (
    check_base_coverage,
    check_oracle,
    check_panel_units,
    check_replays,
    check_training,
    check_training_presence,
    check_unit_traces,
    panel_cells,
)
from rapgen.archive.interventions import (
    Panel,
    model_extensions,
    parse_model_extensions,
    parse_oracle,
    parse_oracle_traces,
    parse_replays,
    parse_training,
)
from rapgen.archive.parse import parse_model_json
from rapgen.archive.records import Block, Category, Field, TraceCall, Unit
from rapgen.search import CallProblem, validate_call

T1, T2 = date(2025, 1, 1), date(2025, 7, 1)
ORIGINS = (T1, T2)
FIELDS = ("f1", "f2", "f3")
HEX = "a" * 64
W = {f"D{i}": 1 for i in range(8)}


def malformed(call: TraceCall) -> bool:
    try:
        validate_call({"query": call.query, "sort": call.sort, "date_from": call.date_from, "date_to": call.date_to})
    except CallProblem:
        return True
    return False


def jsonl(*objs) -> bytes:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs).encode()


def where(findings) -> list[tuple[int | None, str]]:
    return [(f.line, f.detail) for f in findings]


# ---------------------------------------------------------------- §9 hashes
def test_evidence_hash_worked_example():
    calls = [
        TraceCall("f1", T1, "A3", 1, "", "relevance", None, None, 0, ()),  # malformed: empty query
        TraceCall("f1", T1, "A3", 0, "tool use", "date", None, None, 1, ("2401.00001",)),
    ]
    papers = {"2401.00001": PaperText("2024-01-02", "T", "A")}
    evidence = build_evidence(calls, papers, malformed)
    assert [e["call_index"] for e in evidence] == [0, 1]
    assert list(evidence[0]) == ["call_index", "query", "sort", "date_from", "date_to", "total_hits", "papers"]
    assert evidence[1] == {"call_index": 1, "query": "", "sort": "relevance", "date_from": None, "date_to": None, "error": MALFORMED_CALL}
    assert canonical_hash(evidence) == "e325099f010a79c92f8a24c81b4446b14c63b5262c2b51434ef11036be34b3c0"
    assert build_evidence(calls, papers, malformed, budget=1) == evidence[:1]


def test_oracle_block_hash_worked_example():
    counts = [[10, 5, 5, 0, 2, 3, 0, 5], [12, 4, 6, 0, 2, 2, 1, 3], [15, 3, 6, 1, 1, 2, 0, 2]]
    block = build_oracle_block(oracle_windows("O2", T1, 6), counts)
    assert [w["date_from"] for w in block["windows"]] == ["2023-07-01", "2024-01-01", "2024-07-01"]
    assert block["windows"][-1]["date_to"] == "2025-01-01"
    assert canonical_hash(block) == "f3b6b757a15e782b6e1c5fbe4a845a60c3c7621e52f355001b8d7653920039b1"
    assert oracle_windows("O3", T1, 6) == oracle_windows("O2", T1, 6)
    assert oracle_windows("O1", T1, 6) == [(date(2024, 7, 1), T1)]


def test_canonical_json_escapes_only_quote_backslash_and_controls():
    assert canonical_json({"a": "é\"\\\n\u2028"}) == '{"a":"é\\"\\\\\\n\u2028"}'.encode()


def test_canonical_counts_skip_other_and_outside_dates():
    rows = [(date(2024, 7, 1), "D0"), (date(2024, 12, 31), "D7"), (date(2025, 1, 1), "D0"), (date(2024, 8, 1), "other")]
    assert canonical_counts(rows, date(2024, 7, 1), T1) == [1, 0, 0, 0, 0, 0, 0, 1]


# ---------------------------------------------------------------- replays.jsonl
def readout(**over) -> dict:
    base = {"field_id": "f1", "origin": "2025-01-01", "source_condition": "A3", "readout": "forecast", "budget": "all",
            "calls_used": 1, "evidence_sha256": HEX, "prompt_sha256": HEX, "weights": W}
    base.update(over)
    return {k: v for k, v in base.items() if v is not ...}


REPLAY_CASES = [
    ("not json", "{", "not JSON"),
    ("list", "[1]", "expected a JSON object"),
    ("missing key", readout(budget=...), "missing key 'budget'"),
    ("unknown key", readout(extra=1), "unknown key 'extra'"),
    ("unknown field", readout(field_id="nope"), "field_id 'nope' is not a field"),
    ("unknown origin", readout(origin="2024-02-01"), "origin 2024-02-01 is not an origin"),
    ("source", readout(source_condition="A2"), "'source_condition' must be one of A3, A4"),
    ("readout", readout(readout="both"), "'readout' must be one of forecast, state"),
    ("budget", readout(budget="half"), "'budget' must be one of all, matched"),
    ("calls type", readout(calls_used="1"), "'calls_used' must be an integer"),
    ("calls negative", readout(calls_used=-1), "'calls_used' must be an integer ≥ 0"),
    ("hash case", readout(evidence_sha256="A" * 64), "'evidence_sha256' must be 64 lower-case hex digits"),
    ("hash length", readout(prompt_sha256="ab"), "'prompt_sha256' must be 64 lower-case hex digits"),
    ("weights type", readout(weights=[1, 2]), "'weights' must be an object or null"),
    ("weight string", readout(weights={**W, "D0": "1"}), "weight 'D0' is not a JSON number"),
    ("weight nan", '{"field_id": "f1", "weights": {"D0": NaN}}', "NaN and Infinity"),
    ("invalid with weights", readout(status="invalid"), "status \"invalid\" must have weights null"),
    ("status", readout(status="ok"), "'status' must be \"valid\" or \"invalid\""),
    ("attempts", readout(attempts=0), "'attempts' must be an integer ≥ 1"),
    ("unit attempt", readout(unit_attempt=True), "'unit_attempt' must be an integer ≥ 1"),
    ("usage keys", readout(usage={"input_tokens": 1}), "missing key 'output_tokens'"),
    ("usage negative", readout(usage={"input_tokens": 1, "output_tokens": -2}), "'usage.output_tokens' must be an integer ≥ 0"),
    ("usage extra", readout(usage={"input_tokens": 1, "output_tokens": 2, "cached": 0}), "unknown key 'cached'"),
    ("response model", readout(response_model=3), "'response_model' must be a string"),
    ("max tokens", readout(max_output_tokens=0), "'max_output_tokens' must be an integer ≥ 1"),
]


@pytest.mark.parametrize("line,message", [c[1:] for c in REPLAY_CASES], ids=[c[0] for c in REPLAY_CASES])
def test_replay_line_malformed(line, message):
    data = jsonl(readout(field_id="f2"), line)
    records, findings = parse_replays("archive/models/m/replays.jsonl", data, FIELDS, ORIGINS)
    assert len(records) == 1 and len(findings) == 1
    f = findings[0]
    assert (f.path, f.line, f.category) == ("archive/models/m/replays.jsonl", 2, Category.MALFORMED)
    assert message in f.detail


def test_replay_valid_lines_and_invalid_unit():
    data = jsonl(readout(), readout(readout="state", weights=None, status="invalid", reason="timeout"),
                 readout(budget="matched", weights={**W, "D0": -1}, usage={"input_tokens": 5, "output_tokens": 6, "reasoning_tokens": 1}))
    records, findings = parse_replays("r", data, FIELDS, ORIGINS)
    assert findings == []
    assert [r.cell for r in records] == ["F->F:all", "F->S:all", "F->F:matched"]
    assert records[0].valid and records[0].weights == (0.125,) * 8
    assert (records[1].valid, records[1].reason) == (False, "timeout")
    assert (records[2].valid, records[2].reason) == (False, "a weight is negative")  # invalid, not malformed


def test_replay_duplicate_and_prompt_per_file():
    data = jsonl(readout(), readout(), readout(readout="state", prompt_sha256="b" * 64))
    records, findings = parse_replays("r", data, FIELDS, ORIGINS)
    assert where(findings) == [
        (2, "duplicate readout f1 2025-01-01 F->F:all (first on line 1)"),
        (3, "'prompt_sha256' differs from line 1's: one replay template per file"),
    ]


# ---------------------------------------------------------------- replay cross-file rules
PAPERS = {"p1": PaperText("2024-10-01", "One", "First."), "p2": PaperText("2024-11-01", "Two", "Second.")}


def unit(fid, origin, condition) -> Unit:
    return Unit(fid, origin, condition, (0.125,) * 8, True)


def call(fid, origin, condition, index, ids=("p1",), query="q") -> TraceCall:
    return TraceCall(fid, origin, condition, index, query, "relevance", None, None, len(ids), tuple(ids))


UNITS = [unit("f1", T1, "A3"), unit("f1", T1, "A4"), unit("f2", T1, "A3"), unit("f1", T2, "A3"), unit("f1", T2, "A4")]
TRACES = [call("f1", T1, "A3", 0), call("f1", T1, "A3", 1, ("p2",)), call("f1", T1, "A4", 0, ("p2",)),
          call("f1", T2, "A3", 0, ()), call("f1", T2, "A4", 0, (), query="")]
SPLIT = {"f1": "test", "f2": "test", "f3": "dev"}


def good_readouts():
    def sha(fid, origin, cond, budget):
        calls = [c for c in TRACES if (c.field_id, c.origin, c.condition) == (fid, origin, cond)]
        return canonical_hash(build_evidence(calls, PAPERS, malformed, budget))

    return [
        readout(calls_used=2, evidence_sha256=sha("f1", T1, "A3", 2)),
        readout(budget="matched", calls_used=1, evidence_sha256=sha("f1", T1, "A3", 1)),
        readout(origin="2025-07-01", calls_used=1, evidence_sha256=sha("f1", T2, "A3", 1)),
        readout(origin="2025-07-01", budget="matched", calls_used=1, evidence_sha256=sha("f1", T2, "A3", 1)),
    ]


def replay_findings(lines):
    records, findings = parse_replays("r", jsonl(*lines), FIELDS, ORIGINS)
    assert findings == []
    return where(check_replays("r", records, UNITS, TRACES, PAPERS, malformed, SPLIT))


def test_replays_consistent():
    assert replay_findings(good_readouts()) == []


def test_replay_malformed_evidence_hash_uses_fixed_error_text():
    calls = [c for c in TRACES if (c.field_id, c.origin, c.condition) == ("f1", T2, "A4")]
    assert build_evidence(calls, PAPERS, malformed)[0]["error"] == "malformed call"


@pytest.mark.parametrize(
    "change,expected",
    [
        (lambda r: r[0].update(field_id="f2"), [
            (1, "f2 2025-01-01 is not a pair: no A4 unit"),
            (None, "cell F->F:all is claimed on test but misses 1 of its pairs, first f1 2025-01-01"),
        ]),
        (lambda r: r[0].update(source_condition="A4", field_id="f2"), [
            (1, "'source_condition': no A4 unit for f2 2025-01-01"),
            (None, "cell F->F:all is claimed on test but misses 1 of its pairs, first f1 2025-01-01"),
            (None, "cell S->F:all is claimed on test but misses 2 of its pairs, first f1 2025-01-01"),
        ]),
        (lambda r: r[0].update(calls_used=1), [(1, "'calls_used' is 1, expected 2 (the source's trace lines, budget all)")]),
        (lambda r: r[1].update(calls_used=2), [(2, "'calls_used' is 2, expected 1 (k = min(n_A3, n_A4), budget matched)")]),
        (lambda r: r[2].update(evidence_sha256=HEX), [(3, "'evidence_sha256' does not match the recorded evidence")]),
        (lambda r: r.pop(3), [(None, "cell F->F:matched is claimed on test but misses 1 of its pairs, first f1 2025-07-01")]),
    ],
    ids=["no pair", "no source unit", "calls all", "calls matched", "hash", "cell coverage"],
)
def test_replay_cross_file_malformed(change, expected):
    lines = good_readouts()
    change(lines)
    assert replay_findings(lines) == expected


def test_replay_hash_mismatch_carries_both_digests():
    lines = good_readouts()
    lines[2]["evidence_sha256"] = HEX
    records, _ = parse_replays("r", jsonl(*lines), FIELDS, ORIGINS)
    (finding,) = check_replays("r", records, UNITS, TRACES, PAPERS, malformed, SPLIT)
    assert finding.actual == HEX and len(finding.expected) == 64 and finding.expected != HEX


def test_replay_evidence_paper_missing():
    records, _ = parse_replays("r", jsonl(*good_readouts()[:1]), FIELDS, ORIGINS)
    findings = check_replays("r", records, UNITS, TRACES, {"p1": PAPERS["p1"]}, malformed, SPLIT)
    assert where(findings)[0] == (1, "evidence names paper 'p2', which is not in papers.parquet")


# ---------------------------------------------------------------- oracle.jsonl and oracle_traces.jsonl
def oracle_line(**over) -> dict:
    base = {"field_id": "f3", "origin": "2025-01-01", "condition": "O1", "weights": W, "input_sha256": HEX, "prompt_sha256": HEX}
    base.update(over)
    return {k: v for k, v in base.items() if v is not ...}


@pytest.mark.parametrize(
    "line,message",
    [
        (oracle_line(condition="O4"), "'condition' must be one of O1, O2, O3"),
        (oracle_line(condition="A1"), "'condition' must be one of O1, O2, O3"),
        (oracle_line(input_sha256=...), "missing key 'input_sha256'"),
        (oracle_line(input_sha256="x"), "'input_sha256' must be 64 lower-case hex digits"),
        (oracle_line(calls_used=1), "unknown key 'calls_used'"),
        (oracle_line(), "duplicate unit f3 2025-01-01 O1 (first on line 1)"),
    ],
)
def test_oracle_line_malformed(line, message):
    records, findings = parse_oracle("o", jsonl(oracle_line(), line), FIELDS, ORIGINS)
    assert len(records) == 1
    assert [(f.line, message in f.detail) for f in findings] == [(2, True)]


def test_oracle_input_hash_and_coverage():
    lines = [oracle_line(origin=o.isoformat(), input_sha256=canonical_hash({"o": o.isoformat()})) for o in ORIGINS]
    lines.append(oracle_line(field_id="f1", condition="O2", input_sha256=HEX))
    records, findings = parse_oracle("o", jsonl(*lines), FIELDS, ORIGINS)
    assert findings == []
    expected = lambda f, o, c: canonical_hash({"o": o.isoformat()})  # noqa: E731
    got = where(check_oracle("o", records, expected, SPLIT, ORIGINS))
    assert got == [
        (3, "'input_sha256' does not match the exact-history block"),
        (None, "condition O2 is claimed on test but misses 3 episodes, first f1 2025-07-01"),
    ]
    cells = {("f3", T1)}
    got = where(check_oracle("o", records[:2], expected, SPLIT, ORIGINS, cells))
    assert got == [(2, "f3 2025-07-01 is outside the panel's cells")]


def oracle_call(**over) -> dict:
    base = {"field_id": "f3", "origin": "2025-01-01", "condition": "O3", "call_index": 0, "query": "q", "sort": "relevance",
            "date_from": None, "date_to": None, "total_hits": 0, "returned_ids": []}
    base.update(over)
    return base


@pytest.mark.parametrize(
    "line,message",
    [
        (oracle_call(condition="A3"), "'condition' must be \"O3\" in this file"),
        (oracle_call(call_index=20), "call_index 20 is beyond the cap of 20 calls per unit"),
        (oracle_call(call_index=0), "duplicate call 0 for f3 2025-01-01 O3 (first on line 1)"),
        (oracle_call(call_index=1, returned_ids="p1"), "'returned_ids' must be a list of arXiv ids"),
        (oracle_call(call_index=1, date_to=20250101), "'date_to' must be a string or null"),
        (oracle_call(call_index=1, total_hits=-1), "'total_hits' must be an integer ≥ 0"),
    ],
)
def test_oracle_traces_malformed(line, message):
    calls, findings = parse_oracle_traces("t", jsonl(oracle_call(), line), FIELDS, ORIGINS, 20)
    assert len(calls) == 1 and calls[0].condition == "O3"
    assert [(f.line, message in f.detail) for f in findings] == [(2, True)]


def test_traces_must_belong_to_a_unit():
    calls, _ = parse_oracle_traces("t", jsonl(oracle_call(), oracle_call(field_id="f1")), FIELDS, ORIGINS, 20)
    assert where(check_unit_traces("t", calls, {("f3", T1, "O3")})) == [(2, "call for f1 2025-01-01 O3, which has no unit")]


# ---------------------------------------------------------------- model.json keys
INFERENCE = {"endpoint": "hosted_api", "temperature": 0, "top_p": None, "seed": None,
             "max_output_tokens": {"closed": 4096, "search": None}, "tool_choice": "auto",
             "parallel_tool_calls": False, "api_retries": 3, "unit_retries": 0, "context_window": None}
PANEL = {"splits": ["test"], "origins": ["2025-07-01"], "conditions": ["A1", "A3"]}


def model(**over) -> bytes:
    base = {"model_id": "tuned", "knowledge_cutoff": "2024-06-01", "release_date": None}
    base.update(over)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def test_model_extensions_parse():
    ext, findings = parse_model_extensions("m.json", model(panel=PANEL, base_model="base", cutoff_precision="month",
                                                           inference=INFERENCE), ORIGINS, ["base", "tuned"])
    assert findings == []
    assert ext.panel == Panel(("test",), (T2,), ("A1", "A3"))
    assert (ext.base_model, ext.cutoff_precision, ext.inference["api_retries"]) == ("base", "month", 3)
    plain, findings = parse_model_extensions("m.json", model(), ORIGINS)
    assert findings == [] and plain.panel is None and plain.cutoff_precision == "day" and plain.inference is None


@pytest.mark.parametrize(
    "over,message",
    [
        ({"panel": {**PANEL, "splits": ["train"]}}, "'panel.splits': 'train' is not one of dev, test"),
        ({"panel": {**PANEL, "origins": ["2024-02-01"]}}, "'panel.origins': 2024-02-01 is not an origin of this archive"),
        ({"panel": {**PANEL, "origins": []}}, "'panel.origins' must be a non-empty list of dates"),
        ({"panel": {**PANEL, "conditions": ["A1", "A1"]}}, "'panel.conditions' lists a value twice"),
        ({"panel": {"splits": ["test"], "origins": ["2025-07-01"]}}, "'panel': missing key 'conditions'"),
        ({"panel": ["test"]}, "'panel' must be an object"),
        ({"base_model": "base"}, "'base_model' requires 'panel'"),
        ({"panel": PANEL, "base_model": "tuned"}, "'base_model' names the model itself"),
        ({"panel": PANEL, "base_model": "other"}, "'base_model' 'other' is not a listed model"),
        ({"panel": PANEL, "base_model": "Bad Id"}, "'base_model' must be a model id"),
        ({"cutoff_precision": "year"}, "'cutoff_precision' must be \"day\" or \"month\""),
        ({"cutoff_precision": "month", "knowledge_cutoff": "2024-06-15"}, "needs 'knowledge_cutoff' on the 1st of a month"),
        ({"cutoff_precision": "month", "knowledge_cutoff": None, "release_date": "2024-06-15"}, "needs 'release_date' on the 1st"),
        ({"inference": {**INFERENCE, "gpu": "a100"}}, "'inference': unknown key 'gpu'"),
        ({"inference": {k: v for k, v in INFERENCE.items() if k != "seed"}}, "'inference': missing key 'seed'"),
        ({"inference": {**INFERENCE, "endpoint": "cloud"}}, "'inference.endpoint' must be one of hosted_api, self_hosted, local"),
        ({"inference": {**INFERENCE, "temperature": "0.7"}}, "'inference.temperature' must be a number ≥ 0 or null"),
        ({"inference": {**INFERENCE, "seed": -1}}, "'inference.seed' must be an integer ≥ 0 or null"),
        ({"inference": {**INFERENCE, "context_window": 0}}, "'inference.context_window' must be an integer ≥ 1 or null"),
        ({"inference": {**INFERENCE, "max_output_tokens": {"closed": 0, "search": 1}}}, "'inference.max_output_tokens.closed' must be"),
        ({"inference": {**INFERENCE, "max_output_tokens": {"closed": 1}}}, "'inference.max_output_tokens': missing key 'search'"),
        ({"inference": {**INFERENCE, "parallel_tool_calls": "no"}}, "'inference.parallel_tool_calls' must be true, false or null"),
        ({"inference": {**INFERENCE, "tool_choice": 1}}, "'inference.tool_choice' must be a string or null"),
        ({"inference": None}, "'inference' must be an object"),
    ],
)
def test_model_extensions_malformed(over, message):
    ext, findings = parse_model_extensions("archive/models/tuned/model.json", model(**over), ORIGINS, ["base", "tuned"])
    assert ext is None and len(findings) == 1
    assert findings[0].path == "archive/models/tuned/model.json"
    assert message in findings[0].detail, findings[0].detail
    # one parse: model.json as parse_model_json decoded it gives the very same finding
    info, problems = parse_model_json("archive/models/tuned/model.json", full_model(**over), folder="tuned")
    assert problems == [] and info is not None
    again, found = model_extensions("archive/models/tuned/model.json", info, ORIGINS, ["base", "tuned"])
    assert again is None and found == findings


def full_model(**over) -> bytes:
    """A model.json parse_model_json accepts (every spec key), with ``over`` on top."""
    base = {"model_id": "tuned", "display_name": "Tuned", "provider": "p", "proprietary": False,
            "knowledge_cutoff": "2024-06-01", "release_date": None, "cutoff_source": None, "diagnostic": False,
            "submitted": None, "contact": None, "notes": None, **over}
    return json.dumps(base).encode()


def test_model_json_parsed_once_carries_the_extension_keys():
    data = full_model(panel=PANEL, base_model="base", cutoff_precision="month", inference=INFERENCE)
    info, problems = parse_model_json("m.json", data, folder="tuned")
    assert problems == [] and info.document["panel"] == PANEL and info.document["display_name"] == "Tuned"
    ext, findings = model_extensions("m.json", info, ORIGINS, ["base", "tuned"])
    assert findings == [] and ext == parse_model_extensions("m.json", data, ORIGINS, ["base", "tuned"])[0]
    assert ext.panel == Panel(("test",), (T2,), ("A1", "A3")) and ext.base_model == "base"


# ---------------------------------------------------------------- training.json
TRAINING = {"base_model": "base", "method": "sft", "teacher": None, "fields": ["f3"], "origins": ["2025-01-01"],
            "conditions": ["A1", "A3"], "n_trajectories": 2, "presentations": 3,
            "gate": {"fields": [], "origins": [], "passed": True}, "hyperparameters": {"lr": 1e-5}, "notes": None}


def training(**over) -> bytes:
    return json.dumps({k: v for k, v in {**TRAINING, **over}.items() if v is not ...}).encode()


@pytest.mark.parametrize(
    "over,message",
    [
        ({"notes": ...}, "missing key 'notes'"),
        ({"base_model": "other"}, "'base_model' 'other' differs from model.json's 'base'"),
        ({"fields": ["zz"]}, "'fields': 'zz' is not one of"),
        ({"origins": ["2020-01-01"]}, "'origins': 2020-01-01 is not an origin of this archive"),
        ({"conditions": ["B1"]}, "'conditions': 'B1' is not one of A0, A1, A2, A3, A4"),
        ({"n_trajectories": 0}, "'n_trajectories' must be an integer ≥ 1"),
        ({"presentations": 1.5}, "'presentations' must be an integer ≥ 1"),
        ({"gate": {"fields": [], "origins": [], "passed": "yes"}}, "'gate.passed' must be true or false"),
        ({"gate": {"fields": ["nope"], "origins": [], "passed": True}}, "'gate.fields': 'nope' is not one of"),
        ({"gate": {"fields": [], "passed": True}}, "'gate': missing key 'origins'"),
        ({"hyperparameters": []}, "'hyperparameters' must be an object"),
        ({"method": ""}, "'method' must not be empty"),
    ],
)
def test_training_malformed(over, message):
    record, findings = parse_training("archive/models/tuned/training.json", training(**over), FIELDS, ORIGINS, "base")
    assert record is None and len(findings) == 1
    assert message in findings[0].detail, findings[0].detail


def test_training_panel_rules():
    panel = Panel(("test",), (T2,), ("A1", "A3"))
    record, findings = parse_training("t", training(), FIELDS, ORIGINS, "base")
    assert findings == [] and check_training("t", record, panel, 6) == []
    late, _ = parse_training("t", training(origins=["2025-07-01"], gate={"fields": ["f1"], "origins": ["2025-07-01"], "passed": False},
                                           n_trajectories=3), FIELDS, ORIGINS, "base")
    assert where(check_training("t", late, panel, 6)) == [
        (None, "'n_trajectories' 3 is not in [1, 2] (fields × origins × conditions)"),
        (None, "'origins': the target window of 2025-07-01 ends after the panel's first origin 2025-07-01"),
        (None, "'gate.origins': the target window of 2025-07-01 ends after the panel's first origin 2025-07-01"),
    ]
    assert where(check_training_presence("m.json", "base", False)) == [(None, "'base_model' 'base' requires a training.json")]
    assert where(check_training_presence("m.json", None, True)) == [(None, "training.json is present but model.json names no 'base_model'")]
    assert check_training_presence("m.json", "base", True) == []


# ---------------------------------------------------------------- panels
FIELD_RECORDS = [Field("f1", "F1", "", "test", "b1", True), Field("f2", "F2", "", "test", "b2", True),
                 Field("f4", "F4", "", "test", "b2", True), Field("f3", "F3", "", "dev", "b3", True)]
BLOCKS = [Block("b1", "test", ("f1",)), Block("b2", "test", ("f2", "f4")), Block("b3", "dev", ("f3",))]


def test_panel_cells_exclude_whole_blocks():
    record, _ = parse_training("t", training(fields=["f3"], gate={"fields": ["f2"], "origins": [], "passed": True}), FIELDS, ORIGINS, "base")
    panel = Panel(("test",), (T2,), ("A1",))
    assert panel_cells(panel, FIELD_RECORDS, BLOCKS, record) == {("f1", T2)}  # f4 shares the gate field's block
    assert panel_cells(Panel(("test", "dev"), ORIGINS, ("A1",)), FIELD_RECORDS, BLOCKS, None) == {
        (f, o) for f in ("f1", "f2", "f4", "f3") for o in ORIGINS}


def test_panel_units_coverage():
    panel = Panel(("test",), (T2,), ("A1", "A3"))
    cells = {("f1", T2), ("f2", T2)}
    units = [Unit("f1", T2, "A1", None, False, line=1), Unit("f2", T2, "A1", None, False, line=2),
             Unit("f1", T2, "A3", None, False, line=3), Unit("f1", T1, "A1", None, False, line=4),
             Unit("f2", T2, "A0", None, False, line=5)]
    assert where(check_panel_units("p", units, panel, cells)) == [
        (4, "f1 2025-01-01 is outside the panel's cells"),
        (5, "'condition' A0 is not listed in the model's panel.conditions"),
        (None, "condition A3 misses 1 of the panel's cells, first f2 2025-07-01"),
    ]
    base = [Unit("f1", T2, "A1", None, False), Unit("f2", T2, "A1", None, False), Unit("f1", T2, "A3", None, False)]
    (finding,) = check_base_coverage("archive/models/tuned/model.json", "base", base, panel, cells)
    assert finding.detail == "BASE-COVERAGE: base model 'base' misses 1 panel cells × conditions, first f2 2025-07-01 A3"
    assert check_base_coverage("m", "base", base + [Unit("f2", T2, "A3", None, False)], panel, cells) == []


def test_findings_carry_their_kind():
    from rapgen.archive.records import ProblemKind

    lines = good_readouts()
    lines[2]["evidence_sha256"] = HEX
    lines.pop(3)
    records, _ = parse_replays("r", jsonl(*lines, lines[0]), FIELDS, ORIGINS)
    _, parse_findings = parse_replays("r", jsonl(*lines, lines[0]), FIELDS, ORIGINS)
    assert [f.kind for f in parse_findings] == [ProblemKind.DUPLICATE_UNIT]
    kinds = [f.kind for f in check_replays("r", records, UNITS, TRACES, PAPERS, malformed, SPLIT)]
    assert kinds == [ProblemKind.EVIDENCE, ProblemKind.COVERAGE]
    panel = Panel(("test",), (T2,), ("A1",))
    (base,) = check_base_coverage("m", "base", [], panel, {("f1", T2)})
    assert base.kind == ProblemKind.BASE_COVERAGE
    _, findings = parse_oracle_traces("t", jsonl(oracle_call(call_index=25)), FIELDS, ORIGINS, 20)
    assert findings[0].kind == ProblemKind.CALL_CAP
