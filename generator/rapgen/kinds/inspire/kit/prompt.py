"""Inspire's prompt and tool schemas for one unit (instance, condition).

Two tools, in the OpenAI function-calling format:

- ``search_papers`` (INSPIRE.md §7): SEARCH.md's arguments — ``query`` (a
  non-empty string), ``sort`` (``relevance`` | ``date``), ``date_from`` /
  ``date_to`` (``YYYY-MM-DD`` or null); no other key — the schema the kit
  publishes for every Search tool, under Inspire's name.
- ``submit_ranking``: ``ranking``, a list of ``{"arxiv_id", "rationale"?}``
  objects, best first; the scorer keeps the first K distinct ids.

The brief shown is the condition's (``detailed``: the brief, ``terse``: its
first two sentences). ``prompt_sha256`` identifies exactly what the model is
sent (canonical JSON of messages and tools) and goes into each prediction line;
``template_sha256`` identifies the prompt version independently of the unit.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import date

from rapgen.errors import UsageProblem
from rapgen.kit import SEARCH_TOOL_NAME, Messages, canonical_sha256, tool_schemas as rap_tools

from rapgen.kinds.inspire.archive import Instance, Ledger, layout

SEARCH_TOOL = layout.SEARCH_TOOL
SUBMIT_TOOL = "submit_ranking"
SYSTEM = (
    "You are preparing the literature search for an open research problem. The brief below states the problem as it "
    "stood before it was solved; the solution is left out.\n\n"
    "Search a frozen corpus of arXiv papers with the {search} tool: every paper in it was first posted before "
    "{cutoff}, so no later work can be found. Each call returns at most {top_k} papers (arXiv id, date, title, "
    "abstract) and the number of matching papers; you may make at most {max_calls} calls, and a malformed call "
    "counts too.\n\n"
    "Then call {submit} once with at most {K} arXiv ids of the earlier papers that work on this problem should build "
    "on, the most important first. Only papers your searches returned can count."
)
USER = "Research brief:\n\n{brief}"


def search_papers_schema() -> dict:
    """SEARCH.md's call schema (the one RAP's Search tool publishes), named ``search_papers``."""
    shared = next(t for t in rap_tools("A1") if t["function"]["name"] == SEARCH_TOOL_NAME)
    function = {**copy.deepcopy(shared["function"]), "name": SEARCH_TOOL,
                "description": "Search the frozen corpus (BM25 over title and abstract, any of the query's terms)."}
    return {"type": "function", "function": function}


def submit_schema() -> dict:
    entry = {"type": "object", "properties": {"arxiv_id": {"type": "string"}, "rationale": {"type": "string"}},
             "required": ["arxiv_id"], "additionalProperties": False}
    return {"type": "function", "function": {
        "name": SUBMIT_TOOL,
        "description": "Submit the ranked list of prior papers, best first; ends the task.",
        "parameters": {"type": "object", "properties": {"ranking": {"type": "array", "items": entry}},
                       "required": ["ranking"], "additionalProperties": False},
    }}


def tool_schemas() -> list[dict]:
    return [search_papers_schema(), submit_schema()]


def template_sha256() -> str:
    """The prompt version: the two texts and the tool schemas."""
    return canonical_sha256({"system": SYSTEM, "user": USER, "tools": tool_schemas()})


_TEMPLATE_SHA256 = template_sha256


@dataclass(frozen=True)
class InspirePrompt(Messages):
    """Everything a harness sends for one unit."""

    instance_id: str
    condition: str
    cutoff: date
    system: str
    user: str
    tools: list[dict]
    max_calls: int
    top_k: int
    K: int

    @property
    def template_sha256(self) -> str:
        """The prompt version (:func:`template_sha256`)."""
        return _TEMPLATE_SHA256()

    def to_dict(self) -> dict:
        return {"instance_id": self.instance_id, "condition": self.condition, "cutoff": self.cutoff.isoformat(),
                "max_calls": self.max_calls, "top_k": self.top_k, "K": self.K, "prompt_sha256": self.prompt_sha256,
                "template_sha256": self.template_sha256, "messages": self.messages, "tools": self.tools}


def build_prompt(instances: dict[str, Instance], ledger: Ledger, instance_id: str, condition: str) -> InspirePrompt:
    """The prompt of one unit; a usage error naming the choices for an unknown instance or condition."""
    inst = instances.get(instance_id)
    if inst is None:
        raise UsageProblem(f"instance {instance_id!r} is not an instance of this archive (e.g. {', '.join(sorted(instances)[:3])})")
    if condition not in layout.CONDITIONS:
        raise UsageProblem(f"condition {condition!r} is not an Inspire condition ({', '.join(layout.CONDITIONS)})")
    system = SYSTEM.format(search=SEARCH_TOOL, submit=SUBMIT_TOOL, cutoff=inst.cutoff.isoformat(), top_k=ledger.top_k,
                           max_calls=ledger.max_calls, K=ledger.K)
    return InspirePrompt(instance_id, condition, inst.cutoff, system, USER.format(brief=inst.brief_for(condition)), tool_schemas(),
                         ledger.max_calls, ledger.top_k, ledger.K)
