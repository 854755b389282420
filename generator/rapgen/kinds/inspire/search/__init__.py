"""Inspire's search side: an instance's shard, trace replay and the reference agents.

Public surface: :data:`SearchFn` / :class:`CallResult` (the abstract search
callable), :class:`ShardKey` / :func:`shard_key` / :data:`CORPUS_FILES` (KINDS.md
§7's shard definition), :class:`InspireBackend` (instances on the shared
``rapgen.search.GroupedBackend``), :class:`MemoryBackend` (one over an in-memory
corpus), :func:`corpus_rows`, :func:`manifest_shards`, :func:`trace_line`; :func:`replay_calls` / :class:`ReplaySummary`, :func:`replay_files`, :func:`replay_parallel`
(the same replay grouped by shard over forked workers: :func:`fork_map`, :func:`grouped`);
a release's replay: :func:`release_backend`, :func:`replay_release` -> :class:`ReleaseReplay`,
:func:`replay_lines`, :func:`replay_record`, :func:`replay_into` (replay.json, a :class:`ReplayOutcome`); :data:`SEARCH_TOOL`;
:func:`bm25_brief`, :func:`keyword_loop`, :func:`loop_queries`,
:data:`REFERENCE_AGENTS`, :func:`run_agent`, :class:`AgentRun`, :func:`reference_model_json` (with :data:`AGENT_NOTES`).
"""

from rapgen.kinds.inspire.search.agents import (
    AGENT_NOTES, REFERENCE_AGENTS, AgentRun, bm25_brief, keyword_loop, loop_queries, reference_model_json, run_agent,
)
from rapgen.kinds.inspire.search.parallel import default_jobs, fork_map, grouped
from rapgen.kinds.inspire.archive.layout import SEARCH_TOOL
from rapgen.kinds.inspire.search.backend import manifest_shards, release_backend
from rapgen.kinds.inspire.search.replay import (
    ReleaseReplay, ReplayOutcome, ReplaySummary, replay_calls, replay_files, replay_into, replay_lines, replay_parallel, replay_record, replay_release,
)
from rapgen.kinds.inspire.search.shard import CORPUS_FILES, CallResult, InspireBackend, MemoryBackend, corpus_rows, SearchFn, ShardKey, shard_key, trace_line

__all__ = [
    "AGENT_NOTES", "reference_model_json", "REFERENCE_AGENTS", "AgentRun", "bm25_brief", "keyword_loop", "loop_queries", "run_agent",
    "SEARCH_TOOL", "release_backend", "ReleaseReplay", "ReplayOutcome", "replay_into", "replay_lines", "replay_record", "replay_release",
    "default_jobs", "fork_map", "grouped", "ReplaySummary", "replay_calls", "replay_files", "replay_parallel", "CORPUS_FILES", "CallResult", "InspireBackend", "MemoryBackend", "corpus_rows", "manifest_shards", "SearchFn", "ShardKey", "shard_key", "trace_line",
]
