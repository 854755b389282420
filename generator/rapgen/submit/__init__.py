"""Submissions: the pull-request check (SUBMISSION.md, "The pull-request check").

Public surface: :func:`check_submission` / :class:`CheckResult` / :class:`Problem` /
:class:`ConditionCount`, and :func:`render_report`, which turns a result into the
Markdown comment posted on the pull request. The submitter's kit (prompts, the Search
tool, the agent driver, ``submit init``) is :mod:`rapgen.kit`.

This package orchestrates the other stages and imports them only through their
public ``__init__`` surfaces.
"""

from rapgen.submit.commit import make_commitment
from rapgen.submit.review import CheckResult, ConditionCount, Problem, check_submission, parse_now, problem_order, render_report
from rapgen.submit.review.live import today_utc

__all__ = ["CheckResult", "ConditionCount", "Problem", "check_submission", "make_commitment", "parse_now", "problem_order", "render_report", "today_utc"]
