"""The submitter's kit: everything a model's harness needs to run the benchmark.

Public surface:

- :func:`build_prompt` / :class:`Prompt` / :func:`tool_schemas` /
  :func:`template_sha256` — the benchmark's prompts and tool schemas for one
  unit, each with its ``prompt_sha256`` (``rapgen prompt``).
- :class:`SearchSession` / :class:`SearchOutcome` / :class:`ToolError` — the one
  Search tool: schema, temporal bounds, the call cap and trace recording.
- :func:`serve_search` (loopback HTTP) and :func:`serve_mcp` (Model Context
  Protocol over stdio or streamable HTTP) — the same session for any harness.
- :func:`run_agent` / :class:`AgentConfig` / :class:`RunSummary` — drive an
  OpenAI-compatible chat endpoint through A0–A4 (``rapgen agent run``).
- :func:`run_readouts` / :func:`run_oracle` — the same for the frozen-evidence
  readouts and the exact-history units (``--readout``, ``--oracle``), with
  :func:`build_readout_prompt` / :func:`build_oracle_prompt` and the template
  hashes their records carry (:func:`readout_template_sha256`,
  :func:`oracle_template_sha256`).
- :func:`init_submission`, :func:`model_record`, :func:`write_model_json` — the
  one model.json writer (``rapgen submit init``, the driver, the reference agents).
- :class:`KitSpec` / :class:`KitCommand` — what the kit's commands read of a kind
  (KINDS.md §7), and RAP's steps (:func:`rap_prompt`, :func:`rap_serve`, :func:`rap_run`).
- :class:`ChatClient` (with :class:`EndpointError`, :class:`ReplyProblem`,
  :func:`read_turn`, :func:`decode_json`) and :class:`LineAppender` — the
  OpenAI-compatible client and the durable JSONL journal, for other drivers
  (the Ideas evaluator).

The kit imports the archive and Search stages only through their public faces.
"""

from rapgen.kit.chat import ChatClient, EndpointError, ReplyProblem, decode_json, read_turn
from rapgen.kit.journal import LineAppender
from rapgen.kit.prompt import FINISH_TOOL_NAME, SEARCH_TOOL_NAME, Messages, Prompt, build_prompt, canonical_sha256, template_sha256, tool_schemas
from rapgen.kit.scaffold import check_model_id, init_submission, model_json_bytes, model_record, write_model_json
from rapgen.kit.session import CallLog, SearchOutcome, SearchSession, ToolError, backend_executor, recorded_call
from rapgen.kit.runner import AgentConfig, RunSummary, UnitWriter, run_agent
from rapgen.kit.serve import GuardedHandler, bind_loopback, check_loopback, open_traces, serve_search, serve_until_interrupted
from rapgen.kit.intervention_prompts import (
    InterventionPrompt,
    build_oracle_prompt,
    build_readout_prompt,
    oracle_template_sha256,
    readout_template_sha256,
)
from rapgen.kit.intervention_runner import run_oracle, run_readouts
from rapgen.kit.intervention_inputs import EvidenceBuilder, OracleBlocks, read_model_folder, readout_jobs
from rapgen.kit.prompt import unit_context
from rapgen.kit.spec import KitCommand, KitSpec, given_options
from rapgen.kit.commands import (
    PROMPT_OPTIONS, RUN_OPTIONS, SERVE_OPTIONS, Report, parse_date_option, rap_prompt, rap_run, rap_serve, safe, split_values,
)


from rapgen.kit.mcp_server import refuse_existing_traces, run_mcp, tool_server  # the mcp package is imported on use


def serve_mcp(*args, **kwargs):
    """See :func:`rapgen.kit.mcp_server.serve_mcp` (imported lazily: the ``mcp`` package is heavy)."""
    from rapgen.kit.mcp_server import serve_mcp as serve

    return serve(*args, **kwargs)


__all__ = [
    "FINISH_TOOL_NAME", "SEARCH_TOOL_NAME", "Messages", "Prompt", "build_prompt", "canonical_sha256", "template_sha256", "tool_schemas",
    "check_model_id", "init_submission", "model_json_bytes", "model_record", "write_model_json",
    "CallLog", "SearchOutcome", "SearchSession", "ToolError", "backend_executor", "recorded_call",
    "AgentConfig", "RunSummary", "UnitWriter", "run_agent", "GuardedHandler", "refuse_existing_traces", "run_mcp", "tool_server", "bind_loopback", "check_loopback", "open_traces", "serve_search", "serve_until_interrupted", "serve_mcp",
    "InterventionPrompt", "build_readout_prompt", "build_oracle_prompt", "readout_template_sha256", "oracle_template_sha256",
    "run_readouts", "run_oracle",
    "ChatClient", "EndpointError", "ReplyProblem", "decode_json", "read_turn", "LineAppender",
    "EvidenceBuilder", "OracleBlocks", "read_model_folder", "readout_jobs", "unit_context",
    "KitCommand", "KitSpec", "given_options", "PROMPT_OPTIONS", "RUN_OPTIONS", "SERVE_OPTIONS", "Report", "parse_date_option",
    "rap_prompt", "rap_run", "rap_serve", "safe", "split_values",
]
