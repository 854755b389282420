"""Parsers for the archive's JSON and JSONL files (ARCHIVE.md, SUBMISSION.md, SEARCH.md).

Every parser is pure: it takes the file's bytes and the archive-relative path used
in messages, and returns ``(records, findings)``. Nothing here raises on bad data;
the reader and the verifier decide what a finding means.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from typing import Any, Callable, Iterable

from rapgen.archive.calendar import add_months, parse_date
from rapgen.archive.jsonparse import (
    _HEX64_RE,
    _Bad,
    _bool,
    _date,
    _field_id,
    _int,
    _keys,
    _one_of,
    _parse_document,
    _parse_lines,
    _sha256_hex,
    _str,
    as_float,
    loads_strict,
    unique_lines,
)
from rapgen.archive.layout import MODEL_ID_PATTERN
from rapgen.archive.quick import CONDITION_SET, origin_texts, quick_trace_call, quick_unit_core
from rapgen.archive.records import (
    CONDITIONS,
    SEARCH_CONDITIONS,
    SLOTS,
    SPLITS,
    Block,
    Category,
    Direction,
    Field,
    Finding,
    ModelInfo,
    Origins,
    ProblemKind,
    ShardManifest,
    TraceCall,
    Unit,
)

_MODEL_ID_RE = re.compile(MODEL_ID_PATTERN)


# ---------------------------------------------------------------- documents
ARCHIVE_KEYS = ("format", "format_version", "name", "description", "created", "synthetic", "source", "license")


def _archive_json(obj: dict) -> dict:
    _keys(obj, ARCHIVE_KEYS)
    if obj["format"] != "rap-archive":
        raise _Bad(f"'format' must be \"rap-archive\", found {json.dumps(obj['format'])}")
    if obj["format_version"] not in (1, 2) or isinstance(obj["format_version"], bool):  # 2: RELEASES.md
        raise _Bad(f"'format_version' must be 1 or 2, found {json.dumps(obj['format_version'])}")
    for key in ("name", "description", "source", "license"):
        _str(obj, key)
    _date(obj, "created")
    _bool(obj, "synthetic")
    return obj


def parse_archive_json(path: str, data: bytes) -> tuple[dict | None, list[Finding]]:
    return _parse_document(path, data, _archive_json)


# A bound on the months of history an episode reads (window_months × history_windows):
# generous for any benchmark (100 years) and small enough that windows stay cheap to list.
MAX_HISTORY_MONTHS = 1200


def add_months_or_none(d: date, months: int) -> date | None:
    """``add_months``, or None when the result is not a representable date."""
    try:
        return add_months(d, months)
    except (ValueError, OverflowError):
        return None


def _origins(obj: dict) -> Origins:
    _keys(obj, ("origins", "window_months", "history_windows", "strict_origin"))
    if not isinstance(obj["origins"], list) or not obj["origins"]:
        raise _Bad("'origins' must be a non-empty list of dates")
    origins = []
    for value in obj["origins"]:
        try:
            d = parse_date(value)
        except ValueError:
            raise _Bad(f"origin {json.dumps(value)[:40]} is not a YYYY-MM-DD date") from None
        if d.day != 1:
            raise _Bad(f"origin {value} is not the first of a month")
        origins.append(d)
    if origins != sorted(set(origins)):
        raise _Bad("'origins' must be strictly increasing")
    window = _int(obj, "window_months", 1)
    history = _int(obj, "history_windows", 1)
    if window * history > MAX_HISTORY_MONTHS:
        raise _Bad(f"'window_months' × 'history_windows' must be at most {MAX_HISTORY_MONTHS} months, found {window} × {history}")
    earliest, latest = add_months_or_none(origins[0], -window * history), add_months_or_none(origins[-1], window)
    if earliest is None or latest is None:
        raise _Bad("the history windows before the first origin or the target window after the last fall outside years 1–9999")
    strict = _date(obj, "strict_origin")
    if strict not in origins:
        raise _Bad(f"'strict_origin' {strict} is not one of the origins")
    return Origins(tuple(origins), window, history, strict)


def parse_origins(path: str, data: bytes) -> tuple[Origins | None, list[Finding]]:
    return _parse_document(path, data, _origins)


LEDGER_SHAPE: dict[str, tuple[str, ...]] = {
    "bm25": ("k1", "b"),
    "search": ("top_k", "max_calls"),
    "bootstrap": ("resamples", "seed", "level"),
    "arima110": ("phi",),
    "holt": ("alpha", "beta"),
    "var_ridge": ("ratio",),
    "residual": ("direct_permutations", "seed"),
    "change_rich": ("p_max", "repeatability_min", "null_draws", "seed"),
    "reliability": ("splits", "seed"),
}
_INTEGER_CONSTANTS = {"top_k", "max_calls", "resamples", "seed", "direct_permutations", "null_draws", "splits"}


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _ledger(obj: dict) -> dict:
    for section, keys in LEDGER_SHAPE.items():
        if section not in obj or not isinstance(obj[section], dict):
            raise _Bad(f"missing section {section!r}")
        for key in keys:
            if key not in obj[section]:
                raise _Bad(f"missing constant {section}.{key}")
            value = obj[section][key]
            if not _is_number(value) or not math.isfinite(as_float(value)):
                raise _Bad(f"{section}.{key} must be a finite number")
            if key in _INTEGER_CONSTANTS and (not isinstance(value, int) or value < 0):
                raise _Bad(f"{section}.{key} must be a non-negative integer")
    weights = obj.get("ewma_weights")
    if not isinstance(weights, list) or not weights or not all(_is_number(w) for w in weights):
        raise _Bad("'ewma_weights' must be a non-empty list of numbers")
    if not all(math.isfinite(as_float(w)) for w in weights):
        raise _Bad("'ewma_weights' must be finite numbers")
    if not 0 < obj["bootstrap"]["level"] < 1:
        raise _Bad("bootstrap.level must lie strictly between 0 and 1")
    return obj


def parse_ledger(path: str, data: bytes) -> tuple[dict | None, list[Finding]]:
    """The parameter ledger: every section and constant present and numeric."""
    return _parse_document(path, data, _ledger)


def _field(obj: dict, _line: int) -> Field:
    _keys(obj, ("field_id", "name", "definition", "split", "block_id", "eligible_pre2024"))
    return Field(
        _field_id(obj),
        _str(obj, "name", empty_ok=False),
        _str(obj, "definition"),
        _one_of(obj, "split", SPLITS),
        _str(obj, "block_id", empty_ok=False),
        _bool(obj, "eligible_pre2024"),
    )


def parse_fields(path: str, data: bytes) -> tuple[list[Field], list[Finding]]:
    findings: list[Finding] = []
    return [f for _, f in _parse_lines(path, data, findings, _field)], findings


def _direction(fid: str, i: int, d: Any) -> Direction:
    if not isinstance(d, dict):
        raise _Bad(f"direction {i} of {fid!r} is not an object")
    _keys(d, ("slot", "name", "definition", "include", "exclude", "exemplars"))
    if d["slot"] != SLOTS[i]:
        raise _Bad(f"direction {i} of {fid!r} must have slot {SLOTS[i]}, found {json.dumps(d['slot'])}")
    ex = d["exemplars"]
    if not isinstance(ex, list) or not all(isinstance(e, str) and e for e in ex):
        raise _Bad(f"{fid}/{SLOTS[i]}: 'exemplars' must be a list of arXiv ids")
    return Direction(SLOTS[i], _str(d, "name", empty_ok=False), _str(d, "definition"), _str(d, "include"), _str(d, "exclude"), tuple(ex))


def _codebook(obj: dict, _line: int) -> tuple[str, tuple[Direction, ...]]:
    _keys(obj, ("field_id", "directions"))
    fid = _field_id(obj)
    directions = obj["directions"]
    if not isinstance(directions, list) or len(directions) != 8:
        n = len(directions) if isinstance(directions, list) else "no list of"
        raise _Bad(f"field {fid!r} must have exactly eight directions D0–D7, found {n}")
    return fid, tuple(_direction(fid, i, d) for i, d in enumerate(directions))


def parse_codebooks(path: str, data: bytes) -> tuple[dict[str, tuple[Direction, ...]], list[Finding]]:
    findings: list[Finding] = []
    out: dict[str, tuple[Direction, ...]] = {}
    for number, (fid, directions) in _parse_lines(path, data, findings, _codebook):
        if fid in out:
            findings.append(Finding(path, number, Category.INVARIANT, f"field {fid!r} has a second codebook", kind=ProblemKind.DUPLICATE_RECORD))
        else:
            out[fid] = directions
    return out, findings


def _block(obj: dict, _line: int) -> Block:
    _keys(obj, ("block_id", "split", "fields"))
    fields = obj["fields"]
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
        raise _Bad("'fields' must be a non-empty list of field ids")
    return Block(_str(obj, "block_id", empty_ok=False), _one_of(obj, "split", SPLITS), tuple(fields))


def parse_blocks(path: str, data: bytes) -> tuple[list[Block], list[Finding]]:
    findings: list[Finding] = []
    return [b for _, b in _parse_lines(path, data, findings, _block)], findings


MANIFEST_KEYS = ("field_id", "origin", "regime", "date_from", "date_to", "n_papers", "min_date", "max_date", "ids_sha256")


def _manifest_entry(regime: str) -> Callable[[dict, int], ShardManifest]:
    def build(obj: dict, _line: int) -> ShardManifest:
        _keys(obj, MANIFEST_KEYS)
        if obj["regime"] != regime:
            raise _Bad(f"'regime' must be {regime!r} in this file, found {json.dumps(obj['regime'])}")
        date_from = _date(obj, "date_from", nullable=True)
        if regime == "expanding" and date_from is not None:
            raise _Bad("'date_from' must be null for the expanding regime")
        if regime == "fixed" and date_from is None:
            raise _Bad("'date_from' must be a date for the fixed regime")
        sha = _str(obj, "ids_sha256")
        if not _HEX64_RE.match(sha):
            raise _Bad("'ids_sha256' must be 64 lower-case hex digits")
        return ShardManifest(
            _field_id(obj), _date(obj, "origin"), regime, date_from, _date(obj, "date_to"), _int(obj, "n_papers"),
            _date(obj, "min_date", nullable=True), _date(obj, "max_date", nullable=True), sha,
        )

    return build


def parse_manifest(path: str, data: bytes, regime: str) -> tuple[list[ShardManifest], list[Finding]]:
    findings: list[Finding] = []
    return [e for _, e in _parse_lines(path, data, findings, _manifest_entry(regime))], findings


MODEL_KEYS = (
    "model_id", "display_name", "provider", "proprietary", "knowledge_cutoff", "release_date",
    "cutoff_source", "diagnostic", "submitted", "contact", "notes",
)
# Keys a model.json may carry beyond the spec's (documented in docs/archive.md).
# ``prompt_sha256`` is the SHA-256 of the prompt template the kit ran (64 lower-case hex).
MODEL_OPTIONAL_KEYS = ("reference_agent", "url", "prompt_sha256")
# model.json keys added by INTERVENTIONS.md, checked by interventions.model_extensions (from ModelInfo.document).
MODEL_EXTENSION_KEYS: tuple[str, ...] = ("panel", "base_model", "cutoff_precision", "inference")


def _model_json(folder: str | None) -> Callable[[dict], ModelInfo]:
    def build(obj: dict) -> ModelInfo:
        _keys(obj, MODEL_KEYS, MODEL_OPTIONAL_KEYS + MODEL_EXTENSION_KEYS)
        mid = _str(obj, "model_id")
        if not _MODEL_ID_RE.match(mid):
            raise _Bad(f"'model_id' {mid!r} does not match {MODEL_ID_PATTERN}")
        if folder is not None and mid != folder:
            raise _Bad(f"'model_id' {mid!r} differs from its folder name {folder!r}")
        for key in ("cutoff_source", "contact", "notes"):
            if obj[key] is not None:
                _str(obj, key)
        if "prompt_sha256" in obj:
            _sha256_hex(obj, "prompt_sha256")
        return ModelInfo(
            mid,
            _str(obj, "display_name", empty_ok=False),
            _str(obj, "provider"),
            _bool(obj, "proprietary"),
            _date(obj, "knowledge_cutoff", nullable=True),
            _date(obj, "release_date", nullable=True),
            obj["cutoff_source"] or "",
            _bool(obj, "diagnostic"),
            _date(obj, "submitted", nullable=True),
            obj["contact"] or "",
            obj["notes"] or "",
            {k: obj[k] for k in MODEL_OPTIONAL_KEYS if k in obj},
            dict(obj),
        )

    return build


def parse_model_json(path: str, data: bytes, folder: str | None = None) -> tuple[ModelInfo | None, list[Finding]]:
    return _parse_document(path, data, _model_json(folder))


def names_panel(data: bytes | None) -> bool:
    """True if a model.json (valid or not) sets ``panel``: its coverage is the panel's (INTERVENTIONS.md §3)."""
    try:
        obj = loads_strict(data.decode("utf-8")) if data is not None else None
    except Exception:  # noqa: BLE001 - model.json's own problems are reported by its parser
        return False
    return isinstance(obj, dict) and obj.get("panel") is not None


# ---------------------------------------------------------------- predictions
PREDICTION_REQUIRED = ("field_id", "origin", "condition", "weights")
# INTERVENTIONS.md §7: optional per-unit provenance keys of predictions.jsonl, replays.jsonl and oracle.jsonl.
UNIT_PROVENANCE_KEYS: tuple[str, ...] = ("response_model", "attempts", "unit_attempt", "usage", "max_output_tokens", "prompt_sha256")
PREDICTION_OPTIONAL = ("rationale", "status", "reason", *UNIT_PROVENANCE_KEYS)


# The §7 keys a page shows (prompt_sha256 is checked, not shown).
SHOWN_PROVENANCE_KEYS: tuple[str, ...] = ("response_model", "attempts", "unit_attempt", "usage", "max_output_tokens")


def check_unit_provenance(obj: dict) -> dict | None:
    """§7 per-unit keys, where present; raises ``_Bad`` naming the key. Returns the shown keys
    the line has (None when it has none), kept on the parsed record: shown, never scored."""
    if "response_model" in obj and obj["response_model"] is not None:
        _str(obj, "response_model")
    for key in ("attempts", "unit_attempt", "max_output_tokens"):
        if key in obj:
            _int(obj, key, 1)
    if "prompt_sha256" in obj:
        _sha256_hex(obj, "prompt_sha256")
    if "usage" in obj:
        usage = obj["usage"]
        if not isinstance(usage, dict):
            raise _Bad(f"'usage' must be an object, found {_show(usage)}")
        _keys(usage, ("input_tokens", "output_tokens"), ("reasoning_tokens",))
        for key in usage:
            if isinstance(usage[key], bool) or not isinstance(usage[key], int) or usage[key] < 0:
                raise _Bad(f"'usage.{key}' must be an integer ≥ 0, found {_show(usage[key])}")
    return {k: obj[k] for k in SHOWN_PROVENANCE_KEYS if k in obj} or None


def renormalise(values: list[float]) -> tuple[float, ...] | None:
    """Finite, non-negative weights scaled to sum to 1; None if they total zero.

    ``math.fsum`` is exact but raises OverflowError once the true sum passes the
    largest double (eight weights of 1.7e308 are valid and sum to ~1.4e309). In
    that case, and only then, the weights are first divided by their maximum, which
    is exact for the largest and loses at most the subnormal tail of the rest; the
    ordinary path stays bit-for-bit what it always was."""
    try:
        total = math.fsum(values)
    except OverflowError:
        total = math.inf
    if math.isinf(total):
        top = max(values)
        values = [v / top for v in values]
        total = math.fsum(values)
    if total <= 0:
        return None
    return tuple(v / total for v in values)


def _unit_validity(weights: dict) -> tuple[tuple[float, ...] | None, str]:
    """SUBMISSION.md problem kind 2: keys exactly D0..D7, finite, non-negative, positive total."""
    if len(weights) != len(SLOTS) or not all(s in weights for s in SLOTS):
        extra = sorted(set(weights) - set(SLOTS))
        missing = [s for s in SLOTS if s not in weights]
        what = f"missing {', '.join(missing)}" if missing else f"unexpected {', '.join(extra)}"
        return None, f"weights keys must be exactly D0–D7 ({what})"
    values = [as_float(weights[s]) for s in SLOTS]  # a number beyond a double (1e400, 10**400) is infinite here
    if not all(math.isfinite(v) for v in values):
        return None, "a weight is not finite"
    if min(values) < 0:
        return None, "a weight is negative"
    composition = renormalise(values)
    if composition is None:
        return None, "the weights total zero"
    return composition, ""


def _unit_of(obj: dict, field_set: set[str], origin_set: set[date]) -> tuple[str, date]:
    """A line's ``field_id`` and ``origin``, each checked against the archive's."""
    fid = _str(obj, "field_id")
    if fid not in field_set:
        raise _Bad(f"field_id {fid!r} is not a field of this archive")
    origin = _date(obj, "origin")
    if origin not in origin_set:
        raise _Bad(f"origin {origin} is not an origin of this archive")
    return fid, origin


def _prediction(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], Unit]:
    def build(obj: dict, number: int) -> Unit:
        _keys(obj, PREDICTION_REQUIRED, PREDICTION_OPTIONAL)
        fid, origin = _unit_of(obj, field_set, origin_set)
        condition = _one_of(obj, "condition", CONDITIONS)
        provenance = check_unit_provenance(obj)
        for key in ("rationale", "reason"):
            if key in obj and obj[key] is not None:
                _str(obj, key)
        status = obj.get("status", "valid")
        if status not in ("valid", "invalid"):
            raise _Bad(f"'status' must be \"valid\" or \"invalid\", found {json.dumps(status)[:40]}")
        weights = obj["weights"]
        if status == "invalid" and weights is not None:
            raise _Bad("a unit with status \"invalid\" must have weights null")
        if weights is None:
            return Unit(fid, origin, condition, None, False, obj.get("reason") or "weights null", number, provenance)
        if not isinstance(weights, dict):
            raise _Bad(f"'weights' must be an object or null, found {type(weights).__name__}")
        for key, value in weights.items():
            if not _is_number(value):
                raise _Bad(f"weight {key!r} is not a JSON number, found {_show(value)}")
        composition, reason = _unit_validity(weights)
        return Unit(fid, origin, condition, composition, composition is not None, reason, number, provenance)

    return build


# ---------------------------------------------------------------- the ordinary line, quickly (rapgen.archive.quick)
_PREDICTION_KEYS = (frozenset(PREDICTION_REQUIRED), frozenset(PREDICTION_REQUIRED) | {"rationale"})


def _quick_prediction(field_set: set[str], origin_set: set[date]) -> Callable[[dict, int], Unit | None]:
    origins = origin_texts(origin_set)

    def fast(obj: dict, number: int) -> Unit | None:
        if obj.keys() not in _PREDICTION_KEYS:
            return None
        condition = obj["condition"]
        if type(condition) is not str or condition not in CONDITION_SET:
            return None
        core = quick_unit_core(obj, field_set, origins)
        if core is None:
            return None
        return Unit(core[0], core[1], condition, core[2], True, "", number, None)

    return fast


def _show(value: Any) -> str:
    """A short JSON rendering of a value for a message (never raises)."""
    try:
        return json.dumps(value)[:40]
    except (ValueError, RecursionError):
        return type(value).__name__


def parse_predictions(
    path: str,
    data: bytes,
    field_ids: Iterable[str],
    origins: Iterable[date],
    *,
    coverage: bool = True,
) -> tuple[list[Unit], list[Finding]]:
    """Validate a predictions.jsonl (SUBMISSION.md): malformed lines become
    findings; invalid units are kept with ``valid=False`` and a reason.

    ``coverage=False`` leaves out the every-field × every-origin rule: a panel
    model's coverage is its panel's (INTERVENTIONS.md §3), checked there."""
    field_set = set(field_ids)
    origin_set = set(origins)
    findings: list[Finding] = []
    units = unique_lines(path, _parse_lines(path, data, findings, _prediction(field_set, origin_set),
                                            _quick_prediction(field_set, origin_set)),
                         lambda u: (u.field_id, u.origin, u.condition), lambda u: f"duplicate unit {u.field_id} {u.origin} {u.condition}",
                         ProblemKind.DUPLICATE_UNIT, findings)
    if coverage:
        findings.extend(_coverage(path, units, field_set, origin_set))
    return units, findings


def _coverage(path: str, units: list[Unit], field_set: set[str], origin_set: set[date]) -> list[Finding]:
    """A claimed condition must cover every field × origin."""
    out = []
    for condition in sorted({u.condition for u in units}):
        have = {(u.field_id, u.origin) for u in units if u.condition == condition}
        gaps = sorted((f, o) for f in field_set for o in origin_set if (f, o) not in have)
        if gaps:
            f, o = gaps[0]
            detail = f"condition {condition} does not cover every episode: {len(gaps)} missing, first {f} {o}"
            out.append(Finding(path, None, Category.MALFORMED, detail, kind=ProblemKind.COVERAGE))
    return out


# ---------------------------------------------------------------- traces
TRACE_KEYS = ("field_id", "origin", "condition", "call_index", "query", "sort", "date_from", "date_to", "total_hits", "returned_ids")
# ``prompt_sha256``: the SHA-256 of the prompt the kit sent for the unit (64 lower-case hex).
TRACE_OPTIONAL_KEYS = ("prompt_sha256",)


def _trace_call(field_set: set[str], origin_set: set[date], max_calls: int) -> Callable[[dict, int], TraceCall]:
    def build(obj: dict, number: int) -> TraceCall:
        _keys(obj, TRACE_KEYS, TRACE_OPTIONAL_KEYS)
        fid, origin = _unit_of(obj, field_set, origin_set)
        condition = _one_of(obj, "condition", SEARCH_CONDITIONS)
        index = _int(obj, "call_index")
        if index >= max_calls:
            raise _Bad(f"call_index {index} is beyond the cap of {max_calls} calls per unit", ProblemKind.CALL_CAP)
        for key in ("date_from", "date_to"):
            if obj[key] is not None and not isinstance(obj[key], str):
                raise _Bad(f"{key!r} must be a string or null")
        if not isinstance(obj["query"], str) or not isinstance(obj["sort"], str):
            raise _Bad("'query' and 'sort' must be strings")
        ids = obj["returned_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise _Bad("'returned_ids' must be a list of arXiv ids")
        prompt = _sha256_hex(obj, "prompt_sha256") if "prompt_sha256" in obj else None
        return TraceCall(
            fid, origin, condition, index, obj["query"], obj["sort"], obj["date_from"], obj["date_to"],
            _int(obj, "total_hits"), tuple(ids), number, prompt,
        )

    return build


_TRACE_KEY_SETS = (frozenset(TRACE_KEYS), frozenset(TRACE_KEYS) | {"prompt_sha256"})


def parse_traces(
    path: str,
    data: bytes,
    field_ids: Iterable[str],
    origins: Iterable[date],
    max_calls: int,
) -> tuple[list[TraceCall], list[Finding]]:
    findings: list[Finding] = []
    field_set, origin_set = set(field_ids), set(origins)
    calls = unique_lines(path, _parse_lines(path, data, findings, _trace_call(field_set, origin_set, max_calls),
                                            quick_trace_call(field_set, origin_set, max_calls, _TRACE_KEY_SETS)),
                         lambda c: (c.field_id, c.origin, c.condition, c.call_index),
                         lambda c: f"duplicate call {c.call_index} for {c.field_id} {c.origin} {c.condition}",
                         ProblemKind.DUPLICATE_CALL, findings)
    return calls, findings
