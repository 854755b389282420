"""``rapgen agent run``: drive an OpenAI-compatible chat endpoint through the benchmark.

For every unit (field × origin × condition) the driver sends the benchmark's
system prompt and tools (:mod:`rapgen.kit.prompt`), executes the model's
native tool calls — ``Search`` on the frozen shards through a
:class:`~rapgen.kit.session.SearchSession`, ``Finish`` as the answer — and
writes a submission folder.

Paid work is never lost: as each unit completes, its Search calls are appended
to ``traces.jsonl`` and then its line to ``predictions.jsonl``, each line
written whole and fsync'd (:mod:`rapgen.kit.journal`). ``--resume`` skips
the units already in ``predictions.jsonl`` after checking that the folder is
consistent (:mod:`rapgen.kit.resume`); trace lines of a unit that was cut off
before its prediction line are dropped and the unit runs again.

How each turn is read is in :mod:`rapgen.kit.chat`; what the runner then does:

- no tool call (also ``finish_reason: "tool_calls"`` with none): the unit is
  invalid — the benchmark's prompt is the only instruction a model gets;
- calls are handled in the order given; ``Finish`` ends the unit and calls
  after it in the same reply are not executed;
- ``Search`` with unreadable arguments is a malformed call: counted, recorded
  and answered with the reason; an unknown tool is answered with an error;
- ``Finish`` arguments decide the unit (:func:`finish_to_unit`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, SLOTS, STATE_CONDITIONS, Archive
from rapgen.io import atomic_write_bytes
from rapgen.errors import UsageProblem
from rapgen.kit.chat import ChatClient, EndpointError, ReplyProblem, check_base_url, read_turn
from rapgen.kit.journal import LineAppender
from rapgen.kit.prompt import FINISH_TOOL_NAME, SEARCH_TOOL_NAME, Prompt, build_prompt, choices, template_sha256
from rapgen.kit.resume import prepare_folder, unit_files
from rapgen.kit.session import SearchSession, ToolError

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
    max_output_tokens: int | None = None  # sent as max_tokens when set
    model_info: dict = field(default_factory=dict)  # display_name, provider, proprietary, knowledge_cutoff, …


@dataclass
class RunSummary:
    out: Path
    units: int = 0
    valid: int = 0
    invalid: int = 0
    calls: int = 0
    resumed: int = 0
    dropped_calls: int = 0
    wrote_model_json: bool = False
    prompt_sha256: str = ""
    by_condition: dict = field(default_factory=dict)
    live: dict | None = None  # {"origin", "closes"} when the run included the open origin (a Live entry)

    def count(self, condition: str, valid: bool) -> None:
        counts = self.by_condition.setdefault(condition, {"valid": 0, "invalid": 0})
        counts["valid" if valid else "invalid"] += 1
        self.units += 1
        self.valid += valid
        self.invalid += not valid

    def to_dict(self) -> dict:
        return {"out": str(self.out), "units": self.units, "valid": self.valid, "invalid": self.invalid,
                "calls": self.calls, "resumed": self.resumed, "dropped_calls": self.dropped_calls,
                "wrote_model_json": self.wrote_model_json, "prompt_sha256": self.prompt_sha256,
                "by_condition": dict(sorted(self.by_condition.items())), "live": self.live}


def _weight(value: Any) -> float | None:
    """A Finish weight as a finite float, or None (booleans, strings, 1e400, a 400-digit integer)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def finish_to_unit(arguments: Any) -> tuple[dict | None, str, str | None]:
    """(weights, reason, rationale) from Finish arguments; weights None for an invalid answer."""
    if not isinstance(arguments, dict):
        return None, "Finish arguments are not a JSON object", None
    rationale = arguments.get("rationale")
    rationale = rationale[:MAX_RATIONALE] if isinstance(rationale, str) else None
    if rationale is not None:
        try:
            rationale.encode("utf-8")
        except UnicodeEncodeError:
            return None, "Finish rationale is not valid Unicode (a lone surrogate)", None
    keys = set(arguments) - {"rationale"}
    if keys != set(SLOTS):
        missing = [s for s in SLOTS if s not in keys]
        extra = sorted(repr(k)[:40] for k in keys - set(SLOTS))
        return None, "Finish needs exactly D0–D7 (" + (f"missing {', '.join(missing)}" if missing else f"unexpected {', '.join(extra)}") + ")", rationale
    weights = {}
    for slot in SLOTS:
        value = arguments[slot]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"Finish weight {slot} is not a number", rationale
        if _weight(value) is None:
            return None, f"Finish weight {slot} is not finite (it does not fit a double)", rationale
        if value < 0:
            return None, f"Finish weight {slot} is negative", rationale
        weights[slot] = value
    if not any(_weight(v) > 0 for v in weights.values()):  # no sum: 8 × 1.7e308 overflows
        return None, "Finish weights total zero", rationale
    return weights, "", rationale


def _tool_content(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def _search(session: SearchSession, prompt: Prompt, call) -> dict:
    """Execute one Search call of the model; the tool message content."""
    try:
        outcome = session.call(prompt.field_id, prompt.origin.isoformat(), prompt.condition,
                               None if call.problem else call.arguments)
    except ToolError as exc:
        return {"error": str(exc)}
    content = outcome.to_dict()
    if call.problem and outcome.call_index is not None:
        content["error"] = f"malformed call: {call.problem}"
    return content


@dataclass
class Episode:
    """One unit's outcome, with the §7 provenance the endpoint reported."""

    weights: dict | None
    reason: str
    rationale: str | None
    attempts: int = 0  # HTTP requests sent for the unit, retries included
    response_model: str | None = None
    usage: dict | None = None  # summed over the unit's turns; None unless every reply reported it

    def provenance(self) -> dict:
        """The optional per-unit keys of replays.jsonl / oracle.jsonl (only what is known)."""
        out: dict = {}
        if self.response_model is not None:
            out["response_model"] = self.response_model
        if self.attempts >= 1:
            out["attempts"] = self.attempts
        if self.usage is not None:
            out["usage"] = self.usage
        return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def reply_usage(reply: Any) -> dict | None:
    """``usage`` of a chat-completions reply as §7 counts (``prompt_tokens``/``completion_tokens``,
    or ``input_tokens``/``output_tokens``; reasoning tokens where given), else None."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    tokens_in = _count(usage.get("prompt_tokens", usage.get("input_tokens")))
    tokens_out = _count(usage.get("completion_tokens", usage.get("output_tokens")))
    if tokens_in is None or tokens_out is None:
        return None
    out = {"input_tokens": tokens_in, "output_tokens": tokens_out}
    details = usage.get("completion_tokens_details", usage.get("output_tokens_details"))
    reasoning = _count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    if reasoning is not None:
        out["reasoning_tokens"] = reasoning
    return out


def _add_usage(total: dict | None, turn: dict | None, first: bool) -> dict | None:
    if turn is None or (total is None and not first):
        return None
    if total is None:
        return dict(turn)
    out = {k: total[k] + turn[k] for k in ("input_tokens", "output_tokens")}
    if "reasoning_tokens" in total and "reasoning_tokens" in turn:
        out["reasoning_tokens"] = total["reasoning_tokens"] + turn["reasoning_tokens"]
    return out


def _payload(config: AgentConfig, messages: list[dict], prompt: Prompt) -> dict:
    payload = {"model": config.model, "messages": messages, "tools": prompt.tools,
               "tool_choice": "auto", "temperature": config.temperature}
    if config.max_output_tokens is not None:
        payload["max_tokens"] = config.max_output_tokens
    return payload


def run_episode(client: ChatClient, config: AgentConfig, session: SearchSession | None, prompt: Prompt, max_turns: int) -> Episode:
    """Run one unit; Search is executed when the prompt offers it (through ``session``)."""
    messages: list[dict] = list(prompt.messages)
    tool_names = ", ".join(t["function"]["name"] for t in prompt.tools)
    offers_search = any(t["function"]["name"] == SEARCH_TOOL_NAME for t in prompt.tools)
    start = client.attempts
    meta: dict = {"model": None, "usage": None}

    def done(weights: dict | None, reason: str, rationale: str | None) -> Episode:
        return Episode(weights, reason, rationale, client.attempts - start, meta["model"], meta["usage"])

    for turn in range(max_turns):
        try:
            reply = client.complete(_payload(config, messages, prompt))
            got = read_turn(reply, turn)
        except EndpointError as exc:
            return done(None, f"endpoint error: {exc}", None)
        except ReplyProblem as exc:
            return done(None, str(exc), None)
        if isinstance(reply, dict) and isinstance(reply.get("model"), str) and reply["model"]:
            meta["model"] = reply["model"][:200]
        meta["usage"] = _add_usage(meta["usage"], reply_usage(reply), turn == 0)
        messages.append(got.message)
        if not got.calls:
            if got.finish_reason == "tool_calls":
                return done(None, "the reply says finish_reason tool_calls but holds no tool call", None)
            return done(None, "no tool call (the model answered in text)", None)
        for call in got.calls:
            if call.name == FINISH_TOOL_NAME:
                if call.problem:
                    return done(None, f"Finish: {call.problem}", None)
                return done(*finish_to_unit(call.arguments))
            if call.name == SEARCH_TOOL_NAME and offers_search and session is not None:
                content = _search(session, prompt, call)
            else:
                content = {"error": f"unknown tool {call.name[:60]!r}; the tools are {tool_names}"}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _tool_content(content)})
    return done(None, f"no Finish call within {max_turns} turns", None)


def _select(requested: tuple[str, ...] | None, available: list[str], what: str, default: list[str] | None = None) -> list[str]:
    if not requested:
        return available if default is None else default
    unknown = [r for r in requested if r not in available]
    if unknown:
        raise UsageProblem(f"{what} {unknown[0]!r} is not in this archive; choose from {choices(available)}")
    return [a for a in available if a in requested]


def _model_values(config: AgentConfig, conditions: list[str]) -> dict:
    values = {k: v for k, v in config.model_info.items() if v is not None}
    values.setdefault("display_name", config.model)
    values["notes"] = f"Produced with rapgen agent run (model {config.model!r})."
    values["diagnostic"] = any(c in STATE_CONDITIONS for c in conditions)
    return values


def _unit_line(prompt: Prompt, weights: dict | None, reason: str, rationale: str | None) -> dict:
    line: dict = {"field_id": prompt.field_id, "origin": prompt.origin.isoformat(), "condition": prompt.condition, "weights": weights}
    if weights is None:
        line["status"] = "invalid"
        line["reason"] = reason
    elif rationale:
        line["rationale"] = rationale
    return line


class UnitWriter:
    """Appends each finished unit: its trace lines, then its prediction line.
    Until a unit gets past the endpoint, units are held back (see ABORT_AFTER)."""

    def __init__(self, out: Path, model_json: bytes | None, units: str = "predictions.jsonl", traces: str = "traces.jsonl",
                 route: Callable[[str], tuple[str, str]] | None = None):
        self.out = out
        self.names = (units, traces)
        self.route = route  # origin -> (units, traces) file of that origin's units; None: always ``names``
        self.model_json = model_json  # written (atomically) just before the first line
        self.held: list[tuple[list[dict], dict]] = []
        self.started = False
        self.files: dict[str, LineAppender] = {}

    def _file(self, name: str) -> LineAppender:
        if self.model_json is not None:
            atomic_write_bytes(self.out / "model.json", self.model_json)
            self.model_json = None
        if name not in self.files:
            self.files[name] = LineAppender(self.out / name)
        return self.files[name]

    def unit(self, traces: list[dict], line: dict) -> None:
        endpoint_failure = str(line.get("reason") or "").startswith("endpoint error")
        if not self.started and endpoint_failure and not traces:
            self.held.append((traces, line))
            if len(self.held) >= ABORT_AFTER:
                raise EndpointError(f"the endpoint failed on the first {ABORT_AFTER} units ({line['reason']}); nothing was written")
            return
        self.started = True
        for held_traces, held_line in [*self.held, (traces, line)]:
            self._write(held_traces, held_line)
        self.held = []

    def _write(self, traces: list[dict], line: dict) -> None:
        units, trace_file = self.route(line["origin"]) if self.route is not None else self.names
        if traces:
            self._file(trace_file).append(traces)
        self._file(units).append([line])

    def close(self) -> None:
        """Write what is held back (a short run whose every unit failed at the endpoint)."""
        self.started = True
        for held_traces, held_line in self.held:
            self._write(held_traces, held_line)
        self.held = []
        if self.model_json is not None:
            atomic_write_bytes(self.out / "model.json", self.model_json)
            self.model_json = None


def run_agent(
    root: str | Path,
    out_dir: str | Path,
    config: AgentConfig,
    *,
    session: SearchSession | None = None,
    force: bool = False,
    resume: bool = False,
    on_unit: Callable[[int, int, str, str, str, str], None] | None = None,
) -> RunSummary:
    """Run every selected unit not yet in ``out_dir`` and append it there.

    ``on_unit(done, total, field_id, origin, condition, reason)`` is called after
    each unit (``reason`` empty for a valid answer). If the first
    :data:`ABORT_AFTER` units all fail at the endpoint the run stops with
    :class:`EndpointError` and writes no unit.
    """
    check_base_url(config.base_url)
    out = Path(out_dir)
    unknown = [c for c in config.conditions if c not in CONDITIONS]
    if unknown:
        raise UsageProblem(f"condition {unknown[0]!r} is not a condition; choose from {', '.join(CONDITIONS)}")
    archive = Archive(root)
    fields = _select(config.fields, sorted(archive.field_map), "field")
    # Any origin of the history may be asked for; by default the resolved ones (the open origin is a Live entry: ask for it).
    origins = _select(config.origins, [o.isoformat() for o in archive.known_origins], "origin",
                      default=[o.isoformat() for o in archive.resolved_origins])
    conditions = [c for c in CONDITIONS if c in config.conditions]
    version = template_sha256()
    state, model_json = prepare_folder(out, archive, version, _model_values(config, conditions), force=force, resume=resume,
                                       origins=origins)
    if session is None:
        session = SearchSession(archive, keep_records=False)
    max_turns = config.max_turns or session.max_calls + 5
    client = ChatClient(config.base_url, config.api_key, config.timeout, config.retries)

    summary = RunSummary(out, resumed=len(state.done), calls=state.calls, dropped_calls=state.dropped_calls,
                         wrote_model_json=state.wrote_model_json, prompt_sha256=version)
    for condition, valid in state.done.values():
        summary.count(condition, valid)
    opened = archive.open_origin
    if opened is not None and opened.origin.isoformat() in origins:
        summary.live = {"origin": opened.origin.isoformat(), "closes": opened.closes.isoformat()}
    todo = [(c, f, o) for c in conditions for f in fields for o in origins if (f, o, c) not in state.done]
    writer = UnitWriter(out, model_json, route=lambda origin: unit_files(archive, origin))
    buffer: list[dict] = []
    previous = session.on_record
    session.on_record = buffer.append
    try:
        for n, (condition, fid, origin) in enumerate(todo, start=1):
            prompt = build_prompt(archive, fid, origin, condition)
            buffer.clear()
            episode = run_episode(client, config, session, prompt, max_turns)
            weights, reason, rationale = episode.weights, episode.reason, episode.rationale
            traces = [{**r, "prompt_sha256": prompt.prompt_sha256} for r in buffer]
            writer.unit(traces, _unit_line(prompt, weights, reason, rationale))
            summary.count(condition, weights is not None)
            summary.calls += len(traces)
            if on_unit is not None:
                on_unit(n, len(todo), fid, origin, condition, reason)
        writer.close()
    finally:
        session.on_record = previous
        for handle in writer.files.values():
            handle.close()
    return summary
