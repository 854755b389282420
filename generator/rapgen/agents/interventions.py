"""The reference agents' intervention records (INTERVENTIONS.md §1–§3), by policy, no language model.

* :func:`readout_lines` — ``replays.jsonl``: each A3/A4 unit's recorded evidence
  (rebuilt with :func:`rapgen.archive.evidence.build_evidence`) read out as a
  forecast and as a State answer under the budgets ``all`` and ``matched``.
* :func:`oracle_lines` — ``oracle.jsonl`` and ``oracle_traces.jsonl``: O1, O2
  and O3 for every field × origin; the O3 Search calls run through the real
  Backend on the Expanding shard, so ``rapgen replay`` re-executes them.
* :func:`panel_model_files` — a "tuned" panel model: the history-trend policies
  with a smaller damping, on the test fields outside every block that holds a
  training or gate field, with ``panel``, ``base_model`` and ``training.json``.
* :func:`intervention_files` — all of them for the models of an archive, as
  ``{archive path: bytes}`` (the caller writes them, or hands them to a history).

These agents render no prompt, but their records carry the kit's prompt
version all the same: ``prompt_sha256`` is the SHA-256 of the readout or
exact-history template (:func:`rapgen.kit.readout_template_sha256`,
:func:`rapgen.kit.oracle_template_sha256`), exactly what ``rapgen agent run
--readout|--oracle`` writes and ``rapgen prompt`` prints as ``template_sha256``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from rapgen.agents.policies import (
    CapReached,
    Unit,
    damped_half_window_trend,
    damped_history_trend,
    exact_history_search,
    history_shares,
    read_evidence,
)
from rapgen.archive import (
    BUDGETS, CONDITION_REGIME, DEV_SPLIT, EXPANDING_FORECAST, FIXED_FORECAST, ORACLE_CONDITIONS, ORACLE_SEARCH, READOUTS,
    SEARCH_REGIME, SLOTS, SOURCE_CONDITIONS, TEST_SPLIT, Archive, add_months, PaperText, build_evidence, build_oracle_block,
    canonical_hash, oracle_windows, TraceCall,
)
from rapgen.io import dumps_document, dumps_line
from rapgen.kit import oracle_template_sha256, readout_template_sha256
from rapgen.search import Backend, call_is_malformed, trace_line

ORACLE_DAMPING = {"ref-recent-hits": 0.0, "ref-history-trend": 0.5, "ref-sample-classify": 0.25}  # others: 0.25
TUNED_DAMPING = 0.25
PANEL_CONDITIONS = (FIXED_FORECAST, EXPANDING_FORECAST)
CELLS = [(s, r, b) for s in SOURCE_CONDITIONS for r in READOUTS for b in BUDGETS]


def _slot_weights(shares: list[float]) -> dict[str, float]:
    return {slot: round(100.0 * s, 4) for slot, s in zip(SLOTS, shares)}


def jsonl_bytes(lines: list[dict]) -> bytes:
    return "".join(dumps_line(x) + "\n" for x in lines).encode("utf-8")


@dataclass
class ArchiveData:
    """What the records need from one archive, read once: paper text and the ledger per field."""

    archive: Archive
    papers: dict[str, PaperText]
    ledger: dict[str, tuple[np.ndarray, np.ndarray]]  # field -> (ordinal days, slot index; -1 for other)

    @classmethod
    def load(cls, archive: Archive) -> "ArchiveData":
        con = archive.connect()
        try:
            papers = {r[0]: PaperText(r[1].isoformat(), r[2] or "", r[3] or "")
                      for r in con.execute("SELECT arxiv_id, first_submitted, title, abstract FROM papers").fetchall()}
            rows = con.execute('SELECT field_id, first_submitted, "primary" FROM assignments ORDER BY field_id').fetchall()
        finally:
            con.close()
        index = {s: i for i, s in enumerate(SLOTS)}
        grouped: dict[str, list] = defaultdict(list)
        for fid, day, primary in rows:
            grouped[fid].append((day.toordinal(), index.get(primary, -1)))
        ledger = {fid: (np.array([d for d, _ in v], dtype=np.int64), np.array([s for _, s in v], dtype=np.int64))
                  for fid, v in grouped.items()}
        return cls(archive, papers, ledger)

    def counts(self, field_id: str, lo: date, hi: date) -> list[int]:
        """SCORING.md §1 canonical counts of ``field_id`` in [lo, hi)."""
        days, slots = self.ledger.get(field_id, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        keep = (days >= lo.toordinal()) & (days < hi.toordinal()) & (slots >= 0)
        return [int(n) for n in np.bincount(slots[keep], minlength=len(SLOTS))]

    def block(self, field_id: str, origin: date, condition: str) -> dict:
        windows = oracle_windows(condition, origin, self.archive.origins.window_months)
        return build_oracle_block(windows, [self.counts(field_id, a, b) for a, b in windows])


class _Recorder:
    """One unit's Search tool on a given shard: the call cap, and every call recorded as a trace line."""

    def __init__(self, backend: Backend, key: tuple[str, date, str], regime: str, lines: list[dict]):
        self.backend, self.key, self.lines = backend, key, lines
        self.shard = backend.shard(key[0], key[1], regime)
        self.calls = 0

    def __call__(self, args: dict):
        if self.calls >= self.backend.max_calls:
            raise CapReached(f"call cap of {self.backend.max_calls} reached")
        b = self.backend
        result = self.shard.search(args, top_k=b.top_k, k1=b.k1, b=b.b)
        self.lines.append(trace_line(*self.key, self.calls, args, result))
        self.calls += 1
        return result


# ---------------------------------------------------------------- replays.jsonl
def readout_lines(data: ArchiveData, model_id: str) -> list[dict]:
    """One line per pair episode × cell (source, readout, budget), in key order."""
    arch = data.archive
    conditions = defaultdict(set)
    for u in arch.predictions(model_id):
        conditions[(u.field_id, u.origin)].add(u.condition)
    calls: dict[tuple, list[TraceCall]] = defaultdict(list)
    if arch.has_traces(model_id):
        for c in arch.traces(model_id):
            calls[(c.field_id, c.origin, c.condition)].append(c)
    window = arch.origins.window_months
    prompt = readout_template_sha256()
    lines = []
    for (fid, origin), have in sorted(conditions.items()):
        if not set(SOURCE_CONDITIONS) <= have:
            continue
        k = min(len(calls[(fid, origin, c)]) for c in SOURCE_CONDITIONS)
        for source, readout, budget in CELLS:
            source_calls = calls[(fid, origin, source)]
            used = len(source_calls) if budget == "all" else k
            evidence = build_evidence(source_calls, data.papers, call_is_malformed, used)
            shares, why = read_evidence(evidence, arch.codebooks[fid], origin, window, readout)
            line = {"field_id": fid, "origin": origin.isoformat(), "source_condition": source, "readout": readout,
                    "budget": budget, "calls_used": used, "evidence_sha256": canonical_hash(evidence),
                    "prompt_sha256": prompt}
            if shares is None:
                line.update(weights=None, status="invalid", reason=why)
            else:
                line.update(weights=_slot_weights(shares), rationale=why)
            lines.append(line)
    return lines


# ---------------------------------------------------------------- oracle.jsonl, oracle_traces.jsonl
def oracle_lines(data: ArchiveData, backend: Backend, model_id: str, damping: float,
                 cells: list[tuple[str, date]] | None = None) -> tuple[list[dict], list[dict]]:
    """O1, O2 and O3 units for every field × origin (or ``cells``), and O3's trace lines."""
    arch = data.archive
    window = arch.origins.window_months
    cells = cells if cells is not None else [(f.field_id, o) for f in arch.fields for o in arch.origins.origins]
    prompt = oracle_template_sha256()
    units, traces = [], []
    for fid, origin in sorted(cells):
        for condition in ORACLE_CONDITIONS:
            block = data.block(fid, origin, condition)
            line = {"field_id": fid, "origin": origin.isoformat(), "condition": condition}
            if condition == ORACLE_SEARCH:
                search = _Recorder(backend, (fid, origin, condition), SEARCH_REGIME[condition], traces)
                unit = Unit(fid, origin, condition, window, search, backend.paper_texts)
                try:
                    shares, why = exact_history_search(unit, arch.codebooks[fid], block, damping)
                    line.update(weights=_slot_weights(shares), rationale=why)
                except CapReached as exc:
                    line.update(weights=None, status="invalid", reason=str(exc))
            else:
                shown = len(block["windows"])
                line.update(weights=_slot_weights(history_shares(block, damping)),
                            rationale=f"exact counts of {shown} window{'s' if shown > 1 else ''}, trend damped by {damping}")
            line.update(input_sha256=canonical_hash(block), prompt_sha256=prompt)
            units.append(line)
        backend.release(fid)
    return units, traces


# ---------------------------------------------------------------- the tuned panel model
def panel_design(arch: Archive, origin: date) -> tuple[dict, dict]:
    """(panel, training) for a panel scored on the test split at ``origin``.

    Trained on the dev fields plus one test field (of the largest test block,
    ties to the smaller block id), so that block's fields leave the panel: the
    panel is dependency-disjoint from training. Training origins are those whose
    target window ends by ``origin``; the gate is the last of them on the dev fields.
    """
    window = arch.origins.window_months
    test_blocks = sorted((b for b in arch.blocks if b.split == TEST_SPLIT), key=lambda b: (-len(b.fields), b.block_id))
    dev = sorted(f.field_id for f in arch.fields if f.split == DEV_SPLIT)
    fields = sorted(dev + [sorted(test_blocks[0].fields)[0]]) if test_blocks else dev
    origins = [o for o in arch.origins.origins if add_months(o, window) <= origin]
    panel = {"splits": [TEST_SPLIT], "origins": [origin.isoformat()], "conditions": list(PANEL_CONDITIONS)}
    training = {
        "fields": fields, "origins": [o.isoformat() for o in origins], "conditions": list(PANEL_CONDITIONS),
        "n_trajectories": len(fields) * len(origins) * len(PANEL_CONDITIONS), "presentations": 1,
        "gate": {"fields": dev, "origins": [origins[-1].isoformat()] if origins else [], "passed": True},
    }
    return panel, training


def panel_cells_of(arch: Archive, panel: dict, training: dict) -> list[tuple[str, date]]:
    used = set(training["fields"]) | set(training["gate"]["fields"])
    tainted = {f for b in arch.blocks if used & set(b.fields) for f in b.fields}
    keep = [f.field_id for f in arch.fields if f.split in panel["splits"] and f.field_id not in tainted]
    return [(f, date.fromisoformat(o)) for f in keep for o in panel["origins"]]


def panel_model_files(data: ArchiveData, backend: Backend, base_id: str, panel_id: str, origin: date) -> dict[str, bytes]:
    """The panel model's folder (model.json, training.json and its units and traces under
    ``origins/<origin>/``), paths relative to it."""
    arch = data.archive
    panel, design = panel_design(arch, origin)
    base = json.loads(arch.read_bytes(f"archive/models/{base_id}/model.json"))
    policies = {FIXED_FORECAST: damped_half_window_trend(TUNED_DAMPING), EXPANDING_FORECAST: damped_history_trend(TUNED_DAMPING)}
    predictions, traces = [], []
    for fid, o in sorted(panel_cells_of(arch, panel, design)):
        for condition in PANEL_CONDITIONS:
            search = _Recorder(backend, (fid, o, condition), CONDITION_REGIME[condition], traces)
            unit = Unit(fid, o, condition, arch.origins.window_months, search, backend.paper_texts)
            line = {"field_id": fid, "origin": o.isoformat(), "condition": condition}
            try:
                shares, why = policies[condition](unit, arch.codebooks[fid])
                line.update(weights=_slot_weights(shares), rationale=why)
            except CapReached as exc:
                line.update(weights=None, status="invalid", reason=str(exc))
            predictions.append(line)
        backend.release(fid)
    model = {**base, "model_id": panel_id, "display_name": f"{base.get('display_name', base_id)}, tuned (panel)",
             "diagnostic": False,
             "notes": (f"Deterministic reference agent, no language model: {base_id}'s trend policies with the damping "
                       f"'tuned' from 0.5 to {TUNED_DAMPING} on the training fields (a stand-in for fine-tuning). A panel "
                       "model: scored only on its panel, against its base, never ranked."),
             "panel": panel, "base_model": base_id}
    training = {"base_model": base_id, "method": "parameter search (a deterministic stand-in for fine-tuning)", "teacher": None,
                **design, "hyperparameters": {"damping": TUNED_DAMPING, "searched": [0.0, 0.25, 0.5, 0.75]},
                "notes": "Reference record: the damping with the best training-field spearman; no model weights exist."}
    # The panel's origin is a later one (not release 1's), so its units sit under origins/<origin>/.
    later = f"origins/{origin.isoformat()}"
    return {
        "model.json": dumps_document(model).encode("utf-8"),
        f"{later}/predictions.jsonl": jsonl_bytes(predictions),
        f"{later}/traces.jsonl": jsonl_bytes(traces),
        "training.json": dumps_document(training).encode("utf-8"),
    }


def intervention_files(root: str | Path, model_ids: list[str] | None = None, *, panel: tuple[str, str] | None = None,
                       dampings: Mapping[str, float] | None = None, cache_dir: str | Path | None = None,
                       tick: Callable[[int], None] | None = None) -> dict[str, bytes]:
    """``{archive path: bytes}`` of the intervention records of ``root``'s models.

    Every diagnostic model (one with A3 and A4 units) among ``model_ids`` (default
    all) gets replays.jsonl, oracle.jsonl and oracle_traces.jsonl. ``panel`` =
    (base id, panel id) adds the tuned panel model, scored at the last origin.
    ``dampings``: each model's exact-history damping (default :data:`ORACLE_DAMPING`, else 0.25).
    """
    dampings = ORACLE_DAMPING if dampings is None else dampings
    arch = Archive(root)
    data = ArchiveData.load(arch)
    backend = Backend(arch, cache_dir=cache_dir)
    out: dict[str, bytes] = {}
    for mid in model_ids if model_ids is not None else arch.model_ids:
        if not set(SOURCE_CONDITIONS) <= {u.condition for u in arch.predictions(mid)}:
            continue
        folder = f"archive/models/{mid}"
        out[f"{folder}/replays.jsonl"] = jsonl_bytes(readout_lines(data, mid))
        units, traces = oracle_lines(data, backend, mid, dampings.get(mid, 0.25))
        out[f"{folder}/oracle.jsonl"] = jsonl_bytes(units)
        out[f"{folder}/oracle_traces.jsonl"] = jsonl_bytes(traces)
        if tick:
            tick(1)
    if panel is not None:
        base_id, panel_id = panel
        files = panel_model_files(data, backend, base_id, panel_id, arch.origins.origins[-1])
        out.update({f"archive/models/{panel_id}/{name}": data_ for name, data_ in files.items()})
    return out
