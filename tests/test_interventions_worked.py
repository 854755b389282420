"""INTERVENTIONS.md §9's worked examples through the real score path: a tiny archive whose
ledger is relabelled so the example's targets and windows are its own, the records
written with their true hashes, ``rapgen verify`` passing, and ``rapgen score`` writing
the numbers of the contract digit for digit.

- Readout: field delta (alone in dev) at T = 2024-07-01 has target [16,2,7,1,1,2,0,1]; its
  four ``:all`` readouts are the example's, the other dev pairs' readouts invalid, so the
  dev cells and contrasts are the example's.
- Matched calls: field gamma at T = 2025-01-01 has x = [3,9,4,2,1,1,0,0] and
  y = [2,10,5,2,1,1,1,0]; the A3/A4 calls of the example are its only expanding calls.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from factory import make_archive, reseal
from interventions_factory import paper_texts

from rapgen.archive import SLOTS, Archive, open_verified, write_assignments
from rapgen.archive.evidence import evidence_sha256
from rapgen.archive.records import TraceCall
from rapgen.cli import cli
from rapgen.io import write_jsonl
from rapgen.search import call_is_malformed, validate_call

READOUT_T, SIGNATURE_T = date(2024, 7, 1), date(2025, 1, 1)
TARGET = [16, 2, 7, 1, 1, 2, 0, 1]
READOUTS = {  # (source, readout) -> weights
    ("A3", "forecast"): [30, 10, 10, 20, 10, 10, 0, 10],
    ("A4", "forecast"): [45, 5, 20, 5, 5, 10, 0, 10],
    ("A4", "state"): [50, 5, 20, 5, 5, 5, 5, 5],
    ("A3", "state"): [35, 10, 15, 10, 10, 10, 0, 10],
}
X, Y = [3, 9, 4, 2, 1, 1, 0, 0], [2, 10, 5, 2, 1, 1, 1, 0]
PROMPT = "cd" * 32


def _relabel(rows: dict, field: str, lo: date, hi: date, counts: list[int], fixed: dict[str, str]) -> list[str]:
    """Give ``field``'s rows in [lo, hi) canonical counts ``counts`` (the rest ``other``),
    honouring the labels in ``fixed``; returns the ids of the window in order."""
    at = [i for i, (f, d) in enumerate(zip(rows["field_id"], rows["first_submitted"])) if f == field and lo <= d < hi]
    need = list(counts)
    for i in at:
        pid = rows["arxiv_id"][i]
        if pid in fixed:
            need[SLOTS.index(fixed[pid])] -= 1
    assert min(need) >= 0
    pool = [s for s, n in zip(SLOTS, need) for _ in range(n)]
    for i in at:
        pid = rows["arxiv_id"][i]
        slot = fixed.get(pid) or (pool.pop() if pool else None)
        rows["primary"][i] = slot or "other"
        rows["secondary"][i] = None
        rows["assignment_type"][i] = "single" if slot else "other"
    assert not pool, "the window has too few rows for the example"
    return [rows["arxiv_id"][i] for i in at]


def _trace(field: str, origin: date, condition: str, k: int, sort: str, date_from: str | None, ids: list[str]) -> dict:
    return {"field_id": field, "origin": origin.isoformat(), "condition": condition, "call_index": k, "query": f"query {k}",
            "sort": sort, "date_from": date_from, "date_to": None, "total_hits": len(ids), "returned_ids": ids}


def _build(root: Path) -> None:
    make_archive(root)
    path = root / "archive/benchmark/assignments.parquet"
    rows = pq.read_table(path).to_pydict()
    rows = {k: list(v) for k, v in rows.items()}
    _relabel(rows, "delta", READOUT_T, date(2025, 1, 1), TARGET, {})
    # gamma: p1, p3, p4, p8 older than T − 6 months; p2, p5, p6, p7, p9, p10 recent.
    older = [pid for f, pid, d in zip(rows["field_id"], rows["arxiv_id"], rows["first_submitted"]) if f == "gamma" and d < date(2024, 1, 1)]
    recent = [pid for f, pid, d in zip(rows["field_id"], rows["arxiv_id"], rows["first_submitted"])
              if f == "gamma" and date(2024, 7, 1) <= d < SIGNATURE_T]
    p = {1: older[0], 3: older[1], 4: older[2], 8: older[3], 2: recent[0], 5: recent[1], 6: recent[2], 7: recent[3], 9: recent[4], 10: recent[5]}
    labels = {p[1]: "D0", p[3]: "D0", p[2]: "D1", p[5]: "D1", p[9]: "D1", p[4]: "D2", p[10]: "D2", p[6]: "D3", p[7]: "D0", p[8]: "D0"}
    for i, pid in enumerate(rows["arxiv_id"]):
        if rows["field_id"][i] == "gamma" and pid in labels and rows["first_submitted"][i] < date(2024, 1, 1):
            rows["primary"][i], rows["secondary"][i], rows["assignment_type"][i] = labels[pid], None, "single"
    _relabel(rows, "gamma", date(2024, 7, 1), SIGNATURE_T, X, {k: v for k, v in labels.items() if k in recent})
    _relabel(rows, "gamma", SIGNATURE_T, date(2025, 7, 1), Y, {})
    write_assignments(path, rows)
    model = root / "archive/models/model-a"
    a3 = [("relevance", None, [p[1], p[2], p[3]]), ("date", None, [p[2], p[4]]), ("relevance", "2024-07-01", [p[5], p[6]]),
          ("relevance", None, [p[7]]), ("date", None, [p[8]])]
    a4 = [("date", "2024-07-01", [p[2], p[5], p[9]]), ("relevance", "2024-07-01", [p[9], p[10]]), ("relevance", None, [p[5]])]
    factory_lines = [json.loads(x) for x in (model / "traces.jsonl").read_text().splitlines()]
    traces = factory_lines + [_trace("gamma", SIGNATURE_T, c, k, *call) for c, calls in (("A3", a3), ("A4", a4)) for k, call in enumerate(calls)]
    write_jsonl(model / "traces.jsonl", traces)
    reseal(root)
    archive = Archive(root)
    papers = paper_texts(archive)
    readouts = []
    for origin in archive.origins.origins:
        for (source, readout), weights in READOUTS.items():
            h = evidence_sha256([], papers, call_is_malformed)  # delta has no calls: empty evidence, n = k = 0
            valid = origin == READOUT_T
            readouts.append({"field_id": "delta", "origin": origin.isoformat(), "source_condition": source, "readout": readout,
                             "budget": "all", "calls_used": 0, "evidence_sha256": h, "prompt_sha256": PROMPT,
                             "weights": dict(zip(SLOTS, weights)) if valid else None,
                             **({} if valid else {"status": "invalid", "reason": "not part of the example"})})
    write_jsonl(model / "replays.jsonl", readouts)
    reseal(root)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("worked") / "repo"
    _build(root)
    open_verified(root, validate_call=validate_call)  # the example archive is a valid archive
    out = root.parent / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(out), "--resamples", "30"])
    assert result.exit_code == 0, result.output
    return out


def _rows(out: Path, name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO((out / "interventions" / name).read_text())))


def test_readout_cells_are_the_examples(scored):
    cells = {r["cell"]: float(r["estimate"]) for r in _rows(scored, "cells.csv")
             if r["analysis"] == "replay" and r["split"] == "dev" and r["subset"] == "all" and r["metric"] == "spearman"}
    assert cells == pytest.approx({"F->F:all": 0.562544, "S->F:all": 0.841772, "S->S:all": 0.787562, "F->S:all": 0.900070}, abs=5e-7)
    row = next(r for r in _rows(scored, "cells.csv") if r["cell"] == "F->F:all" and r["split"] == "dev" and r["subset"] == "all"
               and r["metric"] == "spearman")
    assert (row["n_fields"], row["n_units"], row["n_valid"], row["n_invalid"]) == ("1", "5", "1", "4")


def test_readout_contrasts_are_the_examples(scored):
    got = {r["contrast"]: float(r["estimate"]) for r in _rows(scored, "contrasts.csv")
           if r["analysis"] == "replay" and r["split"] == "dev" and r["subset"] == "all" and r["metric"] == "spearman"
           and r["contrast"].endswith(":all")}
    assert got == pytest.approx({"acquisition:all": 0.279228, "readout:all": -0.054211, "pipeline:all": 0.225018}, abs=5e-7)


def test_matched_call_signature_is_the_examples(scored):
    sig = {(r["side"], r["metric"]): float(r["estimate"]) for r in _rows(scored, "signature.csv")
           if r["split"] == "test" and r["entry"] == "model-a" and r["regime"] == "expanding" and r["estimate"]}
    expected = {
        ("forecast", "recent_share"): 4 / 7, ("state", "recent_share"): 1.0, ("delta", "recent_share"): 0.428571,
        ("forecast", "distinct"): 6, ("state", "distinct"): 4, ("delta", "distinct"): -2,
        ("forecast", "duplicate_share"): 0.142857, ("state", "duplicate_share"): 0.333333, ("delta", "duplicate_share"): 0.190476,
        ("forecast", "sort_date"): 0.333333, ("state", "sort_date"): 0.333333, ("delta", "sort_date"): 0.0,
        ("forecast", "bounded"): 0.333333, ("state", "bounded"): 0.666667, ("delta", "bounded"): 0.333333,
        ("forecast", "recent_bounded"): 0.333333, ("state", "recent_bounded"): 0.666667,
        ("forecast", "align_recent"): 0.884985, ("state", "align_recent"): 0.773021,
        ("forecast", "align_future"): 0.875113, ("state", "align_future"): 0.787562,
        ("pair", "jaccard"): 0.25,
        # k is defined (0) on the test split's other pairs too: gamma's mean (3 + 0·4)/5 beside alpha's and beta's 0.
        ("pair", "matched_calls"): (3 / 5) / 3,
    }
    assert {k: sig[k] for k in expected} == pytest.approx(expected, abs=5e-7)


def test_every_file_has_exactly_its_columns(scored):
    from rapgen.scores.schema import INTERVENTION_FILES

    assert sorted(p.name for p in (scored / "interventions").iterdir()) == sorted(INTERVENTION_FILES)
    for name, columns in INTERVENTION_FILES.items():
        header = (scored / "interventions" / name).read_text().split("\n", 1)[0]
        assert tuple(header.split(",")) == columns, name
