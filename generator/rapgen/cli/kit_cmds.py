"""Commands of the submitter's kit: ``rapgen prompt``, ``rapgen serve-search``,
``rapgen agent run`` and ``rapgen reference-agents list|run``.

Each command picks the benchmark (``--benchmark SLUG`` or ``--root DIR``), finds
its kind from ``ARCHIVE.json``'s ``format`` (a root whose file cannot be read is
RAP's, whose own checks report it) and hands the options it was given to that
kind's kit (:class:`rapgen.kit.KitSpec`, ``BenchmarkKind.kit``); an option the
kind does not take is a usage error listing those it does. Every command maps
errors with :func:`~rapgen.cli.common.handle_errors` (exit 0/1/2/3).
"""

from __future__ import annotations

import functools
import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import click

from rapgen.archive import CONDITIONS, ORACLE_CONDITIONS
from rapgen.cli.benchmarks import benchmark_root_option
from rapgen.cli.common import EPILOG, benchmark_kinds, debug_option, echo_json, fail, handle_errors, json_option
from rapgen.errors import RapgenError
from rapgen.kit import given_options, parse_date_option, safe

CONDITION_CHOICE = click.Choice(list(CONDITIONS))


def safe_lines(text: str) -> str:
    """Multi-line text for the terminal: each line escaped, the line breaks kept."""
    return "\n".join(safe(line) for line in text.split("\n"))


def kind_of(root: Path):
    """The kind of the benchmark at ``root``: the installed kind its ARCHIVE.json's ``format`` names,
    else RAP (whose commands report an unreadable or unknown archive themselves, as before)."""
    kinds = benchmark_kinds()
    try:
        fmt = json.loads((Path(root) / "archive" / "ARCHIVE.json").read_bytes()).get("format")
        return kinds.for_format(fmt)
    except (OSError, ValueError, AttributeError, RapgenError):
        return kinds["rap"]


def release_opener(root: Path):
    """A zero-argument callable verifying ``root`` once and returning its latest release (for a kind's step)."""
    from rapgen.cli.common import open_release

    return functools.lru_cache(maxsize=1)(lambda: open_release(root)[1])


def _step(command: str, root: Path, which: str, given: dict[str, tuple[str, Any]]):
    """(kind, its step, the given options it takes) — or a usage error."""
    kind = kind_of(root)
    kit = kind.kit
    step = getattr(kit, which, None) if kit is not None else None
    return kind, step, given_options(command, kind.name, step, given)


def _cache_option(f):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Cache folder for shard indexes (default: $RAPGEN_CACHE, else ROOT/.rapgen-cache).")(f)


# ---------------------------------------------------------------- prompt

@click.command("prompt", epilog=EPILOG)
@benchmark_root_option
@json_option
@debug_option
@click.option("--readout", type=click.Choice(["forecast", "state"]), help="RAP: the readout prompt of CONDITION's (A3 or A4) recorded evidence, read out as a Forecast or a State answer.")
@click.option("--budget", type=click.Choice(["all", "matched"]), default=None, help="RAP --readout: all the source's calls (the default), or the first k = min(n_A3, n_A4).")
@click.option("--model", "model", metavar="ID|DIR", help="RAP --readout: whose evidence: a model folder, or the id of a listed model (ROOT/archive/models/ID).")
@click.option("--instance", "instance_id", metavar="ID", help="Inspire: the instance (insp-NNNN).")
@click.option("--condition", "condition_option", metavar="COND", help="Inspire: the brief shown, detailed (default) or terse.")
@click.option("--episode", "episode_id", metavar="ID", help="Ideas: the episode (TOPIC@YYYY-MM-DD).")
@click.argument("field_id", metavar="[FIELD", required=False)
@click.argument("origin", metavar="ORIGIN", required=False)
@click.argument("condition", metavar="CONDITION]", type=click.Choice([*CONDITIONS, *ORACLE_CONDITIONS]), required=False)
@handle_errors
def prompt(root: Path, as_json: bool, debug: bool, readout: str | None, budget: str | None, model: str | None,
           instance_id: str | None, condition_option: str | None, episode_id: str | None,
           field_id: str | None, origin: str | None, condition: str | None) -> None:
    """Print the benchmark's system prompt and tool schemas for one unit.

    \b
    RAP: FIELD is a field id, ORIGIN a forecast origin (YYYY-MM-DD), CONDITION
    one of A0–A4, or O1–O3 for an exact-history unit. With --readout
    forecast|state, CONDITION (A3 or A4) is the source whose recorded evidence
    --model's traces.jsonl holds:
      rapgen prompt nlp-agents 2025-07-01 A4 --readout forecast --budget matched --model submissions/m
      rapgen prompt nlp-agents 2025-07-01 O2
    Inspire: an instance and its brief (detailed or terse):
      rapgen prompt --benchmark inspire --instance insp-0042 [--condition terse]
    Ideas: an episode, the topic and its cutoff:
      rapgen prompt --benchmark ideas --episode rag@2025-01-01
    The first line gives prompt_sha256, the SHA-256 of exactly what is sent
    (messages and tools), and template_sha256, the prompt version (for readout
    and O units: the SHA-256 of the template file, the prompt_sha256 their
    records carry). With --json: both, the messages and the OpenAI-format
    tools, ready to send.
    """
    if condition is not None and condition_option is not None:
        fail("give the condition once: as CONDITION or as --condition", 2)
    given = {
        "field_id": ("FIELD", field_id), "origin": ("ORIGIN", origin),
        "condition": ("CONDITION" if condition is not None else "--condition", condition or condition_option),
        "readout": ("--readout", readout), "budget": ("--budget", budget), "model": ("--model", model),
        "instance_id": ("--instance", instance_id), "episode_id": ("--episode", episode_id),
    }
    _, step, options = _step("prompt", root, "prompt", given)
    result = step(root, release=release_opener(root), **options)
    if as_json:
        # ASCII-only: archive text reaches the terminal as JSON escapes, never as raw controls.
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=True))
        return
    click.echo(f"prompt_sha256: {result.prompt_sha256}  template_sha256: {result.template_sha256}\n")
    click.echo(safe_lines(result.system), nl=not result.system.endswith("\n"))
    click.echo("\n# User message\n\n" + safe_lines(result.user) + "\n")
    click.echo("# Tool schemas\n")
    click.echo(json.dumps(result.tools, indent=2, ensure_ascii=False))


# ---------------------------------------------------------------- serve-search

@click.command("serve-search", epilog=EPILOG)
@benchmark_root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (127.0.0.1, ::1 or localhost only).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port of the HTTP tool server (0 picks a free one).")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path), help="Append every counted call to this new traces.jsonl file (fsync'd per line).")
@click.option("--mcp", "mcp_stdio", is_flag=True, help="Serve the Model Context Protocol over stdio instead, for one unit.")
@click.option("--mcp-http", "mcp_port", type=click.IntRange(1, 65535), metavar="PORT", help="Serve the Model Context Protocol over streamable HTTP on loopback PORT (path /mcp), for one unit.")
@click.option("--field", "field_id", metavar="FIELD", help="RAP MCP: the unit's field id.")
@click.option("--origin", metavar="DATE", help="RAP MCP: the unit's origin (YYYY-MM-DD).")
@click.option("--condition", metavar="COND", help="RAP MCP: the unit's Search condition (A1–A4, or O3: the exact-history unit's Search, on the Expanding shard). Inspire: detailed (default) or terse.")
@click.option("--instance", "instance_id", metavar="ID", help="Inspire: the instance served (its corpus before its cutoff).")
@_cache_option
@debug_option
@handle_errors
def serve_search(root: Path, host: str, port: int, traces: Path | None, mcp_stdio: bool, mcp_port: int | None,
                 field_id: str | None, origin: str | None, condition: str | None, instance_id: str | None,
                 cache_dir: Path | None, debug: bool) -> None:
    """Serve the frozen Search tool on loopback for your own harness.

    \b
    RAP, HTTP (default): POST /search with {"field_id", "origin", "condition",
    "arguments": {query, sort, date_from, date_to}}; GET /tools?condition=A1,
    /traces, /health. Any unit; the call cap per unit.
    RAP, MCP (--mcp for stdio, --mcp-http PORT): one tool, "search", with exactly
    the benchmark's arguments, bound to the unit given by --field, --origin and
    --condition.
    Inspire (--benchmark inspire --instance ID [--condition terse]): the tool
    search_papers on the instance's corpus before its cutoff, over HTTP (POST
    /search_papers with {"instance_id", "condition", "arguments"}) or MCP.
    Every way enforces the schema, the unit's bounds and the call cap (a call
    past the cap is refused and not counted), and records every counted call in
    the traces.jsonl format.
    """
    given = {"field_id": ("--field", field_id), "origin": ("--origin", origin), "condition": ("--condition", condition),
             "instance_id": ("--instance", instance_id)}
    _, step, options = _step("serve-search", root, "serve", given)
    step(root, release=release_opener(root), host=host, port=port, traces=traces, mcp=mcp_stdio, mcp_port=mcp_port,
         cache_dir=cache_dir, announce=lambda m: click.echo(m, err=True), **options)


# ---------------------------------------------------------------- agent run

@click.group(epilog=EPILOG)
def agent() -> None:
    """Run the benchmark protocol against a chat model."""


@agent.command("run", epilog=EPILOG)
@click.option("--base-url", required=True, help="OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1 (POST {base}/chat/completions).")
@click.option("--model", "model_name", required=True, help="Model name sent in every request.")
@benchmark_root_option
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path), help="Submission folder to write; its name is the model id.")
@click.option("--fields", "fields", multiple=True, metavar="FIELD", help="RAP: only these fields (repeat or comma-separate; default: all).")
@click.option("--origins", "origins", multiple=True, metavar="DATE", help="RAP: only these origins (default: all).")
@click.option("--instances", "instances", multiple=True, metavar="ID", help="Inspire: only these instances (repeat or comma-separate; default: every instance of --splits).")
@click.option("--splits", "splits", multiple=True, metavar="SPLIT", help="Inspire: the splits to run (default: eval).")
@click.option("--conditions", "conditions", multiple=True, metavar="COND", help="Conditions to run (RAP default: A0 A1 A3, add A2 A4 for a diagnostic model; Inspire default: detailed).")
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
@click.option("--readout", is_flag=True, help="RAP, instead: read out --out's own recorded A3/A4 evidence (every pair) into replays.jsonl.")
@click.option("--readouts", multiple=True, metavar="forecast|state", help="--readout: only these readouts (default both).")
@click.option("--sources", multiple=True, metavar="A3|A4", help="--readout: only the evidence of these source conditions (default both).")
@click.option("--budgets", multiple=True, metavar="all|matched", help="--readout: only these budgets (default both).")
@click.option("--oracle", "oracle", multiple=True, metavar="O1|O2|O3", help="RAP, instead: run these exact-history conditions into oracle.jsonl (O3's calls into oracle_traces.jsonl).")
@click.option("--max-output-tokens", type=click.IntRange(1, None), help="Sent as max_tokens in every request (default: not sent).")
@click.option("--resume", is_flag=True, help="RAP: continue a run: skip the units already in --out (after checking the folder is consistent).")
@click.option("--force", is_flag=True, help="RAP: delete predictions.jsonl/traces.jsonl already in --out and start again.")
@_cache_option
@json_option
@debug_option
@handle_errors
def run(base_url: str, model_name: str, root: Path, out_dir: Path, fields: tuple, origins: tuple, instances: tuple, splits: tuple,
        conditions: tuple, api_key_env: str, temperature: float, max_turns: int | None, timeout: float, retries: int,
        display_name: str | None, provider: str | None, proprietary: bool | None, knowledge_cutoff: str | None,
        release_date: str | None, readout: bool, readouts: tuple, sources: tuple, budgets: tuple, oracle: tuple,
        max_output_tokens: int | None, resume: bool, force: bool, cache_dir: Path | None, as_json: bool, debug: bool) -> None:
    """Drive a chat endpoint through the benchmark's units with native tool calls.

    RAP: every unit gets the benchmark's system prompt (see `rapgen prompt`) and
    the tools Search (not in A0) and Finish; Search runs on the frozen shards
    with the call cap. Each unit is appended to predictions.jsonl (a unit
    without a usable answer as status invalid with the reason) and its calls to
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

    \b
    Inspire (--benchmark inspire): each instance's brief with the tools
    search_papers (its corpus before the cutoff, the call cap) and
    submit_ranking, into OUT/{model.json, predictions.jsonl, traces.jsonl};
    a unit without a submission is a failed line with its reason.
    """
    given = {
        "fields": ("--fields", fields), "origins": ("--origins", origins), "instances": ("--instances", instances),
        "splits": ("--splits", splits), "conditions": ("--conditions", conditions),
        "display_name": ("--display-name", display_name), "provider": ("--provider", provider),
        "proprietary": ("--proprietary/--open-weights", proprietary), "knowledge_cutoff": ("--knowledge-cutoff", knowledge_cutoff),
        "release_date": ("--release-date", release_date), "readout": ("--readout", readout or None),
        "readouts": ("--readouts", readouts), "sources": ("--sources", sources), "budgets": ("--budgets", budgets),
        "oracle": ("--oracle", oracle), "max_output_tokens": ("--max-output-tokens", max_output_tokens),
        "resume": ("--resume", resume or None), "force": ("--force", force or None), "cache_dir": ("--cache-dir", cache_dir),
    }
    _, step, options = _step("agent run", root, "run", given)
    report = step(root, out_dir, release=release_opener(root), base_url=base_url, model=model_name,
                  api_key=os.environ.get(api_key_env) or None, temperature=temperature, max_turns=max_turns, timeout=timeout,
                  retries=retries, progress=lambda m: click.echo(m, err=True), **options)
    if as_json:
        echo_json(report.data)
        return
    for text, err in report.lines:
        click.echo(text, err=err)


# ---------------------------------------------------------------- reference agents

@click.group("reference-agents", epilog=EPILOG)
def reference_agents() -> None:
    """Deterministic reference agents (no language model) that run the benchmark through its Search backend."""


@reference_agents.command("list", epilog=EPILOG)
@benchmark_root_option
@debug_option
@handle_errors
def agents_list(root: Path, debug: bool) -> None:
    """List the reference agents and what they answer (RAP: the policies; Inspire: the conditions)."""
    kind, step, _ = _step("reference-agents list", root, "reference_list", {})
    for model_id, answers, display_name in step():
        click.echo(f"{model_id:<20} {answers:<16} {display_name}")


@reference_agents.command("run", epilog=EPILOG)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write OUT/<model_id>/ folders (a scratch directory).")
@click.option("--into-archive", is_flag=True,
              help="Write into ROOT/archive/models/<model_id>/ instead; refuses if a folder exists. Run 'rapgen seal' after.")
@click.option("--agent", "agent_ids", multiple=True, help="Run only this agent (repeatable; see 'rapgen reference-agents list').")
@click.option("--submitted", default=None, metavar="YYYY-MM-DD", help="The model.json 'submitted' date (default: today; Inspire: the archive's creation date).")
@_cache_option
@benchmark_root_option
@json_option
@debug_option
@handle_errors
def agents_run(out_dir, into_archive, agent_ids, submitted, cache_dir, root, as_json, debug):
    """Run the reference agents on every unit of the verified archive.

    \b
      rapgen reference-agents run --root . --out /tmp/ref-agents     # inspect first
      rapgen reference-agents run --root . --into-archive && rapgen seal --root .
      rapgen reference-agents run --benchmark inspire --agent bm25-brief --out /tmp/ref
    """
    if into_archive == (out_dir is not None):
        fail("give exactly one of --out DIR or --into-archive", 2)
    value = parse_date_option(submitted, "--submitted")
    when = date.fromisoformat(value) if value else None
    _, step, _ = _step("reference-agents run", root, "reference_run", {})
    if not into_archive:
        from rapgen.io import FOLDER_OUTPUT, guard_output_dir

        out_dir = guard_output_dir(out_dir, FOLDER_OUTPUT)
    summaries = step(root, out_dir, agent_ids=list(agent_ids) or None, into_archive=into_archive, cache_dir=cache_dir,
                     submitted=when, release=release_opener(root))
    if as_json:
        echo_json(summaries)
        return
    for s in summaries:
        click.echo(f"{s['model_id']:<20} {s['units']:>6} units {s['calls']:>7} calls (≤ {s['max_calls_per_unit']} per unit) → {safe(s['path'])}")
    if into_archive:
        click.echo("Now run 'rapgen seal --root " + safe(root) + "' to list the new files in SHA256SUMS.", err=True)


COMMANDS = [prompt, serve_search, agent, reference_agents]
