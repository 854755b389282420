"""Inspire's search side: an instance's shard, trace replay and the reference agents.

Public surface: :data:`SearchFn` / :class:`CallResult` (the abstract search
callable), :class:`ShardKey` / :func:`shard_key` / :data:`CORPUS_FILES` (KINDS.md
§7's shard definition), :class:`MemoryBackend` (exact shards over an in-memory
corpus), :func:`trace_line`; :func:`replay_calls` / :class:`ReplaySummary`, :func:`replay_files`, :func:`replay_parallel`
(the same replay grouped by shard over forked workers: :func:`fork_map`, :func:`grouped`);
:func:`bm25_brief`, :func:`keyword_loop`, :func:`loop_queries`,
:data:`REFERENCE_AGENTS`, :func:`run_agent`, :class:`AgentRun`.
"""

from rapgen.kinds.inspire.search.agents import REFERENCE_AGENTS, AgentRun, bm25_brief, keyword_loop, loop_queries, run_agent
from rapgen.kinds.inspire.search.parallel import default_jobs, fork_map, grouped
from rapgen.kinds.inspire.search.replay import ReplaySummary, replay_calls, replay_files, replay_parallel
from rapgen.kinds.inspire.search.shard import CORPUS_FILES, CallResult, MemoryBackend, SearchFn, ShardKey, shard_key, trace_line

__all__ = [
    "REFERENCE_AGENTS", "AgentRun", "bm25_brief", "keyword_loop", "loop_queries", "run_agent",
    "default_jobs", "fork_map", "grouped", "ReplaySummary", "replay_calls", "replay_files", "replay_parallel", "CORPUS_FILES", "CallResult", "MemoryBackend", "SearchFn", "ShardKey", "shard_key", "trace_line",
]
