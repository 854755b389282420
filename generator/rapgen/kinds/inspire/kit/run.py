"""Run a model, or a reference agent, over Inspire units into a submission folder.

:func:`run_agent` drives an OpenAI-compatible chat endpoint (:class:`rapgen.kit.ChatClient`)
unit by unit: the unit's prompt and tools, every ``search_papers`` call through one
:class:`~.session.InspireSession` (the call cap and the trace are the session's), until
the model calls ``submit_ranking``. A unit that ends otherwise — an endpoint error, a
reply in text, no submission within ``max_turns`` — is a ``failed`` line with its reason
(INSPIRE.md §3: it scores as an empty list). :func:`run_reference` writes a reference
agent's folder (``bm25-brief``, ``keyword-loop``) with the same session rules.

The folder holds ``model.json``, ``predictions.jsonl`` and ``traces.jsonl``; each line
is appended and fsync'd as its unit ends (a unit's traces before its prediction line).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from rapgen.errors import UsageProblem
from rapgen.kit import ChatClient, EndpointError, ReplyProblem, ToolError, UnitWriter, model_json_bytes, model_record, read_turn

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.kit.prompt import SEARCH_TOOL, SUBMIT_TOOL, InspirePrompt, build_prompt, template_sha256
from rapgen.kinds.inspire.kit.session import InspireSession
from rapgen.kinds.inspire.search import REFERENCE_AGENTS, reference_model_json


@dataclass(frozen=True)
class AgentConfig:
    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    max_turns: int = 60
    timeout: float = 120.0
    retries: int = 2


@dataclass
class RunSummary:
    units: int = 0
    submitted: int = 0
    failed: int = 0
    calls: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"units": self.units, "submitted": self.submitted, "failed": self.failed, "calls": self.calls,
                "reasons": dict(sorted(self.reasons.items()))}


def units_of(release, splits: Sequence[str] | None, conditions: Sequence[str] | None,
             instance_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(instance, condition) pairs in order; default eval × detailed. Usage errors name the choices."""
    splits = list(splits or [layout.PRIMARY_SPLIT])
    conditions = list(conditions or [layout.PRIMARY_CONDITION])
    for s in splits:
        if s not in layout.SPLITS:
            raise UsageProblem(f"split {s!r} is not an Inspire split ({', '.join(layout.SPLITS)})")
    for c in conditions:
        if c not in layout.CONDITIONS:
            raise UsageProblem(f"condition {c!r} is not an Inspire condition ({', '.join(layout.CONDITIONS)})")
    known = {i.instance_id: i for i in release.instances}
    for iid in instance_ids or ():
        if iid not in known:
            raise UsageProblem(f"instance {iid!r} is not an instance of this archive")
    chosen = sorted(instance_ids) if instance_ids else sorted(i for i, inst in known.items() if inst.split in splits)
    return [(i, c) for i in chosen for c in conditions]


def ranking_of(arguments: Any) -> tuple[list[dict] | None, str | None]:
    """The submitted list as prediction entries, or a reason to ask again."""
    ranking = arguments.get("ranking") if isinstance(arguments, dict) else None
    if not isinstance(ranking, list):
        return None, "submit_ranking needs {\"ranking\": [{\"arxiv_id\": …}, …]}"
    out = []
    for k, entry in enumerate(ranking):
        if isinstance(entry, str):
            entry = {"arxiv_id": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("arxiv_id"), str) or set(entry) - {"arxiv_id", "rationale"} \
                or not isinstance(entry.get("rationale", ""), str):
            return None, f"ranking[{k}] must be an object with a string arxiv_id and an optional string rationale"
        out.append({"arxiv_id": entry["arxiv_id"], **({"rationale": entry["rationale"]} if "rationale" in entry else {})})
    return out, None


def _line(prompt: InspirePrompt, ranking: list[dict] | None, reason: str | None, usage: dict, started: float) -> dict:
    return {"instance_id": prompt.instance_id, "condition": prompt.condition, "status": "submitted" if ranking is not None else "failed",
            "ranking": ranking, "reason": reason, "tokens_in": usage.get("in"), "tokens_out": usage.get("out"),
            "latency_s": round(time.monotonic() - started, 3), "cost_usd": None, "prompt_sha256": prompt.prompt_sha256}


def _usage(reply: Any, total: dict) -> None:
    usage = reply.get("usage") if isinstance(reply, dict) else None
    for key, name in (("in", "prompt_tokens"), ("out", "completion_tokens")):
        value = usage.get(name) if isinstance(usage, dict) else None
        total[key] = total.get(key, 0) + value if isinstance(value, int) and total.get(key, 0) is not None else None


def run_episode(client: ChatClient, config: AgentConfig, session: InspireSession, prompt: InspirePrompt) -> dict:
    """One unit, to its prediction line."""
    started, usage = time.monotonic(), {}
    messages = list(prompt.messages)
    for turn in range(config.max_turns):
        payload = {"model": config.model, "messages": messages, "tools": prompt.tools, "tool_choice": "auto",
                   "temperature": config.temperature}
        try:
            reply = client.complete(payload)
            got = read_turn(reply, turn)
        except (EndpointError, ReplyProblem) as exc:
            return _line(prompt, None, f"endpoint error: {exc}", usage, started)
        _usage(reply, usage)
        messages.append(got.message)
        if not got.calls:
            return _line(prompt, None, "no tool call (the model answered in text)", usage, started)
        for call in got.calls:
            if call.name == SUBMIT_TOOL and call.problem is None:
                ranking, problem = ranking_of(call.arguments)
                if ranking is not None:
                    return _line(prompt, ranking, None, usage, started)
                content: dict = {"error": problem}
            elif call.name == SEARCH_TOOL:
                try:
                    outcome = session.call(prompt.instance_id, prompt.condition, None if call.problem else call.arguments)
                    content = outcome.to_dict()
                except ToolError as exc:
                    content = {"error": str(exc)}
            else:
                content = {"error": call.problem or f"unknown tool {call.name[:60]!r}; the tools are {SEARCH_TOOL}, {SUBMIT_TOOL}"}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(content, ensure_ascii=False)})
    return _line(prompt, None, f"no {SUBMIT_TOOL} call within {config.max_turns} turns", usage, started)


class _Folder:
    """A new submission folder, written through the kit's :class:`~rapgen.kit.UnitWriter`: model.json with
    the first line, then per unit its trace lines and its prediction line. Until one unit gets past the
    endpoint, units are held back, so a run whose endpoint is down from the start writes nothing."""

    def __init__(self, out: Path, record: dict) -> None:
        out = Path(out)
        if (out / layout.PREDICTIONS_JSONL).exists() or (out / layout.TRACES_JSONL).exists():
            raise UsageProblem(f"--out {out}: already holds predictions.jsonl or traces.jsonl; choose a new folder")
        self.writer = UnitWriter(out, model_json_bytes(record), layout.PREDICTIONS_JSONL, layout.TRACES_JSONL)

    def unit(self, traces: list[dict], prediction: dict, summary: RunSummary) -> None:
        self.writer.unit(list(traces), prediction)
        summary.units += 1
        summary.calls += len(traces)
        if prediction["status"] == "submitted":
            summary.submitted += 1
        else:
            summary.failed += 1
            reason = str(prediction["reason"]).split(":")[0]
            summary.reasons[reason] = summary.reasons.get(reason, 0) + 1

    def close(self) -> None:
        self.writer.close()


OnUnit = Callable[[int, int, str, str, str], None]  # (done, total, instance_id, condition, reason or "")


def run_agent(release, out: str | Path, config: AgentConfig, *, model_id: str, splits: Sequence[str] | None = None,
              conditions: Sequence[str] | None = None, instance_ids: Sequence[str] | None = None, backend=None,
              client: ChatClient | None = None, model_info: dict | None = None, on_unit: OnUnit | None = None) -> RunSummary:
    """``rapgen agent run`` for Inspire: every chosen unit through the endpoint into ``out``.

    Everything that can be refused is refused before a byte is written: the units, the base URL, a
    folder already holding a run; ``model_info``: model.json values (display_name, provider, …)."""
    units = units_of(release, splits, conditions, instance_ids)
    client = client or ChatClient(config.base_url, config.api_key, config.timeout, config.retries)
    values = {"display_name": config.model, "provider": config.base_url,
              **{k: v for k, v in (model_info or {}).items() if v is not None}}
    folder = _Folder(Path(out), model_record(model_id, notes=f"rapgen agent run (Inspire prompt {template_sha256()[:12]})", **values))
    session = InspireSession.of_release(release, backend)
    instances = {i.instance_id: i for i in release.instances}
    summary = RunSummary()
    for n, (instance_id, condition) in enumerate(units, start=1):
        prompt = build_prompt(instances, release.ledger, instance_id, condition)
        before = len(session.records)
        line = run_episode(client, config, session, prompt)
        folder.unit(session.records[before:], line, summary)
        if on_unit is not None:
            on_unit(n, len(units), instance_id, condition, line["reason"] or "")
    folder.close()
    return summary


def run_reference(release, name: str, out: str | Path, *, conditions: Sequence[str] | None = None, backend=None,
                  submitted: str | None = None) -> RunSummary:
    """A deterministic reference agent (``bm25-brief`` or ``keyword-loop``) over every instance, through
    the session (so its traces are what replay re-executes) into a submission folder."""
    if name not in REFERENCE_AGENTS:
        raise UsageProblem(f"no reference agent {name!r} (choose from {', '.join(REFERENCE_AGENTS)})")
    session = InspireSession.of_release(release, backend)
    record = reference_model_json(name, submitted or release.info.get("created", "1970-01-01")[:10])
    folder = _Folder(Path(out), record)
    summary = RunSummary()
    agent, K = REFERENCE_AGENTS[name], release.ledger.K
    for instance in sorted(release.instances, key=lambda i: i.instance_id):
        for condition in conditions or layout.CONDITIONS:
            before = len(session.records)
            run = agent(instance, condition, lambda iid, args, c=condition: session.call(iid, c, args), K=K)
            folder.unit(session.records[before:], run.prediction, summary)
    folder.close()
    return summary
