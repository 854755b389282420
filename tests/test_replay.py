"""``rapgen replay``: exact reproduction, tamper detection, synthetic traces; the Search evidence
statistics that scores computes from the same traces."""

from __future__ import annotations

import json
import shutil
from datetime import date

import numpy as np
import pytest
from click.testing import CliRunner
from factory import reseal

from rapgen.archive import open_release
from rapgen.archive import Archive, recent_window
from rapgen.cli import cli
from rapgen.sample import generate_traces
from rapgen.search import replay_archive
from rapgen.scores.diagnostics.evidence import search_evidence
from rapgen.scores.kernels import spearman


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


@pytest.fixture
def replay_copy(replayable, tmp_path):
    dest = tmp_path / "repo"
    shutil.copytree(replayable[0], dest)
    return dest


def _edit_line(path, number, change):
    lines = path.read_text().splitlines()
    obj = json.loads(lines[number - 1])
    change(obj)
    lines[number - 1] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")


def test_every_call_reproduces_with_one_or_two_workers(replayable):
    root, written = replayable
    archive = open_release(root)
    one = replay_archive(archive, jobs=1).data
    two = replay_archive(archive, jobs=2).data
    assert one == two
    assert one["ok"] and one["failed"] == 0
    calls = {m["model_id"]: m["calls"] for m in one["models"]}
    assert calls["model-a"] == written["model-a"] and calls["model-b"] == written["model-b"]
    assert calls["ref-recent-hits"] == 4 * 5 * 4 * 8  # fields x origins x A1-A4 x 8 calls


def test_cli_replay_writes_replay_json(replayable, tmp_path):
    root, _ = replayable
    result = CliRunner().invoke(cli, ["replay", "--root", str(root), "--out", str(tmp_path / "out"), "--jobs", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "reproduced, 0 failed" in result.stdout
    data = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert data["schema_version"] == 1 and data["ok"] is True
    cond = data["models"][0]["conditions"][0]
    # replay answers only "does every call reproduce"; the evidence is in diagnostics.json
    assert set(cond) == {"condition", "calls", "reproduced", "failed", "errors_recorded", "first_differences"}


def test_a_tampered_trace_is_reported(replay_copy):
    path = replay_copy / "archive" / "models" / "ref-recent-hits" / "traces.jsonl"
    _edit_line(path, 7, lambda o: o.update(returned_ids=list(reversed(o["returned_ids"]))) if len(o["returned_ids"]) > 1 else o.update(total_hits=o["total_hits"] + 1))
    _edit_line(path, 9, lambda o: o.update(total_hits=o["total_hits"] + 1))
    reseal(replay_copy)
    result = CliRunner().invoke(cli, ["replay", "--root", str(replay_copy), "--jobs", "1"])
    assert result.exit_code == 1
    assert "Error: 2 of" in result.stderr and "recorded Search calls did not reproduce" in result.stderr
    assert "DIFF ref-recent-hits traces.jsonl:7" in result.stdout
    assert "DIFF ref-recent-hits traces.jsonl:9" in result.stdout and "total_hits" in result.stdout


def test_recorded_malformed_calls_reproduce_as_errors(replay_copy):
    path = replay_copy / "archive" / "models" / "model-b" / "traces.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    key = {k: first[k] for k in ("field_id", "origin", "condition")}
    used = {json.loads(l)["call_index"] for l in path.read_text().splitlines() if all(json.loads(l)[k] == v for k, v in key.items())}
    bad = [
        dict(key, call_index=max(used) + 1, query="parsing", sort="score", date_from=None, date_to=None, total_hits=0, returned_ids=[]),
        dict(key, call_index=max(used) + 2, query="", sort="date", date_from=None, date_to=None, total_hits=3, returned_ids=[]),
    ]
    with path.open("a") as handle:
        for b in bad:
            handle.write(json.dumps(b) + "\n")
    reseal(replay_copy)
    data = replay_archive(open_release(replay_copy), jobs=1, models=["model-b"]).data
    cond = next(c for c in data["models"][0]["conditions"] if c["condition"] == key["condition"])
    assert cond["errors_recorded"] == 1 and cond["failed"] == 1
    diff = cond["first_differences"][0]
    assert diff["replayed"]["error"] == "the query is empty" and diff["recorded"]["total_hits"] == 3


def test_recent_share_is_computed_from_the_ledger(replayable):
    root, _ = replayable
    archive = Archive(root)
    rows = [r for r in search_evidence(archive)["rows"] if r["entry"] == "model-a"]
    con = archive.connect()
    dates = {(f, p): d for f, p, d in con.execute("SELECT field_id, arxiv_id, first_submitted FROM assignments").fetchall()}
    assert [r["condition"] for r in rows] == ["A1", "A2", "A3", "A4"]
    for cond in rows:
        slots = recent = 0
        for c in archive.traces("model-a"):
            if c.condition != cond["condition"]:
                continue
            lo, hi = recent_window(c.origin, 6)
            for pid in c.returned_ids:
                slots += 1
                recent += lo <= dates[(c.field_id, pid)] < hi
        assert cond["returned_slots"] == slots
        assert cond["recent_share"] == pytest.approx(recent / slots, abs=1e-6)
    fixed = {c["condition"]: c["recent_share"] for c in rows}
    assert fixed["A1"] == 1.0 and fixed["A3"] < 1.0  # the fixed shard is the recent window


@pytest.mark.parametrize("a,b,expected", [
    ([1, 2, 3, 4, 5, 6, 7, 8], [10, 20, 30, 40, 50, 60, 70, 80], 1.0),
    ([1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1], -1.0),
    # returned papers spread evenly (constant): the §2 rule gives 0
    ([2, 2, 2, 2, 2, 2, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8], 0.0),
    # a window without counted papers (constant reference): undefined
    ([1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0, 0, 0, 0, 0, 0], None),
    ([3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8], "scipy"),
])
def test_evidence_spearman_is_the_scorers(a, b, expected):
    got = float(spearman(np.array(a, float), np.array(b, float)))
    if expected == "scipy":
        from scipy.stats import spearmanr

        expected = spearmanr(a, b).statistic
    if expected is None:
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_evidence_of_units_whose_papers_are_all_other_is_undefined():
    # No counted direction among the returned papers: no composition, so no spearman.
    from collections import namedtuple

    from rapgen.scores.diagnostics.evidence import Ledger, _condition_row

    Call = namedtuple("Call", "field_id origin returned_ids")
    day = (date(2024, 3, 1) - date(1970, 1, 1)).days
    ledger = Ledger(np.array(["f\tp1", "f\tp2"]), np.array([day, day]), np.array([-1, 3]), {"f": (0, 2)})
    calls = [Call("f", date(2024, 7, 1), ("p1",)), Call("f", date(2025, 1, 1), ("p2", "p9")), Call("f", date(2025, 1, 1), ())]
    row = _condition_row("m", "A3", calls, ledger, 6, {})
    assert (row["calls"], row["units"], row["returned_slots"]) == (3, 2, 3)
    assert row["recent_slots"] == 1 and row["recent_share"] == round(1 / 3, 6)  # p1 is recent for 2024-07-01 only
    # unit 2024-07-01 has only "other"; unit 2025-01-01 has one D3 paper, and the windows hold no counted paper
    assert row["spearman_units"] == 0 and row["spearman_recent"] is None
    # calls per unit count every unit with a call, returned papers or not: 2024-07-01 has 1, 2025-01-01 has 2
    assert (row["called_units"], row["calls_per_unit_mean"], row["calls_per_unit_max"]) == (2, 1.5, 2)


def test_generated_traces_are_deterministic_and_within_the_cap(replayable, tmp_path):
    root, written = replayable
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    again = generate_traces(copy, ["model-a", "model-b"], seed=3)
    assert again == written
    for mid in ("model-a", "model-b"):
        rel = f"archive/models/{mid}/traces.jsonl"
        assert (copy / rel).read_bytes() == (root / rel).read_bytes()
    generate_traces(copy, ["model-b"], seed=4)
    assert (copy / "archive/models/model-b/traces.jsonl").read_bytes() != (root / "archive/models/model-b/traces.jsonl").read_bytes()
    calls = Archive(root).traces("model-a")
    per_unit: dict = {}
    for c in calls:
        per_unit.setdefault((c.field_id, c.origin, c.condition), []).append(c.call_index)
    assert {k[2] for k in per_unit} == {"A1", "A2", "A3", "A4"}
    assert len(per_unit) == 4 * 5 * 4
    assert all(sorted(v) == list(range(len(v))) and len(v) <= 20 for v in per_unit.values())


def test_spearman_matches_scipy_on_tie_heavy_vectors():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = rng.integers(0, 4, 8).astype(float), rng.integers(0, 6, 8).astype(float)
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        assert float(spearman(a, b)) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)


def test_every_counted_session_call_is_recorded_and_replays(replay_copy):
    """Malformed calls count against the cap, so serve-search records each of them
    (sanitised when the trace format cannot hold the arguments) and replay agrees."""
    from rapgen.kit import SearchSession

    path = replay_copy / "archive" / "models" / "model-b" / "traces.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    unit = (first["field_id"], first["origin"], first["condition"])
    session = SearchSession(Archive(replay_copy))
    good = {"query": "parsing language models", "sort": "relevance"}
    calls = [
        good,
        {**good, "limit": 3},                       # unknown argument, otherwise valid
        ["parsing", "date"],                        # not an object
        {"query": 5, "sort": "date"},               # non-string query
        {"query": ["parsing"], "sort": "relevance"},
        {**good, "date_from": float("nan")},        # non-string date
        {"query": "parsing"},                       # sort missing
        {"query": "parsing", "sort": "score"},      # representable: recorded as given
        {"query": "the of and", "sort": "date"},    # stopwords only: valid, 0 hits
        {**good, "sort": "date"},
    ]
    outcomes = [session.call(*unit, c) for c in calls]
    assert [o.call_index for o in outcomes] == list(range(len(calls)))
    assert [o.error is not None for o in outcomes] == [False, True, True, True, True, True, True, True, False, False]
    assert session.calls_made(unit[0], date.fromisoformat(unit[1]), unit[2]) == len(session.records) == len(calls)
    rec = session.records
    assert rec[0]["total_hits"] > 0 and rec[9]["total_hits"] > 0
    assert {k: rec[1][k] for k in ("query", "sort", "date_from", "date_to")} == {"query": "", "sort": "relevance", "date_from": None, "date_to": None}
    assert (rec[2]["query"], rec[2]["sort"]) == ("", "")
    assert (rec[3]["query"], rec[3]["sort"]) == ("", "date")
    assert (rec[5]["query"], rec[5]["date_from"]) == ("", None)
    assert (rec[6]["query"], rec[6]["sort"]) == ("", "")
    assert (rec[7]["query"], rec[7]["sort"]) == ("parsing", "score")
    assert (rec[8]["query"], rec[8]["total_hits"], rec[8]["returned_ids"]) == ("the of and", 0, [])
    assert all(r["total_hits"] == 0 and r["returned_ids"] == [] for r in rec[1:9])
    path.write_text("".join(json.dumps(r) + "\n" for r in rec))
    reseal(replay_copy)
    data = replay_archive(open_release(replay_copy), jobs=1, models=["model-b"]).data
    assert data["ok"] is True
    cond = next(c for c in data["models"][0]["conditions"] if c["condition"] == unit[2])
    assert cond["calls"] == cond["reproduced"] == len(calls) and cond["failed"] == 0
    assert cond["errors_recorded"] == 7


def test_cli_replay_unknown_model_is_a_usage_error(replayable, tmp_path):
    root, _ = replayable
    cache = tmp_path / "cache"
    result = CliRunner().invoke(cli, ["replay", "--root", str(root), "--model", "nope", "--cache-dir", str(cache)])
    assert result.exit_code == 2
    assert "Error: model 'nope' is not in the archive; its models are: " in result.stderr
    assert "model-a" in result.stderr and "ref-recent-hits" in result.stderr
    assert not cache.exists()  # refused before any index is built


def test_calls_of_different_origin_files_with_the_same_line_number_are_told_apart():
    """A format-2 model's traces come from several files (traces.jsonl and
    origins/<T>/traces.jsonl), so line numbers repeat: results are matched by unit and call."""
    from datetime import date
    from types import SimpleNamespace

    from rapgen.search.replay import _model_summary

    def call(origin, hits, ids):
        return SimpleNamespace(line=7, field_id="f", origin=date.fromisoformat(origin), condition="A3", call_index=0,
                               query="q", sort="date", date_from=None, date_to=None, total_hits=hits, returned_ids=tuple(ids))

    first, later = call("2024-01-01", 3, ["a"]), call("2025-07-01", 5, ["b"])
    summary = _model_summary("m", [("traces.jsonl", c, (c.total_hits, list(c.returned_ids), None)) for c in (first, later)])
    assert (summary["calls"], summary["reproduced"], summary["failed"]) == (2, 2, 0)
