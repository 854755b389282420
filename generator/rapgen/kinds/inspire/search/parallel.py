"""Many search calls on two cores: work grouped by shard, the backend shared by ``fork``.

An Inspire archive's calls spread over one shard per distinct cutoff, and each
shard is a mask over one in-memory index. :func:`fork_map` runs a function
over tasks in worker processes forked from the caller, so the workers see the
caller's index and records without copying or pickling them; each task is a
small picklable value (an index into that shared state) and each result should
be small too. Without ``fork`` (or with one job) the tasks run in this process,
with the same results in the same order.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_STATE: dict[str, Any] = {}


def default_jobs() -> int:
    """Two workers at most (the machines this runs on have two cores), never more than the CPUs."""
    return max(1, min(2, os.cpu_count() or 1))


def _run(task: tuple[int, Any]) -> tuple[int, Any]:
    number, value = task
    return number, _STATE["fn"](_STATE["state"], value)


def fork_map(fn: Callable[[Any, T], R], tasks: Sequence[T], state: Any, jobs: int | None = None) -> list[R]:
    """``[fn(state, t) for t in tasks]``, over ``jobs`` forked workers when there are
    several tasks; results in task order. Give big tasks first: workers take them in order."""
    jobs = jobs or default_jobs()
    if jobs <= 1 or len(tasks) <= 1 or "fork" not in mp.get_all_start_methods():
        return [fn(state, t) for t in tasks]
    _STATE.update(fn=fn, state=state)
    # The caller's objects stay out of the collector's passes while the workers run: a worker
    # then never walks, and so never copies, the pages it inherited.
    gc.freeze()
    try:
        out: list[Any] = [None] * len(tasks)
        with mp.get_context("fork").Pool(min(jobs, len(tasks))) as pool:
            for number, result in pool.imap_unordered(_run, list(enumerate(tasks)), chunksize=1):
                out[number] = result
            pool.close()
            pool.join()  # workers exit (and are reaped) normally
        return out
    finally:
        gc.unfreeze()
        _STATE.clear()


def grouped(keys: Iterable[Hashable]) -> list[list[int]]:
    """Positions grouped by key, biggest group first (ties: first seen), positions ascending."""
    groups: dict[Hashable, list[int]] = {}
    for pos, key in enumerate(keys):
        groups.setdefault(key, []).append(pos)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))
