"""Replayable synthetic Search traces for the models of ``rapgen synth``.

The calls are made through the frozen Search backend (its public face only,
:mod:`rapgen.search`), so every recorded ``total_hits`` and id list replays
exactly. This is synthetic-data code: it lives with the generator, not in the
Search stage.
"""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from typing import Callable

import numpy as np

from rapgen.archive import TRACES_JSONL, Archive, add_months, model_file
from rapgen.io import write_jsonl
from rapgen.search import REGIME_OF_CONDITION, Backend, Shard, query_terms, trace_line

# Field indexes kept in memory at once while generating (each is released after use).
MAX_LOADED_FIELDS = 8


def _direction_words(directions) -> list[list[str]]:
    out = []
    for d in directions:
        words = query_terms(" ".join((d.name, d.definition, d.include)))
        out.append(words or query_terms(d.name) or ["research"])
    return out


def _search_units(archive: Archive, model_id: str) -> list[tuple[str, date, str]]:
    """The model's claimed Search units (A1–A4), sorted by field, origin, condition."""
    return sorted({(u.field_id, u.origin, u.condition) for u in archive.predictions(model_id) if u.condition in REGIME_OF_CONDITION})


def _query(rng: random.Random, backend: Backend, shard: Shard, members: np.ndarray, words: list[list[str]]) -> str:
    """1–4 words of a random paper of the shard (70 %) or of one of the field's directions."""
    pool = words[rng.randrange(8)]
    if len(members) and rng.random() < 0.7:
        paper = str(shard.index.ids[members[rng.randrange(len(members))]])
        title, abstract = backend.paper_texts([paper])[0]
        pool = list(dict.fromkeys(query_terms(title + " " + abstract))) or pool
    return " ".join(rng.sample(pool, min(len(pool), rng.randint(1, 4))))


def _bounds(rng: random.Random, origin: date, window: int, regime: str) -> tuple[str | None, str | None]:
    """No bounds (60 %), the recent window (25 %) or one month inside the shard (15 %)."""
    r = rng.random()
    if r < 0.25:
        return add_months(origin, -window).isoformat(), None
    if r < 0.40:
        back = rng.randint(1, window * (1 if regime == "fixed" else 4))
        return add_months(origin, -back).isoformat(), add_months(origin, -back + 1).isoformat()
    return None, None


def _model_lines(archive: Archive, backend: Backend, model_id: str, seed: int, mean_calls: float,
                 words: dict[str, list[list[str]]], loaded: list[str], tick: Callable[[int], None] | None) -> list[dict]:
    rng = random.Random(f"rapgen-traces:{seed}:{model_id}")
    nrng = np.random.default_rng(rng.getrandbits(64))
    window = archive.origins.window_months
    lines = []
    for fid, origin, condition in _search_units(archive, model_id):
        n_calls = int(min(backend.max_calls, 1 + nrng.poisson(max(mean_calls - 1.0, 0.0))))
        regime = REGIME_OF_CONDITION[condition]
        shard = backend.shard(fid, origin, regime)
        if fid not in loaded:
            loaded.append(fid)
        members = np.flatnonzero(shard.member)
        for k in range(n_calls):
            query = _query(rng, backend, shard, members, words[fid])
            sort = "relevance" if rng.random() < 0.75 else "date"
            date_from, date_to = _bounds(rng, origin, window, regime)
            args = {"query": query, "sort": sort, "date_from": date_from, "date_to": date_to}
            result = shard.search(args, top_k=backend.top_k, k1=backend.k1, b=backend.b)
            lines.append(trace_line(fid, origin, condition, k, args, result))
            if tick:
                tick(1)
        if len(loaded) > MAX_LOADED_FIELDS:  # keep memory flat: drop every other field's index
            for other in [f for f in loaded if f != fid]:
                backend.release(other)
            loaded[:] = [fid]
    return lines


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
    month. Each call is executed on its shard by the Search backend, so the
    recorded ``total_hits`` and ids replay exactly. Deterministic in (archive
    inputs, ``model_ids``, ``seed``). The archive need not be sealed yet.
    Returns calls written per model.
    """
    archive = Archive(root)
    backend = Backend(archive, cache_dir=cache_dir, jobs=jobs)
    words = {fid: _direction_words(dirs) for fid, dirs in archive.codebooks.items()}
    loaded: list[str] = []
    written: dict[str, int] = {}
    for mid in model_ids:
        lines = _model_lines(archive, backend, mid, seed, mean_calls, words, loaded, tick)
        write_jsonl(Path(root) / model_file(mid, TRACES_JSONL), lines)
        written[mid] = len(lines)
    return written
