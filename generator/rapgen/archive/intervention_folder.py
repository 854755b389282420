"""Every intervention rule for one model folder, in one call (INTERVENTIONS.md §0–§3, §7).

:func:`check_model_interventions` is what ``rapgen verify`` and
``rapgen submit check`` run for each model: it parses the folder's
intervention files and applies every cross-file rule, returning the parsed
records and all findings (each with file, line and key). It reads nothing
itself: the caller passes the folder's bytes and the archive facts it has
already verified (fields, blocks, the model's own units and traces, paper
text, canonical counts and the Search-call validator).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from rapgen.archive.evidence import PaperText, build_oracle_block, canonical_hash, oracle_windows
from rapgen.archive.intervention_checks import (
    check_base_coverage,
    check_oracle,
    check_panel_units,
    check_replays,
    check_training,
    check_training_presence,
    check_unit_traces,
    panel_cells,
)
from rapgen.archive.interventions import (
    ModelExtensions,
    OracleUnit,
    Readout,
    Training,
    model_extensions,
    parse_model_extensions,
    parse_training,
)
from rapgen.archive.parse_ahead import parse_model_file
from rapgen.archive.records import ORACLE_SEARCH, Block, Field, Finding, ModelInfo, TraceCall, Unit

REPLAYS_JSONL = "replays.jsonl"
ORACLE_JSONL = "oracle.jsonl"
ORACLE_TRACES_JSONL = "oracle_traces.jsonl"
TRAINING_JSON = "training.json"
# The optional model files INTERVENTIONS.md adds (layout.MODEL_FILES must list them).
INTERVENTION_MODEL_FILES: tuple[str, ...] = (REPLAYS_JSONL, ORACLE_JSONL, ORACLE_TRACES_JSONL, TRAINING_JSON)
CountsOf = Callable[[str, date, date], Sequence[int]]  # (field, date_from, date_to) -> canonical counts


@dataclass(frozen=True)
class ArchiveFacts:
    """What the checks need from the rest of the (verified) archive."""

    fields: Sequence[Field]
    blocks: Sequence[Block]
    origins: Sequence[date]
    window_months: int
    max_calls: int
    model_ids: Sequence[str]
    papers: Mapping[str, PaperText]
    counts: CountsOf
    malformed: Callable[[TraceCall], bool]
    units_of: Callable[[str], Sequence[Unit]]  # a listed model's predictions (for a panel's base)
    # file name -> the origins that file is judged against: those of the release that added it
    # (RELEASES.md; a later roll never invalidates a record). Names not here use ``origins``.
    origins_of: Mapping[str, Sequence[date]] = field(default_factory=dict)
    ahead: Any = None  # a ParseAhead: the files, being parsed in a child process (rapgen.archive.parse_ahead)

    def origins_for(self, name: str) -> Sequence[date]:
        return self.origins_of.get(name, self.origins)


@dataclass(frozen=True)
class InterventionRecords:
    """A model folder's parsed intervention records (empty where a file is absent)."""

    extensions: ModelExtensions
    readouts: tuple[Readout, ...] = ()
    oracle: tuple[OracleUnit, ...] = ()
    oracle_traces: tuple[TraceCall, ...] = ()
    training: Training | None = None
    panel_cells: frozenset[tuple[str, date]] | None = None


def oracle_input_sha256(counts: CountsOf, window_months: int) -> Callable[[str, date, str], str]:
    """The expected ``input_sha256`` of an O unit: H of its exact-history block.

    The block is a function of the field and the windows shown (O2 and O3 show the same ones,
    and every model's oracle file asks for the same episodes), so each hash is made once per
    field and windows: kept on ``counts`` when it offers a ``block_hashes`` dict (the archive's
    one canonical-counts table, shared by the models), else in this function's own."""
    kept = getattr(counts, "block_hashes", None)
    done: dict[tuple, str] = kept if isinstance(kept, dict) else {}

    def expected(field_id: str, origin: date, condition: str) -> str:
        windows = oracle_windows(condition, origin, window_months)
        key = (field_id, *windows)
        out = done.get(key)
        if out is None:
            out = done[key] = canonical_hash(build_oracle_block(windows, [counts(field_id, a, b) for a, b in windows]))
        return out

    return expected


def check_model_interventions(
    folder: str,
    files: Mapping[str, bytes],
    units: Sequence[Unit],
    traces: Sequence[TraceCall],
    facts: ArchiveFacts,
    model: ModelInfo | None = None,
) -> tuple[InterventionRecords | None, list[Finding]]:
    """Parse and check one model folder's intervention files.

    ``folder``: the archive-relative folder (``archive/models/<id>``), used in
    every message; ``files``: name -> bytes of the files present (model.json
    at least); ``units``/``traces``: the model's parsed predictions and traces;
    ``model``: model.json as ``parse_model_json`` read it (its keys are then not
    decoded again). Returns None for the records when model.json itself cannot be read.
    """
    field_ids = [f.field_id for f in facts.fields]
    field_split = {f.field_id: f.split for f in facts.fields}
    path = lambda name: f"{folder}/{name}"  # noqa: E731
    if model is not None:
        ext, findings = model_extensions(path("model.json"), model, facts.origins_for("model.json"), facts.model_ids)
    else:
        ext, findings = parse_model_extensions(path("model.json"), files["model.json"], facts.origins_for("model.json"), facts.model_ids)
    if ext is None:
        return None, findings
    training = None
    findings += check_training_presence(path("model.json"), ext.base_model, TRAINING_JSON in files)
    if TRAINING_JSON in files:
        training, found = parse_training(path(TRAINING_JSON), files[TRAINING_JSON], field_ids, facts.origins_for(TRAINING_JSON), ext.base_model)
        findings += found
        if training is not None and ext.panel is not None:
            findings += check_training(path(TRAINING_JSON), training, ext.panel, facts.window_months)
    cells = None
    if ext.panel is not None:
        cells = frozenset(panel_cells(ext.panel, facts.fields, facts.blocks, training))
        findings += check_panel_units(path("predictions.jsonl"), units, ext.panel, set(cells))
        in_panel = {(u.field_id, u.origin, u.condition) for u in units if (u.field_id, u.origin) in cells}
        findings += check_unit_traces(path("traces.jsonl"), traces, in_panel)
        if ext.base_model is not None:
            findings += check_base_coverage(path("model.json"), ext.base_model, facts.units_of(ext.base_model), ext.panel, set(cells))
    readouts: list[Readout] = []
    if REPLAYS_JSONL in files:
        readouts, found = parse_model_file(facts.ahead, path(REPLAYS_JSONL), files[REPLAYS_JSONL], REPLAYS_JSONL, field_ids,
                                           facts.origins_for(REPLAYS_JSONL))
        findings += found
        findings += check_replays(path(REPLAYS_JSONL), readouts, units, traces, facts.papers, facts.malformed, field_split)
    oracle: list[OracleUnit] = []
    o_traces: list[TraceCall] = []
    if ORACLE_JSONL in files:
        oracle, found = parse_model_file(facts.ahead, path(ORACLE_JSONL), files[ORACLE_JSONL], ORACLE_JSONL, field_ids,
                                         facts.origins_for(ORACLE_JSONL))
        findings += found
        expected = oracle_input_sha256(facts.counts, facts.window_months)
        findings += check_oracle(path(ORACLE_JSONL), oracle, expected, field_split, facts.origins_for(ORACLE_JSONL),
                                set(cells) if cells else None)
    if ORACLE_TRACES_JSONL in files:
        o_traces, found = parse_model_file(facts.ahead, path(ORACLE_TRACES_JSONL), files[ORACLE_TRACES_JSONL], ORACLE_TRACES_JSONL,
                                           field_ids, facts.origins_for(ORACLE_TRACES_JSONL), facts.max_calls)
        findings += found
        o3 = {(u.field_id, u.origin, u.condition) for u in oracle if u.condition == ORACLE_SEARCH}
        findings += check_unit_traces(path(ORACLE_TRACES_JSONL), o_traces, o3)
    records = InterventionRecords(ext, tuple(readouts), tuple(oracle), tuple(o_traces), training, cells)
    return records, sorted(findings, key=Finding.sort_key)
