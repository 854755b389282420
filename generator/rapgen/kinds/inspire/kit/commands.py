"""Inspire's steps of the kit's commands (:data:`KIT`, KINDS.md §7).

Each step gets the benchmark root, ``release`` (a callable verifying the root once and returning
its latest release) and the options the user gave; anything it refuses is refused before an
index is opened or a file made (a usage error, exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from rapgen.errors import UsageProblem
from rapgen.kit import KitCommand, KitSpec, Report, check_loopback, parse_date_option, safe, split_values

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.kit.prompt import build_prompt
from rapgen.kinds.inspire.kit.run import AgentConfig, run_agent, run_reference
from rapgen.kinds.inspire.search import REFERENCE_AGENTS, release_backend


def _instances(release) -> dict:
    return {i.instance_id: i for i in release.instances}


def _unit(release, instance_id: str | None, condition: str | None, what: str) -> tuple[str, str]:
    """(instance, condition) of ``release``, or a usage error naming the choices."""
    instances = _instances(release)
    if instance_id is None:
        raise UsageProblem(f"{what} names an instance: give --instance ID (e.g. {', '.join(sorted(instances)[:3])})")
    prompt = build_prompt(instances, release.ledger, instance_id, condition or layout.PRIMARY_CONDITION)  # the checks
    return prompt.instance_id, prompt.condition


def prompt(root: Path, *, release: Callable, instance_id: str | None = None, condition: str | None = None):
    """The system prompt, user message and tools of one instance (``condition``: detailed by default)."""
    opened = release()
    iid, cond = _unit(opened, instance_id, condition, "an Inspire prompt")
    return build_prompt(_instances(opened), opened.ledger, iid, cond)


def serve(root: Path, *, release: Callable, host: str, port: int, traces: Path | None, mcp: bool, mcp_port: int | None,
          cache_dir: Path | None, announce: Callable[[str], None], instance_id: str | None = None, condition: str | None = None) -> None:
    """HTTP (any unit, or the one ``--instance`` names) or MCP (one unit) on the instance's shard."""
    from rapgen.kinds.inspire.kit.serve import serve_mcp, serve_search

    check_loopback(host)
    serving_mcp = mcp or mcp_port is not None
    if mcp and mcp_port is not None:
        raise UsageProblem("give --mcp (stdio) or --mcp-http PORT, not both")
    if instance_id is None and (serving_mcp or condition is not None):
        raise UsageProblem("an MCP server serves one instance: give --instance ID" if serving_mcp
                           else "--condition goes with --instance ID (the unit a server is bound to)")
    opened = release()
    unit = _unit(opened, instance_id, condition, "serve-search") if instance_id is not None else None
    backend = release_backend(opened, cache_dir=cache_dir, log=announce)
    if serving_mcp:
        serve_mcp(opened, *unit, traces=traces, http_port=mcp_port, host=host, backend=backend)
    else:
        serve_search(opened, host=host, port=port, traces=traces, announce=announce, backend=backend, bound=unit)


def run(root: Path, out_dir: Path, *, release: Callable, base_url: str, model: str, api_key: str | None, temperature: float,
        max_turns: int | None, timeout: float, retries: int, progress: Callable[[str], None], instances=None, splits=None,
        conditions=None, display_name=None, provider=None, proprietary=None, knowledge_cutoff=None, release_date=None,
        cache_dir=None) -> Report:
    """Every chosen unit (default: eval x detailed) through the endpoint into ``out_dir`` (its name: the model id)."""
    from rapgen.io import MODEL_OUTPUT, guard_output_dir
    from rapgen.kit import ChatClient

    info = {"display_name": display_name, "provider": provider, "proprietary": proprietary,
            "knowledge_cutoff": parse_date_option(knowledge_cutoff, "--knowledge-cutoff"),
            "release_date": parse_date_option(release_date, "--release-date")}
    out = guard_output_dir(out_dir, MODEL_OUTPUT)  # a folder of its own, or archive/models/<id>; its name a model id
    opened = release()
    config = AgentConfig(base_url, model, api_key, temperature, max_turns or opened.ledger.max_calls + 5, timeout, retries)
    client = ChatClient(base_url, api_key, timeout, retries)  # a bad --base-url: refused here

    def tick(done: int, total: int, iid: str, condition: str, reason: str) -> None:
        progress(f"[{done}/{total}] {iid} {condition}: {f'failed ({safe(reason)})' if reason else 'submitted'}")

    summary = run_agent(opened, out, config, model_id=Path(out).name, splits=split_values(splits),
                        conditions=split_values(conditions), instance_ids=split_values(instances),
                        backend=release_backend(opened, cache_dir=cache_dir), client=client, model_info=info, on_unit=tick)
    lines = [(f"{summary.units} units ({summary.submitted} submitted, {summary.failed} failed), {summary.calls} "
              f"search_papers calls -> {safe(out)}", False)]
    lines += [(f"  {reason}: {n}", False) for reason, n in sorted(summary.reasons.items())]
    lines.append((f"Next: rapgen submit check --root {safe(root)} {safe(out)}", False))
    return Report({"out": str(out), **summary.to_dict()}, lines)


def reference_list() -> list[tuple[str, str, str]]:
    from rapgen.kinds.inspire.search import AGENT_NOTES

    return [(name, " ".join(layout.CONDITIONS), AGENT_NOTES[name][0]) for name in REFERENCE_AGENTS]


def reference_run(root: Path, out: Path | None, *, release: Callable, agent_ids, into_archive: bool, cache_dir, submitted) -> list[dict]:
    """Each chosen reference agent (default: all) over every instance and condition, into ``out``/<name>/
    or, ``into_archive``, the archive's ``models/<name>/`` (refused if it exists; seal after)."""
    names = list(agent_ids or REFERENCE_AGENTS)
    unknown = [n for n in names if n not in REFERENCE_AGENTS]
    if unknown:
        raise UsageProblem(f"no reference agent {unknown[0]!r} (choose from {', '.join(REFERENCE_AGENTS)})")
    base = Path(root) / "archive" / "models" if into_archive else Path(out)
    taken = [n for n in names if (base / n).exists()]
    if taken:
        raise UsageProblem(f"{base / taken[0]} already exists; remove it first (a reference agent's folder is written whole)")
    opened = release()
    backend = release_backend(opened, cache_dir=cache_dir)
    day = submitted.isoformat() if submitted is not None else None
    out_rows = []
    for name in names:
        summary = run_reference(opened, name, base / name, backend=backend, submitted=day)
        out_rows.append({"model_id": name, "units": summary.units, "calls": summary.calls,
                         "max_calls_per_unit": opened.ledger.max_calls, "path": str(base / name)})
    return out_rows


KIT = KitSpec(
    prompt=KitCommand(prompt, ("instance_id", "condition")),
    serve=KitCommand(serve, ("instance_id", "condition")),
    run=KitCommand(run, ("instances", "splits", "conditions", "display_name", "provider", "proprietary", "knowledge_cutoff",
                         "release_date", "cache_dir")),
    reference_list=reference_list,
    reference_run=reference_run,
)
