"""Replay: every recorded call re-executed on its shard must give the same answer.

A call reproduces when ``total_hits`` and the returned ids (same ids, same
order) are equal. :func:`replay_calls` runs the calls one by one through any
search callable; :func:`replay_files` gives the same answer on a
:class:`InspireBackend` for many traces files at once, grouping every call with
the others of its shard (calls with the same query share their scoring) and
spreading the shards over two forked workers. Anything else — an edited result, a result from another
corpus or engine — is an ``INVARIANT`` finding naming the call; ``submit check``
fails a pull request on any of them (INSPIRE.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate, groupby
from typing import Mapping, Sequence

from rapgen.archive import Category, Finding, ProblemKind

from rapgen.kinds.inspire.archive import Call
from rapgen.kinds.inspire.search.parallel import fork_map, grouped
from rapgen.kinds.inspire.search.shard import InspireBackend, SearchFn


@dataclass(frozen=True)
class ReplaySummary:
    n_calls: int
    n_reproduced: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.n_calls == self.n_reproduced


def _difference(call: Call, total: int, ids: Sequence[str]) -> str:
    if total != call.total_hits:
        return f"total_hits {call.total_hits} recorded, {total} on replay"
    if len(ids) != len(call.returned_ids):
        return f"{len(call.returned_ids)} ids recorded, {len(ids)} on replay"
    at = next(k for k, (x, y) in enumerate(zip(call.returned_ids, ids)) if x != y)
    return f"position {at + 1} holds {call.returned_ids[at]} in the trace, {ids[at]} on replay"


def _finding(call: Call, total: int, ids: Sequence[str], path: str) -> Finding:
    return Finding(path, call.line or None, Category.INVARIANT, f"{call.describe()} does not replay: {_difference(call, total, ids)}",
                   kind=ProblemKind.TRACE)


def replay_calls(calls: Sequence[Call], search: SearchFn, path: str = "traces.jsonl") -> ReplaySummary:
    """Re-execute every call through ``search`` and compare."""
    findings: list[Finding] = []
    same = 0
    for call in calls:
        result = search(call.instance_id, call.args)
        ids = tuple(result.ids)
        if result.total_hits == call.total_hits and ids == call.returned_ids:
            same += 1
            continue
        findings.append(_finding(call, result.total_hits, ids, path))
    return ReplaySummary(len(calls), same, findings)


def _replay_group(state: tuple[Sequence[Call], InspireBackend], positions: list[int]) -> list[tuple[int, int, tuple[str, ...]]]:
    """The calls of one shard that do not reproduce, as (position, total_hits, ids) on replay.
    Calls are visited by query, so the calls of one query are matched and scored once."""
    calls, backend = state
    order = sorted(positions, key=lambda p: (calls[p].query, p))
    out = []
    for _, run in groupby(order, key=lambda p: calls[p].query):
        run = list(run)
        results = backend.search_variants(calls[run[0]].instance_id, [calls[p].args for p in run])
        for p, result in zip(run, results):
            ids = tuple(result.ids)
            if result.total_hits != calls[p].total_hits or ids != calls[p].returned_ids:
                out.append((p, result.total_hits, ids))
    backend.release(backend.key_of(calls[positions[0]].instance_id))  # one group is one shard, done with
    return out


def replay_files(traces: Mapping[str, Sequence[Call]], backend: InspireBackend, *, jobs: int | None = None) -> dict[str, ReplaySummary]:
    """:func:`replay_calls` of several traces files (path -> its calls) on a
    :class:`InspireBackend` at once: the same summaries and findings (in call order),
    every call grouped with the others of its shard and run over ``jobs`` forked workers."""
    paths = list(traces)
    calls = [c for p in paths for c in traces[p]]
    start = dict(zip(paths, accumulate([0] + [len(traces[p]) for p in paths])))
    groups = grouped(backend.key_of(c.instance_id) for c in calls)
    bad = sorted(m for found in fork_map(_replay_group, groups, (calls, backend), jobs) for m in found)
    out = {}
    for path in paths:
        lo, hi = start[path], start[path] + len(traces[path])
        mine = [(p, total, ids) for p, total, ids in bad if lo <= p < hi]
        out[path] = ReplaySummary(hi - lo, hi - lo - len(mine), [_finding(calls[p], total, ids, path) for p, total, ids in mine])
    return out


def replay_parallel(calls: Sequence[Call], backend: InspireBackend, path: str = "traces.jsonl", *, jobs: int | None = None) -> ReplaySummary:
    """:func:`replay_calls` of one traces file on a :class:`InspireBackend`, grouped by shard over ``jobs`` workers."""
    return replay_files({path: calls}, backend, jobs=jobs)[path]


# ---------------------------------------------------------------- one release
@dataclass(frozen=True)
class ReleaseReplay:
    """Every recorded call of a release replayed: per traces file its summary, and per
    (model, condition) the calls made and reproduced."""

    summaries: dict[str, ReplaySummary]  # traces path -> summary
    units: dict[tuple[str, str], tuple[int, int]]  # (model, condition) -> (calls, reproduced)

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.summaries.values() for f in s.findings]

    @property
    def n_calls(self) -> int:
        return sum(s.n_calls for s in self.summaries.values())

    @property
    def n_reproduced(self) -> int:
        return sum(s.n_reproduced for s in self.summaries.values())

    @property
    def ok(self) -> bool:
        return self.n_calls == self.n_reproduced


def replay_release(release, *, backend: InspireBackend | None = None, models: Sequence[str] | None = None,
                   jobs: int | None = None, **backend_options) -> ReleaseReplay:
    """Re-execute every recorded call of ``release`` (an ``InspireRelease``) on its instance's
    shard; ``models`` limits it to those models (unknown ids are the caller's usage error).
    Without ``backend``, :func:`~.backend.release_backend` (``backend_options``: ``cache_dir``,
    ``memory``, ``log``); every shard is opened, and checked against the manifest, before
    the calls are spread over the workers."""
    if backend is None:
        from rapgen.kinds.inspire.search.backend import release_backend

        backend = release_backend(release, **backend_options)
    chosen = [m for m in release.model_ids if models is None or m in models]
    traces = {release.models[m].traces_path: release.models[m].calls for m in chosen}
    for instance_id in sorted({c.instance_id for calls in traces.values() for c in calls}):
        backend.shard(instance_id)
    summaries = replay_files(traces, backend, jobs=jobs)
    bad = {(f.path, f.line) for s in summaries.values() for f in s.findings}
    units: dict[tuple[str, str], tuple[int, int]] = {}
    for m in chosen:
        path = release.models[m].traces_path
        for call in release.models[m].calls:
            made, same = units.get((m, call.condition), (0, 0))
            units[(m, call.condition)] = (made + 1, same + ((path, call.line or None) not in bad))
    return ReleaseReplay(summaries, units)


def replay_lines(report: ReleaseReplay, *, limit: int = 5) -> list[str]:
    """What ``rapgen replay`` prints: one line per (model, condition), then the first differences."""
    lines = [f"{m} {c}: {same}/{made} calls reproduced" for (m, c), (made, same) in sorted(report.units.items())]
    for f in report.findings[:limit]:
        lines.append(f"  {f.path}:{f.line}: {f.detail}" if f.line else f"  {f.path}: {f.detail}")
    if len(report.findings) > limit:
        lines.append(f"  … and {len(report.findings) - limit} more")
    verdict = "every call reproduced" if report.ok else f"{report.n_calls - report.n_reproduced} calls do not reproduce"
    lines.append(f"{report.n_reproduced}/{report.n_calls} calls reproduced: {verdict}")
    return lines


def replay_record(report: ReleaseReplay, release) -> dict:
    """replay.json: the release replayed, per (model, condition) counts, every difference."""
    return {
        "kind": "inspire",
        "manifest_sha256": release.manifest_sha256,
        "n_calls": report.n_calls,
        "n_reproduced": report.n_reproduced,
        "ok": report.ok,
        "units": [{"model_id": m, "condition": c, "n_calls": made, "n_reproduced": same}
                  for (m, c), (made, same) in sorted(report.units.items())],
        "differences": [{"path": f.path, "line": f.line, "detail": f.detail} for f in report.findings],
    }


@dataclass(frozen=True)
class ReplayOutcome:
    """A release's replay as ``rapgen replay`` reports it: ``record`` (replay.json's content),
    the ``lines`` it prints, ``ok``, and ``failure``, the one-line reason naming the first call
    that does not reproduce (None when every call did)."""

    record: dict
    lines: list[str]
    ok: bool
    failure: str | None


def _failure(report: ReleaseReplay) -> str | None:
    if report.ok:
        return None
    first = report.findings[0]
    where = f"{first.path}:{first.line}" if first.line else first.path
    return (f"{report.n_calls - report.n_reproduced:,} of {report.n_calls:,} recorded Search calls did not reproduce; "
            f"the first: {where}: {first.detail}")


def replay_into(release, scores_dir=None, **options) -> ReplayOutcome | bool:
    """The replay step of ``rapgen build`` and ``rapgen replay``: False when no chosen model has calls,
    else the :class:`ReplayOutcome` (truthy), with ``replay.json`` written into ``scores_dir`` when given.
    ``options``: those of :func:`replay_release` (``models``, ``jobs``, ``cache_dir``, ``memory``, ``log``)."""
    import json
    from pathlib import Path

    from rapgen.io import atomic_write_bytes

    chosen = options.get("models")
    if not any(release.models[m].calls for m in release.model_ids if chosen is None or m in chosen):
        return False
    report = replay_release(release, **options)
    record = replay_record(report, release)
    if scores_dir is not None:
        Path(scores_dir).mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(scores_dir) / "replay.json", (json.dumps(record, indent=1) + "\n").encode("utf-8"))
    return ReplayOutcome(record, replay_lines(report), report.ok, _failure(report))
