"""Intervention records for the tiny archive (INTERVENTIONS.md §1–§2), made in code.

``add_records(root)`` gives model-a of :func:`factory.make_archive` Search traces
produced by the real backend (A1–A4, so they replay and every regime has
pairs), a full replays.jsonl (every cell on every pair, with the true
evidence hashes) and O1–O3 units with the true input hashes plus the O3
calls. Weights are drawn from a seeded generator: deterministic, not a policy.
"""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

from factory import reseal
from interventions_factory import assignments_by_field, paper_texts

from rapgen.archive import SLOTS, Archive
from rapgen.archive.calendar import add_months
from rapgen.archive.evidence import build_oracle_block, canonical_counts, canonical_hash, evidence_sha256, oracle_windows
from rapgen.archive.records import TraceCall
from rapgen.io import write_jsonl
from rapgen.search import Backend, call_is_malformed

MODEL = "model-a"
PROMPT = "ab" * 32
QUERIES = ["parsing methods", "translation", "retrieval dialogue", "speech summarization", "reasoning safety"]
REGIME = {"A1": "fixed", "A2": "fixed", "A3": "expanding", "A4": "expanding", "O3": "expanding"}


def _call_args(rng: random.Random, origin: date, k: int) -> dict:
    if k == 2 and rng.random() < 0.3:
        return {"query": "", "sort": "relevance", "date_from": None, "date_to": None}  # malformed
    lo = add_months(origin, -6).isoformat() if rng.random() < 0.4 else None
    return {"query": rng.choice(QUERIES), "sort": rng.choice(["relevance", "date"]), "date_from": lo, "date_to": None}


def _traces(backend: Backend, archive: Archive, rng: random.Random, conditions: tuple[str, ...]) -> list[dict]:
    lines = []
    for f in archive.fields:
        for origin in archive.origins.origins:
            for condition in conditions:
                for k in range(rng.randint(0, 4)):
                    args = _call_args(rng, origin, k)
                    result = backend.search(f.field_id, origin, REGIME[condition], args)
                    lines.append({"field_id": f.field_id, "origin": origin.isoformat(), "condition": condition, "call_index": k,
                                  **args, "total_hits": result.total_hits, "returned_ids": list(result.ids)})
    return lines


def _weights(rng: random.Random) -> dict:
    return {s: rng.randint(0, 30) for s in SLOTS}


def _as_calls(lines: list[dict]) -> dict[tuple, list[TraceCall]]:
    out: dict[tuple, list[TraceCall]] = {}
    for n, line in enumerate(lines, 1):
        call = TraceCall(line["field_id"], date.fromisoformat(line["origin"]), line["condition"], line["call_index"], line["query"],
                         line["sort"], line["date_from"], line["date_to"], line["total_hits"], tuple(line["returned_ids"]), n)
        out.setdefault((call.field_id, call.origin, call.condition), []).append(call)
    return out


def _replays(archive: Archive, calls: dict, papers: dict, rng: random.Random) -> list[dict]:
    lines = []
    for f in archive.fields:
        for origin in archive.origins.origins:
            n = {c: len(calls.get((f.field_id, origin, c), [])) for c in ("A3", "A4")}
            k = min(n.values())
            for source in ("A3", "A4"):
                for readout in ("forecast", "state"):
                    for budget, used in (("all", n[source]), ("matched", k)):
                        own = calls.get((f.field_id, origin, source), [])
                        h = evidence_sha256(own, papers, call_is_malformed, None if budget == "all" else k)
                        invalid = rng.random() < 0.05
                        lines.append({"field_id": f.field_id, "origin": origin.isoformat(), "source_condition": source,
                                      "readout": readout, "budget": budget, "calls_used": used, "evidence_sha256": h,
                                      "prompt_sha256": PROMPT, "weights": None if invalid else _weights(rng),
                                      **({"status": "invalid", "reason": "no answer"} if invalid else {})})
    return lines


def _oracle(archive: Archive, rng: random.Random) -> list[dict]:
    by_field = assignments_by_field(archive)
    lines = []
    w = archive.origins.window_months
    for condition in ("O1", "O2", "O3"):
        for f in archive.fields:
            for origin in archive.origins.origins:
                windows = oracle_windows(condition, origin, w)
                block = build_oracle_block(windows, [canonical_counts(by_field.get(f.field_id, []), a, b) for a, b in windows])
                lines.append({"field_id": f.field_id, "origin": origin.isoformat(), "condition": condition, "weights": _weights(rng),
                              "input_sha256": canonical_hash(block), "prompt_sha256": PROMPT})
    return lines


def add_records(root: str | Path, cache_dir: str | Path, seed: int = 11) -> None:
    """Write model-a's traces, replays.jsonl, oracle.jsonl and oracle_traces.jsonl; reseal."""
    root = Path(root)
    archive = Archive(root)
    backend = Backend(archive, cache_dir=cache_dir, jobs=1)
    rng = random.Random(seed)
    folder = root / "archive" / "models" / MODEL
    traces = _traces(backend, archive, rng, ("A1", "A2", "A3", "A4"))
    write_jsonl(folder / "traces.jsonl", traces)
    write_jsonl(folder / "replays.jsonl", _replays(archive, _as_calls(traces), paper_texts(archive), rng))
    write_jsonl(folder / "oracle.jsonl", _oracle(archive, rng))
    write_jsonl(folder / "oracle_traces.jsonl", _traces(backend, archive, rng, ("O3",)))
    reseal(root)
