"""Submissions: the pull-request check and the submitter's kit.

Public surface:

- :func:`check_submission` / :class:`CheckResult` / :class:`Problem` — the
  pull-request check of SUBMISSION.md; :func:`render_report` turns a result into
  the Markdown comment posted on the pull request.
- :func:`init_submission` — scaffold a submission folder (``rapgen submit init``).
- :func:`build_prompt` / :class:`Prompt` — the benchmark's system prompt and tool
  schemas for one unit (``rapgen prompt``).
- :class:`SearchSession` and :func:`serve_search` — the Search tool with its
  schema, bounds, call cap and trace recording, in process or over loopback HTTP.
- :func:`run_agent` — drive an OpenAI-compatible chat endpoint through A0–A4 and
  write a submission folder (``rapgen agent run``).

This package orchestrates the other stages and imports them only through their
public ``__init__`` surfaces.
"""

from rapgen.submit.review import CheckResult, ConditionCount, Problem, check_submission, render_report
# The submitter's kit lives in rapgen.kit; re-exported here for existing callers.
from rapgen.kit import (
    FINISH_TOOL_NAME, SEARCH_TOOL_NAME, AgentConfig, Prompt, RunSummary, SearchSession, ToolError,
    build_prompt, init_submission, run_agent, serve_search, tool_schemas,
)

__all__ = [
    "CheckResult", "ConditionCount", "Problem", "check_submission", "render_report",
    "init_submission",
    "FINISH_TOOL_NAME", "SEARCH_TOOL_NAME", "Prompt", "build_prompt", "tool_schemas",
    "SearchSession", "ToolError", "serve_search",
    "AgentConfig", "RunSummary", "run_agent",
]
