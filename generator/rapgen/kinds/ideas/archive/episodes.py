"""``episodes.jsonl`` and ``futures.jsonl`` (IDEAS.md §1), rebuilt from the assignment.

An episode (τ, t) exists iff its history H(τ, t) = {p ∈ τ : start ≤ d(p) < t}
holds at least ``min_history`` papers; its future is
F(τ, t) = {p ∈ τ : t ≤ d(p) ≤ e(t)}, d = ``first_submitted``. Both are
identified by the SHA-256 of their ids (sorted by bytes, joined by ``\\n``),
as ARCHIVE.md's shards are. Futures exist for resolved cutoffs only.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from rapgen.archive import Finding
from rapgen.kinds.ideas.archive.assignment import Assignment
from rapgen.kinds.ideas.archive.config import Config, future_end
from rapgen.kinds.ideas.archive.lines import Bad, day, digest, integer, invariant, keys, read_lines, string, unique
from rapgen.kinds.ideas.archive.topics import TOPIC_ID

EPISODE_KEYS = ("episode_id", "topic_id", "cutoff", "n_history", "history_sha256")
FUTURE_KEYS = ("episode_id", "future_to", "n_future", "future_sha256")
EPISODE_ID = re.compile(r"^([a-z0-9][a-z0-9-]*)@(\d{4}-\d{2}-01)$")


def episode_id(topic_id: str, cutoff: date) -> str:
    return f"{topic_id}@{cutoff.isoformat()}"


@dataclass(frozen=True)
class Episode:
    episode_id: str
    topic_id: str
    cutoff: date
    n_history: int
    history_sha256: str


@dataclass(frozen=True)
class Future:
    episode_id: str
    future_to: date
    n_future: int
    future_sha256: str


@dataclass(frozen=True)
class Pools:
    """Each episode's history and future ids, sorted by bytes (the rebuilt truth)."""

    episodes: tuple[Episode, ...]
    futures: tuple[Future, ...]
    history: dict[str, tuple[str, ...]]
    future: dict[str, tuple[str, ...]]


def _ordered_ids_sha256(ids: Sequence[str]) -> str:
    """``shard_ids_sha256`` of ids already in byte order (it would sort them again)."""
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def build_pools(assignments: Iterable[Assignment], topic_ids: Sequence[str], config: Config,
                cutoffs: Sequence[date], resolved: Sequence[date]) -> Pools:
    """Episodes of ``cutoffs`` (those with ≥ ``min_history`` history papers) and the futures
    of those among them whose cutoff is ``resolved``; ordered by topic (file order), then cutoff."""
    import pyarrow as pa
    import pyarrow.compute as pc

    members: dict[str, list[tuple[str, date]]] = defaultdict(list)
    for a in assignments:
        members[a.topic_id].append((a.arxiv_id, a.first_submitted))
    resolved_set = set(resolved)
    episodes, futures, history, future = [], [], {}, {}
    start = config.start.toordinal()
    for topic_id in topic_ids:
        # the topic's members once in byte order of their ids, then one date mask per cutoff
        rows = members[topic_id]
        order = pc.sort_indices(pa.array([pid for pid, _ in rows], type=pa.string())).to_numpy()  # Arrow sorts strings by their bytes
        ids = np.empty(len(rows), dtype=object)
        ids[:] = [rows[i][0] for i in order.tolist()]
        d = np.array([rows[i][1].toordinal() for i in order.tolist()], dtype=np.int64)
        for t in cutoffs:
            h = tuple(ids[(start <= d) & (d < t.toordinal())].tolist())
            if len(h) < config.min_history:
                continue
            eid = episode_id(topic_id, t)
            episodes.append(Episode(eid, topic_id, t, len(h), _ordered_ids_sha256(h)))
            history[eid] = h
            if t in resolved_set:
                end = future_end(t, config.horizon_months)
                f = tuple(ids[(t.toordinal() <= d) & (d <= end.toordinal())].tolist())
                futures.append(Future(eid, end, len(f), _ordered_ids_sha256(f)))
                future[eid] = f
    return Pools(tuple(episodes), tuple(futures), history, future)


def _episode(obj: dict, _line: int) -> Episode:
    keys(obj, EPISODE_KEYS)
    eid = string(obj, "episode_id")
    topic_id, cutoff = string(obj, "topic_id", pattern=TOPIC_ID), day(obj, "cutoff", first_of_month=True)
    if eid != episode_id(topic_id, cutoff):
        raise Bad(f"episode_id {eid!r} is not {episode_id(topic_id, cutoff)!r} (<topic_id>@<cutoff>)")
    return Episode(eid, topic_id, cutoff, integer(obj, "n_history", 0), digest(obj, "history_sha256"))


def _future(obj: dict, _line: int) -> Future:
    keys(obj, FUTURE_KEYS)
    eid = string(obj, "episode_id", pattern=EPISODE_ID)
    return Future(eid, day(obj, "future_to"), integer(obj, "n_future", 0), digest(obj, "future_sha256"))


def _eid(rec) -> str:
    return f"episode {rec.episode_id}"


def parse_episodes(path: str, data: bytes) -> tuple[list[tuple[int, Episode]], list[Finding]]:
    findings: list[Finding] = []
    return unique(path, read_lines(path, data, findings, _episode), _eid, _eid, findings), findings


def parse_futures(path: str, data: bytes) -> tuple[list[tuple[int, Future]], list[Finding]]:
    findings: list[Finding] = []
    return unique(path, read_lines(path, data, findings, _future), _eid, _eid, findings), findings


def _compare(path: str, rows: Sequence[tuple[int, object]], truth: Sequence[object], what: str, fields: Sequence[str]) -> list[Finding]:
    want = {r.episode_id: r for r in truth}  # type: ignore[attr-defined]
    out: list[Finding] = []
    seen = set()
    for line, rec in rows:
        eid = rec.episode_id  # type: ignore[attr-defined]
        seen.add(eid)
        if eid not in want:
            out.append(invariant(path, line, f"{eid} is not {what} of this archive (its topic or cutoff is unknown, or its history is below min_history)"))
            continue
        for name in fields:
            got, exp = getattr(rec, name), getattr(want[eid], name)
            if got != exp:
                out.append(invariant(path, line, f"{eid}: {name} does not match the rebuilt {what}", expected=str(exp), actual=str(got)))
                break
    for eid in want:
        if eid not in seen:
            out.append(invariant(path, None, f"{eid} is missing: the rebuilt assignment gives it as {what}"))
    return out


def check_episodes(path: str, rows: Sequence[tuple[int, Episode]], pools: Pools) -> list[Finding]:
    """Every line equals the rebuilt episode; none missing, none extra."""
    return _compare(path, rows, pools.episodes, "an episode", ("topic_id", "cutoff", "n_history", "history_sha256"))


def check_futures(path: str, rows: Sequence[tuple[int, Future]], pools: Pools) -> list[Finding]:
    """Every line equals the rebuilt future of a resolved episode (``future_to`` = e(t))."""
    return _compare(path, rows, pools.futures, "a resolved episode's future", ("future_to", "n_future", "future_sha256"))
