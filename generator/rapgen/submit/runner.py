"""``rapgen agent run``: drive an OpenAI-compatible chat endpoint through the benchmark.

For every unit (field × origin × condition) the driver sends the benchmark's
system prompt and tools (:mod:`rapgen.submit.prompt`), executes the model's
native tool calls — ``Search`` on the frozen shards through a
:class:`~rapgen.submit.session.SearchSession`, ``Finish`` as the answer — and
writes a submission folder: ``predictions.jsonl`` (a unit without a usable
answer is recorded with ``status: invalid`` and the reason), ``traces.jsonl``
(every recorded Search call) and ``model.json`` (kept if already there).

Only the standard library talks to the endpoint (``urllib``): ``POST
{base_url}/chat/completions`` with ``model``, ``messages``, ``tools``,
``tool_choice: "auto"`` and ``temperature``.
"""

from __future__ import annotations

import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, SLOTS, STATE_CONDITIONS, Archive
from rapgen.archive.writer import write_json, write_jsonl
from rapgen.errors import RapgenError, UsageProblem
from rapgen.submit.prompt import FINISH_TOOL_NAME, SEARCH_TOOL_NAME, build_prompt, choices
from rapgen.submit.scaffold import MODEL_ID_RE, model_template
from rapgen.submit.session import SearchSession

NUDGE = f"Reply with a tool call: {SEARCH_TOOL_NAME} to search (where offered) or {FINISH_TOOL_NAME} with D0–D7 to answer."
MAX_RATIONALE = 2000
ABORT_AFTER = 3  # a run whose first units all hit endpoint errors stops instead of writing only invalid units


@dataclass(frozen=True)
class AgentConfig:
    base_url: str
    model: str
    api_key: str | None = None
    fields: tuple[str, ...] | None = None
    origins: tuple[str, ...] | None = None
    conditions: tuple[str, ...] = FORECAST_CONDITIONS
    temperature: float = 0.0
    max_turns: int | None = None  # default: the call cap + 5
    timeout: float = 120.0
    retries: int = 2
    model_info: dict = field(default_factory=dict)  # display_name, provider, proprietary, knowledge_cutoff, …


@dataclass
class RunSummary:
    out: Path
    units: int = 0
    valid: int = 0
    invalid: int = 0
    calls: int = 0
    wrote_model_json: bool = False
    by_condition: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"out": str(self.out), "units": self.units, "valid": self.valid, "invalid": self.invalid,
                "calls": self.calls, "wrote_model_json": self.wrote_model_json, "by_condition": self.by_condition}


class EndpointError(RapgenError):
    """The chat endpoint failed after retries (recorded as an invalid unit)."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _loads_arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise ValueError("the arguments are not a JSON string")
    return json.loads(raw or "{}", parse_constant=_reject_constant)


def finish_to_unit(arguments: Any) -> tuple[dict | None, str, str | None]:
    """(weights, reason, rationale) from Finish arguments; weights None for an invalid answer."""
    if not isinstance(arguments, dict):
        return None, "Finish arguments are not a JSON object", None
    rationale = arguments.get("rationale")
    rationale = rationale[:MAX_RATIONALE] if isinstance(rationale, str) else None
    keys = set(arguments) - {"rationale"}
    if keys != set(SLOTS):
        missing = [s for s in SLOTS if s not in keys]
        extra = sorted(keys - set(SLOTS))
        return None, "Finish needs exactly D0–D7 (" + (f"missing {', '.join(missing)}" if missing else f"unexpected {', '.join(extra)}") + ")", rationale
    weights = {}
    for slot in SLOTS:
        value = arguments[slot]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"Finish weight {slot} is not a number", rationale
        if not math.isfinite(value):
            return None, f"Finish weight {slot} is not finite", rationale
        if value < 0:
            return None, f"Finish weight {slot} is negative", rationale
        weights[slot] = value
    if math.fsum(weights.values()) <= 0:
        return None, "Finish weights total zero", rationale
    return weights, "", rationale


def check_base_url(base_url: str) -> str:
    """Return ``base_url`` if it is an http(s) URL with a host; else a usage error."""
    try:
        parts = urllib.parse.urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UsageProblem(f"--base-url {base_url!r} is not a valid URL ({exc}); give e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not host:
        raise UsageProblem(
            f"--base-url {base_url!r} is not an http:// or https:// URL with a host; "
            "give the API base, e.g. http://127.0.0.1:8000/v1"
        )
    return base_url


class ChatClient:
    """Minimal OpenAI-compatible chat-completions client on urllib."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, retries: int):
        self.url = check_base_url(base_url).rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries

    def complete(self, payload: dict) -> dict:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {self.url}"
                if exc.code not in (408, 409, 429) and exc.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}"
            except (json.JSONDecodeError, UnicodeDecodeError):
                last = f"the reply from {self.url} is not JSON"
                break
            if attempt < self.retries:
                time.sleep(0.5 * 2**attempt)
        raise EndpointError(last)


def _episode(client: ChatClient, config: AgentConfig, session: SearchSession, prompt, max_turns: int) -> tuple[dict | None, str, str | None]:
    """Run one unit; return (weights, reason, rationale)."""
    messages: list[dict] = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
    nudged = False
    for _ in range(max_turns):
        try:
            reply = client.complete({
                "model": config.model, "messages": messages, "tools": prompt.tools,
                "tool_choice": "auto", "temperature": config.temperature,
            })
            message = reply["choices"][0]["message"]
        except EndpointError as exc:
            return None, f"endpoint error: {exc}", None
        except (KeyError, IndexError, TypeError):
            return None, "the endpoint's reply has no choices[0].message", None
        tool_calls = message.get("tool_calls") or []
        assistant = {"role": "assistant", "content": message.get("content")}
        if tool_calls:
            assistant["tool_calls"] = tool_calls
        messages.append(assistant)
        if not tool_calls:
            if nudged:
                return None, "no tool call (the model answered in text)", None
            nudged = True
            messages.append({"role": "user", "content": NUDGE})
            continue
        for call in tool_calls:
            call_id = call.get("id", "")
            function = call.get("function") or {}
            name = function.get("name")
            try:
                arguments = _loads_arguments(function.get("arguments"))
            except ValueError as exc:
                if name == FINISH_TOOL_NAME:
                    return None, f"Finish arguments are not valid JSON ({exc})", None
                arguments = exc  # a malformed Search call: counted, reported to the model
            if name == FINISH_TOOL_NAME:
                return finish_to_unit(arguments)
            if name == SEARCH_TOOL_NAME and prompt.condition != "A0":
                outcome = session.call(prompt.field_id, prompt.origin.isoformat(), prompt.condition,
                                       None if isinstance(arguments, Exception) else arguments)
                content = outcome.to_dict()
            else:
                content = {"error": f"unknown tool {name!r}; the tools are " + ", ".join(t["function"]["name"] for t in prompt.tools)}
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(content, ensure_ascii=False)})
    return None, f"no Finish call within {max_turns} turns", None


def _select(requested: tuple[str, ...] | None, available: list[str], what: str) -> list[str]:
    if not requested:
        return available
    unknown = [r for r in requested if r not in available]
    if unknown:
        raise UsageProblem(f"{what} {unknown[0]!r} is not in this archive; choose from {choices(available)}")
    return [a for a in available if a in requested]


def run_agent(
    root: str | Path,
    out_dir: str | Path,
    config: AgentConfig,
    *,
    session: SearchSession | None = None,
    force: bool = False,
    on_unit: Callable[[int, int, str, str, str, str], None] | None = None,
) -> RunSummary:
    """Run every selected unit and write the submission folder ``out_dir``.

    ``on_unit(done, total, field_id, origin, condition, reason)`` is called after
    each unit (``reason`` empty for a valid answer). If the first
    :data:`ABORT_AFTER` units all fail with endpoint errors the run stops with
    :class:`EndpointError` and writes nothing.
    """
    check_base_url(config.base_url)
    out = Path(out_dir)
    model_id = out.resolve().name
    if not MODEL_ID_RE.match(model_id):
        raise UsageProblem(f"--out {out}: the folder name {model_id!r} is not a valid model id")
    for name in ("predictions.jsonl", "traces.jsonl"):
        if (out / name).exists() and not force:
            raise UsageProblem(f"{out / name}: already exists; use a new folder or --force to replace it")
    unknown = [c for c in config.conditions if c not in CONDITIONS]
    if unknown:
        raise UsageProblem(f"condition {unknown[0]!r} is not a condition; choose from {', '.join(CONDITIONS)}")
    archive = Archive(root)
    fields = _select(config.fields, sorted(archive.field_map), "field")
    origins = _select(config.origins, [o.isoformat() for o in archive.origins.origins], "origin")
    conditions = [c for c in CONDITIONS if c in config.conditions]
    if session is None:
        session = SearchSession(archive)
    max_turns = config.max_turns or session.max_calls + 5
    client = ChatClient(config.base_url, config.api_key, config.timeout, config.retries)

    summary = RunSummary(out)
    lines = []
    total = len(conditions) * len(fields) * len(origins)
    started = False  # has any unit got past the endpoint?
    for condition in conditions:
        for fid in fields:
            for origin in origins:
                prompt = build_prompt(archive, fid, origin, condition)
                weights, reason, rationale = _episode(client, config, session, prompt, max_turns)
                if not started:
                    if not reason.startswith("endpoint error"):
                        started = True
                    elif len(lines) + 1 >= ABORT_AFTER:
                        raise EndpointError(f"the endpoint failed on the first {ABORT_AFTER} units ({reason}); nothing was written")
                line: dict = {"field_id": fid, "origin": origin, "condition": condition, "weights": weights}
                if weights is None:
                    line["status"] = "invalid"
                    line["reason"] = reason
                elif rationale:
                    line["rationale"] = rationale
                lines.append(line)
                counts = summary.by_condition.setdefault(condition, {"valid": 0, "invalid": 0})
                counts["valid" if weights is not None else "invalid"] += 1
                if on_unit is not None:
                    on_unit(len(lines), total, fid, origin, condition, reason)
    lines.sort(key=lambda l: (l["field_id"], l["origin"], CONDITIONS.index(l["condition"])))
    traces = sorted(session.records, key=lambda r: (r["field_id"], r["origin"], CONDITIONS.index(r["condition"]), r["call_index"]))

    out.mkdir(parents=True, exist_ok=True)
    if not (out / "model.json").exists():
        write_json(out / "model.json", _model_json(model_id, config, conditions))
        summary.wrote_model_json = True
    write_jsonl(out / "predictions.jsonl", lines)
    if traces:
        write_jsonl(out / "traces.jsonl", traces)
    elif (out / "traces.jsonl").exists():
        (out / "traces.jsonl").unlink()
    summary.units = len(lines)
    summary.valid = sum(1 for l in lines if l["weights"] is not None)
    summary.invalid = summary.units - summary.valid
    summary.calls = len(traces)
    return summary


def _model_json(model_id: str, config: AgentConfig, conditions: list[str]) -> dict:
    info = model_template(model_id)
    info["display_name"] = config.model
    info["notes"] = f"Produced with rapgen agent run (model {config.model!r})."
    for key, value in config.model_info.items():
        if key in info and value is not None:
            info[key] = value
    info["diagnostic"] = any(c in STATE_CONDITIONS for c in conditions)
    return info


def parse_date_option(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        raise UsageProblem(f"{name} {value!r} is not a YYYY-MM-DD date")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise UsageProblem(f"{name} {value!r} is not a valid date") from None
    return value
