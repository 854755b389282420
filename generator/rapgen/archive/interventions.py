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
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Callable, Iterable, Mapping

from rapgen.archive.jsonparse import (
    _Bad,
    _date,
    _int,
    _keys,
    _one_of,
    _guard,
    _parse_document,
    _parse_lines,
    _sha256_hex,
    _str,
    as_float,
    unique_lines,
)
from rapgen.archive.parse import (
    _TRACE_KEY_SETS,
    UNIT_PROVENANCE_KEYS,
    _prediction,
    _trace_call,
    check_unit_provenance,
)
from rapgen.archive.quick import hex64 as _hex64, origin_texts, quick_trace_call, quick_unit_core
from rapgen.archive.layout import MODEL_ID_PATTERN
from rapgen.archive.records import (
    CLOSED_FORECAST, CONDITIONS, EXPANDING_FORECAST, ORACLE_CONDITIONS, ORACLE_SEARCH, SOURCE_CONDITIONS, SPLITS, Category, Finding,
    ModelInfo, ProblemKind, TraceCall,
)

_MODEL_ID_RE = re.compile(MODEL_ID_PATTERN)

READOUTS: tuple[str, ...] = ("forecast", "state")
BUDGETS: tuple[str, ...] = ("all", "matched")
CUTOFF_PRECISIONS: tuple[str, ...] = ("day", "month")
ENDPOINTS: tuple[str, ...] = ("hosted_api", "self_hosted", "local")
REPLAY_REQUIRED: tuple[str, ...] = (
    "field_id", "origin", "source_condition", "readout", "budget", "calls_used", "evidence_sha256", "prompt_sha256", "weights",
)
ORACLE_REQUIRED: tuple[str, ...] = ("field_id", "origin", "condition", "weights", "input_sha256", "prompt_sha256")
UNIT_OPTIONAL: tuple[str, ...] = ("rationale", "status", "reason")
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
    provenance: Mapping | None = field(default=None, compare=False)  # §7's shown keys, as on a Unit

    @property
    def cell(self) -> str:
        """``X->Y:b``, e.g. ``S->F:matched``."""
        return readout_cell(self.source_condition, self.readout, self.budget)


def readout_cell(source_condition: str, readout: str, budget: str) -> str:
    """A readout's cell ``X->Y:b``: evidence F (of A3) or S (of A4), read out as F or S, under budget b."""
    x = "F" if source_condition == EXPANDING_FORECAST else "S"
    y = "F" if readout == "forecast" else "S"
    return f"{x}->{y}:{budget}"


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
    provenance: Mapping | None = field(default=None, compare=False)  # §7's shown keys, as on a Unit


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


def _finding(path: str, line: int | None, detail: str, kind: ProblemKind = ProblemKind.SCHEMA) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail, kind=kind)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:40]


def _optional_text(obj: dict, key: str) -> str | None:
    if obj.get(key) is None:
        return None
    return _str(obj, key)


def _positive_or_null(value: Any, key: str, minimum: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise _Bad(f"{key!r} must be an integer ≥ {minimum} or null, found {_show(value)}")


_UNIT_CORE = ("field_id", "origin", "weights", "rationale", "status", "reason")


def _unit_core(field_set: set[str], origin_set: set[date]) -> Any:
    """The predictions.jsonl rules for episode, status and weights (one home: ``parse``),
    applied to the unit keys of a replay or oracle line."""
    predict = _prediction(field_set, origin_set)

    def check(obj: dict, number: int) -> tuple[tuple[float, ...] | None, bool, str]:
        unit = predict({**{k: obj[k] for k in _UNIT_CORE if k in obj}, "condition": CLOSED_FORECAST}, number)
        return unit.weights, unit.valid, unit.reason

    return check


def _unit_record(field_set: set[str], origin_set: set[date], required: tuple[str, ...], make: Callable[..., Any]) -> Callable[[dict, int], Any]:
    """A replay or oracle line: its keys, the unit core, then ``make(obj, weights, valid, reason, line)``."""
    core = _unit_core(field_set, origin_set)

    def build(obj: dict, number: int) -> Any:
        _keys(obj, required, UNIT_OPTIONAL + UNIT_PROVENANCE_KEYS)
        weights, valid, reason = core(obj, number)
        return make(obj, weights, valid, reason, number)

    return build


def _readout(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], Readout]:
    def make(obj: dict, weights, valid: bool, reason: str, number: int) -> Readout:
        source = _one_of(obj, "source_condition", SOURCE_CONDITIONS)
        readout = _one_of(obj, "readout", READOUTS)
        budget = _one_of(obj, "budget", BUDGETS)
        calls = _int(obj, "calls_used")
        evidence, prompt = _sha256_hex(obj, "evidence_sha256"), _sha256_hex(obj, "prompt_sha256")
        provenance = check_unit_provenance(obj)
        return Readout(obj["field_id"], _date(obj, "origin"), source, readout, budget, calls, evidence, prompt,
                       weights, valid, reason, number, provenance)

    return _unit_record(field_set, origin_set, REPLAY_REQUIRED, make)


_REPLAY_KEYS = (frozenset(REPLAY_REQUIRED), frozenset(REPLAY_REQUIRED) | {"rationale"})
_SOURCE_SET, _READOUT_SET, _BUDGET_SET = frozenset(SOURCE_CONDITIONS), frozenset(READOUTS), frozenset(BUDGETS)


def _quick_readout(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], Readout | None]:
    """``_readout``'s record of an ordinary valid line, or None when unsure (``quick.quick_unit_core``)."""
    origins = origin_texts(origin_set)

    def fast(obj: dict, number: int) -> Readout | None:
        if obj.keys() not in _REPLAY_KEYS:
            return None
        source, readout, budget, calls = obj["source_condition"], obj["readout"], obj["budget"], obj["calls_used"]
        evidence, prompt = obj["evidence_sha256"], obj["prompt_sha256"]
        if (type(source) is not str or source not in _SOURCE_SET or type(readout) is not str or readout not in _READOUT_SET
                or type(budget) is not str or budget not in _BUDGET_SET or type(calls) is not int or calls < 0
                or not _hex64(evidence) or not _hex64(prompt)):
            return None
        core = quick_unit_core(obj, field_set, origins)
        if core is None:
            return None
        return Readout(core[0], core[1], source, readout, budget, calls, evidence, prompt, core[2], True, "", number, None)

    return fast


def parse_replays(path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date]) -> tuple[list[Readout], list[Finding]]:
    """replays.jsonl: keys and types, duplicates, one ``prompt_sha256`` per file."""
    findings: list[Finding] = []
    field_set, origin_set = set(field_ids), set(origins)
    out = unique_lines(path, _parse_lines(path, data, findings, _readout(field_set, origin_set), _quick_readout(field_set, origin_set)),
                       lambda r: (r.field_id, r.origin, r.source_condition, r.readout, r.budget),
                       lambda r: f"duplicate readout {r.field_id} {r.origin} {r.cell}", ProblemKind.DUPLICATE_UNIT, findings)
    for record in out[1:]:
        if record.prompt_sha256 != out[0].prompt_sha256:
            findings.append(_finding(path, record.line, f"'prompt_sha256' differs from line {out[0].line}'s: one replay template per file"))
    return out, findings


def _oracle_unit(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], OracleUnit]:
    def make(obj: dict, weights, valid: bool, reason: str, number: int) -> OracleUnit:
        condition = _one_of(obj, "condition", ORACLE_CONDITIONS)
        input_sha, prompt = _sha256_hex(obj, "input_sha256"), _sha256_hex(obj, "prompt_sha256")
        provenance = check_unit_provenance(obj)
        return OracleUnit(obj["field_id"], _date(obj, "origin"), condition, weights, valid, input_sha, prompt, reason, number,
                          provenance)

    return _unit_record(field_set, origin_set, ORACLE_REQUIRED, make)


_ORACLE_KEYS = (frozenset(ORACLE_REQUIRED), frozenset(ORACLE_REQUIRED) | {"rationale"})
_ORACLE_SET = frozenset(ORACLE_CONDITIONS)


def _quick_oracle_unit(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], OracleUnit | None]:
    """``_oracle_unit``'s record of an ordinary valid line, or None when unsure."""
    origins = origin_texts(origin_set)

    def fast(obj: dict, number: int) -> OracleUnit | None:
        if obj.keys() not in _ORACLE_KEYS:
            return None
        condition, input_sha, prompt = obj["condition"], obj["input_sha256"], obj["prompt_sha256"]
        if type(condition) is not str or condition not in _ORACLE_SET or not _hex64(input_sha) or not _hex64(prompt):
            return None
        core = quick_unit_core(obj, field_set, origins)
        if core is None:
            return None
        return OracleUnit(core[0], core[1], condition, core[2], True, input_sha, prompt, "", number, None)

    return fast


def parse_oracle(path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date]) -> tuple[list[OracleUnit], list[Finding]]:
    """oracle.jsonl: prediction records of O1–O3 plus ``input_sha256`` and ``prompt_sha256``."""
    findings: list[Finding] = []
    field_set, origin_set = set(field_ids), set(origins)
    out = unique_lines(path, _parse_lines(path, data, findings, _oracle_unit(field_set, origin_set),
                                          _quick_oracle_unit(field_set, origin_set)),
                       lambda u: (u.field_id, u.origin, u.condition), lambda u: f"duplicate unit {u.field_id} {u.origin} {u.condition}",
                       ProblemKind.DUPLICATE_UNIT, findings)
    return out, findings


def _oracle_call(field_set: set[str], origin_set: set[date], max_calls: int) -> Callable[[dict, int], TraceCall]:
    """A traces.jsonl line (one home of the trace rules: ``parse``) whose condition is O3;
    O3 searches the Expanding shard, as A3 does."""
    as_search = _trace_call(field_set, origin_set, max_calls)

    def build(obj: dict, number: int) -> TraceCall:
        if "condition" in obj and obj["condition"] != ORACLE_SEARCH:
            raise _Bad(f"'condition' must be \"{ORACLE_SEARCH}\" in this file, found {_show(obj['condition'])}")
        call = as_search({**obj, "condition": EXPANDING_FORECAST} if "condition" in obj else obj, number)
        return replace(call, condition=ORACLE_SEARCH)

    return build


def parse_oracle_traces(
    path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date], max_calls: int
) -> tuple[list[TraceCall], list[Finding]]:
    """oracle_traces.jsonl: traces.jsonl lines whose condition is ``O3``."""
    findings: list[Finding] = []
    field_set, origin_set = set(field_ids), set(origins)
    out = unique_lines(path, _parse_lines(path, data, findings, _oracle_call(field_set, origin_set, max_calls),
                                          quick_trace_call(field_set, origin_set, max_calls, _TRACE_KEY_SETS, frozenset((ORACLE_SEARCH,)))),
                       lambda c: (c.field_id, c.origin, c.call_index),
                       lambda c: f"duplicate call {c.call_index} for {c.field_id} {c.origin} {ORACLE_SEARCH}",
                       ProblemKind.DUPLICATE_CALL, findings)
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


def _object(value: Any, name: str, keys: tuple[str, ...]) -> None:
    """``value`` is a JSON object with exactly ``keys``; a problem names ``name``."""
    if not isinstance(value, dict):
        raise _Bad(f"'{name}' must be an object, found {_show(value)}")
    try:
        _keys(value, keys)
    except _Bad as exc:
        raise _Bad(f"'{name}': {exc}") from None


def _panel(value: Any, origins: set[date]) -> Panel:
    _object(value, "panel", PANEL_KEYS)
    return Panel(
        _name_list(value["splits"], "panel.splits", SPLITS),
        _date_list(value["origins"], "panel.origins", origins),
        _name_list(value["conditions"], "panel.conditions", CONDITIONS),
    )


_INFERENCE_NUMBERS = ("temperature", "top_p")
_INFERENCE_COUNTS = {"seed": 0, "api_retries": 0, "unit_retries": 0, "context_window": 1}


def check_inference(value: Any) -> dict:
    """§7 ``inference``: every key present (null = unset), nothing else, each of its type."""
    _object(value, "inference", INFERENCE_KEYS)
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
    """The INTERVENTIONS.md keys of a model.json given as bytes (the other keys are parse_model_json's).

    ``model_ids``: the archive's listed models, which a ``base_model`` must name. A model.json
    that :func:`~rapgen.archive.parse.parse_model_json` already read goes to :func:`model_extensions`.
    """
    return _parse_document(path, data, _extensions(set(origins), set(model_ids)))


def model_extensions(
    path: str, info: ModelInfo, origins: Iterable[date], model_ids: Iterable[str] = ()
) -> tuple[ModelExtensions | None, list[Finding]]:
    """The INTERVENTIONS.md keys of a model.json from the object ``parse_model_json`` decoded
    (``info.document``): the same findings as :func:`parse_model_extensions`, without decoding again."""
    findings: list[Finding] = []
    build = _extensions(set(origins), set(model_ids))
    return _guard(path, None, findings, lambda: build(dict(info.document))), findings


def _extensions(origin_set: set[date], listed: set[str]) -> Callable[[dict], ModelExtensions]:

    def build(obj: dict) -> ModelExtensions:
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

    return build


def parse_training(
    path: str, data: bytes, field_ids: Iterable[str], origins: Iterable[date], base_model: str | None
) -> tuple[Training | None, list[Finding]]:
    """training.json: keys and types; fields and origins exist; ``base_model`` matches model.json's.

    The rules that need the panel (trajectory bound, windows ending by the
    panel's first origin) are :func:`rapgen.archive.intervention_checks.check_training`.
    """
    field_set, origin_set = set(field_ids), set(origins)

    def build(obj: dict) -> Training:
        _keys(obj, TRAINING_KEYS)
        base = _str(obj, "base_model")
        if base_model is not None and base != base_model:
            raise _Bad(f"'base_model' {base!r} differs from model.json's {base_model!r}")
        gate = obj["gate"]
        _object(gate, "gate", GATE_KEYS)
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

    return _parse_document(path, data, build)

