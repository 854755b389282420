"""Trace lines in SEARCH.md format, and replayable synthetic traces for ``rapgen synth``."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from typing import Callable, Mapping

from rapgen.search.analysis import query_terms
from rapgen.search.engine import REGIME_OF_CONDITION, Backend, SearchResult

TRACE_KEYS = ("field_id", "origin", "condition", "call_index", "query", "sort", "date_from", "date_to", "total_hits", "returned_ids")


def trace_line(field_id: str, origin: date, condition: str, call_index: int, args: Mapping, result: SearchResult) -> dict:
    """One traces.jsonl object for a call and its result (an error result records 0 hits, no ids)."""
    return {
        "field_id": field_id,
        "origin": origin.isoformat(),
        "condition": condition,
        "call_index": call_index,
        "query": args.get("query"),
        "sort": args.get("sort"),
        "date_from": args.get("date_from"),
        "date_to": args.get("date_to"),
        "total_hits": result.total_hits,
        "returned_ids": list(result.ids),
    }


def _direction_words(directions) -> list[list[str]]:
    out = []
    for d in directions:
        words = query_terms(" ".join((d.name, d.definition, d.include)))
        out.append(words or query_terms(d.name) or ["research"])
    return out


def generate_traces(
    root: str | Path,
    model_ids: list[str],
    seed: int,
    *,
    mean_calls: float = 2.8,
    cache_dir: str | Path | None = None,
    jobs: int = 1,
    tick: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write a replayable ``traces.jsonl`` for each model in ``model_ids``.

    Every Search unit a model's ``predictions.jsonl`` claims (conditions
    A1–A4, every field × origin) gets 1 + Poisson(``mean_calls`` − 1) calls
    (capped at the ledger's ``max_calls``). A query is 1–4 words of a random
    paper of the shard (70 %) or of one of the field's codebook directions
    (30 %), so hit counts range from none to most of the shard; the order is
    relevance (75 %) or date; the bounds are none, the recent window or one
    month. Each call is executed on its shard
    by :class:`Backend`, so the recorded ``total_hits`` and ids replay
    exactly. Deterministic in (archive inputs, ``model_ids``, ``seed``).
    The archive need not be sealed yet. Returns calls written per model.
    """
    import numpy as np

    from rapgen.archive import Archive, add_months
    from rapgen.archive.writer import write_jsonl

    archive = Archive(root)
    backend = Backend(archive, cache_dir=cache_dir, jobs=jobs)
    window = archive.origins.window_months
    words = {fid: _direction_words(dirs) for fid, dirs in archive.codebooks.items()}
    written: dict[str, int] = {}
    for mid in model_ids:
        rng = random.Random(f"rapgen-traces:{seed}:{mid}")
        nrng = np.random.default_rng(rng.getrandbits(64))
        units = sorted(
            {(u.field_id, u.origin, u.condition) for u in archive.predictions(mid) if u.condition in REGIME_OF_CONDITION},
            key=lambda u: (u[0], u[1], u[2]),
        )
        lines = []
        for fid, origin, condition in units:
            n_calls = int(min(backend.max_calls, 1 + nrng.poisson(max(mean_calls - 1.0, 0.0))))
            regime = REGIME_OF_CONDITION[condition]
            shard = backend.shard(fid, origin, regime)
            members = np.flatnonzero(shard.member)
            for k in range(n_calls):
                pool = words[fid][rng.randrange(8)]
                if len(members) and rng.random() < 0.7:
                    paper = str(shard.index.ids[members[rng.randrange(len(members))]])
                    title, abstract = backend.paper_texts([paper])[0]
                    pool = list(dict.fromkeys(query_terms(title + " " + abstract))) or pool
                query = " ".join(rng.sample(pool, min(len(pool), rng.randint(1, 4))))
                sort = "relevance" if rng.random() < 0.75 else "date"
                r = rng.random()
                date_from = date_to = None
                if r < 0.25:
                    date_from = add_months(origin, -window).isoformat()
                elif r < 0.40:
                    back = rng.randint(1, window * (1 if regime == "fixed" else 4))
                    date_from = add_months(origin, -back).isoformat()
                    date_to = add_months(origin, -back + 1).isoformat()
                args = {"query": query, "sort": sort, "date_from": date_from, "date_to": date_to}
                result = shard.search(args, top_k=backend.top_k, k1=backend.k1, b=backend.b)
                lines.append(trace_line(fid, origin, condition, k, args, result))
                if tick:
                    tick(1)
            if len(backend._fields) > 8:
                for f in list(backend._fields):
                    if f != fid:
                        backend.release(f)
        write_jsonl(Path(root) / "archive" / "models" / mid / "traces.jsonl", lines)
        written[mid] = len(lines)
    return written
