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
from typing import Any, Callable, Iterable, Iterator

from rapgen.archive.calendar import parse_date
from rapgen.archive.records import (
    CONDITIONS,
    FIELD_ID_PATTERN,
    MODEL_ID_PATTERN,
    REGIMES,
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
    ShardManifest,
    TraceCall,
    Unit,
)

_FIELD_ID_RE = re.compile(FIELD_ID_PATTERN)
_MODEL_ID_RE = re.compile(MODEL_ID_PATTERN)
_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")


class _Bad(ValueError):
    """A value that breaks the schema; message is the finding's detail."""


def _reject_constant(name: str) -> float:
    raise _Bad(f"{name} is not a JSON number (NaN and Infinity literals are not allowed)")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _Bad(f"duplicate key {key!r}")
        out[key] = value
    return out


# One decoder for every line: json.loads with options would build a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)


def loads_strict(text: str) -> Any:
    """``json.loads`` that rejects NaN/Infinity literals and duplicate keys.

    Inputs Python's parser cannot hold (integers of more than 4,300 digits,
    nesting deeper than the recursion limit) are reported as not JSON, never
    raised as an internal error.
    """
    try:
        return _DECODER.decode(text)
    except (_Bad, json.JSONDecodeError):
        raise
    except RecursionError:
        raise _Bad("not JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise _Bad(f"not JSON: {str(exc).split(';')[0]}") from None


def as_float(value: int | float) -> float:
    """A JSON number as a float; integers too large for a float become infinity (like ``1e400``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _lines(path: str, data: bytes, findings: list[Finding]) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every JSON-object line; record findings for the rest."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(Finding(path, None, Category.MALFORMED, f"not valid UTF-8 at byte {exc.start}"))
        return
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    for number, raw in enumerate(lines, start=1):
        if raw.strip() == "":
            findings.append(Finding(path, number, Category.MALFORMED, "blank line"))
            continue
        try:
            obj = loads_strict(raw)
        except _Bad as exc:
            findings.append(Finding(path, number, Category.MALFORMED, str(exc)))
            continue
        except json.JSONDecodeError as exc:
            findings.append(Finding(path, number, Category.MALFORMED, f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            findings.append(Finding(path, number, Category.MALFORMED, f"expected a JSON object, found {type(obj).__name__}"))
            continue
        yield number, obj


def _document(path: str, data: bytes, findings: list[Finding]) -> dict | None:
    try:
        obj = loads_strict(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        findings.append(Finding(path, None, Category.MALFORMED, f"not valid UTF-8 at byte {exc.start}"))
        return None
    except _Bad as exc:
        findings.append(Finding(path, None, Category.MALFORMED, str(exc)))
        return None
    except json.JSONDecodeError as exc:
        findings.append(Finding(path, exc.lineno, Category.MALFORMED, f"not JSON: {exc.msg} at column {exc.colno}"))
        return None
    if not isinstance(obj, dict):
        findings.append(Finding(path, None, Category.MALFORMED, "expected a JSON object"))
        return None
    return obj


# ---------------------------------------------------------------- field checks
def _keys(obj: dict, required: Iterable[str], optional: Iterable[str] = ()) -> None:
    required = list(required)
    allowed = set(required) | set(optional)
    missing = [k for k in required if k not in obj]
    unknown = sorted(k for k in obj if k not in allowed)
    if missing:
        raise _Bad(f"missing key {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    if unknown:
        raise _Bad(f"unknown key {unknown[0]!r}" + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))


def _str(obj: dict, key: str, *, empty_ok: bool = True) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise _Bad(f"{key!r} must be a string, found {json.dumps(value)[:40]}")
    if not empty_ok and not value.strip():
        raise _Bad(f"{key!r} must not be empty")
    return value


def _bool(obj: dict, key: str) -> bool:
    value = obj[key]
    if not isinstance(value, bool):
        raise _Bad(f"{key!r} must be true or false, found {json.dumps(value)[:40]}")
    return value


def _int(obj: dict, key: str, minimum: int = 0) -> int:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _Bad(f"{key!r} must be an integer ≥ {minimum}, found {json.dumps(value)[:40]}")
    return value


def _date(obj: dict, key: str, *, nullable: bool = False) -> date | None:
    value = obj[key]
    if value is None and nullable:
        return None
    try:
        return parse_date(value)
    except ValueError:
        raise _Bad(f"{key!r} must be a YYYY-MM-DD date{' or null' if nullable else ''}, found {json.dumps(value)[:40]}") from None


def _one_of(obj: dict, key: str, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    value = obj[key]
    if value not in allowed:
        raise _Bad(f"{key!r} must be one of {', '.join(allowed)}, found {json.dumps(value)[:40]}")
    return value


def _field_id(obj: dict, key: str = "field_id") -> str:
    value = _str(obj, key)
    if not _FIELD_ID_RE.match(value):
        raise _Bad(f"{key!r} {value!r} does not match {FIELD_ID_PATTERN}")
    return value


def _guard(path: str, line: int | None, findings: list[Finding], build: Callable[[], Any]) -> Any:
    try:
        return build()
    except _Bad as exc:
        findings.append(Finding(path, line, Category.MALFORMED, str(exc)))
        return None


# ---------------------------------------------------------------- documents
ARCHIVE_KEYS = ("format", "format_version", "name", "description", "created", "synthetic", "source", "license")


def parse_archive_json(path: str, data: bytes) -> tuple[dict | None, list[Finding]]:
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> dict:
        _keys(obj, ARCHIVE_KEYS)
        if obj["format"] != "rap-archive":
            raise _Bad(f"'format' must be \"rap-archive\", found {json.dumps(obj['format'])}")
        if obj["format_version"] != 1 or isinstance(obj["format_version"], bool):
            raise _Bad(f"'format_version' must be 1, found {json.dumps(obj['format_version'])}")
        for key in ("name", "description", "source", "license"):
            _str(obj, key)
        _date(obj, "created")
        _bool(obj, "synthetic")
        return obj

    return _guard(path, None, findings, build), findings


def parse_origins(path: str, data: bytes) -> tuple[Origins | None, list[Finding]]:
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> Origins:
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
        strict = _date(obj, "strict_origin")
        if strict not in origins:
            raise _Bad(f"'strict_origin' {strict} is not one of the origins")
        return Origins(tuple(origins), window, history, strict)

    return _guard(path, None, findings, build), findings


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


def parse_ledger(path: str, data: bytes) -> tuple[dict | None, list[Finding]]:
    """The parameter ledger: every section and constant present and numeric."""
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> dict:
        for section, keys in LEDGER_SHAPE.items():
            if section not in obj or not isinstance(obj[section], dict):
                raise _Bad(f"missing section {section!r}")
            for key in keys:
                if key not in obj[section]:
                    raise _Bad(f"missing constant {section}.{key}")
                value = obj[section][key]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(as_float(value)):
                    raise _Bad(f"{section}.{key} must be a finite number")
                if key in _INTEGER_CONSTANTS and (not isinstance(value, int) or value < 0):
                    raise _Bad(f"{section}.{key} must be a non-negative integer")
        weights = obj.get("ewma_weights")
        if (
            not isinstance(weights, list)
            or not weights
            or any(isinstance(w, bool) or not isinstance(w, (int, float)) for w in weights)
        ):
            raise _Bad("'ewma_weights' must be a non-empty list of numbers")
        if not 0 < obj["bootstrap"]["level"] < 1:
            raise _Bad("bootstrap.level must lie strictly between 0 and 1")
        return obj

    return _guard(path, None, findings, build), findings


def parse_fields(path: str, data: bytes) -> tuple[list[Field], list[Finding]]:
    findings: list[Finding] = []
    out: list[Field] = []
    for number, obj in _lines(path, data, findings):
        def build() -> Field:
            _keys(obj, ("field_id", "name", "definition", "split", "block_id", "eligible_pre2024"))
            return Field(
                _field_id(obj),
                _str(obj, "name", empty_ok=False),
                _str(obj, "definition"),
                _one_of(obj, "split", SPLITS),
                _str(obj, "block_id", empty_ok=False),
                _bool(obj, "eligible_pre2024"),
            )

        record = _guard(path, number, findings, build)
        if record is not None:
            out.append(record)
    return out, findings


def parse_codebooks(path: str, data: bytes) -> tuple[dict[str, tuple[Direction, ...]], list[Finding]]:
    findings: list[Finding] = []
    out: dict[str, tuple[Direction, ...]] = {}
    for number, obj in _lines(path, data, findings):
        def build() -> tuple[str, tuple[Direction, ...]]:
            _keys(obj, ("field_id", "directions"))
            fid = _field_id(obj)
            directions = obj["directions"]
            if not isinstance(directions, list) or len(directions) != 8:
                n = len(directions) if isinstance(directions, list) else "no list of"
                raise _Bad(f"field {fid!r} must have exactly eight directions D0–D7, found {n}")
            parsed = []
            for i, d in enumerate(directions):
                if not isinstance(d, dict):
                    raise _Bad(f"direction {i} of {fid!r} is not an object")
                _keys(d, ("slot", "name", "definition", "include", "exclude", "exemplars"))
                if d["slot"] != SLOTS[i]:
                    raise _Bad(f"direction {i} of {fid!r} must have slot {SLOTS[i]}, found {json.dumps(d['slot'])}")
                ex = d["exemplars"]
                if not isinstance(ex, list) or not all(isinstance(e, str) and e for e in ex):
                    raise _Bad(f"{fid}/{SLOTS[i]}: 'exemplars' must be a list of arXiv ids")
                parsed.append(
                    Direction(SLOTS[i], _str(d, "name", empty_ok=False), _str(d, "definition"), _str(d, "include"), _str(d, "exclude"), tuple(ex))
                )
            return fid, tuple(parsed)

        record = _guard(path, number, findings, build)
        if record is not None:
            fid, directions = record
            if fid in out:
                findings.append(Finding(path, number, Category.INVARIANT, f"field {fid!r} has a second codebook"))
            else:
                out[fid] = directions
    return out, findings


def parse_blocks(path: str, data: bytes) -> tuple[list[Block], list[Finding]]:
    findings: list[Finding] = []
    out: list[Block] = []
    for number, obj in _lines(path, data, findings):
        def build() -> Block:
            _keys(obj, ("block_id", "split", "fields"))
            fields = obj["fields"]
            if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
                raise _Bad("'fields' must be a non-empty list of field ids")
            return Block(_str(obj, "block_id", empty_ok=False), _one_of(obj, "split", SPLITS), tuple(fields))

        record = _guard(path, number, findings, build)
        if record is not None:
            out.append(record)
    return out, findings


def parse_manifest(path: str, data: bytes, regime: str) -> tuple[list[ShardManifest], list[Finding]]:
    findings: list[Finding] = []
    out: list[ShardManifest] = []
    for number, obj in _lines(path, data, findings):
        def build() -> ShardManifest:
            _keys(obj, ("field_id", "origin", "regime", "date_from", "date_to", "n_papers", "min_date", "max_date", "ids_sha256"))
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
                _field_id(obj),
                _date(obj, "origin"),
                regime,
                date_from,
                _date(obj, "date_to"),
                _int(obj, "n_papers"),
                _date(obj, "min_date", nullable=True),
                _date(obj, "max_date", nullable=True),
                sha,
            )

        record = _guard(path, number, findings, build)
        if record is not None:
            out.append(record)
    return out, findings


MODEL_KEYS = (
    "model_id", "display_name", "provider", "proprietary", "knowledge_cutoff", "release_date",
    "cutoff_source", "diagnostic", "submitted", "contact", "notes",
)
# Keys a model.json may carry beyond the spec's (documented in docs/archive.md).
MODEL_OPTIONAL_KEYS = ("reference_agent", "url", "prompt_sha256")


def parse_model_json(path: str, data: bytes, folder: str | None = None) -> tuple[ModelInfo | None, list[Finding]]:
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings

    def build() -> ModelInfo:
        _keys(obj, MODEL_KEYS, MODEL_OPTIONAL_KEYS)
        mid = _str(obj, "model_id")
        if not _MODEL_ID_RE.match(mid):
            raise _Bad(f"'model_id' {mid!r} does not match {MODEL_ID_PATTERN}")
        if folder is not None and mid != folder:
            raise _Bad(f"'model_id' {mid!r} differs from its folder name {folder!r}")
        for key in ("cutoff_source", "contact", "notes"):
            if obj[key] is not None:
                _str(obj, key)
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
        )

    return _guard(path, None, findings, build), findings


# ---------------------------------------------------------------- predictions
PREDICTION_REQUIRED = ("field_id", "origin", "condition", "weights")
PREDICTION_OPTIONAL = ("rationale", "status", "reason")


def _unit_validity(weights: dict) -> tuple[tuple[float, ...] | None, str]:
    """SUBMISSION.md problem kind 2: keys exactly D0..D7, finite, non-negative, positive total."""
    if len(weights) != len(SLOTS) or not all(s in weights for s in SLOTS):
        extra = sorted(set(weights) - set(SLOTS))
        missing = [s for s in SLOTS if s not in weights]
        what = f"missing {', '.join(missing)}" if missing else f"unexpected {', '.join(extra)}"
        return None, f"weights keys must be exactly D0–D7 ({what})"
    values = [as_float(weights[s]) for s in SLOTS]
    low, high = min(values), max(values)
    if math.isnan(math.fsum(values)) or math.isinf(high) or math.isinf(low):
        return None, "a weight is not finite"
    if low < 0:
        return None, "a weight is negative"
    total = math.fsum(values)
    if total <= 0:
        return None, "the weights total zero"
    return tuple(v / total for v in values), ""


def parse_predictions(
    path: str,
    data: bytes,
    field_ids: Iterable[str],
    origins: Iterable[date],
) -> tuple[list[Unit], list[Finding]]:
    """Validate a predictions.jsonl (SUBMISSION.md): malformed lines become
    findings; invalid units are kept with ``valid=False`` and a reason."""
    field_set = set(field_ids)
    origin_set = set(origins)
    findings: list[Finding] = []
    units: list[Unit] = []
    seen: dict[tuple[str, date, str], int] = {}
    for number, obj in _lines(path, data, findings):
        def build() -> Unit:
            _keys(obj, PREDICTION_REQUIRED, PREDICTION_OPTIONAL)
            fid = _str(obj, "field_id")
            if fid not in field_set:
                raise _Bad(f"field_id {fid!r} is not a field of this archive")
            origin = _date(obj, "origin")
            if origin not in origin_set:
                raise _Bad(f"origin {origin} is not an origin of this archive")
            condition = _one_of(obj, "condition", CONDITIONS)
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
                return Unit(fid, origin, condition, None, False, obj.get("reason") or "weights null", number)
            if not isinstance(weights, dict):
                raise _Bad(f"'weights' must be an object or null, found {type(weights).__name__}")
            for key, value in weights.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise _Bad(f"weight {key!r} is not a JSON number, found {json.dumps(value)[:40]}")
            composition, reason = _unit_validity(weights)
            return Unit(fid, origin, condition, composition, composition is not None, reason, number)

        unit = _guard(path, number, findings, build)
        if unit is None:
            continue
        key = (unit.field_id, unit.origin, unit.condition)
        if key in seen:
            findings.append(Finding(path, number, Category.MALFORMED, f"duplicate unit {unit.field_id} {unit.origin} {unit.condition} (first on line {seen[key]})"))
            continue
        seen[key] = number
        units.append(unit)
    # Coverage: a claimed condition must cover every field × origin.
    claimed = sorted({u.condition for u in units})
    for condition in claimed:
        have = {(u.field_id, u.origin) for u in units if u.condition == condition}
        gaps = sorted((f, o) for f in field_set for o in origin_set if (f, o) not in have)
        if gaps:
            f, o = gaps[0]
            findings.append(
                Finding(path, None, Category.MALFORMED, f"condition {condition} does not cover every episode: {len(gaps)} missing, first {f} {o}")
            )
    return units, findings


# ---------------------------------------------------------------- traces
TRACE_KEYS = ("field_id", "origin", "condition", "call_index", "query", "sort", "date_from", "date_to", "total_hits", "returned_ids")


def parse_traces(
    path: str,
    data: bytes,
    field_ids: Iterable[str],
    origins: Iterable[date],
    max_calls: int,
) -> tuple[list[TraceCall], list[Finding]]:
    field_set = set(field_ids)
    origin_set = set(origins)
    findings: list[Finding] = []
    calls: list[TraceCall] = []
    seen: dict[tuple, int] = {}
    for number, obj in _lines(path, data, findings):
        def build() -> TraceCall:
            _keys(obj, TRACE_KEYS, ("prompt_sha256",))
            fid = _str(obj, "field_id")
            if fid not in field_set:
                raise _Bad(f"field_id {fid!r} is not a field of this archive")
            origin = _date(obj, "origin")
            if origin not in origin_set:
                raise _Bad(f"origin {origin} is not an origin of this archive")
            condition = _one_of(obj, "condition", SEARCH_CONDITIONS)
            index = _int(obj, "call_index")
            if index >= max_calls:
                raise _Bad(f"call_index {index} is beyond the cap of {max_calls} calls per unit")
            for key in ("date_from", "date_to"):
                if obj[key] is not None and not isinstance(obj[key], str):
                    raise _Bad(f"{key!r} must be a string or null")
            if not isinstance(obj["query"], str) or not isinstance(obj["sort"], str):
                raise _Bad("'query' and 'sort' must be strings")
            ids = obj["returned_ids"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise _Bad("'returned_ids' must be a list of arXiv ids")
            return TraceCall(fid, origin, condition, index, obj["query"], obj["sort"], obj["date_from"], obj["date_to"], _int(obj, "total_hits"), tuple(ids), number)

        call = _guard(path, number, findings, build)
        if call is None:
            continue
        key = (call.field_id, call.origin, call.condition, call.call_index)
        if key in seen:
            findings.append(Finding(path, number, Category.MALFORMED, f"duplicate call {call.call_index} for {call.field_id} {call.origin} {call.condition} (first on line {seen[key]})"))
            continue
        seen[key] = number
        calls.append(call)
    return calls, findings
