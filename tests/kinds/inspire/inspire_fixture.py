"""INSPIRE.md §5's worked example as records, and helpers to write Inspire files as bytes."""

from __future__ import annotations

import io
import json
from datetime import date

from rapgen.kinds.inspire.archive import (
    Call, CorpusPaper, Instance, Judgement, Prediction, RankedEntry, Target, brief_digest, cutoff_of, layout, ledger_from,
)

LEDGER = ledger_from(layout.LEDGER)
A, B, C, D, E = "2301.00011", "2302.00022", "2303.00033", "2304.00044", "2305.00055"


def X(n: int) -> str:
    return f"2399.0000{n}"


T_P = date(2025, 6, 15)  # every target's first posting; cutoff 2025-03-15
CUTOFF = cutoff_of(T_P)
# label id -> (tier, role, gain)
LABELS = {
    "insp-0001": {A: ("T3", "conceptual", 7), B: ("T2", "conceptual", 3), C: ("T2", "infrastructural", 2),
                  D: ("T1", "conceptual", 1), E: ("T1", "infrastructural", 0.5)},
    "insp-0002": {"2306.00066": ("T2", "conceptual", 3), "2307.00077": ("T2", "infrastructural", 2),
                  "2308.00088": ("T1", "conceptual", 1)},
    "insp-0003": {"2309.00099": ("T3", "conceptual", 7), "2310.00100": ("T3", "infrastructural", 4),
                  "2311.00111": ("T1", "conceptual", 1)},
}
VIEWS = {"insp-0001": "clean", "insp-0002": "flagged", "insp-0003": "clean"}


def instances() -> list[Instance]:
    out = []
    for n, iid in enumerate(sorted(LABELS), start=1):
        brief = f"Brief {n}: we want to solve a problem. What prior work should we read to make progress on this problem?"
        out.append(Instance(iid, "eval", CUTOFF, brief, f"Brief {n}.", brief_digest(brief), n))
    return out


def targets() -> list[Target]:
    return [
        Target(iid, f"2506.0{n:04d}", f"Target {n}", "An abstract.", T_P, "topic-b" if n == 2 else "topic-a",
               VIEWS[iid] == "flagged", 0.9 if VIEWS[iid] == "flagged" else 0.1, 0.1, VIEWS[iid])
        for n, iid in enumerate(sorted(LABELS), start=1)
    ]


def judgements() -> list[Judgement]:
    return [Judgement(iid, aid, tier, role, float(gain), 3, 3, "r") for iid, labels in sorted(LABELS.items())
            for aid, (tier, role, gain) in sorted(labels.items())]


def corpus() -> dict[str, CorpusPaper]:
    ids = {aid for labels in LABELS.values() for aid in labels} | {X(n) for n in range(1, 6)}
    return {i: CorpusPaper(i, f"Title {i}", f"Abstract {i}", date(2024, 1, 1), "cs.CL") for i in sorted(ids)}


def _call(iid: str, k: int, ids: list[str]) -> Call:
    return Call(iid, "detailed", k, f"query {k}", "relevance", None, None, len(ids) + 3, tuple(ids), k + 1)


def calls() -> list[Call]:
    return [
        _call("insp-0001", 0, [B, X(1), D, X(2)]), _call("insp-0001", 1, [A, B, X(3)]), _call("insp-0001", 2, [E]),
        _call("insp-0002", 0, [X(4)]),
        _call("insp-0003", 0, ["2309.00099", X(5)]),
    ]


def _pred(iid: str, status: str, ids: list[str] | None) -> Prediction:
    ranking = None if ids is None else tuple(RankedEntry(i) for i in ids)
    return Prediction(iid, "detailed", status, ranking, None if ids is not None else "no answer", 10, 10, 1.0, None)


def predictions() -> list[Prediction]:
    return [
        _pred("insp-0001", "submitted", [X(1) + "v2", B, A + "v1", B + "v3", C, E, "not-an-id"]),
        _pred("insp-0002", "submitted", [X(4)]),
        _pred("insp-0003", "failed", None),
    ]


# ---------------------------------------------------------------- bytes of files
def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def parquet(columns: dict[str, list], types: dict[str, str]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {"string": pa.string(), "date": pa.date32(), "bool": pa.bool_(), "double": pa.float64(), "int": pa.int64()}
    table = pa.table({k: pa.array(v, type=kinds[types[k]]) for k, v in columns.items()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def instance_line(inst: Instance) -> dict:
    return {"instance_id": inst.instance_id, "split": inst.split, "cutoff": inst.cutoff.isoformat(), "brief": inst.brief,
            "brief_terse": inst.brief_terse, "brief_sha256": inst.brief_sha256}


def prediction_line(p: Prediction) -> dict:
    return {"instance_id": p.instance_id, "condition": p.condition, "status": p.status,
            "ranking": None if p.ranking is None else [{"arxiv_id": e.arxiv_id} for e in p.ranking],
            "reason": p.reason, "tokens_in": p.tokens_in, "tokens_out": p.tokens_out, "latency_s": p.latency_s, "cost_usd": p.cost_usd}


def call_line(c: Call) -> dict:
    return {"instance_id": c.instance_id, "condition": c.condition, "call_index": c.call_index, "query": c.query, "sort": c.sort,
            "date_from": c.date_from, "date_to": c.date_to, "total_hits": c.total_hits, "returned_ids": list(c.returned_ids)}


# ---------------------------------------------------------------- the example as a sealed archive
def model_json(model_id: str, **extra) -> dict:
    return {"model_id": model_id, "display_name": model_id, "provider": "tests", "proprietary": False, "knowledge_cutoff": None,
            "release_date": None, "cutoff_source": "none", "diagnostic": False, "submitted": "2026-01-01", "contact": "",
            "notes": "the worked example of INSPIRE.md §5", **extra}


def write_example_archive(root, *, models: dict | None = None):
    """INSPIRE.md §5 as an archive under ``root`` (SHA256SUMS + archive/), verifiable and scorable:
    one model ``m`` with the example's predictions and calls (``models``: model id -> (predictions, calls))."""
    from pathlib import Path

    from rapgen.kinds.inspire.sample.files import seal, write_benchmark, write_model

    root = Path(root)
    info = {"format": layout.FORMAT, "format_version": 1, "name": "Inspire worked example", "description": "INSPIRE.md §5",
            "created": "2026-01-01", "synthetic": True, "source": "tests", "license": "MIT"}
    tgt = [{"instance_id": t.instance_id, "arxiv_id": t.arxiv_id, "title": t.title, "abstract": t.abstract,
            "first_submitted": t.first_submitted, "topic": t.topic, "audit_named": t.audit_named,
            "audit_confidence": t.audit_confidence, "title_overlap": t.title_overlap, "view": t.view} for t in targets()]
    jud = [{"instance_id": j.instance_id, "arxiv_id": j.arxiv_id, "tier": j.tier, "role": j.role, "gain": j.gain,
            "n_votes": j.n_votes, "agreement": j.agreement, "rationale": j.rationale} for j in judgements()]
    papers = corpus()
    ref = [{"instance_id": j.instance_id, "arxiv_id": j.arxiv_id, "first_submitted": papers[j.arxiv_id].first_submitted,
            "status": "graded", "tier": j.tier, "role": j.role} for j in judgements()]
    write_benchmark(root, info, {"generator": "tests"}, instances(), tgt, jud, ref, papers)
    for model_id, (preds, cs) in (models or {"m": (predictions(), calls())}).items():
        write_model(root, model_json(model_id), jsonl([prediction_line(p) for p in preds]), jsonl([call_line(c) for c in cs]))
    seal(root)
    return root
