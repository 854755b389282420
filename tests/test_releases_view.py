"""Release views: what release N listed, grouped for readers; a format-1 archive is one implicit release."""

from __future__ import annotations

import re
from datetime import date

import pytest

from rapgen.archive.history.check import HistoryInput
from rapgen.archive.history.records import reveal_path, search_path, window_path
from rapgen.archive.history.view import release_view
from rapgen.errors import UsageProblem
from test_releases_check import COMMIT, MODEL_JSON, O1, O2, O3, REVEAL, build


def test_each_release_sees_only_what_it_listed():
    inp = build(unreleased={REVEAL: "a" * 64, reveal_path("m", O2, "traces.jsonl"): "b" * 64})
    first, latest = release_view(inp, 1), release_view(inp)
    assert first.number == 1 and latest.number == 3
    assert first.papers == ("archive/benchmark/papers.parquet",)
    assert latest.papers == ("archive/benchmark/papers.parquet", window_path(O2, "papers.parquet"))
    assert latest.assignments[-1] == window_path(O2, "assignments.parquet")
    assert list(first.manifests) == [O1, O2] and list(latest.manifests) == [O1, O2, O3]
    assert latest.manifests[O3] == {"fixed": search_path(O3, "manifest_fixed.jsonl"), "expanding": search_path(O3, "manifest_expanding.jsonl")}
    assert COMMIT not in first.files and COMMIT in release_view(inp, 2).files
    assert latest.unreleased == (REVEAL, reveal_path("m", O2, "traces.jsonl")) and first.unreleased == ()
    assert MODEL_JSON in latest.files and latest.predictions == {}  # reveals are unreleased, so no prediction file yet


def test_model_files_main_first_then_origins():
    root = {"archive/models/m/predictions.jsonl": "1" * 64, reveal_path("m", O3, "predictions.jsonl"): "2" * 64,
            reveal_path("m", O2, "predictions.jsonl"): "3" * 64, "archive/models/m/traces.jsonl": "4" * 64}
    view = release_view(HistoryInput(root, {}, {}, (O1,), O1, 6, 1), created=date(2026, 1, 1))
    assert view.implicit and view.record.release == 1 and view.record.kind.value == "initial"
    assert view.record.resolved_origins == (O1,) and view.record.date == date(2026, 1, 1)
    assert view.predictions == {"m": ("archive/models/m/predictions.jsonl", reveal_path("m", O2, "predictions.jsonl"),
                                      reveal_path("m", O3, "predictions.jsonl"))}
    assert view.traces == {"m": ("archive/models/m/traces.jsonl",)}


@pytest.mark.parametrize("number,message", [(4, "release 4 does not exist (releases 1–3)"), (0, "release 0 does not exist")])
def test_missing_release_is_a_usage_error(number, message):
    with pytest.raises(UsageProblem, match=re.escape(message)):
        release_view(build(), number)
    with pytest.raises(UsageProblem, match="a format-1 archive has one implicit release"):
        release_view(HistoryInput({}, {}, {}, (O1,), O1, 6, 1), 2)
