"""Commands of the submitter's kit: ``rapgen prompt``, ``rapgen serve-search``,
``rapgen agent run`` and ``rapgen reference-agents list|run``.

Each parses options, calls one function of :mod:`rapgen.kit` (or
:mod:`rapgen.agents`) and echoes the result; every command maps errors with
:func:`~rapgen.cli.common.handle_errors` (exit 0/1/2/3).
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

import click

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, ORACLE_CONDITIONS, SEARCH_CONDITIONS, SOURCE_CONDITIONS
from rapgen.cli.common import EPILOG, debug_option, echo_json, fail, handle_errors, json_option, root_option
from rapgen.errors import UsageProblem
from rapgen.text import escape_terminal

CONDITION_CHOICE = click.Choice(list(CONDITIONS))


def safe(text: object) -> str:
    """Text for the terminal (the shared escaping rule: controls, escapes, bidi overrides made visible)."""
    return escape_terminal(str(text))


def safe_lines(text: str) -> str:
    """Multi-line text for the terminal: each line escaped, the line breaks kept."""
    return "\n".join(safe(line) for line in text.split("\n"))


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


def _cache_option(f):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Cache folder for shard indexes (default: $RAPGEN_CACHE, else ROOT/.rapgen-cache).")(f)


@click.command("prompt", epilog=EPILOG)
@root_option
@json_option
@debug_option
@click.option("--readout", type=click.Choice(["forecast", "state"]), help="The readout prompt of CONDITION's (A3 or A4) recorded evidence, read out as a Forecast or a State answer.")
@click.option("--budget", type=click.Choice(["all", "matched"]), default="all", show_default=True, help="--readout: all the source's calls, or the first k = min(n_A3, n_A4).")
@click.option("--model", "model", metavar="ID|DIR", help="--readout: whose evidence: a model folder, or the id of a listed model (ROOT/archive/models/ID).")
@click.argument("field_id", metavar="FIELD")
@click.argument("origin")
@click.argument("condition", type=click.Choice([*CONDITIONS, *ORACLE_CONDITIONS]))
@handle_errors
def prompt(root: Path, as_json: bool, debug: bool, readout: str | None, budget: str, model: str | None,
           field_id: str, origin: str, condition: str) -> None:
    """Print the benchmark's system prompt and tool schemas for one unit.

    \b
    FIELD is a field id, ORIGIN a forecast origin (YYYY-MM-DD), CONDITION one of
    A0–A4, or O1–O3 for an exact-history unit. With --readout forecast|state,
    CONDITION (A3 or A4) is the source whose recorded evidence --model's
    traces.jsonl holds:
      rapgen prompt nlp-agents 2025-07-01 A4 --readout forecast --budget matched --model submissions/m
      rapgen prompt nlp-agents 2025-07-01 O2
    The first line gives prompt_sha256, the SHA-256 of exactly what is sent
    (messages and tools), and template_sha256, the prompt version (for readout
    and O units: the SHA-256 of the template file, the prompt_sha256 their
    records carry). With --json: both, the messages and the OpenAI-format
    tools, ready to send.
    """
    import json

    from rapgen.archive import Archive

    archive = Archive(root)
    if readout is None and (model is not None or budget != "all"):
        fail("--model and --budget go with --readout", 2)
    if readout is not None:
        result = _readout_prompt(archive, root, field_id, origin, condition, readout, budget, model)
    elif condition.startswith("O"):
        from rapgen.kit import OracleBlocks
        from rapgen.kit import build_oracle_prompt
        from rapgen.kit import unit_context

        when = unit_context(archive, field_id, origin)["origin_date"]
        result = build_oracle_prompt(archive, field_id, origin, condition, OracleBlocks(archive).block(field_id, when, condition))
    else:
        from rapgen.kit import build_prompt

        result = build_prompt(archive, field_id, origin, condition)
    if as_json:
        # ASCII-only: archive text reaches the terminal as JSON escapes, never as raw controls.
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=True))
        return
    click.echo(f"prompt_sha256: {result.prompt_sha256}  template_sha256: {result.template_sha256}\n")
    click.echo(safe_lines(result.system), nl=not result.system.endswith("\n"))
    click.echo("\n# User message\n\n" + safe(result.user) + "\n")
    click.echo("# Tool schemas\n")
    click.echo(json.dumps(result.tools, indent=2, ensure_ascii=False))


def _readout_prompt(archive, root: Path, field_id: str, origin: str, condition: str, readout: str, budget: str, model: str | None):
    from rapgen.kit import EvidenceBuilder, read_model_folder, readout_jobs
    from rapgen.kit import build_readout_prompt
    from rapgen.kit import unit_context

    if condition not in SOURCE_CONDITIONS:
        fail(f"--readout reads the evidence of an A3 or A4 unit; CONDITION is {condition}", 2)
    if not model:
        fail("--readout needs --model ID|DIR: the model folder whose traces.jsonl holds the evidence", 2)
    folder = Path(model)
    if not folder.is_dir():
        folder = root / "archive" / "models" / model
        if not folder.is_dir():
            fail(f"--model {safe(model)}: neither a folder nor a listed model under {safe(root / 'archive' / 'models')}", 2)
    when = unit_context(archive, field_id, origin)["origin_date"]
    units, traces = read_model_folder(archive, folder)
    jobs = [j for j in readout_jobs(units, traces, fields={field_id}, readouts=(readout,), sources=(condition,), budgets=(budget,))
            if j.origin == when]
    if not jobs:
        fail(f"{safe(folder)}: {safe(field_id)} {origin} is not a pair (the readout needs both an A3 and an A4 unit)", 2)
    evidence = EvidenceBuilder(archive).evidence(jobs[0].calls)
    return build_readout_prompt(archive, field_id, when, readout, evidence, source_condition=condition, budget=budget)


@click.command("serve-search", epilog=EPILOG)
@root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (127.0.0.1, ::1 or localhost only).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port of the HTTP tool server (0 picks a free one).")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path), help="Append every counted call to this new traces.jsonl file (fsync'd per line).")
@click.option("--mcp", "mcp_stdio", is_flag=True, help="Serve the Model Context Protocol over stdio instead, for one unit (--field, --origin, --condition).")
@click.option("--mcp-http", "mcp_port", type=click.IntRange(1, 65535), metavar="PORT", help="Serve the Model Context Protocol over streamable HTTP on loopback PORT (path /mcp), for one unit.")
@click.option("--field", "field_id", metavar="FIELD", help="MCP: the unit's field id.")
@click.option("--origin", metavar="DATE", help="MCP: the unit's origin (YYYY-MM-DD).")
@click.option("--condition", type=click.Choice([*SEARCH_CONDITIONS, ORACLE_CONDITIONS[-1]]), help="MCP: the unit's Search condition (O3: the exact-history unit's Search, on the Expanding shard).")
@_cache_option
@debug_option
@handle_errors
def serve_search(root: Path, host: str, port: int, traces: Path | None, mcp_stdio: bool, mcp_port: int | None,
                 field_id: str | None, origin: str | None, condition: str | None, cache_dir: Path | None, debug: bool) -> None:
    """Serve the frozen Search tool on loopback for your own harness.

    \b
    HTTP (default): POST /search with {"field_id", "origin", "condition",
    "arguments": {query, sort, date_from, date_to}}; GET /tools?condition=A1,
    /traces, /health. Any unit; the call cap per unit.
    MCP (--mcp for stdio, --mcp-http PORT): one tool, "search", with exactly the
    benchmark's arguments, bound to the unit given by --field, --origin and
    --condition. Both enforce the schema, the unit's bounds and the call cap,
    and record every counted call in the traces.jsonl format.
    """
    mcp = mcp_stdio or mcp_port is not None
    unit_options = [n for n, v in (("--field", field_id), ("--origin", origin), ("--condition", condition)) if v is not None]
    if mcp_stdio and mcp_port is not None:
        fail("give --mcp (stdio) or --mcp-http PORT, not both", 2)
    if mcp and len(unit_options) < 3:
        fail("an MCP server serves one unit: give --field, --origin and --condition", 2)
    if not mcp and unit_options:
        fail(f"{unit_options[0]} binds a unit of the MCP server; add --mcp or --mcp-http PORT", 2)
    if mcp:
        from rapgen.kit import serve_mcp

        serve_mcp(root, field_id, origin, condition, traces=traces, http_port=mcp_port, host=host, cache_dir=cache_dir)
        return
    from rapgen.kit import serve_search as serve

    serve(root, host=host, port=port, traces=traces, announce=lambda m: click.echo(m, err=True), cache_dir=cache_dir)


@click.group(epilog=EPILOG)
def agent() -> None:
    """Run the benchmark protocol against a chat model."""


def _split(values: tuple) -> tuple[str, ...] | None:
    items = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    return items or None


@agent.command("run", epilog=EPILOG)
@click.option("--base-url", required=True, help="OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1 (POST {base}/chat/completions).")
@click.option("--model", "model_name", required=True, help="Model name sent in every request.")
@root_option
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path), help="Submission folder to write; its name is the model id.")
@click.option("--fields", "fields", multiple=True, metavar="FIELD", help="Only these fields (repeat or comma-separate; default: all).")
@click.option("--origins", "origins", multiple=True, metavar="DATE", help="Only these origins (default: all).")
@click.option("--conditions", "conditions", multiple=True, metavar="COND", help="Conditions to run (default: A0 A1 A3; add A2 A4 for a diagnostic model).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR", help="Environment variable holding the API key (unset: no Authorization header).")
@click.option("--temperature", default=0.0, show_default=True, type=float, help="Sampling temperature sent to the endpoint.")
@click.option("--max-turns", type=click.IntRange(1, None), help="Model turns per unit before it is recorded invalid (default: call cap + 5).")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds to wait for one reply.")
@click.option("--retries", default=2, show_default=True, type=click.IntRange(0, 10), help="Retries of a request after a connection error, a timeout, HTTP 408/409/429 or 5xx.")
@click.option("--display-name", help="model.json display_name (default: the model name).")
@click.option("--provider", help="model.json provider.")
@click.option("--proprietary/--open-weights", default=None, help="model.json proprietary flag.")
@click.option("--knowledge-cutoff", metavar="DATE", help="model.json knowledge_cutoff (YYYY-MM-DD).")
@click.option("--release-date", metavar="DATE", help="model.json release_date (YYYY-MM-DD).")
@click.option("--readout", is_flag=True, help="Instead: read out --out's own recorded A3/A4 evidence (every pair) into replays.jsonl.")
@click.option("--readouts", multiple=True, metavar="forecast|state", help="--readout: only these readouts (default both).")
@click.option("--sources", multiple=True, metavar="A3|A4", help="--readout: only the evidence of these source conditions (default both).")
@click.option("--budgets", multiple=True, metavar="all|matched", help="--readout: only these budgets (default both).")
@click.option("--oracle", "oracle", multiple=True, metavar="O1|O2|O3", help="Instead: run these exact-history conditions into oracle.jsonl (O3's calls into oracle_traces.jsonl).")
@click.option("--max-output-tokens", type=click.IntRange(1, None), help="Sent as max_tokens in every request (default: not sent).")
@click.option("--resume", is_flag=True, help="Continue a run: skip the units already in --out (after checking the folder is consistent).")
@click.option("--force", is_flag=True, help="Delete predictions.jsonl/traces.jsonl already in --out and start again.")
@json_option
@debug_option
@handle_errors
def run(base_url: str, model_name: str, root: Path, out_dir: Path, fields: tuple, origins: tuple, conditions: tuple,
        api_key_env: str, temperature: float, max_turns: int | None, timeout: float, retries: int, display_name: str | None,
        provider: str | None, proprietary: bool | None, knowledge_cutoff: str | None, release_date: str | None,
        readout: bool, readouts: tuple, sources: tuple, budgets: tuple, oracle: tuple, max_output_tokens: int | None,
        resume: bool, force: bool, as_json: bool, debug: bool) -> None:
    """Drive a chat endpoint through A0–A4 with native tool calls.

    Every unit gets the benchmark's system prompt (see `rapgen prompt`) and the
    tools Search (not in A0) and Finish; Search runs on the frozen shards with
    the call cap. Each unit is appended to predictions.jsonl (a unit without a
    usable answer as status invalid with the reason) and its calls to
    traces.jsonl as soon as it finishes, so an interrupted run loses nothing:
    rerun with --resume. model.json is written if missing and records the
    prompt version. Then run `rapgen submit check OUT`.

    \b
    With --readout: every pair (an A3 and an A4 unit) of OUT is read out again
    from its recorded evidence, as a Forecast and as a State answer, under the
    full and the matched budget, into OUT/replays.jsonl. With --oracle O1,O2,O3:
    exact-history units into OUT/oracle.jsonl (O3's Search calls into
    OUT/oracle_traces.jsonl). Both keep --resume/--force and never touch
    model.json, predictions.jsonl or traces.jsonl.
    """
    from rapgen.kit import AgentConfig, run_agent

    info = {
        "display_name": display_name, "provider": provider, "proprietary": proprietary,
        "knowledge_cutoff": parse_date_option(knowledge_cutoff, "--knowledge-cutoff"),
        "release_date": parse_date_option(release_date, "--release-date"),
    }
    config = AgentConfig(
        base_url=base_url, model=model_name, api_key=os.environ.get(api_key_env) or None,
        fields=_split(fields), origins=_split(origins), conditions=_split(conditions) or FORECAST_CONDITIONS,
        temperature=temperature, max_turns=max_turns, timeout=timeout, retries=retries, model_info=info,
        max_output_tokens=max_output_tokens,
    )
    if readout or oracle:
        given = [n for n, v in (("--conditions", conditions), ("--display-name", display_name), ("--provider", provider),
                                ("--proprietary/--open-weights", proprietary), ("--knowledge-cutoff", knowledge_cutoff),
                                ("--release-date", release_date)) if v]
        if readout and oracle:
            fail("give --readout or --oracle, not both (run them one after the other)", 2)
        if given:
            fail(f"{given[0]} is for the main run; --readout and --oracle write only their own files", 2)
    elif readouts or sources or budgets:
        fail("--readouts, --sources and --budgets go with --readout", 2)

    def tick(done: int, total: int, fid: str, origin: str, condition: str, reason: str) -> None:
        status = f"invalid ({safe(reason)})" if reason else "ok"
        click.echo(f"[{done}/{total}] {condition} {safe(fid)} {origin}: {status}", err=True)

    from rapgen.io import MODEL_OUTPUT, guard_output_dir

    guard_output_dir(out_dir, MODEL_OUTPUT)  # a folder of its own, or archive/models/<id>
    if readout:
        from rapgen.kit import run_readouts

        summary = run_readouts(root, out_dir, config, readouts=_split(readouts), sources=_split(sources), budgets=_split(budgets),
                               force=force, resume=resume, on_unit=tick)
    elif oracle:
        from rapgen.kit import run_oracle

        summary = run_oracle(root, out_dir, config, _split(oracle) or (), force=force, resume=resume, on_unit=tick)
    else:
        summary = run_agent(root, out_dir, config, force=force, resume=resume, on_unit=tick)
    if as_json:
        echo_json(summary.to_dict())
        return
    if summary.resumed:
        click.echo(f"resumed: {summary.resumed} units were already in {safe(out_dir)}", err=True)
    if summary.dropped_calls:
        click.echo(f"dropped {summary.dropped_calls} trace lines of an interrupted unit (it ran again)", err=True)
    what = "readouts" if readout else "units"
    click.echo(f"{summary.units} {what} ({summary.valid} valid, {summary.invalid} invalid), {summary.calls} Search calls -> {safe(out_dir)}")
    for condition, counts in sorted(summary.by_condition.items()):
        click.echo(f"  {condition}: {counts['valid']} valid, {counts['invalid']} invalid")
    click.echo(f"Next: rapgen submit check --root {safe(root)} {safe(out_dir)}")
    live = getattr(summary, "live", None)
    if live is not None:
        click.echo(f"Live: {live['origin']} is open until {live['closes']}. Open entry: add {safe(out_dir)}/origins/{live['origin']}/ "
                   f"to the archive; sealed entry: rapgen submit commit --root {safe(root)} {safe(out_dir)}")


@click.group("reference-agents", epilog=EPILOG)
def reference_agents() -> None:
    """Deterministic reference agents (no language model) that run A0–A4 through the Search backend."""


@reference_agents.command("list", epilog=EPILOG)
@debug_option
@handle_errors
def agents_list(debug: bool) -> None:
    """List the reference agents and the conditions they answer."""
    from rapgen.agents import REFERENCE_AGENTS

    for spec in REFERENCE_AGENTS:
        click.echo(f"{spec.model_id:<20} {' '.join(sorted(spec.policies)):<16} {spec.display_name}")


@reference_agents.command("run", epilog=EPILOG)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write OUT/<model_id>/ folders (a scratch directory).")
@click.option("--into-archive", is_flag=True,
              help="Write into ROOT/archive/models/<model_id>/ instead; refuses if a folder exists. Run 'rapgen seal' after.")
@click.option("--agent", "agent_ids", multiple=True, help="Run only this agent (repeatable; see 'rapgen reference-agents list').")
@click.option("--submitted", default=None, metavar="YYYY-MM-DD", help="The model.json 'submitted' date (default: today).")
@_cache_option
@root_option
@json_option
@debug_option
@handle_errors
def agents_run(out_dir, into_archive, agent_ids, submitted, cache_dir, root, as_json, debug):
    """Run the reference agents on every field × origin of the verified archive.

    \b
      rapgen reference-agents run --root . --out /tmp/ref-agents     # inspect first
      rapgen reference-agents run --root . --into-archive && rapgen seal --root .
    """
    from rapgen.agents import add_agents_to_archive, run_agents

    if into_archive == (out_dir is not None):
        fail("give exactly one of --out DIR or --into-archive", 2)
    value = parse_date_option(submitted, "--submitted")
    when = date.fromisoformat(value) if value else None
    ids = list(agent_ids) or None
    if into_archive:
        summaries = add_agents_to_archive(root, agent_ids=ids, cache_dir=cache_dir, submitted=when)
    else:
        from rapgen.io import FOLDER_OUTPUT, guard_output_dir

        summaries = run_agents(root, guard_output_dir(out_dir, FOLDER_OUTPUT), agent_ids=ids, cache_dir=cache_dir, submitted=when)
    if as_json:
        echo_json(summaries)
        return
    for s in summaries:
        click.echo(f"{s['model_id']:<20} {s['units']:>6} units {s['calls']:>7} calls (≤ {s['max_calls_per_unit']} per unit) → {safe(s['path'])}")
    if into_archive:
        click.echo("Now run 'rapgen seal --root " + safe(root) + "' to list the new files in SHA256SUMS.", err=True)


COMMANDS = [prompt, serve_search, agent, reference_agents]
