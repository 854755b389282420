"""Build small, valid RAP archives in code for tests (no binary fixtures).

``make_archive(tmp_path)`` writes a sealed archive with four fields in three
dependency blocks (dev and test), five origins, a membership ledger with every
assignment type, both search manifests and two models (one diagnostic with
A0–A4 and invalid units, one forecast-only). The traces it writes stay inside
their shards and under the call cap but were not produced by the Search
backend, so they are not meant to replay.

``reseal(root)`` rewrites SHA256SUMS from scratch after a test edits a file,
so that a test can break an invariant while every byte still verifies.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from rapgen.archive.calendar import add_months
from rapgen.archive import ARCHIVE_DIR, BENCHMARK_LEDGER, SLOTS, SUMS_NAME, format_sums, sha256_file, write_assignments, write_papers
from rapgen.archive.walk import walk
from rapgen.io import atomic_write_bytes, write_json, write_jsonl

ORIGINS = ["2023-01-01", "2023-07-01", "2024-01-01", "2024-07-01", "2025-01-01"]
LEDGER = BENCHMARK_LEDGER
FIELDS = [
    # field_id, split, block, eligible_pre2024
    ("alpha", "test", "b1", True),
    ("beta", "test", "b1", True),
    ("gamma", "test", "b2", True),
    ("delta", "dev", "b3", False),
]
TOPICS = ["parsing", "translation", "retrieval", "dialogue", "speech", "summarization", "reasoning", "safety"]
WORDS = {
    slot: [f"{topic}{i}" for i in range(6)] + [topic, f"{topic}ing"]
    for slot, topic in zip(SLOTS, TOPICS)
}
COMMON = ["model", "language", "neural", "data", "method", "results", "task", "approach"]


@dataclass(frozen=True)
class TinyArchive:
    root: Path
    field_ids: tuple[str, ...]
    model_ids: tuple[str, ...]


def _text(rng: random.Random, slot: str, n: int) -> str:
    words = [rng.choice(WORDS[slot]) if rng.random() < 0.5 else rng.choice(COMMON) for _ in range(n)]
    return " ".join(words)


def make_archive(tmp_path: str | Path, *, papers_per_window: int = 36, seed: int = 7, with_models: bool = True, with_traces: bool = True) -> TinyArchive:
    root = Path(tmp_path)
    arch = root / "archive"
    rng = random.Random(seed)
    origins = [date.fromisoformat(o) for o in ORIGINS]
    start = add_months(origins[0], -18)  # three history windows before the first origin
    end = add_months(origins[-1], 6)

    write_json(arch / "ARCHIVE.json", {
        "format": "rap-archive", "format_version": 1, "name": "tiny test archive",
        "description": "A synthetic archive built in code for rapgen's tests.",
        "created": "2026-01-01", "synthetic": True, "source": "generated", "license": "CC0-1.0",
    })
    write_json(arch / "benchmark" / "origins.json", {"origins": ORIGINS, "window_months": 6, "history_windows": 3, "strict_origin": "2025-01-01"})
    write_json(arch / "provenance" / "FINAL_PARAMETER_LEDGER_V1.json", LEDGER)
    write_jsonl(arch / "benchmark" / "fields.jsonl", [
        {"field_id": f, "name": f"Field {f.title()}", "definition": f"Research on {f}.", "split": s, "block_id": b, "eligible_pre2024": e}
        for f, s, b, e in FIELDS
    ])
    write_jsonl(arch / "benchmark" / "codebooks.jsonl", [
        {"field_id": f, "directions": [
            {"slot": slot, "name": f"{topic.title()} in {f}", "definition": f"Work on {topic} for {f}. It studies {topic} methods.",
             "include": f"papers about {topic}", "exclude": f"papers not about {topic}", "exemplars": []}
            for slot, topic in zip(SLOTS, TOPICS)
        ]} for f, *_ in FIELDS
    ])
    blocks: dict[str, list[str]] = {}
    for f, s, b, _ in FIELDS:
        blocks.setdefault(b, []).append(f)
    write_jsonl(arch / "benchmark" / "blocks.jsonl", [
        {"block_id": b, "split": next(s for f2, s, b2, _ in FIELDS if b2 == b), "fields": fs} for b, fs in sorted(blocks.items())
    ])

    # Papers: a drifting mixture over the eight directions per field.
    papers: dict[str, tuple] = {}
    rows = []
    counter = 0
    window_start = start
    w = 0
    while window_start < end:
        window_end = add_months(window_start, 6)
        span = (window_end - window_start).days
        for f_index, (fid, *_rest) in enumerate(FIELDS):
            weights = [1.0 + ((i + w + f_index) % 8) * (0.3 + 0.1 * f_index) for i in range(8)]
            for _ in range(papers_per_window):
                counter += 1
                when = window_start + timedelta(days=rng.randrange(span))
                arxiv_id = f"{when:%y%m}.{counter:05d}"
                primary = rng.choices(SLOTS, weights=weights)[0]
                papers[arxiv_id] = (f"{_text(rng, primary, 6)}", _text(rng, primary, 30), when, "cs.CL")
                r = rng.random()
                if r < 0.06:
                    rows.append((arxiv_id, fid, when, "other", None, "other"))
                elif r < 0.09:
                    rows.append((arxiv_id, fid, when, "other", None, "low_evidence"))
                elif r < 0.17:
                    second = SLOTS[(SLOTS.index(primary) + 1) % 8]
                    rows.append((arxiv_id, fid, when, primary, second, "boundary"))
                elif r < 0.21:
                    second = SLOTS[(SLOTS.index(primary) + 3) % 8]
                    rows.append((arxiv_id, fid, when, primary, second, "bridge"))
                else:
                    rows.append((arxiv_id, fid, when, primary, None, "single"))
                if fid == "alpha" and rng.random() < 0.3:  # overlap: also a member of beta
                    rows.append((arxiv_id, "beta", when, primary, None, "single"))
        window_start = window_end
        w += 1
    ids = sorted(papers)
    write_papers(arch / "benchmark" / "papers.parquet", {
        "arxiv_id": ids,
        "title": [papers[i][0] for i in ids],
        "abstract": [papers[i][1] for i in ids],
        "first_submitted": [papers[i][2] for i in ids],
        "categories": [papers[i][3] for i in ids],
    })
    rows.sort(key=lambda r: (r[1], r[0]))
    write_assignments(arch / "benchmark" / "assignments.parquet", {
        "arxiv_id": [r[0] for r in rows], "field_id": [r[1] for r in rows], "first_submitted": [r[2] for r in rows],
        "primary": [r[3] for r in rows], "secondary": [r[4] for r in rows], "assignment_type": [r[5] for r in rows],
    })
    for regime in ("fixed", "expanding"):
        lines = []
        for fid, *_ in FIELDS:
            for origin in origins:
                lo = add_months(origin, -6) if regime == "fixed" else None
                members = sorted(r[0] for r in rows if r[1] == fid and r[2] < origin and (lo is None or r[2] >= lo))
                dates = [papers[i][2] for i in members]
                lines.append({
                    "field_id": fid, "origin": origin.isoformat(), "regime": regime,
                    "date_from": lo.isoformat() if lo else None, "date_to": origin.isoformat(),
                    "n_papers": len(members),
                    "min_date": min(dates).isoformat() if dates else None,
                    "max_date": max(dates).isoformat() if dates else None,
                    "ids_sha256": hashlib.sha256("\n".join(members).encode()).hexdigest(),
                })
        write_jsonl(arch / "search" / f"manifest_{regime}.jsonl", lines)

    model_ids: tuple[str, ...] = ()
    if with_models:
        model_ids = ("model-a", "model-b")
        _write_model(arch, "model-a", rng, ["A0", "A1", "A2", "A3", "A4"], proprietary=True, cutoff="2024-06-01", release=None)
        _write_model(arch, "model-b", rng, ["A0", "A1", "A3"], proprietary=False, cutoff=None, release="2025-03-01")
        if with_traces:
            _write_traces(arch, "model-a", rows, origins)
    reseal(root)
    return TinyArchive(root, tuple(f for f, *_ in FIELDS), model_ids)


def _write_model(arch: Path, model_id: str, rng: random.Random, conditions: list[str], *, proprietary: bool, cutoff, release) -> None:
    write_json(arch / "models" / model_id / "model.json", {
        "model_id": model_id, "display_name": model_id.replace("-", " ").title(), "provider": "Test Provider",
        "proprietary": proprietary, "knowledge_cutoff": cutoff, "release_date": release,
        "cutoff_source": "test fixture", "diagnostic": "A2" in conditions, "submitted": "2026-01-15",
        "contact": "tests@example.org", "notes": "",
    })
    lines = []
    for condition in conditions:
        for fid, *_ in FIELDS:
            for origin in ORIGINS:
                if model_id == "model-a" and condition == "A1" and fid == "gamma" and origin == "2024-01-01":
                    lines.append({"field_id": fid, "origin": origin, "condition": condition, "weights": None, "status": "invalid", "reason": "no Finish call"})
                    continue
                weights = {s: rng.randint(0, 40) for s in SLOTS}
                if model_id == "model-a" and condition == "A3" and fid == "delta" and origin == "2023-07-01":
                    weights["D3"] = -5  # invalid unit: negative weight
                lines.append({"field_id": fid, "origin": origin, "condition": condition, "weights": weights})
    write_jsonl(arch / "models" / model_id / "predictions.jsonl", lines)


def _write_traces(arch: Path, model_id: str, rows: list[tuple], origins: list[date]) -> None:
    lines = []
    for fid, *_ in FIELDS[:2]:
        for origin in origins[:2]:
            lo = add_months(origin, -6)
            shard = sorted((r for r in rows if r[1] == fid and lo <= r[2] < origin), key=lambda r: (r[2], r[0]), reverse=True)
            for k in range(2):
                lines.append({
                    "field_id": fid, "origin": origin.isoformat(), "condition": "A1", "call_index": k,
                    "query": f"{TOPICS[k]} methods", "sort": "date", "date_from": None, "date_to": None,
                    "total_hits": len(shard), "returned_ids": [r[0] for r in shard[:8]],
                })
    write_jsonl(arch / "models" / model_id / "traces.jsonl", lines)


def reseal(root: str | Path) -> None:
    """Rewrite SHA256SUMS to list every regular file under archive/ as it is now."""
    root = Path(root)
    files = sorted(p for p, e in walk(str(root), ARCHIVE_DIR).items() if e.kind == "file")
    atomic_write_bytes(root / SUMS_NAME, format_sums({p: sha256_file(root / p) for p in files}))
