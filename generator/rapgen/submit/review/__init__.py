"""The pull-request check: ``rapgen submit check`` and the Markdown report it posts.

- :func:`check_submission` returns a :class:`CheckResult` with every problem,
  warning and validity count (``check`` orchestrates ``checks``, ``files``,
  ``traces`` and ``overlay``);
- :func:`render_report` turns it into the pull-request comment (``report``,
  with every submission text escaped by ``escape``).
"""

from rapgen.submit.review.check import check_submission
from rapgen.submit.review.live import parse_now
from rapgen.submit.review.report import render_report
from rapgen.submit.review.result import FIXES, SECTIONS, CheckResult, ConditionCount, Problem, StageStatus, problem_order

__all__ = ["FIXES", "SECTIONS", "CheckResult", "ConditionCount", "Problem", "StageStatus", "check_submission", "parse_now", "problem_order", "render_report"]
