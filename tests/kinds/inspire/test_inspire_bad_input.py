"""Bad input, end to end: every kind of bad id is scored as INSPIRE.md says and counted;
hostile lines are findings, never exceptions."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from inspire_fixture import A, B, C, E, LEDGER, X, call_line, calls, corpus, instances, judgements, jsonl, prediction_line, predictions
from rapgen.kinds.inspire.archive import parse_instances, parse_predictions, parse_traces
from rapgen.kinds.inspire.scores import score_units


def test_every_bad_id_keeps_a_zero_slot_and_is_counted():
    late = dict(corpus())
    late["2503.00001"] = dataclasses.replace(late[A], arxiv_id="2503.00001", first_submitted=date(2025, 3, 20))
    ranking = ["junk", A + "v3", A, "2999.99999", "2503.00001", C, X(1), B, E] + [X(n) for n in (2, 3)] + ["2301.00011v9", X(5)]
    rows = [prediction_line(p) for p in predictions()]
    rows[0]["ranking"] = [{"arxiv_id": i} for i in ranking]
    rows[1]["ranking"] = []  # an empty list is valid
    preds, findings = parse_predictions(jsonl(rows), instances())
    assert findings == []
    table = score_units("m", "detailed", instances(), judgements(), preds, calls(), late, K=LEDGER.K)
    u1 = table.units[0]
    assert u1.cleaned.keys == ("junk", A, "2999.99999", "2503.00001", C, X(1), B, E, X(2), X(3))
    assert u1.counts == {
        "n_submitted": 13, "n_versioned": 2, "n_duplicate": 2, "n_over_limit": 1, "n_slots": 10,
        "n_malformed": 1, "n_unknown": 1, "n_post_cutoff": 1, "n_unsurfaced": 1, "n_unlabelled": 3, "n_scored": 3,
        "n_empty": 0, "n_failed": 0,
    }
    totals = table.totals()
    assert (totals["n_empty"], totals["n_failed"]) == (1, 1)
    s = u1.scores["declared"]
    assert s.hits == 3 and s.rr == 0.5  # A at slot 2 scores; junk at slot 1 keeps its place


HOSTILE = [
    b"[1, 2]\n",
    b"{\"instance_id\": NaN}\n",
    b"{\"a\": 1, \"a\": 2}\n",
    b"\xff\xfe\n",
    b"{" * 5000 + b"\n",
    b"{\"instance_id\": \"insp-0001\", \"condition\": \"detailed\", \"status\": \"submitted\", \"ranking\": [{\"arxiv_id\": \"\\ud800\"}],"
    b" \"reason\": null, \"tokens_in\": 1e400, \"tokens_out\": 1, \"latency_s\": -1, \"cost_usd\": 10" + b"0" * 5000 + b"}\n",
    b"\n",
    b"{\"instance_id\": [\"insp-0001\"], \"condition\": {}, \"call_index\": true}\n",
]


@pytest.mark.parametrize("line", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_lines_are_findings(line):
    good = jsonl([prediction_line(p) for p in predictions()])
    kept = 0 if line.startswith(b"\xff") else None  # a file that is not UTF-8 is rejected whole
    preds, findings = parse_predictions(good + line, instances())
    assert findings and len(preds) == (3 if kept is None else kept)
    lines = jsonl([call_line(c) for c in calls()])
    calls_, findings = parse_traces(lines + line, instances(), LEDGER.max_calls)
    assert findings and len(calls_) == (len(calls()) if kept is None else kept)
    insts, findings = parse_instances(line)
    assert findings and insts == []
