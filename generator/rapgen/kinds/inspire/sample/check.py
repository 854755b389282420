"""Read a freshly built Inspire archive back with the kind's own parsers and checks.

The builders call :func:`check_built` before they move anything into place, so
an archive they write always parses clean, holds every invariant and replays.
"""

from __future__ import annotations

from pathlib import Path

from rapgen.errors import RapgenError

from rapgen.kinds.inspire.archive.read import read_files
from rapgen.kinds.inspire.scores.columns import Codes, label_table, unit_columns
from rapgen.kinds.inspire.search import InspireBackend, SearchFn, replay_calls, replay_files


def check_built(root: Path, search: SearchFn, *, jobs: int | None = None) -> dict:
    """Every finding of the archive under ``root`` (raised as one error), else counts: calls,
    calls reproduced and each model's accounting of its detailed units. On a
    :class:`InspireBackend` the replay runs grouped by shard over ``jobs`` workers."""
    files = read_files(root)
    findings = list(files.findings)
    if files.ledger is None:
        raise RapgenError(f"the built archive fails its own checks: {findings[0].path}: {findings[0].detail}")
    traces = {m.traces_path: m.calls for m in files.models.values()}
    if isinstance(search, InspireBackend):
        replays = replay_files(traces, search, jobs=jobs)
    else:
        replays = {path: replay_calls(calls, search, path) for path, calls in traces.items()}
    counts: dict = {"calls": 0, "reproduced": 0, "models": {}}
    labels, codes = label_table(files.instances, files.judgements), Codes()
    cutoffs = {i.instance_id: i.cutoff for i in files.instances}
    for m in files.models.values():
        replay = replays[m.traces_path]
        findings += replay.findings
        counts["calls"] += replay.n_calls
        counts["reproduced"] += replay.n_reproduced
        cols = unit_columns(m.model_id, "detailed", labels, m.predictions, m.calls, files.corpus, cutoffs, K=files.ledger.K, codes=codes)
        counts["models"][m.model_id] = {k: int(v.sum()) for k, v in cols.counts.items()}
    if findings:
        first = sorted(findings)[0]
        raise RapgenError(f"the built archive fails its own checks ({len(findings)} findings), first: {first.path}: {first.detail}")
    return counts
