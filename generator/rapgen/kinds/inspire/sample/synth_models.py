"""The synthetic models of a synthetic Inspire archive: search policies that really search.

Every call goes through the frozen backend (a :class:`MemoryBackend`), so each
recorded answer replays exactly. A model is a handful of rates: how often a
query aims at one of the target's antecedents (words of its title, as a model
that half-knows the literature would), how often it follows a paper an earlier
call returned, and otherwise words of the brief; then how many exposed
antecedents it keeps and how noisily it orders them. Some units fail and some
lists carry one bad entry (a version suffix, a duplicate, a string that is no
id, an unsurfaced or post-cutoff id, an unknown id, too many ids, nothing), so
every accounting path of the scorer is exercised. Each unit draws from its own
``default_rng((seed, model, instance, condition))``: the bytes do not depend on
how the units are spread over processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from rapgen.io import dumps_line
from rapgen.search import tokenize

from rapgen.kinds.inspire.archive import CorpusPaper, Instance, layout, shift_months
from rapgen.kinds.inspire.search import MemoryBackend, trace_line
from rapgen.kinds.inspire.search.parallel import fork_map, grouped

JUNK = ("version", "duplicate", "malformed", "unsurfaced", "post_cutoff", "unknown", "over_limit", "empty")
MALFORMED_CALL = 0.004  # calls with an unknown sort (recorded with their error, replayed like any other)


@dataclass(frozen=True)
class ModelSpec:
    model_id: str
    display: str
    provider: str
    proprietary: bool
    aim: float  # share of queries made from an antecedent's title
    follow: float  # share made from a paper an earlier call returned
    keep: float  # chance an exposed antecedent is submitted
    noise: float  # sd of the noise added to a gain when ordering the list
    fail: float  # share of failed units
    junk: float  # share of lists with one bad entry
    usd_per_call: float | None


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("synth-inspire-atlas", "Synthetic Atlas", "Synthetic Labs", True, 0.10, 0.30, 0.85, 1.0, 0.02, 0.15, 0.004),
    ModelSpec("synth-inspire-birch", "Synthetic Birch", "Synthetic Labs", True, 0.06, 0.35, 0.75, 2.0, 0.03, 0.20, 0.002),
    ModelSpec("synth-inspire-cedar", "Synthetic Cedar", "Open Synthetic", False, 0.035, 0.30, 0.65, 3.0, 0.04, 0.25, None),
    ModelSpec("synth-inspire-dune", "Synthetic Dune", "Open Synthetic", False, 0.015, 0.45, 0.50, 4.0, 0.06, 0.30, None),
)


def model_json(spec: ModelSpec, created: str) -> dict:
    return {
        "model_id": spec.model_id, "display_name": f"{spec.display} (synthetic)", "provider": spec.provider,
        "proprietary": spec.proprietary, "knowledge_cutoff": None, "release_date": None,
        "cutoff_source": "synthetic: invented by rapgen synth", "diagnostic": False, "submitted": created,
        "contact": "none (synthetic model)", "notes": "Synthetic search policy run by rapgen synth --kind inspire; not a real model.",
    }


@dataclass(frozen=True)
class World:
    """What every unit may read: the shared state the workers get by fork."""

    backend: MemoryBackend
    instances: Sequence[Instance]
    labels: Mapping[str, Mapping[str, float]]  # instance -> antecedent -> gain
    targets: Mapping[str, str]  # instance -> target arXiv id (a post-cutoff id)
    title_terms: Mapping[str, tuple[str, ...]]
    corpus: Mapping[str, CorpusPaper]
    models: Sequence[ModelSpec]
    units: Mapping[str, Sequence[tuple[int, str]]]  # instance -> (model number, condition) to run, in file order
    calls: int
    K: int
    seed: int


def _words(rng: np.random.Generator, pool: Sequence[str], lo: int, hi: int) -> str:
    n = min(len(pool), int(rng.integers(lo, hi + 1)))
    return " ".join(pool[k] for k in sorted(rng.choice(len(pool), size=n, replace=False).tolist()))


def _args(rng: np.random.Generator, spec: ModelSpec, world: World, inst: Instance, brief: list[str], seen: list[str]) -> dict:
    r = rng.random()
    labels = sorted(world.labels.get(inst.instance_id, {}))
    if r < spec.aim and labels:
        query = _words(rng, world.title_terms[labels[int(rng.integers(len(labels)))]], 2, 3)
    elif r < spec.aim + spec.follow and seen:
        query = _words(rng, world.title_terms[seen[int(rng.integers(len(seen)))]], 2, 3)
    else:
        query = _words(rng, brief, 1, 4)
    args = {"query": query, "sort": "date" if rng.random() < 0.08 else "relevance", "date_from": None, "date_to": None}
    bound = rng.random()
    if bound < 0.08:
        args["date_from"] = shift_months(inst.cutoff, -int(rng.integers(6, 37))).isoformat()
    elif bound < 0.12:
        args["date_to"] = shift_months(inst.cutoff, -int(rng.integers(1, 25))).isoformat()
    if rng.random() < MALFORMED_CALL:
        args["sort"] = "newest"
    return args


def _ranking(rng: np.random.Generator, spec: ModelSpec, world: World, inst: Instance, seen: list[str]) -> list[dict]:
    gains = world.labels.get(inst.instance_id, {})
    score = {}
    for aid in seen:
        if aid in gains and rng.random() >= spec.keep:
            continue  # an exposed antecedent left out
        score[aid] = gains.get(aid, 0.0) + spec.noise * float(rng.standard_normal())
    size = world.K if rng.random() < 0.8 else int(rng.integers(3, world.K + 1))
    ids = sorted(score, key=lambda a: (-score[a], a))[:size]
    if rng.random() < spec.junk:
        ids = _junk(rng, world, inst, ids, seen, JUNK[int(rng.integers(len(JUNK)))])
    return [{"arxiv_id": aid, "rationale": "synthetic"} if k % 2 == 0 else {"arxiv_id": aid} for k, aid in enumerate(ids)]


def _junk(rng: np.random.Generator, world: World, inst: Instance, ids: list[str], seen: list[str], kind: str) -> list[str]:
    at = int(rng.integers(0, len(ids) + 1))
    unseen = sorted(set(world.labels.get(inst.instance_id, {})) - set(seen))
    if kind == "version" and ids:
        ids[min(at, len(ids) - 1)] += "v2"
    elif kind == "duplicate" and ids:
        ids.insert(at, ids[0] + "v1")
    elif kind == "malformed":
        ids.insert(at, "see the related work")
    elif kind == "unsurfaced" and unseen:
        ids.insert(0, unseen[int(rng.integers(len(unseen)))])
    elif kind == "post_cutoff":
        ids.insert(at, world.targets[inst.instance_id])
    elif kind == "unknown":
        ids.insert(at, f"{inst.cutoff.year % 100:02d}{inst.cutoff.month:02d}.99999")
    elif kind == "over_limit":
        ids += [a for a in seen if a not in ids][:2] or ["see the related work", "and more"]
    elif kind == "empty":
        ids = []
    return ids


def run_unit(world: World, model: int, inst: Instance, condition: str) -> tuple[str, list[str]]:
    """One unit's predictions.jsonl line and traces.jsonl lines (without newlines)."""
    spec = world.models[model]
    rng = np.random.default_rng((world.seed, model, int(inst.instance_id.split("-")[1]), layout.CONDITIONS.index(condition)))
    brief = list(dict.fromkeys(tokenize(inst.brief_for(condition))))
    seen: list[str] = []
    known: set[str] = set()
    traces = []
    for k in range(world.calls):
        args = _args(rng, spec, world, inst, brief, seen)
        result = world.backend.search(inst.instance_id, args)
        traces.append(dumps_line(trace_line(inst.instance_id, condition, k, args, result)))
        for aid in result.ids:
            if aid not in known:
                known.add(aid)
                seen.append(aid)
    failed = rng.random() < spec.fail
    line = {
        "instance_id": inst.instance_id, "condition": condition, "status": "failed" if failed else "submitted",
        "ranking": None if failed else _ranking(rng, spec, world, inst, seen),
        "reason": "synthetic failure: no answer within the turn limit" if failed else None,
        "tokens_in": int(900 + 420 * world.calls + rng.integers(0, 400)), "tokens_out": int(40 * world.calls + rng.integers(0, 300)),
        "latency_s": round(float(2.0 + world.calls * rng.uniform(0.8, 2.2)), 3),
        "cost_usd": None if spec.usd_per_call is None else round(spec.usd_per_call * world.calls, 6),
    }
    return dumps_line(line), traces


def _run_group(world: World, positions: list[int]) -> list[tuple[int, int, str, str, list[str]]]:
    out = []
    for p in positions:
        inst = world.instances[p]
        for model, condition in world.units[inst.instance_id]:
            out.append((p, model, condition, *run_unit(world, model, inst, condition)))
    return out


def run_models(world: World, jobs: int | None = None) -> list[tuple[bytes, bytes]]:
    """Every model's (predictions.jsonl, traces.jsonl) bytes, units in (instance, condition)
    order; instances of one shard run together, over ``jobs`` forked workers."""
    groups = grouped(world.backend.key_of(i.instance_id) for i in world.instances)
    rows = sorted((r for found in fork_map(_run_group, groups, world, jobs) for r in found),
                  key=lambda r: (r[1], world.instances[r[0]].instance_id, layout.CONDITIONS.index(r[2])))
    out = []
    for model in range(len(world.models)):
        mine = [r for r in rows if r[1] == model]
        predictions = "".join(r[3] + "\n" for r in mine).encode("utf-8")
        traces = "".join(t + "\n" for r in mine for t in r[4]).encode("utf-8")
        out.append((predictions, traces))
    return out
