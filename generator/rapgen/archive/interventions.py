"""Parsers for the intervention records (INTERVENTIONS.md §0–§3, §7).

Files: ``replays.jsonl`` (frozen-evidence readouts), ``oracle.jsonl`` and
``oracle_traces.jsonl`` (exact-history units and their O3 Search calls),
``training.json`` (panel provenance), and the new ``model.json`` keys
``panel``, ``base_model``, ``cutoff_precision`` and ``inference``.

Like :mod:`rapgen.archive.parse`, every function is pure: bytes (or parsed
records) in, ``(records, findings)`` out, each finding naming the file, the
line and the key. Cross-file rules (a readout's source unit, the evidence and
input hashes, coverage of a split or a panel) live in
:mod:`rapgen.archive.intervention_checks`; the canonical hash and the two
builders whose bytes are hashed live in :mod:`rapgen.archive.evidence`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Iterable

from rapgen.archive.parse import (
    _Bad,
    _date,
    _document,
    _guard,
    _int,
    _keys,
    _lines,
    _one_of,
    _str,
    _unit_validity,
    as_float,
)
from rapgen.archive.records import CONDITIONS, MODEL_ID_PATTERN, SPLITS, Category, Finding, TraceCall

_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")
_MODEL_ID_RE = re.compile(MODEL_ID_PATTERN)

SOURCE_CONDITIONS: tuple[str, ...] = ("A3", "A4")
READOUTS: tuple[str, ...] = ("forecast", "state")
BUDGETS: tuple[str, ...] = ("all", "matched")
ORACLE_CONDITIONS: tuple[str, ...] = ("O1", "O2", "O3")
CUTOFF_PRECISIONS: tuple[str, ...] = ("day", "month")
ENDPOINTS: tuple[str, ...] = ("hosted_api", "self_hosted", "local")
# model.json keys added by INTERVENTIONS.md (all optional); parse_model_json must allow them.
MODEL_EXTENSION_KEYS: tuple[str, ...] = ("panel", "base_model", "cutoff_precision", "inference")
# §7: optional per-unit provenance keys of predictions.jsonl, replays.jsonl and oracle.jsonl.
UNIT_PROVENANCE_KEYS: tuple[str, ...] = ("response_model", "attempts", "unit_attempt", "usage", "max_output_tokens", "prompt_sha256")
REPLAY_REQUIRED: tuple[str, ...] = (
    "field_id", "origin", "source_condition", "readout", "budget", "calls_used", "evidence_sha256", "prompt_sha256", "weights",
)
ORACLE_REQUIRED: tuple[str, ...] = ("field_id", "origin", "condition", "weights", "input_sha256", "prompt_sha256")
UNIT_OPTIONAL: tuple[str, ...] = ("rationale", "status", "reason")
TRACE_KEYS: tuple[str, ...] = (
    "field_id", "origin", "condition", "call_index", "query", "sort", "date_from", "date_to", "total_hits", "returned_ids",
)
INFERENCE_KEYS: tuple[str, ...] = (
    "endpoint", "temperature", "top_p", "seed", "max_output_tokens", "tool_choice",
    "parallel_tool_calls", "api_retries", "unit_retries", "context_window",
)
TRAINING_KEYS: tuple[str, ...] = (
    "base_model", "method", "teacher", "fields", "origins", "conditions", "n_trajectories",
    "presentations", "gate", "hyperparameters", "notes",
)
PANEL_KEYS: tuple[str, ...] = ("splits", "origins", "conditions")
GATE_KEYS: tuple[str, ...] = ("fields", "origins", "passed")


@dataclass(frozen=True)
class Readout:
    """One replays.jsonl line: a readout of recorded evidence (§1)."""

    field_id: str
    origin: date
    source_condition: str  # A3 (evidence F) or A4 (evidence S)
    readout: str  # forecast or state
    budget: str  # all or matched
    calls_used: int
    evidence_sha256: str
    prompt_sha256: str
    weights: tuple[float, ...] | None  # renormalised; None for an invalid unit
    valid: bool
    reason: str = ""
    line: int = 0

    @property
    def cell(self) -> str:
        """``X->Y:b``, e.g. ``S->F:matched``."""
        x = "F" if self.source_condition == "A3" else "S"
        y = "F" if self.readout == "forecast" else "S"
        return f"{x}->{y}:{self.budget}"


@dataclass(frozen=True)
class OracleUnit:
    """One oracle.jsonl line: a prediction under O1, O2 or O3 (§2)."""

    field_id: str
    origin: date
    condition: str
    weights: tuple[float, ...] | None
    valid: bool
    input_sha256: str
    prompt_sha256: str
    reason: str = ""
    line: int = 0


@dataclass(frozen=True)
class Panel:
    """model.json ``panel``: the partial coverage of a fine-tuned model (§3)."""

    splits: tuple[str, ...]
    origins: tuple[date, ...]
    conditions: tuple[str, ...]


@dataclass(frozen=True)
class ModelExtensions:
    """The INTERVENTIONS.md keys of one model.json (absent keys: None / ``day``)."""

    panel: Panel | None = None
    base_model: str | None = None
    cutoff_precision: str = "day"
    inference: dict | None = None


@dataclass(frozen=True)
class Training:
    """training.json (§3)."""

    base_model: str
    method: str
    teacher: str | None
    fields: tuple[str, ...]
    origins: tuple[date, ...]
    conditions: tuple[str, ...]
    n_trajectories: int
    presentations: int
    gate_fields: tuple[str, ...]
    gate_origins: tuple[date, ...]
    gate_passed: bool
    hyperparameters: dict
    notes: str | None


def _finding(path: str, line: int | None, detail: str) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:40]


def _hex64(obj: dict, key: str) -> str:
    value = _str(obj, key)
    if not _HEX64_RE.match(value):
        raise _Bad(f"{key!r} must be 64 lower-case hex digits, found {_show(value)}")
    return value


def _optional_text(obj: dict, key: str) -> str | None:
    if obj.get(key) is None:
        return None
    return _str(obj, key)


def _positive_or_null(value: Any, key: str, minimum: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise _Bad(f"{key!r} must be an integer ≥ {minimum} or null, found {_show(value)}")


def check_unit_provenance(obj: dict) -> None:
    """§7 per-unit keys, where present; raises ``_Bad`` naming the key."""
    if "response_model" in obj and obj["response_model"] is not None:
        _str(obj, "response_model")
    for key in ("attempts", "unit_attempt", "max_output_tokens"):
        if key in obj:
            _int(obj, key, 1)
    if "prompt_sha256" in obj:
        _hex64(obj, "prompt_sha256")
    if "usage" in obj:
        usage = obj["usage"]
        if not isinstance(usage, dict):
            raise _Bad(f"'usage' must be an object, found {_show(usage)}")
        _keys(usage, ("input_tokens", "output_tokens"), ("reasoning_tokens",))
        for key in usage:
            if isinstance(usage[key], bool) or not isinstance(usage[key], int) or usage[key] < 0:
                raise _Bad(f"'usage.{key}' must be an integer ≥ 0, found {_show(usage[key])}")


def _weights(obj: dict) -> tuple[tuple[float, ...] | None, bool, str]:
    """SUBMISSION.md weights: malformed types raise; invalid units are returned as such."""
    status = obj.get("status", "valid")
    if status not in ("valid", "invalid"):
        raise _Bad(f"'status' must be \"valid\" or \"invalid\", found {_show(status)}")
    for key in ("rationale", "reason"):
        if obj.get(key) is not None:
            _str(obj, key)
    weights = obj["weights"]
    if status == "invalid" and weights is not None:
        raise _Bad("a unit with status \"invalid\" must have weights null")
    if weights is None:
        return None, False, obj.get("reason") or "weights null"
    if not isinstance(weights, dict):
        raise _Bad(f"'weights' must be an object or null, found {type(weights).__name__}")
    for key, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Bad(f"weight {key!r} is not a JSON number, found {_show(value)}")
    composition, reason = _unit_validity(weights)
    return composition, composition is not None, reason


def _episode(obj: dict, field_set: set[str], origin_set: set[date]) -> tuple[str, date]:
    fid = _str(obj, "field_id")
    if fid not in field_set:
        raise _Bad(f"'field_id' {fid!r} is not a field of this archive")
    origin = _date(obj, "origin")
    if origin not in origin_set:
        raise _Bad(f"'origin' {origin} is not an origin of this archive")
    return fid, origin


def parse_replays(path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date]) -> tuple[list[Readout], list[Finding]]:
    """replays.jsonl: keys and types, duplicates, one ``prompt_sha256`` per file."""
    field_set, origin_set = set(field_ids), set(origins)
    findings: list[Finding] = []
    out: list[Readout] = []
    seen: dict[tuple, int] = {}
    prompt: tuple[str, int] | None = None
    for number, obj in _lines(path, data, findings):
        def build() -> Readout:
            _keys(obj, REPLAY_REQUIRED, UNIT_OPTIONAL + UNIT_PROVENANCE_KEYS)
            fid, origin = _episode(obj, field_set, origin_set)
            source = _one_of(obj, "source_condition", SOURCE_CONDITIONS)
            readout = _one_of(obj, "readout", READOUTS)
            budget = _one_of(obj, "budget", BUDGETS)
            calls = _int(obj, "calls_used")
            evidence, prompt_sha = _hex64(obj, "evidence_sha256"), _hex64(obj, "prompt_sha256")
            check_unit_provenance(obj)
            weights, valid, reason = _weights(obj)
            return Readout(fid, origin, source, readout, budget, calls, evidence, prompt_sha, weights, valid, reason, number)

        record = _guard(path, number, findings, build)
        if record is None:
            continue
        key = (record.field_id, record.origin, record.source_condition, record.readout, record.budget)
        if key in seen:
            findings.append(_finding(path, number, f"duplicate readout {record.field_id} {record.origin} {record.cell} (first on line {seen[key]})"))
            continue
        if prompt is None:
            prompt = (record.prompt_sha256, number)
        elif record.prompt_sha256 != prompt[0]:
            findings.append(_finding(path, number, f"'prompt_sha256' differs from line {prompt[1]}'s: one replay template per file"))
        seen[key] = number
        out.append(record)
    return out, findings


def parse_oracle(path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date]) -> tuple[list[OracleUnit], list[Finding]]:
    """oracle.jsonl: prediction records of O1–O3 plus ``input_sha256`` and ``prompt_sha256``."""
    field_set, origin_set = set(field_ids), set(origins)
    findings: list[Finding] = []
    out: list[OracleUnit] = []
    seen: dict[tuple, int] = {}
    for number, obj in _lines(path, data, findings):
        def build() -> OracleUnit:
            _keys(obj, ORACLE_REQUIRED, UNIT_OPTIONAL + UNIT_PROVENANCE_KEYS)
            fid, origin = _episode(obj, field_set, origin_set)
            condition = _one_of(obj, "condition", ORACLE_CONDITIONS)
            input_sha, prompt_sha = _hex64(obj, "input_sha256"), _hex64(obj, "prompt_sha256")
            check_unit_provenance(obj)
            weights, valid, reason = _weights(obj)
            return OracleUnit(fid, origin, condition, weights, valid, input_sha, prompt_sha, reason, number)

        record = _guard(path, number, findings, build)
        if record is None:
            continue
        key = (record.field_id, record.origin, record.condition)
        if key in seen:
            findings.append(_finding(path, number, f"duplicate unit {record.field_id} {record.origin} {record.condition} (first on line {seen[key]})"))
            continue
        seen[key] = number
        out.append(record)
    return out, findings


def parse_oracle_traces(
    path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date], max_calls: int
) -> tuple[list[TraceCall], list[Finding]]:
    """oracle_traces.jsonl: traces.jsonl lines whose condition is ``O3``."""
    field_set, origin_set = set(field_ids), set(origins)
    findings: list[Finding] = []
    out: list[TraceCall] = []
    seen: dict[tuple, int] = {}
    for number, obj in _lines(path, data, findings):
        def build() -> TraceCall:
            _keys(obj, TRACE_KEYS)
            fid, origin = _episode(obj, field_set, origin_set)
            if obj["condition"] != "O3":
                raise _Bad(f"'condition' must be \"O3\" in this file, found {_show(obj['condition'])}")
            index = _int(obj, "call_index")
            if index >= max_calls:
                raise _Bad(f"'call_index' {index} is beyond the cap of {max_calls} calls per unit")
            for key in ("query", "sort"):
                _str(obj, key)
            for key in ("date_from", "date_to"):
                if obj[key] is not None and not isinstance(obj[key], str):
                    raise _Bad(f"{key!r} must be a string or null, found {_show(obj[key])}")
            ids = obj["returned_ids"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise _Bad("'returned_ids' must be a list of arXiv ids")
            return TraceCall(fid, origin, "O3", index, obj["query"], obj["sort"], obj["date_from"], obj["date_to"],
                             _int(obj, "total_hits"), tuple(ids), number)

        call = _guard(path, number, findings, build)
        if call is None:
            continue
        key = (call.field_id, call.origin, call.call_index)
        if key in seen:
            findings.append(_finding(path, number, f"duplicate call {call.call_index} for {call.field_id} {call.origin} O3 (first on line {seen[key]})"))
            continue
        seen[key] = number
        out.append(call)
    return out, findings


# ---------------------------------------------------------------- model.json keys
def _date_list(value: Any, key: str, known: set[date] | None, *, empty_ok: bool = False) -> tuple[date, ...]:
    if not isinstance(value, list) or (not value and not empty_ok):
        raise _Bad(f"{key!r} must be a non-empty list of dates")
    out = []
    for item in value:
        try:
            d = _date({"v": item}, "v")
        except _Bad:
            raise _Bad(f"{key!r}: {_show(item)} is not a YYYY-MM-DD date") from None
        if known is not None and d not in known:
            raise _Bad(f"{key!r}: {d} is not an origin of this archive")
        out.append(d)
    if len(set(out)) != len(out):
        raise _Bad(f"{key!r} lists a date twice")
    return tuple(out)


def _name_list(value: Any, key: str, allowed: Iterable[str] | None, *, empty_ok: bool = False) -> tuple[str, ...]:
    allowed_set = set(allowed) if allowed is not None else None
    if not isinstance(value, list) or (not value and not empty_ok) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{key!r} must be a non-empty list of strings")
    for item in value:
        if allowed_set is not None and item not in allowed_set:
            what = ", ".join(sorted(allowed_set)) if len(allowed_set) <= 8 else "the archive's"
            raise _Bad(f"{key!r}: {item!r} is not one of {what}")
    if len(set(value)) != len(value):
        raise _Bad(f"{key!r} lists a value twice")
    return tuple(value)


def _panel(value: Any, origins: set[date]) -> Panel:
    if not isinstance(value, dict):
        raise _Bad(f"'panel' must be an object, found {_show(value)}")
    try:
        _keys(value, PANEL_KEYS)
    except _Bad as exc:
        raise _Bad(f"'panel': {exc}") from None
    return Panel(
        _name_list(value["splits"], "panel.splits", SPLITS),
        _date_list(value["origins"], "panel.origins", origins),
        _name_list(value["conditions"], "panel.conditions", CONDITIONS),
    )


_INFERENCE_NUMBERS = ("temperature", "top_p")
_INFERENCE_COUNTS = {"seed": 0, "api_retries": 0, "unit_retries": 0, "context_window": 1}


def check_inference(value: Any) -> dict:
    """§7 ``inference``: every key present (null = unset), nothing else, each of its type."""
    if not isinstance(value, dict):
        raise _Bad(f"'inference' must be an object, found {_show(value)}")
    try:
        _keys(value, INFERENCE_KEYS)
    except _Bad as exc:
        raise _Bad(f"'inference': {exc}") from None
    if value["endpoint"] is not None and value["endpoint"] not in ENDPOINTS:
        raise _Bad(f"'inference.endpoint' must be one of {', '.join(ENDPOINTS)} or null, found {_show(value['endpoint'])}")
    for key in _INFERENCE_NUMBERS:
        v = value[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(as_float(v)) or v < 0):
            raise _Bad(f"'inference.{key}' must be a number ≥ 0 or null, found {_show(v)}")
    for key, minimum in _INFERENCE_COUNTS.items():
        _positive_or_null(value[key], f"inference.{key}", minimum)
    budget = value["max_output_tokens"]
    if budget is not None:
        if not isinstance(budget, dict):
            raise _Bad(f"'inference.max_output_tokens' must be an object or null, found {_show(budget)}")
        try:
            _keys(budget, ("closed", "search"))
        except _Bad as exc:
            raise _Bad(f"'inference.max_output_tokens': {exc}") from None
        for key in ("closed", "search"):
            _positive_or_null(budget[key], f"inference.max_output_tokens.{key}", 1)
    if value["tool_choice"] is not None and not isinstance(value["tool_choice"], str):
        raise _Bad(f"'inference.tool_choice' must be a string or null, found {_show(value['tool_choice'])}")
    if value["parallel_tool_calls"] is not None and not isinstance(value["parallel_tool_calls"], bool):
        raise _Bad(f"'inference.parallel_tool_calls' must be true, false or null, found {_show(value['parallel_tool_calls'])}")
    return dict(value)


def parse_model_extensions(
    path: str, data: bytes, origins: Iterable[date], model_ids: Iterable[str] = ()
) -> tuple[ModelExtensions | None, list[Finding]]:
    """The INTERVENTIONS.md keys of a model.json (the other keys are parse_model_json's).

    ``model_ids``: the archive's listed models, which a ``base_model`` must name.
    """
    origin_set, listed = set(origins), set(model_ids)
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> ModelExtensions:
        panel = _panel(obj["panel"], origin_set) if obj.get("panel") is not None else None
        base = obj.get("base_model")
        if base is not None:
            if not isinstance(base, str) or not _MODEL_ID_RE.match(base):
                raise _Bad(f"'base_model' must be a model id, found {_show(base)}")
            if base == obj.get("model_id"):
                raise _Bad("'base_model' names the model itself")
            if listed and base not in listed:
                raise _Bad(f"'base_model' {base!r} is not a listed model")
            if panel is None:
                raise _Bad("'base_model' requires 'panel'")
        precision = obj.get("cutoff_precision", "day")
        if precision not in CUTOFF_PRECISIONS:
            raise _Bad(f"'cutoff_precision' must be \"day\" or \"month\", found {_show(precision)}")
        if precision == "month":
            key = "knowledge_cutoff" if obj.get("knowledge_cutoff") is not None else "release_date"
            bound = _date(obj, key, nullable=True) if key in obj else None
            if bound is not None and bound.day != 1:
                raise _Bad(f"'cutoff_precision' \"month\" needs {key!r} on the 1st of a month, found {bound}")
        inference = check_inference(obj["inference"]) if "inference" in obj else None
        return ModelExtensions(panel, base, precision, inference)

    return _guard(path, None, findings, build), findings


def parse_training(
    path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date], base_model: str | None
) -> tuple[Training | None, list[Finding]]:
    """training.json: keys and types; fields and origins exist; ``base_model`` matches model.json's.

    The rules that need the panel (trajectory bound, windows ending by the
    panel's first origin) are :func:`rapgen.archive.intervention_checks.check_training`.
    """
    field_set, origin_set = set(field_ids), set(origins)
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> Training:
        _keys(obj, TRAINING_KEYS)
        base = _str(obj, "base_model")
        if base_model is not None and base != base_model:
            raise _Bad(f"'base_model' {base!r} differs from model.json's {base_model!r}")
        gate = obj["gate"]
        if not isinstance(gate, dict):
            raise _Bad(f"'gate' must be an object, found {_show(gate)}")
        try:
            _keys(gate, GATE_KEYS)
        except _Bad as exc:
            raise _Bad(f"'gate': {exc}") from None
        if not isinstance(gate["passed"], bool):
            raise _Bad(f"'gate.passed' must be true or false, found {_show(gate['passed'])}")
        if not isinstance(obj["hyperparameters"], dict):
            raise _Bad(f"'hyperparameters' must be an object, found {_show(obj['hyperparameters'])}")
        return Training(
            base, _str(obj, "method", empty_ok=False), _optional_text(obj, "teacher"),
            _name_list(obj["fields"], "fields", field_set), _date_list(obj["origins"], "origins", origin_set),
            _name_list(obj["conditions"], "conditions", CONDITIONS), _int(obj, "n_trajectories", 1),
            _int(obj, "presentations", 1),
            _name_list(gate["fields"], "gate.fields", field_set, empty_ok=True),
            _date_list(gate["origins"], "gate.origins", origin_set, empty_ok=True), gate["passed"],
            dict(obj["hyperparameters"]), _optional_text(obj, "notes"),
        )

    return _guard(path, None, findings, build), findings

