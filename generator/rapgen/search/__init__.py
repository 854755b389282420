"""The frozen Search backend and exact replay of recorded calls (a sibling of scores:
neither imports the other; the Search evidence statistics are scores' diagnostics).

Public surface:

* :class:`Backend` — shards of one archive, built on demand into the cache;
  ``backend.search(field_id, origin, regime, args)`` runs one Search call
  (``args``: ``query``, ``sort``, ``date_from``, ``date_to``) and returns a
  :class:`SearchResult` (an error result for a malformed call).
* :class:`GroupedBackend` over :class:`GroupIndexes` — the kind-neutral front: shards
  keyed (group, date_from, date_to) (KINDS.md §7), indexes in memory or in the
  cache, each shard checked against the kind's manifest (:class:`ManifestShard`).
* :func:`validate_call` — the one validator of a Search call's arguments
  (:data:`SORTS`, the strict ``YYYY-MM-DD`` date rule of :func:`parse_strict_date`);
  raises :class:`CallProblem` with a one-line reason and ``recordable``;
  :func:`call_is_malformed` applies it to a recorded trace call.
* :func:`resolve_unit` — check a user-given field id and origin (a usage
  error listing the choices if either is unknown).
* :func:`replay_archive` / :class:`ReplayReport` / :func:`format_summary` /
  :func:`write_replay` — re-execute every recorded call; :func:`write_reruns` — the
  Search-option counterfactual's re-run ids (``option_reruns.json``) for the scorer.
* :func:`trace_line` — one traces.jsonl object for a call and its result; :func:`call_keys` — the
  keys every kind's trace line ends with.
* :func:`tokenize`, :func:`query_terms`, :data:`FIELDS`, :data:`SORTS`,
  :data:`CALL_KEYS` — the frozen analyzer and schema constants.
"""

from __future__ import annotations

from pathlib import Path

from rapgen.search.analysis import CALL_KEYS, ENGINE_VERSION, FIELDS, SORTS, query_terms, tokenize
from rapgen.search.cache import resolve_cache_dir
from rapgen.search.units import resolve_unit
from rapgen.search.engine import (
    REGIME_OF_CONDITION,
    STRICT_DATE,
    Backend,
    CallArgs,
    CallProblem,
    SearchResult,
    Shard,
    call_is_malformed,
    parse_strict_date,
    validate_call,
)
from rapgen.search.grouped import GroupedBackend, GroupIndexes, ManifestShard
from rapgen.search.replay import OPTION_RERUNS_JSON, ReplayReport, default_jobs, format_summary, replay_archive, write_reruns
from rapgen.search.spec import SearchSpec
from rapgen.search.traces import call_keys, trace_line

__all__ = [
    "SearchSpec", "GroupedBackend", "GroupIndexes", "ManifestShard", "Backend", "CallArgs", "CallProblem", "SearchResult", "Shard", "validate_call", "call_is_malformed", "parse_strict_date", "STRICT_DATE",
    "resolve_unit", "REGIME_OF_CONDITION",
    "ReplayReport", "replay_archive", "format_summary", "write_replay", "write_reruns", "OPTION_RERUNS_JSON", "default_jobs",
    "call_keys", "trace_line", "resolve_cache_dir",
    "CALL_KEYS", "ENGINE_VERSION", "FIELDS", "SORTS", "query_terms", "tokenize",
]


def write_replay(report: ReplayReport, out_dir: str | Path) -> Path:
    """Write ``replay.json`` into ``out_dir`` (atomically) and return its path."""
    from rapgen.io import SCORES_OUTPUT, guard_output_dir, write_json

    path = Path(guard_output_dir(out_dir, SCORES_OUTPUT)) / "replay.json"
    write_json(path, report.data)
    return path

