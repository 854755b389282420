"""Inspire's kit: what a harness needs to run an agent on Inspire units against the frozen corpus.

Public surface: :func:`build_prompt` -> :class:`InspirePrompt` (system and user messages,
the ``search_papers`` and ``submit_ranking`` tools, ``prompt_sha256``), :func:`tool_schemas`,
:func:`template_sha256`; :class:`InspireSession` (the call cap, execution on the instance's
shard, trace recording); :func:`make_server` / :func:`serve_search` (the tool over loopback
HTTP) and :func:`serve_mcp` (the tool over MCP, bound to one unit); :func:`run_agent` with :class:`AgentConfig` -> :class:`RunSummary` (an OpenAI-compatible
endpoint, unit by unit, into a submission folder) and :func:`run_reference` (a deterministic
reference agent's folder).
"""

from rapgen.kinds.inspire.kit.prompt import (
    SEARCH_TOOL, SUBMIT_TOOL, InspirePrompt, build_prompt, canonical_sha256, template_sha256, tool_schemas,
)
from rapgen.kinds.inspire.kit.run import AgentConfig, RunSummary, ranking_of, run_agent, run_episode, run_reference, units_of
from rapgen.kinds.inspire.kit.serve import make_mcp_server, make_server, serve_mcp, serve_search
from rapgen.kinds.inspire.kit.commands import KIT
from rapgen.kinds.inspire.kit.session import InspireSession, recorded_arguments

__all__ = [
    "SEARCH_TOOL", "SUBMIT_TOOL", "InspirePrompt", "build_prompt", "canonical_sha256", "template_sha256", "tool_schemas",
    "AgentConfig", "RunSummary", "ranking_of", "run_agent", "run_episode", "run_reference", "units_of",
    "make_mcp_server", "make_server", "serve_mcp", "serve_search", "KIT", "InspireSession", "recorded_arguments",
]
