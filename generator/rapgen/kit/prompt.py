"""The benchmark's system prompt and tool schemas for one unit (``rapgen prompt``).

The prompt text lives in ``templates/prompts/system.md.j2``; this module fills
it from the archive (field, codebook, origins, ledger) and builds the tool
schemas in the OpenAI function-calling format:

- ``Search``: ``query`` (non-empty string), ``sort`` (``relevance``|``date``),
  ``date_from``/``date_to`` (``YYYY-MM-DD`` or null); no other keys
  (``additionalProperties: false``). Absent dates mean null.
- ``Finish``: exactly ``D0``…``D7`` (numbers ≥ 0, all required) and an
  optional ``rationale``; no other keys.

A0 offers only ``Finish``.

Every rendered prompt carries ``prompt_sha256``: the SHA-256 of the canonical
JSON of its messages and tools (:func:`canonical_sha256`), so the exact bytes a
model saw are identified. ``template_sha256`` identifies the prompt version
(template text, user-message formats and tool schemas) independently of the
unit; ``model.json`` records it, and ``rapgen agent run --resume`` refuses a
folder made under another version.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rapgen.archive import (
    CONDITION_REGIME, CONDITIONS, ORACLE_CONDITIONS, ORACLE_SEARCH, SEARCH_CONDITIONS, SLOTS, STATE_CONDITIONS, Archive,
    recent_window, target_window,
)
from rapgen.errors import RapgenError, UsageProblem

SEARCH_TOOL_NAME = "Search"
FINISH_TOOL_NAME = "Finish"
TEMPLATE_NAME = "system.md.j2"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
USER_FORECAST = "Forecast the direction shares of {name} for [{start}, {end}). Answer with {finish}."
USER_STATE = "Describe the direction shares of {name} for [{start}, {end}). Answer with {finish}."


def canonical_sha256(obj: object) -> str:
    """SHA-256 of ``obj`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def templates_dir() -> Path:
    """The shipped ``prompts/`` templates (package data in a wheel, ``templates/prompts``
    in a checkout); override with ``RAPGEN_PROMPT_TEMPLATES``."""
    override = os.environ.get("RAPGEN_PROMPT_TEMPLATES")
    if override:
        return Path(override)
    from rapgen.resources import templates_dir as shipped

    return shipped() / "prompts"


class Messages:
    """A prompt's ``messages`` (system, then user) and ``prompt_sha256``, the identity of exactly what the
    model is sent (canonical JSON of messages and tools), for any prompt with ``system``, ``user``, ``tools``."""

    system: str
    user: str
    tools: list[dict]

    @property
    def messages(self) -> list[dict]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    @property
    def prompt_sha256(self) -> str:
        """The identity of exactly what the model is sent: messages and tools."""
        return canonical_sha256({"messages": self.messages, "tools": self.tools})


@dataclass(frozen=True)
class Prompt(Messages):
    """Everything a harness sends for one unit: system and user messages, tools."""

    field_id: str
    origin: date
    condition: str
    system: str
    user: str
    tools: list[dict]
    max_calls: int
    top_k: int
    template_sha256: str = ""

    def to_dict(self) -> dict:
        return {
            "field_id": self.field_id, "origin": self.origin.isoformat(), "condition": self.condition,
            "max_calls": self.max_calls, "top_k": self.top_k,
            "prompt_sha256": self.prompt_sha256, "template_sha256": self.template_sha256,
            "messages": self.messages,
            "tools": self.tools,
        }


def search_schema() -> dict:
    date_or_null = {"type": ["string", "null"], "pattern": DATE_PATTERN}
    return {
        "type": "function",
        "function": {
            "name": SEARCH_TOOL_NAME,
            "description": "Search the field's frozen paper collection (BM25 over title and abstract, OR of the query terms).",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Search text."},
                    "sort": {"type": "string", "enum": ["relevance", "date"], "description": "relevance: best BM25 score first; date: newest first."},
                    "date_from": {**date_or_null, "description": "Inclusive lower bound on the first-submitted date, or null."},
                    "date_to": {**date_or_null, "description": "Exclusive upper bound on the first-submitted date, or null."},
                },
                "required": ["query", "sort"],
                "additionalProperties": False,
            },
        },
    }


def finish_schema() -> dict:
    properties: dict = {s: {"type": "number", "minimum": 0} for s in SLOTS}
    properties["rationale"] = {"type": "string", "description": "Optional short justification."}
    return {
        "type": "function",
        "function": {
            "name": FINISH_TOOL_NAME,
            "description": "Give the final answer: one non-negative weight per direction D0–D7. Ends the episode.",
            "parameters": {"type": "object", "properties": properties, "required": list(SLOTS), "additionalProperties": False},
        },
    }


# exact-history conditions (INTERVENTIONS.md §2): Search only in O3
ORACLE_TOOLS = {c: c == ORACLE_SEARCH for c in ORACLE_CONDITIONS}


def tool_schemas(condition: str) -> list[dict]:
    """The tools offered in ``condition``: Finish only for A0 (and O1, O2), Search and Finish otherwise."""
    if condition not in CONDITIONS and condition not in ORACLE_TOOLS:
        raise UsageProblem(f"condition {condition!r} is not one of {', '.join((*CONDITIONS, *ORACLE_TOOLS))}")
    search = ORACLE_TOOLS[condition] if condition in ORACLE_TOOLS else condition in SEARCH_CONDITIONS
    return [search_schema(), finish_schema()] if search else [finish_schema()]


def template_text(name: str = TEMPLATE_NAME) -> str:
    path = templates_dir() / name
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise RapgenError(f"{path}: the prompt template is missing or unreadable (set RAPGEN_PROMPT_TEMPLATES to the templates/prompts folder)") from None


def template_sha256() -> str:
    """The prompt version: template text, user-message formats and every condition's tools."""
    return canonical_sha256({
        "template": template_text(), "user": [USER_FORECAST, USER_STATE],
        "tools": {c: tool_schemas(c) for c in CONDITIONS},
    })


@functools.lru_cache(maxsize=4)
def _compiled(text: str):
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    return env.from_string(text)


def render(text: str, **context) -> str:
    return _compiled(text).render(**context)


def _parse_origin(archive: Archive, origin: str | date) -> date:
    if isinstance(origin, date):
        value = origin
    else:
        try:
            value = date.fromisoformat(origin)
        except ValueError:
            raise UsageProblem(f"origin {origin!r} is not a YYYY-MM-DD date") from None
    if value not in archive.known_origins:
        raise UsageProblem(f"origin {value} is not an origin of this archive ({archive.origin_listing()})")
    return value


def choices(values: list[str] | tuple[str, ...], limit: int = 20) -> str:
    """``values`` for an error message; long lists are cut with a count."""
    values = list(values)
    if len(values) <= limit:
        return ", ".join(values)
    return f"{', '.join(values[:limit])}, … ({len(values)} in all; see archive/benchmark/fields.jsonl)"


def unit_context(archive: Archive, field_id: str, origin: str | date) -> dict:
    """The template variables every prompt of one episode shares: field, directions,
    origin and windows, the ledger's call cap and ``top_k``, the tool names."""
    if field_id not in archive.field_map:
        raise UsageProblem(f"field {field_id!r} is not a field of this archive; choose from {choices(sorted(archive.field_map))}")
    origin_date = _parse_origin(archive, origin)
    window = archive.origins.window_months
    target_start, target_end = target_window(origin_date, window)
    recent_start, _ = recent_window(origin_date, window)
    return {
        "field": archive.field_map[field_id],
        "directions": archive.codebooks[field_id],
        "origin": origin_date.isoformat(),
        "origin_date": origin_date,
        "window_months": window,
        "target_start": target_start.isoformat(),
        "target_end": target_end.isoformat(),
        "recent_start": recent_start.isoformat(),
        "max_calls": int(archive.ledger["search"]["max_calls"]),
        "top_k": int(archive.ledger["search"]["top_k"]),
        "search_name": SEARCH_TOOL_NAME,
        "finish_name": FINISH_TOOL_NAME,
    }


def build_prompt(archive: Archive, field_id: str, origin: str | date, condition: str) -> Prompt:
    """Render the system prompt, user message and tools for one unit of ``archive``."""
    context = unit_context(archive, field_id, origin)
    tools = tool_schemas(condition)
    field, origin_date = context["field"], context["origin_date"]
    output = "state" if condition in STATE_CONDITIONS else "forecast"
    system = render(template_text(), condition=condition, output=output, regime=CONDITION_REGIME.get(condition),
                     **{k: v for k, v in context.items() if k != "origin_date"})
    if output == "forecast":
        user = USER_FORECAST.format(name=field.name, start=context["target_start"], end=context["target_end"], finish=FINISH_TOOL_NAME)
    else:
        user = USER_STATE.format(name=field.name, start=context["recent_start"], end=context["origin"], finish=FINISH_TOOL_NAME)
    return Prompt(field_id, origin_date, condition, system, user, tools, context["max_calls"], context["top_k"], template_sha256())
