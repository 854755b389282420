"""Run the reference agents over every episode and write their model folders."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable

from rapgen import __version__
from rapgen.agents.policies import (
    CapReached,
    Unit,
    closed_book,
    half_window_trend,
    history_trend,
    recent_hits,
    sample_recent,
    sample_trend,
)
from rapgen.archive import (
    CLOSED_FORECAST, CONDITIONS, EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST, FIXED_STATE, SEARCH_CONDITIONS, SLOTS,
    STATE_CONDITIONS, Archive, open_verified,
)
from rapgen.io import write_jsonl
from rapgen.errors import SubmissionError, UsageProblem
from rapgen.kit import SearchSession, backend_executor, model_record, write_model_json
from rapgen.search import Backend

Policy = Callable[[Unit, tuple], tuple[list[float], str]]


@dataclass(frozen=True)
class AgentSpec:
    model_id: str
    display_name: str
    notes: str
    policies: dict[str, Policy]  # condition -> policy

    @property
    def diagnostic(self) -> bool:
        return any(c in self.policies for c in STATE_CONDITIONS)


def _with_search(fixed: Policy, expanding: Policy, state: Policy) -> dict[str, Policy]:
    """Every condition's policy for an agent that answers A0 from the codebook prior and both State
    conditions with ``state``."""
    return {CLOSED_FORECAST: closed_book, FIXED_FORECAST: fixed, FIXED_STATE: state, EXPANDING_FORECAST: expanding,
            EXPANDING_STATE: state}


REFERENCE_AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "ref-closed-book",
        "Reference agent: codebook prior (closed book)",
        "Deterministic reference agent, no language model and no Search: every forecast is a near-uniform prior "
        "built from the codebook text alone, tilted towards directions with broader definitions.",
        {CLOSED_FORECAST: closed_book, FIXED_FORECAST: closed_book, EXPANDING_FORECAST: closed_book},
    ),
    AgentSpec(
        "ref-recent-hits",
        "Reference agent: recent-window hits",
        "Deterministic reference agent, no language model. A0 is the codebook prior. With Search it issues one "
        "query per direction (its name and include words) restricted to the recent six months and answers with "
        "shares proportional to total_hits (8 calls per unit), for forecasts and State answers alike.",
        _with_search(fixed=recent_hits, expanding=recent_hits, state=recent_hits),
    ),
    AgentSpec(
        "ref-history-trend",
        "Reference agent: history trend",
        "Deterministic reference agent, no language model. A0 is the codebook prior. A1 compares the two halves "
        "of the recent window; A3 compares the whole history before the recent window with the recent window; "
        "both continue that change one damped step (16 calls per unit). State answers (A2, A4) are recent-window "
        "hit shares (8 calls).",
        _with_search(fixed=half_window_trend, expanding=history_trend, state=recent_hits),
    ),
    AgentSpec(
        "ref-sample-classify",
        "Reference agent: sample and classify",
        "Deterministic reference agent, no language model. A0 is the codebook prior. With Search it samples "
        "papers with date-sorted calls of one broad query (the field's codebook words) over 20 slices of the "
        "recent window, labels each returned paper with the direction whose codebook words it covers best, and "
        "answers with the smoothed label shares, shrunk halfway to uniform (A1, A2, A4). A3 samples the "
        "previous and the recent window (10 calls each) and continues the change a quarter step.",
        _with_search(fixed=sample_recent, expanding=sample_trend, state=sample_recent),
    ),
)


class _UnitSearch:
    """The kit's Search session seen by one unit's policy: ``args -> outcome``
    (``total_hits``, ``ids``); the call after the cap raises CapReached."""

    def __init__(self, session: SearchSession, field_id: str, origin: date, condition: str):
        self.session = session
        self.key = (field_id, origin.isoformat(), condition)

    def __call__(self, args: dict):
        outcome = self.session.call(*self.key, args)
        if outcome.call_index is None:
            raise CapReached(f"call cap of {self.session.max_calls} reached")
        return outcome


def _weights(shares: list[float]) -> dict[str, float]:
    return {slot: round(100.0 * s, 4) for slot, s in zip(SLOTS, shares)}


def _model_json(spec: AgentSpec, submitted: date) -> dict:
    return model_record(
        spec.model_id, today=submitted,
        display_name=spec.display_name, provider="rapgen", proprietary=False,
        cutoff_source="not applicable: a deterministic program with no training data",
        diagnostic=spec.diagnostic, contact="rapgen maintainers",
        notes=f"{spec.notes} Produced by rapgen {__version__} ('rapgen reference-agents run').",
        reference_agent=True,
    )


def _select(agent_ids: list[str] | None) -> list[AgentSpec]:
    known = {a.model_id: a for a in REFERENCE_AGENTS}
    if not agent_ids:
        return list(REFERENCE_AGENTS)
    bad = [a for a in agent_ids if a not in known]
    if bad:
        raise UsageProblem(f"unknown reference agent {bad[0]!r}; choose from {', '.join(known)} (see 'rapgen reference-agents list')")
    return [known[a] for a in agent_ids]


def run_agents(
    root: str | Path,
    out_dir: str | Path,
    *,
    agent_ids: list[str] | None = None,
    cache_dir: str | Path | None = None,
    submitted: date | None = None,
    verify: bool = True,
    tick: Callable[[int], None] | None = None,
) -> list[dict]:
    """Run the agents on every field × origin and write ``out_dir/<model_id>/``
    (model.json, predictions.jsonl, traces.jsonl when the agent searched).
    Returns one summary per agent: model_id, units, calls, max_calls_per_unit, path."""
    specs = _select(agent_ids)  # unknown agent ids fail before any work
    archive = open_verified(root).release() if verify else Archive(root)
    backend = Backend(archive, cache_dir=cache_dir)
    window = archive.origins.window_months
    submitted = submitted or date.today()
    out_dir = Path(out_dir)
    summaries = []
    for spec in specs:
        predictions: list[dict] = []
        traces: list[dict] = []
        session = SearchSession(archive, backend_executor(backend, with_text=False), on_record=traces.append, keep_records=False)
        most = 0
        for fld in archive.fields:
            directions = archive.codebooks[fld.field_id]
            for origin in archive.origins.origins:
                for condition in CONDITIONS:
                    policy = spec.policies.get(condition)
                    if policy is None:
                        continue
                    search = _UnitSearch(session, fld.field_id, origin, condition) if condition in SEARCH_CONDITIONS else None
                    unit = Unit(fld.field_id, origin, condition, window, search, backend.paper_texts if search else None)
                    try:
                        shares, rationale = policy(unit, directions)
                        line = {"field_id": fld.field_id, "origin": origin.isoformat(), "condition": condition,
                                "weights": _weights(shares), "rationale": rationale}
                    except CapReached as exc:
                        line = {"field_id": fld.field_id, "origin": origin.isoformat(), "condition": condition,
                                "weights": None, "status": "invalid", "reason": str(exc)}
                    predictions.append(line)
                    if search is not None:
                        most = max(most, session.calls_made(fld.field_id, origin, condition))
                    if tick:
                        tick(1)
            backend.release(fld.field_id)
        folder = out_dir / spec.model_id
        write_model_json(folder / "model.json", _model_json(spec, submitted))
        write_jsonl(folder / "predictions.jsonl", predictions)
        if traces:
            write_jsonl(folder / "traces.jsonl", traces)
        summaries.append({"model_id": spec.model_id, "units": len(predictions), "calls": len(traces),
                          "max_calls_per_unit": most, "path": str(folder)})
    return summaries


def add_agents_to_archive(
    root: str | Path,
    *,
    agent_ids: list[str] | None = None,
    cache_dir: str | Path | None = None,
    submitted: date | None = None,
    tick: Callable[[int], None] | None = None,
) -> list[dict]:
    """Write the agents straight into ``<root>/archive/models/<model_id>/``.

    Refuses (before writing anything) if any of those folders exists. The
    new files are not yet in SHA256SUMS: run ``rapgen seal`` afterwards.
    """
    root = Path(root)
    specs = _select(agent_ids)
    models = root / "archive" / "models"
    taken = [s.model_id for s in specs if (models / s.model_id).exists()]
    if taken:
        raise SubmissionError(f"archive/models/{taken[0]}/ already exists; models are append-only and are never overwritten")
    staging = Path(tempfile.mkdtemp(prefix=".rapgen-agents.", dir=root))
    try:
        summaries = run_agents(root, staging, agent_ids=[s.model_id for s in specs], cache_dir=cache_dir, submitted=submitted, tick=tick)
        models.mkdir(parents=True, exist_ok=True)
        for s in summaries:
            target = models / s["model_id"]
            if target.exists():
                raise SubmissionError(f"archive/models/{s['model_id']}/ appeared while the agents ran; nothing more written")
            shutil.move(str(staging / s["model_id"]), str(target))
            s["path"] = str(target)
        return summaries
    finally:
        shutil.rmtree(staging, ignore_errors=True)
