"""Matched-call signature (INTERVENTIONS.md §5): the §9 table digit for digit, jaccard,
align, malformed calls, empty evidence, and the counterfactual's arms."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from rapgen.scores.interventions import Call, counterfactual_values, pair_signature, signature_statistics

T = date(2025, 1, 1)
RECENT = date(2024, 7, 1)
OLD, NEW = date(2024, 1, 15), date(2024, 9, 1)
FIRST = {p: (NEW if p in {"p2", "p5", "p6", "p7", "p9", "p10"} else OLD) for p in (f"p{i}" for i in range(1, 11))}
LABELS = {"p1": 0, "p3": 0, "p2": 1, "p5": 1, "p9": 1, "p4": 2, "p10": 2, "p6": 3}
X = np.array([3, 9, 4, 2, 1, 1, 0, 0], dtype=float)
Y = np.array([2, 10, 5, 2, 1, 1, 1, 0], dtype=float)


def _call(i, sort, date_from, ids, malformed=False) -> Call:
    return Call(i, sort, date_from, None, tuple(ids), malformed)


A3 = [
    _call(0, "relevance", None, ["p1", "p2", "p3"]),
    _call(1, "date", None, ["p2", "p4"]),
    _call(2, "relevance", RECENT, ["p5", "p6"]),
    _call(3, "relevance", None, ["p7"]),
    _call(4, "relevance", None, ["p8"]),
]
A4 = [
    _call(0, "date", RECENT, ["p2", "p5", "p9"]),
    _call(1, "relevance", RECENT, ["p9", "p10"]),
    _call(2, "relevance", None, ["p5"]),
]
TABLE = {  # metric: (Forecast, State, delta), to 6 decimals
    "recent_share": (0.571429, 1.0, 0.428571),
    "distinct": (6, 4, -2),
    "duplicate_share": (0.142857, 0.333333, 0.190476),
    "sort_date": (0.333333, 0.333333, 0.0),
    "bounded": (0.333333, 0.666667, 0.333333),
    "recent_bounded": (0.333333, 0.666667, 0.333333),
    "align_recent": (0.884985, 0.773021, None),
    "align_future": (0.875113, 0.787562, None),
}


@pytest.fixture(scope="module")
def signature():
    # Calls given out of order: truncation keeps the k smallest call indices.
    return pair_signature(list(reversed(A3)), A4, RECENT, T, FIRST, LABELS, X, Y)


@pytest.mark.parametrize("metric", sorted(TABLE))
def test_matched_call_table(signature, metric):
    forecast, state, delta = TABLE[metric]
    assert round(signature.forecast[metric], 6) == forecast
    assert round(signature.state[metric], 6) == state
    if delta is not None:
        assert round(signature.delta[metric], 6) == delta


def test_jaccard_and_matched_calls(signature):
    assert signature.pair == {"jaccard": 0.25, "matched_calls": 3.0}


def test_unmatched_budget_keeps_every_call():
    sig = pair_signature(A3, A4, RECENT, T, FIRST, LABELS, X, Y, matched=False)
    assert sig.forecast["recent_share"] == pytest.approx(5 / 9)  # p7 recent, p8 old join the slots
    assert sig.forecast["distinct"] == 8
    assert sig.pair["matched_calls"] == 3.0  # k is still min(n_A3, n_A4)


def test_malformed_call_counts_in_k_not_in_numerators():
    forecast = [_call(0, "date", RECENT, [], malformed=True), _call(1, "relevance", None, ["p1"])]
    state = [_call(0, "date", RECENT, ["p2"]), _call(1, "date", None, ["p5"])]
    sig = pair_signature(forecast, state, RECENT, T, FIRST, LABELS, X, Y)
    assert sig.forecast["sort_date"] == 0.0  # the malformed call asked for date order, but is not counted
    assert sig.forecast["bounded"] == 0.0
    assert sig.forecast["recent_bounded"] == 0.0
    assert sig.state["sort_date"] == 1.0
    assert sig.state["recent_bounded"] == 0.5


def test_empty_evidence_is_undefined():
    forecast = [_call(0, "relevance", None, [])]
    state = [_call(0, "relevance", None, ["p8"])]  # p8 is no field member: Σc = 0
    sig = pair_signature(forecast, state, RECENT, T, FIRST, LABELS, X, Y)
    for metric in ("recent_share", "distinct", "duplicate_share", "align_recent", "align_future"):
        assert math.isnan(sig.forecast[metric]), metric
    assert math.isnan(sig.state["align_recent"])
    assert sig.state["distinct"] == 1.0
    assert sig.pair["jaccard"] == 0.0
    no_calls = pair_signature([], state, RECENT, T, FIRST, LABELS, X, Y)
    assert no_calls.pair["matched_calls"] == 0.0
    assert math.isnan(no_calls.state["sort_date"]) and math.isnan(no_calls.pair["jaccard"])


def test_signature_statistics_layout(signature):
    stats = signature_statistics("m", "expanding", {(1, 0): signature}, (2, 3))
    keys = [(s.key["side"], s.key["metric"]) for s in stats]
    assert keys[:8] == [("forecast", m) for m in TABLE]
    assert ("pair", "jaccard") in keys and ("delta", "distinct") in keys
    by = {k: s for k, s in zip(keys, stats)}
    assert by[("delta", "distinct")].values[1] == -2
    assert np.isnan(by[("delta", "distinct")].values[0])
    assert by[("pair", "jaccard")].counts["n_units"].tolist() == [0, 1]


def test_counterfactual_arms():
    rerun_f = {0: ["p2", "p5"], 1: ["p6"], 2: ["p9"], 3: ["p10"], 4: []}
    rerun_s = {0: ["p2"], 1: ["p5"], 2: ["p9"]}
    out = counterfactual_values(A3, A4, rerun_f, rerun_s, RECENT, T, FIRST, LABELS, X, Y)
    assert round(out[("matched", "forecast", "native", "recent_share")], 6) == 0.571429
    assert out[("matched", "forecast", "common", "recent_share")] == 1.0
    assert out[("matched", "forecast", "gain", "recent_share")] == pytest.approx(1 - 4 / 7)
    assert out[("matched", "delta", "native", "distinct")] == -2
    assert out[("all", "forecast", "common", "distinct")] == 5  # all five calls' re-runs: p2 p5 p6 p9 p10
    gain = out[("matched", "delta", "gain", "align_recent")]
    assert gain == pytest.approx(out[("matched", "delta", "common", "align_recent")] - out[("matched", "delta", "native", "align_recent")])
