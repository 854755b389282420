"""``rapgen agent run --readout`` and ``--oracle``: the intervention units through a chat endpoint.

- :func:`run_readouts` replays a model folder's own recorded A3/A4 evidence
  (every pair; both sources, both readouts, both budgets unless narrowed) and
  appends one line per readout to ``replays.jsonl``.
- :func:`run_oracle` runs O1/O2/O3 on every selected field × origin and
  appends one line per unit to ``oracle.jsonl``; O3's Search calls go through
  a :class:`~rapgen.kit.session.SearchSession` (the ledger's call cap) into
  ``oracle_traces.jsonl`` with condition ``O3``, before the unit's line.

The robustness of the main driver holds (:mod:`rapgen.kit.runner`): each line
written whole and fsync'd as its unit finishes, ``--resume`` after checking the
folder (:mod:`rapgen.kit.intervention_resume`), every odd reply an invalid
record with its reason, a run whose first units all fail at the endpoint
stopped before anything is written. Records carry ``evidence_sha256`` /
``input_sha256``, the template's ``prompt_sha256`` and the §7 keys the
endpoint reported (``response_model``, ``usage``) with ``attempts``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Callable

from rapgen.archive import (
    Archive, canonical_hash, ORACLE_JSONL, ORACLE_TRACES_JSONL, REPLAYS_JSONL, BUDGETS, ORACLE_CONDITIONS, ORACLE_SEARCH,
    READOUTS, SOURCE_CONDITIONS, readout_cell,
)
from rapgen.errors import UsageProblem
from rapgen.kit.chat import ChatClient, check_base_url
from rapgen.kit.intervention_inputs import EvidenceBuilder, OracleBlocks, ReadoutJob, read_model_folder, readout_jobs
from rapgen.kit.intervention_prompts import (
    InterventionPrompt,
    build_oracle_prompt,
    build_readout_prompt,
    oracle_template_sha256,
    readout_template_sha256,
)
from rapgen.kit.intervention_resume import done_oracle, done_readouts, keep_oracle_traces, prepare_files
from rapgen.kit.runner import AgentConfig, Episode, RunSummary, UnitWriter, _select, run_episode
from rapgen.kit.session import SearchSession

OnUnit = Callable[[int, int, str, str, str, str], None]


def _choose(values: tuple[str, ...] | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    if not values:
        return allowed
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise UsageProblem(f"{what} {unknown[0]!r} is not one of {', '.join(allowed)}")
    return tuple(a for a in allowed if a in values)


def _outcome(line: dict, episode: Episode) -> dict:
    """``line`` plus the unit's answer (weights, or status invalid and the reason) and provenance."""
    out = dict(line)
    out["weights"] = episode.weights
    if episode.weights is None:
        out["status"], out["reason"] = "invalid", episode.reason
    elif episode.rationale:
        out["rationale"] = episode.rationale
    return out


def _provenance(episode: Episode, max_output_tokens: int | None) -> dict:
    out = episode.provenance()
    if max_output_tokens is not None:
        out["max_output_tokens"] = max_output_tokens
    return out


def readout_line(prompt: InterventionPrompt, episode: Episode, max_output_tokens: int | None = None) -> dict:
    """One replays.jsonl record (key order as INTERVENTIONS.md §1 lists them)."""
    head = {"field_id": prompt.field_id, "origin": prompt.origin.isoformat(), "source_condition": prompt.source_condition,
            "readout": prompt.readout, "budget": prompt.budget, "calls_used": prompt.calls_used,
            "evidence_sha256": prompt.input_sha256, "prompt_sha256": prompt.template_sha256}
    return {**_outcome(head, episode), **_provenance(episode, max_output_tokens)}


def oracle_line(prompt: InterventionPrompt, episode: Episode, max_output_tokens: int | None = None) -> dict:
    """One oracle.jsonl record: a prediction record plus input_sha256 and prompt_sha256."""
    head = {"field_id": prompt.field_id, "origin": prompt.origin.isoformat(), "condition": prompt.condition}
    line = _outcome(head, episode)
    line.update(input_sha256=prompt.input_sha256, prompt_sha256=prompt.template_sha256)
    return {**line, **_provenance(episode, max_output_tokens)}


def _cell(job_or_prompt) -> str:
    return readout_cell(job_or_prompt.source_condition, job_or_prompt.readout, job_or_prompt.budget)


def _scored(archive: Archive, requested: tuple[str, ...] | None) -> list[str]:
    """The requested origins (default all) among those intervention records cover: the resolved ones."""
    opened = archive.open_origin
    if opened is not None and requested and opened.origin.isoformat() in requested:
        raise UsageProblem(f"origin {opened.origin} is open: intervention records cover resolved origins only "
                           f"({', '.join(o.isoformat() for o in archive.resolved_origins)})")
    return _select(requested, [o.isoformat() for o in archive.resolved_origins], "origin")


def run_readouts(
    root: str | Path, out_dir: str | Path, config: AgentConfig, *,
    readouts: tuple[str, ...] | None = None, sources: tuple[str, ...] | None = None, budgets: tuple[str, ...] | None = None,
    force: bool = False, resume: bool = False, on_unit: OnUnit | None = None,
) -> RunSummary:
    """Every selected readout of the folder's pairs not yet in its replays.jsonl, appended there.

    ``on_unit(done, total, field_id, origin, cell, reason)`` after each readout."""
    check_base_url(config.base_url)
    out = Path(out_dir)
    chosen = (_choose(readouts, READOUTS, "readout"), _choose(sources, SOURCE_CONDITIONS, "source"), _choose(budgets, BUDGETS, "budget"))
    archive = Archive(root)
    _select(config.fields, sorted(archive.field_map), "field")
    _scored(archive, config.origins)
    prepare_files(out, (REPLAYS_JSONL,), force=force, resume=resume)
    units, traces = read_model_folder(archive, out)
    everything = {j.key: j for j in readout_jobs(units, traces)}
    if not everything:
        raise UsageProblem(f"{out}: no pair to read out (an episode needs both an A3 and an A4 unit in predictions.jsonl)")
    builder = EvidenceBuilder(archive)
    template = readout_template_sha256()

    def expected(key: tuple) -> tuple[int, str] | None:
        job = everything.get(key)
        return None if job is None else (len(job.calls), canonical_hash(builder.evidence(job.calls)))

    done = done_readouts(archive, out / REPLAYS_JSONL, template, expected) if resume else {}
    summary = RunSummary(out, resumed=len(done), prompt_sha256=template)
    for key, valid in done.items():
        summary.count(_cell(everything[key]), valid)
    fields, origins = set(config.fields or ()), set(config.origins or ())
    todo = [j for j in readout_jobs(units, traces, fields=fields, origins=origins, readouts=chosen[0], sources=chosen[1], budgets=chosen[2])
            if j.key not in done]
    client = ChatClient(config.base_url, config.api_key, config.timeout, config.retries)
    writer = UnitWriter(out, None, units=REPLAYS_JSONL)
    try:
        for n, job in enumerate(todo, start=1):
            prompt = _readout_prompt(archive, builder, job)
            episode = run_episode(client, config, None, prompt, config.max_turns or int(archive.ledger["search"]["max_calls"]) + 5)
            writer.unit([], readout_line(prompt, episode, config.max_output_tokens))
            summary.count(_cell(job), episode.weights is not None)
            if on_unit is not None:
                on_unit(n, len(todo), job.field_id, job.origin.isoformat(), _cell(job), episode.reason)
        writer.close()
    finally:
        for handle in writer.files.values():
            handle.close()
    return summary


def _readout_prompt(archive: Archive, builder: EvidenceBuilder, job: ReadoutJob) -> InterventionPrompt:
    return build_readout_prompt(archive, job.field_id, job.origin, job.readout, builder.evidence(job.calls),
                                source_condition=job.source_condition, budget=job.budget)


def run_oracle(
    root: str | Path, out_dir: str | Path, config: AgentConfig, conditions: tuple[str, ...], *,
    session: SearchSession | None = None, force: bool = False, resume: bool = False, on_unit: OnUnit | None = None,
) -> RunSummary:
    """Every selected O unit not yet in the folder's oracle.jsonl, appended there (O3 calls first, to oracle_traces.jsonl).

    ``on_unit(done, total, field_id, origin, condition, reason)`` after each unit."""
    check_base_url(config.base_url)
    out = Path(out_dir)
    chosen = _choose(conditions, ORACLE_CONDITIONS, "oracle condition")
    archive = Archive(root)
    fields = _select(config.fields, sorted(archive.field_map), "field")
    origins = _scored(archive, config.origins)
    prepare_files(out, (ORACLE_JSONL, ORACLE_TRACES_JSONL), force=force, resume=resume)
    blocks = OracleBlocks(archive)
    template = oracle_template_sha256()

    def prompt_of(fid: str, origin: str, condition: str = ORACLE_SEARCH) -> InterventionPrompt:
        return build_oracle_prompt(archive, fid, origin, condition, blocks.block(fid, date.fromisoformat(origin), condition))

    summary = RunSummary(out, prompt_sha256=template)
    done: dict = {}
    if resume:
        done = done_oracle(archive, out / ORACLE_JSONL, template, lambda f, o, c: canonical_hash(blocks.block(f, o, c)))
        summary.calls, summary.dropped_calls = keep_oracle_traces(archive, out / ORACLE_TRACES_JSONL, done,
                                                                  lambda f, o: prompt_of(f, o).prompt_sha256)
        summary.resumed = len(done)
        for (_f, _o, condition), valid in done.items():
            summary.count(condition, valid)
    todo = [(c, f, o) for c in chosen for f in fields for o in origins if (f, o, c) not in done]
    if ORACLE_SEARCH in chosen and session is None:
        session = SearchSession(archive, keep_records=False)
    client = ChatClient(config.base_url, config.api_key, config.timeout, config.retries)
    max_calls = int(archive.ledger["search"]["max_calls"])
    writer = UnitWriter(out, None, units=ORACLE_JSONL, traces=ORACLE_TRACES_JSONL)
    buffer: list[dict] = []
    previous = session.on_record if session is not None else None
    if session is not None:
        session.on_record = buffer.append
    try:
        for n, (condition, fid, origin) in enumerate(todo, start=1):
            prompt = prompt_of(fid, origin, condition)
            buffer.clear()
            episode = run_episode(client, config, session, prompt, config.max_turns or max_calls + 5)
            calls = [{**r, "prompt_sha256": prompt.prompt_sha256} for r in buffer]
            writer.unit(calls, oracle_line(prompt, episode, config.max_output_tokens))
            summary.count(condition, episode.weights is not None)
            summary.calls += len(calls)
            if on_unit is not None:
                on_unit(n, len(todo), fid, origin, condition, episode.reason)
        writer.close()
    finally:
        if session is not None:
            session.on_record = previous
        for handle in writer.files.values():
            handle.close()
    return summary
