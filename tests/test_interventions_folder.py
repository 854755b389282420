"""One call checks a model folder's intervention files: a consistent folder has no finding,
and problems from every file arrive sorted, with their file and line."""

from __future__ import annotations

import json
from datetime import date

from rapgen.archive.evidence import PaperText, build_evidence, build_oracle_block, canonical_hash, oracle_windows
from rapgen.archive.intervention_folder import ArchiveFacts, check_model_interventions
from rapgen.archive.records import Block, Field, TraceCall, Unit

T1, T2 = date(2025, 1, 1), date(2025, 7, 1)
FIELDS = [Field("f1", "F1", "", "test", "b1", True), Field("f2", "F2", "", "test", "b2", True)]
BLOCKS = [Block("b1", "test", ("f1",)), Block("b2", "test", ("f2",))]
PAPERS = {"p1": PaperText("2024-10-01", "One", "First.")}
W = {f"D{i}": 1 for i in range(8)}
HEX = "c" * 64


def counts(field_id, start, end):
    return [1, 2, 3, 0, 0, 0, 0, int(field_id == "f2")]


def malformed(call):
    return not call.query.strip()


UNITS = [Unit(f, o, c, (0.125,) * 8, True) for f in ("f1", "f2") for o in (T1, T2) for c in ("A0", "A1", "A3")]
UNITS.append(Unit("f1", T1, "A4", None, False))  # the only pair: f1 at T1
TRACES = [TraceCall("f1", T1, "A3", 0, "q", "relevance", None, None, 1, ("p1",)),
          TraceCall("f1", T1, "A4", 0, "", "relevance", None, None, 0, ())]
FACTS = ArchiveFacts(FIELDS, BLOCKS, (T1, T2), 6, 20, ("m", "base"), PAPERS, counts, malformed, lambda mid: UNITS)


def jsonl(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def folder_files(**over) -> dict[str, bytes]:
    f1_a3 = [TRACES[0]]
    readout = {"field_id": "f1", "origin": "2025-01-01", "source_condition": "A3", "readout": "state", "budget": "matched",
               "calls_used": 1, "evidence_sha256": canonical_hash(build_evidence(f1_a3, PAPERS, malformed, 1)),
               "prompt_sha256": HEX, "weights": W}
    oracle = []
    for f in ("f1", "f2"):
        for o in (T1, T2):
            windows = oracle_windows("O1", o, 6)
            block = build_oracle_block(windows, [counts(f, a, b) for a, b in windows])
            oracle.append({"field_id": f, "origin": o.isoformat(), "condition": "O1", "weights": W,
                           "input_sha256": canonical_hash(block), "prompt_sha256": HEX})
    files = {"model.json": json.dumps({"model_id": "m", "knowledge_cutoff": None, "release_date": None}).encode(),
             "replays.jsonl": jsonl(readout), "oracle.jsonl": jsonl(*oracle)}
    files.update(over)
    return files


def test_consistent_folder_has_no_finding():
    records, findings = check_model_interventions("archive/models/m", folder_files(), UNITS, TRACES, FACTS)
    assert findings == []
    assert [r.cell for r in records.readouts] == ["F->S:matched"]
    assert len(records.oracle) == 4 and records.panel_cells is None and records.extensions.cutoff_precision == "day"


def test_problems_from_every_file_sorted_with_lines():
    files = folder_files()
    lines = files["oracle.jsonl"].decode().splitlines()
    first = json.loads(lines[0])
    first["input_sha256"] = HEX
    files["oracle.jsonl"] = ("\n".join([json.dumps(first)] + lines[1:]) + "\n").encode()
    files["oracle_traces.jsonl"] = jsonl({"field_id": "f2", "origin": "2025-01-01", "condition": "O3", "call_index": 0, "query": "q",
                                          "sort": "relevance", "date_from": None, "date_to": None, "total_hits": 0, "returned_ids": []})
    files["training.json"] = b"{}"
    _, findings = check_model_interventions("archive/models/m", files, UNITS, TRACES, FACTS)
    got = [(f.path, f.line, f.detail.split(":")[0]) for f in findings]
    assert got == [
        ("archive/models/m/model.json", None, "training.json is present but model.json names no 'base_model'"),
        ("archive/models/m/oracle.jsonl", 1, "'input_sha256' does not match the exact-history block"),
        ("archive/models/m/oracle_traces.jsonl", 1, "call for f2 2025-01-01 O3, which has no unit"),
        ("archive/models/m/training.json", None, "missing key 'base_model' (and 10 more)"),
    ]


def test_panel_folder_checks_units_traces_and_base():
    model = {"model_id": "m", "knowledge_cutoff": None, "release_date": None, "base_model": "base",
             "panel": {"splits": ["test"], "origins": ["2025-07-01"], "conditions": ["A1"]}}
    training = {"base_model": "base", "method": "sft", "teacher": None, "fields": ["f1"], "origins": ["2025-01-01"],
                "conditions": ["A1"], "n_trajectories": 1, "presentations": 1,
                "gate": {"fields": [], "origins": [], "passed": True}, "hyperparameters": {}, "notes": None}
    files = {"model.json": json.dumps(model).encode(), "training.json": json.dumps(training).encode()}
    units = [Unit("f2", T2, "A1", None, False, line=1), Unit("f1", T2, "A1", None, False, line=2)]
    traces = [TraceCall("f1", T2, "A1", 0, "q", "relevance", None, None, 0, (), line=1)]
    facts = ArchiveFacts(FIELDS, BLOCKS, (T1, T2), 6, 20, ("m", "base"), PAPERS, counts, malformed, lambda mid: [])
    records, findings = check_model_interventions("archive/models/m", files, units, traces, facts)
    assert records.panel_cells == frozenset({("f2", T2)})  # f1's block holds a training field
    assert [(f.path.rsplit("/", 1)[1], f.line, f.detail) for f in findings] == [
        ("model.json", None, "BASE-COVERAGE: base model 'base' misses 1 panel cells × conditions, first f2 2025-07-01 A1"),
        ("predictions.jsonl", 2, "f1 2025-07-01 is outside the panel's cells"),
        ("traces.jsonl", 1, "call for f1 2025-07-01 A1, which has no unit"),
    ]


def test_a_parsed_model_json_is_not_decoded_again():
    from rapgen.archive.parse import parse_model_json

    files = folder_files()
    info, problems = parse_model_json("archive/models/m/model.json", json.dumps({
        "model_id": "m", "display_name": "M", "provider": "p", "proprietary": False, "knowledge_cutoff": None,
        "release_date": None, "cutoff_source": None, "diagnostic": False, "submitted": None, "contact": None,
        "notes": None, "cutoff_precision": "month"}).encode(), folder="m")
    assert problems == []
    files["model.json"] = b"not json: the bytes are not read when the parsed model.json is given"
    records, findings = check_model_interventions("archive/models/m", files, UNITS, TRACES, FACTS, info)
    assert findings == [] and records.extensions.cutoff_precision == "month"
    _, findings = check_model_interventions("archive/models/m", files, UNITS, TRACES, FACTS)
    assert [f.path for f in findings] == ["archive/models/m/model.json"]  # without it, the bytes are parsed


def test_each_file_is_judged_against_the_origins_of_the_release_that_added_it():
    """oracle.jsonl covers T1 only: complete for the release that added it (T1 resolved), although
    a later roll resolved T2 too (RELEASES.md: a roll never invalidates an earlier record)."""
    from dataclasses import replace

    files = folder_files()
    early = [line for line in files["oracle.jsonl"].decode().splitlines() if '"2025-01-01"' in line]
    files["oracle.jsonl"] = ("\n".join(early) + "\n").encode()
    _, findings = check_model_interventions("archive/models/m", files, UNITS, TRACES, FACTS)
    assert [f.detail.split(" but ")[0] for f in findings] == ["condition O1 is claimed on test"]  # judged against T1, T2
    added_early = replace(FACTS, origins_of={"oracle.jsonl": (T1,)})
    records, findings = check_model_interventions("archive/models/m", files, UNITS, TRACES, added_early)
    assert findings == [] and {u.origin for u in records.oracle} == {T1}
    assert added_early.origins_for("replays.jsonl") == (T1, T2)  # a file not named keeps the archive's origins
