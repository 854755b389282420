"""Intervention records for the tiny archive, built in code (INTERVENTIONS.md §1–§3).

``add_interventions(root)`` gives model-a a few A3 Search calls, a
``replays.jsonl`` covering every A3/A4 pair (cells F->S:all and F->S:matched),
an ``oracle.jsonl`` with O1 and O3 for every episode and an
``oracle_traces.jsonl`` with one O3 call; and adds ``model-t``, a panel model
fine-tuned from model-b with its ``training.json``. Every hash is computed the
way the contract defines it, so the archive verifies; tests then break one line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date
from pathlib import Path

from factory import reseal
from rapgen.archive import Archive
from rapgen.archive.evidence import PaperText, build_evidence, build_oracle_block, canonical_counts, canonical_hash, oracle_windows
from rapgen.archive.format2 import recorded_call_malformed
from rapgen.archive.intervention_checks import calls_by_unit, replay_pairs

PROMPT = "ab" * 32
W = {f"D{i}": i + 1 for i in range(8)}
PANEL_ORIGINS = ["2024-07-01", "2025-01-01"]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def paper_texts(archive: Archive) -> dict[str, PaperText]:
    """Every paper's date, title and abstract, as the evidence hash reads them."""
    con = archive.connect()
    try:
        rows = con.execute("SELECT arxiv_id, first_submitted, title, abstract FROM papers").fetchall()
    finally:
        con.close()
    return {a: PaperText(d.isoformat(), t or "", ab or "") for a, d, t, ab in rows}


def assignments_by_field(archive: Archive) -> dict[str, list]:
    """Each field's (first_submitted, primary) assignment rows (empty for a field without any)."""
    con = archive.connect()
    try:
        rows = con.execute('SELECT field_id, first_submitted, "primary" FROM assignments').fetchall()
    finally:
        con.close()
    by_field: dict[str, list] = defaultdict(list)
    for fid, day, primary in rows:
        by_field[fid].append((day, primary))
    return by_field


def _counts(archive: Archive):
    by_field = assignments_by_field(archive)
    return lambda fid, a, b: canonical_counts(by_field[fid], a, b)


def add_interventions(root: str | Path) -> dict[str, Path]:
    """Write the records; returns the paths written (name -> file) and reseals."""
    root = Path(root)
    model = root / "archive/models/model-a"
    a1 = [json.loads(x) for x in (model / "traces.jsonl").read_text().splitlines()]
    a3 = [{**c, "condition": "A3"} for c in a1 if c["call_index"] == 0]  # the fixed shard lies inside the expanding one
    (model / "traces.jsonl").write_bytes(_jsonl(a1 + a3))
    reseal(root)
    archive = Archive(root)
    units, traces = archive.predictions("model-a"), archive.traces("model-a")
    papers, counts = paper_texts(archive), _counts(archive)
    calls = calls_by_unit(traces)
    replays = []
    for fid, origin in sorted(replay_pairs(units)):
        n = {c: len(calls.get((fid, origin, c), [])) for c in ("A3", "A4")}
        for budget, used in (("all", n["A3"]), ("matched", min(n.values()))):
            evidence = build_evidence(calls.get((fid, origin, "A3"), []), papers, recorded_call_malformed, used)
            replays.append({"field_id": fid, "origin": origin.isoformat(), "source_condition": "A3", "readout": "state",
                            "budget": budget, "calls_used": used, "evidence_sha256": canonical_hash(evidence),
                            "prompt_sha256": PROMPT, "weights": W})
    oracle = []
    for f in archive.fields:
        for origin in archive.origins.origins:
            for condition in ("O1", "O3"):
                windows = oracle_windows(condition, origin, archive.origins.window_months)
                block = build_oracle_block(windows, [counts(f.field_id, a, b) for a, b in windows])
                oracle.append({"field_id": f.field_id, "origin": origin.isoformat(), "condition": condition, "weights": W,
                               "input_sha256": canonical_hash(block), "prompt_sha256": PROMPT, "attempts": 1})
    o3 = [{**a1[0], "condition": "O3"}]
    written = {"replays.jsonl": _jsonl(replays), "oracle.jsonl": _jsonl(oracle), "oracle_traces.jsonl": _jsonl(o3)}
    for name, data in written.items():
        (model / name).write_bytes(data)
    _panel_model(root, archive)
    reseal(root)
    return {name: model / name for name in written} | {"model-t": root / "archive/models/model-t"}


def _panel_model(root: Path, archive: Archive) -> None:
    folder = root / "archive/models/model-t"
    folder.mkdir()
    info = json.loads((root / "archive/models/model-b/model.json").read_text())
    info.update(model_id="model-t", display_name="Model T", base_model="model-b", cutoff_precision="month",
                panel={"splits": ["test"], "origins": PANEL_ORIGINS, "conditions": ["A1"]},
                inference={"endpoint": "local", "temperature": 0.0, "top_p": None, "seed": 7, "max_output_tokens": {"closed": 1024, "search": 2048},
                           "tool_choice": None, "parallel_tool_calls": None, "api_retries": 0, "unit_retries": 0,
                           "context_window": 32768})
    (folder / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    training = {"base_model": "model-b", "method": "sft", "teacher": None, "fields": ["delta"], "origins": ["2023-07-01"],
                "conditions": ["A1"], "n_trajectories": 1, "presentations": 1,
                "gate": {"fields": [], "origins": [], "passed": True}, "hyperparameters": {"epochs": 1}, "notes": None}
    (folder / "training.json").write_text(json.dumps(training, indent=2) + "\n")
    tested = [f.field_id for f in archive.fields if f.split == "test"]
    units = [{"field_id": fid, "origin": o, "condition": "A1", "weights": W, "response_model": "model-t", "unit_attempt": 1,
              "usage": {"input_tokens": 10, "output_tokens": 5}} for fid in tested for o in PANEL_ORIGINS]
    (folder / "predictions.jsonl").write_bytes(_jsonl(units))


def panel_origins() -> list[date]:
    return [date.fromisoformat(o) for o in PANEL_ORIGINS]
