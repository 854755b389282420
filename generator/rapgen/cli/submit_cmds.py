"""Commands of the submit stage: the pull-request check and the submitter's kit.

``rapgen submit check|init``, ``rapgen prompt``, ``rapgen serve-search`` and
``rapgen agent run``. Each parses options, calls one function of
:mod:`rapgen.submit` and echoes the result.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from rapgen.cli.common import EPILOG, debug_option, echo_json, fail, handle_errors, json_option, root_option


@click.group(epilog=EPILOG)
def submit() -> None:
    """Check a submission folder, or scaffold a new one.

    \b
      rapgen submit init my-model            # model.json template + next steps
      rapgen submit check my-model           # everything a reviewer checks
      rapgen submit check --base origin/main archive/models/my-model
    """


@submit.command("check", epilog=EPILOG)
@root_option
@click.option("--base", metavar="REF", help="Git ref of the main line (e.g. origin/main): also prove that nothing outside the folder changed, that the folder is new, and that existing SHA256SUMS lines are untouched.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the Markdown report to FILE (for a pull-request comment).")
@click.option("--no-scores", is_flag=True, help="Skip scoring, replay and the site render (fast schema check only).")
@click.option("--resamples", type=click.IntRange(min=1), default=None, help="Bootstrap resamples for the scores (default: the ledger's value). Fewer is faster, for previews only.")
@json_option
@debug_option
@click.argument("model_dir", type=click.Path(path_type=Path))
@handle_errors
def check(root: Path, base: str | None, report_path: Path | None, no_scores: bool, resamples: int | None, as_json: bool,
          debug: bool, model_dir: Path) -> None:
    """Check the submission folder MODEL_DIR as a pull request would add it.

    MODEL_DIR is archive/models/<model_id> (the pull-request case) or any other
    folder, checked as if it were added under its name. In order: archive
    integrity, model.json / predictions.jsonl / traces.jsonl (every problem with
    its line), coverage and validity accounting, the folder's SHA256SUMS lines,
    then — only if all of that passed — the scores with intervals, a replay of
    the traces and a dry-run render of the site, on a temporary copy. Nothing is
    written to the archive.

    Prints a Markdown report (the model's leaderboard row in context, its
    validity counts, warnings such as Search conditions without recorded
    calls, every problem with its fix); every text of the submission in it is
    escaped. Exit 1 if any problem; warnings alone exit 0.
    """
    import json

    from rapgen.io import atomic_write_bytes
    from rapgen.submit.review import check_submission, render_report
    from rapgen.text import escape_terminal

    if report_path is not None and report_path.parent.exists() and not report_path.parent.is_dir():
        fail(f"--report {escape_terminal(str(report_path))}: {escape_terminal(str(report_path.parent))} is not a folder", 2)
    wanted = not no_scores
    result = check_submission(root, model_dir, base=base, run_scores=wanted, run_replay=wanted, run_site=wanted, resamples=resamples)
    report = render_report(result)
    if report_path is not None:
        try:
            atomic_write_bytes(report_path, report.encode("utf-8"))
        except OSError as exc:
            fail(f"--report {escape_terminal(str(report_path))}: cannot write the report ({exc.strerror or exc})", 2)
    if as_json:
        # ASCII-only JSON: no control, bidi or undecodable character of a submission reaches the terminal raw.
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=True, default=str))
    else:
        click.echo(report, nl=False)
    if not result.ok:
        n = len(result.problems)
        fail(f"submission {escape_terminal(result.model_id)} has {n} problem{'s' * (n != 1)}; see the report above", 1)


@submit.command("init", epilog=EPILOG)
@debug_option
@click.argument("model_dir", type=click.Path(path_type=Path))
@handle_errors
def init(debug: bool, model_dir: Path) -> None:
    """Create MODEL_DIR with a model.json template and a README of next steps.

    The folder's name is the model id. Existing files are never overwritten.
    """
    from rapgen.submit import init_submission

    for path in init_submission(model_dir):
        click.echo(f"wrote {path}")
    click.echo(f"Next: fill in the TODOs of {model_dir / 'model.json'}, then see {model_dir / 'README.md'}.")


@click.command("prompt", epilog=EPILOG)
@root_option
@json_option
@debug_option
@click.argument("field_id", metavar="FIELD")
@click.argument("origin")
@click.argument("condition", type=click.Choice(["A0", "A1", "A2", "A3", "A4"]))
@handle_errors
def prompt(root: Path, as_json: bool, debug: bool, field_id: str, origin: str, condition: str) -> None:
    """Print the benchmark's system prompt and tool schemas for one unit.

    FIELD is a field id, ORIGIN a forecast origin (YYYY-MM-DD), CONDITION one of
    A0–A4. With --json: the messages and the OpenAI-format tools, ready to send.
    """
    import json

    from rapgen.archive import Archive
    from rapgen.submit import build_prompt

    result = build_prompt(Archive(root), field_id, origin, condition)
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo(result.system, nl=not result.system.endswith("\n"))
    click.echo("\n# User message\n\n" + result.user + "\n")
    click.echo("# Tool schemas\n")
    click.echo(json.dumps(result.tools, indent=2, ensure_ascii=False))


@click.command("serve-search", epilog=EPILOG)
@root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (127.0.0.1, ::1 or localhost only).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0 picks a free one).")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path), help="Append every recorded call to this new traces.jsonl file.")
@debug_option
@handle_errors
def serve_search(root: Path, host: str, port: int, traces: Path | None, debug: bool) -> None:
    """Serve the frozen Search tool on loopback for your own harness.

    POST /search with {"field_id", "origin", "condition", "arguments": {query,
    sort, date_from, date_to}}. Enforces the schema, the unit's temporal bounds
    and the per-unit call cap, and records every call in the traces.jsonl
    format (GET /traces, or --traces FILE). GET /tools?condition=A1 gives the
    tool schemas.
    """
    from rapgen.submit import serve_search as serve

    serve(root, host=host, port=port, traces=traces, announce=lambda m: click.echo(m, err=True))


@click.group(epilog=EPILOG)
def agent() -> None:
    """Run the benchmark protocol against a chat model."""


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
@click.option("--timeout", default=120.0, show_default=True, type=float, help="Seconds to wait for one reply.")
@click.option("--retries", default=2, show_default=True, type=click.IntRange(0, 10), help="Retries of a request after a connection error, a timeout, HTTP 408/409/429 or 5xx.")
@click.option("--display-name", help="model.json display_name (default: the model name).")
@click.option("--provider", help="model.json provider.")
@click.option("--proprietary/--open-weights", default=None, help="model.json proprietary flag.")
@click.option("--knowledge-cutoff", metavar="DATE", help="model.json knowledge_cutoff (YYYY-MM-DD).")
@click.option("--release-date", metavar="DATE", help="model.json release_date (YYYY-MM-DD).")
@click.option("--force", is_flag=True, help="Replace predictions.jsonl/traces.jsonl already in --out.")
@json_option
@debug_option
@handle_errors
def run(base_url: str, model_name: str, root: Path, out_dir: Path, fields: tuple, origins: tuple, conditions: tuple,
        api_key_env: str, temperature: float, max_turns: int | None, timeout: float, retries: int, display_name: str | None,
        provider: str | None, proprietary: bool | None, knowledge_cutoff: str | None, release_date: str | None,
        force: bool, as_json: bool, debug: bool) -> None:
    """Drive a chat endpoint through A0–A4 with native tool calls.

    Every unit gets the benchmark's system prompt (see `rapgen prompt`) and the
    tools Search (not in A0) and Finish; Search runs on the frozen shards with
    the call cap. Writes predictions.jsonl (units without a usable answer as
    status invalid with the reason), traces.jsonl, and model.json unless the
    folder already has one. Then run `rapgen submit check OUT`.
    """
    from rapgen.submit import AgentConfig, run_agent
    from rapgen.submit.runner import parse_date_option

    def split(values: tuple) -> tuple[str, ...] | None:
        items = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
        return items or None

    info = {
        "display_name": display_name, "provider": provider, "proprietary": proprietary,
        "knowledge_cutoff": parse_date_option(knowledge_cutoff, "--knowledge-cutoff"),
        "release_date": parse_date_option(release_date, "--release-date"),
    }
    config = AgentConfig(
        base_url=base_url, model=model_name, api_key=os.environ.get(api_key_env) or None,
        fields=split(fields), origins=split(origins), conditions=split(conditions) or ("A0", "A1", "A3"),
        temperature=temperature, max_turns=max_turns, timeout=timeout, retries=retries, model_info=info,
    )
    def tick(done: int, total: int, fid: str, origin: str, condition: str, reason: str) -> None:
        click.echo(f"[{done}/{total}] {condition} {fid} {origin}: {'invalid (' + reason + ')' if reason else 'ok'}", err=True)

    summary = run_agent(root, out_dir, config, force=force, on_unit=tick)
    if as_json:
        echo_json(summary.to_dict())
        return
    click.echo(f"{summary.units} units ({summary.valid} valid, {summary.invalid} invalid), {summary.calls} Search calls -> {out_dir}")
    for condition, counts in summary.by_condition.items():
        click.echo(f"  {condition}: {counts['valid']} valid, {counts['invalid']} invalid")
    click.echo(f"Next: rapgen submit check --root {root} {out_dir}")


COMMANDS = [submit, prompt, serve_search, agent]
