"""RAP's steps of the kit's commands (the RAP kind declares them, with its reference agents).

Each step is what ``rapgen prompt``, ``serve-search``, ``agent run`` and
``reference-agents`` did for a RAP root before the commands served several kinds,
with the same checks in the same order and the same messages; what a command
prints is returned as lines (:class:`Report`), so the command only echoes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from rapgen.errors import UsageProblem
from rapgen.text import escape_terminal


def safe(text: object) -> str:
    """Text for the terminal (the shared escaping rule: controls, escapes, bidi overrides made visible)."""
    return escape_terminal(str(text))


def parse_date_option(value: str | None, name: str) -> str | None:
    """A strict YYYY-MM-DD option value, or a usage error."""
    if value is None:
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise UsageProblem(f"{name} {value!r} is not a YYYY-MM-DD date")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise UsageProblem(f"{name} {value!r} is not a valid date") from None
    return value


def split_values(values: tuple | None) -> tuple[str, ...] | None:
    """Repeated and comma-separated option values as one tuple (None when there are none)."""
    items = tuple(v.strip() for value in values or () for v in value.split(",") if v.strip())
    return items or None


@dataclass
class Report:
    """What a command prints: ``data`` for ``--json``, else ``lines`` as (text, to stderr)."""

    data: Any
    lines: list[tuple[str, bool]] = field(default_factory=list)


# ---------------------------------------------------------------- prompt

PROMPT_OPTIONS = ("field_id", "origin", "condition", "readout", "budget", "model")


def rap_prompt(root: Path, field_id: str | None = None, origin: str | None = None, condition: str | None = None,
               readout: str | None = None, budget: str | None = None, model: str | None = None, release=None):
    """RAP's prompt of one unit (``FIELD ORIGIN CONDITION``), or a readout or exact-history prompt."""
    from rapgen.archive import Archive

    if field_id is None or origin is None or condition is None:
        raise UsageProblem("a RAP prompt names its unit: rapgen prompt FIELD ORIGIN CONDITION (e.g. nlp-agents 2025-07-01 A1)")
    archive = Archive(root)
    if readout is None and (model is not None or budget not in (None, "all")):
        raise UsageProblem("--model and --budget go with --readout")
    if readout is not None:
        return _readout_prompt(archive, root, field_id, origin, condition, readout, budget or "all", model)
    if condition.startswith("O"):
        from rapgen.kit.intervention_inputs import OracleBlocks
        from rapgen.kit.intervention_prompts import build_oracle_prompt
        from rapgen.kit.prompt import unit_context

        when = unit_context(archive, field_id, origin)["origin_date"]
        return build_oracle_prompt(archive, field_id, origin, condition, OracleBlocks(archive).block(field_id, when, condition))
    from rapgen.kit.prompt import build_prompt

    return build_prompt(archive, field_id, origin, condition)


def _readout_prompt(archive, root: Path, field_id: str, origin: str, condition: str, readout: str, budget: str, model: str | None):
    from rapgen.archive import SOURCE_CONDITIONS
    from rapgen.kit.intervention_inputs import EvidenceBuilder, read_model_folder, readout_jobs
    from rapgen.kit.intervention_prompts import build_readout_prompt
    from rapgen.kit.prompt import unit_context

    if condition not in SOURCE_CONDITIONS:
        raise UsageProblem(f"--readout reads the evidence of an A3 or A4 unit; CONDITION is {condition}")
    if not model:
        raise UsageProblem("--readout needs --model ID|DIR: the model folder whose traces.jsonl holds the evidence")
    folder = Path(model)
    if not folder.is_dir():
        folder = root / "archive" / "models" / model
        if not folder.is_dir():
            raise UsageProblem(f"--model {safe(model)}: neither a folder nor a listed model under {safe(root / 'archive' / 'models')}")
    when = unit_context(archive, field_id, origin)["origin_date"]
    units, traces = read_model_folder(archive, folder)
    jobs = [j for j in readout_jobs(units, traces, fields={field_id}, readouts=(readout,), sources=(condition,), budgets=(budget,))
            if j.origin == when]
    if not jobs:
        raise UsageProblem(f"{safe(folder)}: {safe(field_id)} {origin} is not a pair (the readout needs both an A3 and an A4 unit)")
    evidence = EvidenceBuilder(archive).evidence(jobs[0].calls)
    return build_readout_prompt(archive, field_id, when, readout, evidence, source_condition=condition, budget=budget)


# ---------------------------------------------------------------- serve-search

SERVE_OPTIONS = ("field_id", "origin", "condition")


def rap_serve(root: Path, *, host: str, port: int, traces: Path | None, mcp: bool, mcp_port: int | None, cache_dir: Path | None,
              announce: Callable[[str], None], field_id: str | None = None, origin: str | None = None,
              condition: str | None = None, release=None) -> None:
    """HTTP for any unit, or MCP (stdio or streamable HTTP) bound to one unit."""
    serving_mcp = mcp or mcp_port is not None
    unit_options = [n for n, v in (("--field", field_id), ("--origin", origin), ("--condition", condition)) if v is not None]
    if mcp and mcp_port is not None:
        raise UsageProblem("give --mcp (stdio) or --mcp-http PORT, not both")
    if serving_mcp and len(unit_options) < 3:
        raise UsageProblem("an MCP server serves one unit: give --field, --origin and --condition")
    if not serving_mcp and unit_options:
        raise UsageProblem(f"{unit_options[0]} binds a unit of the MCP server; add --mcp or --mcp-http PORT")
    if serving_mcp:
        from rapgen.kit.mcp_server import serve_mcp

        serve_mcp(root, field_id, origin, condition, traces=traces, http_port=mcp_port, host=host, cache_dir=cache_dir)
        return
    from rapgen.kit.serve import serve_search

    serve_search(root, host=host, port=port, traces=traces, announce=announce, cache_dir=cache_dir)


# ---------------------------------------------------------------- agent run

RUN_OPTIONS = ("fields", "origins", "conditions", "display_name", "provider", "proprietary", "knowledge_cutoff", "release_date",
               "readout", "readouts", "sources", "budgets", "oracle", "max_output_tokens", "resume", "force")


def rap_run(root: Path, out_dir: Path, *, base_url: str, model: str, api_key: str | None, temperature: float, max_turns: int | None,
            timeout: float, retries: int, progress: Callable[[str], None], fields=None, origins=None, conditions=None,
            display_name=None, provider=None, proprietary=None, knowledge_cutoff=None, release_date=None, readout=None,
            readouts=None, sources=None, budgets=None, oracle=None, max_output_tokens=None, resume=None, force=None,
            release=None) -> Report:
    """A0–A4 through the endpoint (or ``readout``: the readouts, ``oracle``: exact-history units)."""
    from rapgen.archive import FORECAST_CONDITIONS
    from rapgen.io import MODEL_OUTPUT, guard_output_dir
    from rapgen.kit.runner import AgentConfig, run_agent

    info = {
        "display_name": display_name, "provider": provider, "proprietary": proprietary,
        "knowledge_cutoff": parse_date_option(knowledge_cutoff, "--knowledge-cutoff"),
        "release_date": parse_date_option(release_date, "--release-date"),
    }
    config = AgentConfig(
        base_url=base_url, model=model, api_key=api_key,
        fields=split_values(fields), origins=split_values(origins), conditions=split_values(conditions) or FORECAST_CONDITIONS,
        temperature=temperature, max_turns=max_turns, timeout=timeout, retries=retries, model_info=info,
        max_output_tokens=max_output_tokens,
    )
    if readout or oracle:
        given = [n for n, v in (("--conditions", conditions), ("--display-name", display_name), ("--provider", provider),
                                ("--proprietary/--open-weights", proprietary), ("--knowledge-cutoff", knowledge_cutoff),
                                ("--release-date", release_date)) if v]
        if readout and oracle:
            raise UsageProblem("give --readout or --oracle, not both (run them one after the other)")
        if given:
            raise UsageProblem(f"{given[0]} is for the main run; --readout and --oracle write only their own files")
    elif readouts or sources or budgets:
        raise UsageProblem("--readouts, --sources and --budgets go with --readout")

    def tick(done: int, total: int, fid: str, origin: str, condition: str, reason: str) -> None:
        status = f"invalid ({safe(reason)})" if reason else "ok"
        progress(f"[{done}/{total}] {condition} {safe(fid)} {origin}: {status}")

    guard_output_dir(out_dir, MODEL_OUTPUT)  # a folder of its own, or archive/models/<id>
    if readout:
        from rapgen.kit.intervention_runner import run_readouts

        summary = run_readouts(root, out_dir, config, readouts=split_values(readouts), sources=split_values(sources),
                               budgets=split_values(budgets), force=bool(force), resume=bool(resume), on_unit=tick)
    elif oracle:
        from rapgen.kit.intervention_runner import run_oracle

        summary = run_oracle(root, out_dir, config, split_values(oracle) or (), force=bool(force), resume=bool(resume), on_unit=tick)
    else:
        summary = run_agent(root, out_dir, config, force=bool(force), resume=bool(resume), on_unit=tick)
    return Report(summary.to_dict(), _run_lines(summary, root, out_dir, "readouts" if readout else "units"))


def _run_lines(summary, root: Path, out_dir: Path, what: str) -> list[tuple[str, bool]]:
    lines = []
    if summary.resumed:
        lines.append((f"resumed: {summary.resumed} units were already in {safe(out_dir)}", True))
    if summary.dropped_calls:
        lines.append((f"dropped {summary.dropped_calls} trace lines of an interrupted unit (it ran again)", True))
    lines.append((f"{summary.units} {what} ({summary.valid} valid, {summary.invalid} invalid), {summary.calls} Search calls -> {safe(out_dir)}", False))
    for condition, counts in sorted(summary.by_condition.items()):
        lines.append((f"  {condition}: {counts['valid']} valid, {counts['invalid']} invalid", False))
    lines.append((f"Next: rapgen submit check --root {safe(root)} {safe(out_dir)}", False))
    live = getattr(summary, "live", None)
    if live is not None:
        lines.append((f"Live: {live['origin']} is open until {live['closes']}. Open entry: add {safe(out_dir)}/origins/{live['origin']}/ "
                       f"to the archive; sealed entry: rapgen submit commit --root {safe(root)} {safe(out_dir)}", False))
    return lines
