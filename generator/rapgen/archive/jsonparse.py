"""Strict JSON and the schema helpers every archive parser is built from.

:func:`loads_strict` rejects what JSON allows but the archive does not (NaN and
Infinity literals, duplicate keys) and turns inputs Python cannot hold into a
message. ``_lines`` / ``_document`` split a file into objects, recording a finding
for anything else; ``_parse_document`` / ``_parse_lines`` run a ``build``
function over them and turn a ``_Bad`` it raises into a finding with its kind.
The underscore names are the archive stage's own toolkit, used by
:mod:`rapgen.archive.parse` only.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, TypeVar

from rapgen.archive.calendar import parse_date
from rapgen.archive.records import FIELD_ID_PATTERN, Category, Finding, ProblemKind

_FIELD_ID_RE = re.compile(FIELD_ID_PATTERN)
_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")


class _Bad(ValueError):
    """A value that breaks the schema; message is the finding's detail, ``kind`` its rule."""

    def __init__(self, message: str, kind: ProblemKind = ProblemKind.SCHEMA):
        super().__init__(message)
        self.kind = kind


def _reject_constant(name: str) -> float:
    raise _Bad(f"{name} is not a JSON number (NaN and Infinity literals are not allowed)", ProblemKind.SYNTAX)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    out = {}  # a key repeats: name the first repetition
    for key, value in pairs:
        if key in out:
            raise _Bad(f"duplicate key {key!r}", ProblemKind.SYNTAX)
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
        raise _Bad("not JSON: nested too deeply", ProblemKind.SYNTAX) from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise _Bad(f"not JSON: {str(exc).split(';')[0]}", ProblemKind.SYNTAX) from None


def as_float(value: int | float) -> float:
    """A JSON number as a float; integers too large for a float become infinity (like ``1e400``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _syntax(path: str, line: int | None, detail: str, kind: ProblemKind = ProblemKind.SYNTAX) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail, kind=kind)


def _lines(path: str, data: bytes, findings: list[Finding]) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every JSON-object line; record findings for the rest."""
    lines = _split_lines(path, data, findings)
    if lines is None:
        return
    for number, raw in enumerate(lines, start=1):
        obj = _strict_object(path, number, raw, findings)
        if obj is not None:
            yield number, obj


def _split_lines(path: str, data: bytes, findings: list[Finding]) -> list[str] | None:
    """The file's lines (the final newline ends the last one), or None after an encoding finding."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(_syntax(path, None, f"not valid UTF-8 at byte {exc.start}", ProblemKind.ENCODING))
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    return lines


def _strict_object(path: str, number: int, raw: str, findings: list[Finding]) -> dict | None:
    """One line as a JSON object by the strict decoder, or None after its finding."""
    if raw.strip() == "":
        findings.append(_syntax(path, number, "blank line"))
        return None
    try:
        obj = loads_strict(raw)
    except _Bad as exc:
        findings.append(_syntax(path, number, str(exc), exc.kind))
        return None
    except json.JSONDecodeError as exc:
        findings.append(_syntax(path, number, f"not JSON: {exc.msg} at column {exc.colno}"))
        return None
    if not isinstance(obj, dict):
        findings.append(_syntax(path, number, f"expected a JSON object, found {type(obj).__name__}"))
        return None
    return obj


# The plain C decoder (no Python hook per object); NaN and Infinity still call the rejecting hook.
_QUICK_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _quick_object(raw: str) -> dict | None:
    """The line's object when the plain decoder reads it and its colons prove that no key repeats;
    None when unsure (the strict decoder then reads the line and words any finding).

    Every key of every object in the text is followed by one literal ``:``, and so is nothing
    else but a colon inside a string. If the line's colons number exactly the keys of the
    object and of the objects directly among its values, then no key was written twice there,
    no deeper object has a key and no string holds a colon: the strict decoder would return
    the same object."""
    try:
        obj = _QUICK_DECODER.decode(raw)
    except Exception:  # noqa: BLE001 - whatever it is, the strict decoder words it
        return None
    if type(obj) is not dict:
        return None
    n = len(obj)
    for value in obj.values():
        if type(value) is dict:
            n += len(value)
    return obj if raw.count(":") == n else None


def _document(path: str, data: bytes, findings: list[Finding]) -> dict | None:
    try:
        obj = loads_strict(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        findings.append(_syntax(path, None, f"not valid UTF-8 at byte {exc.start}", ProblemKind.ENCODING))
        return None
    except _Bad as exc:
        findings.append(_syntax(path, None, str(exc), exc.kind))
        return None
    except json.JSONDecodeError as exc:
        findings.append(_syntax(path, exc.lineno, f"not JSON: {exc.msg} at column {exc.colno}"))
        return None
    if not isinstance(obj, dict):
        findings.append(_syntax(path, None, "expected a JSON object"))
        return None
    return obj


T = TypeVar("T")


def _parse_document(path: str, data: bytes, build: Callable[[dict], T]) -> tuple[T | None, list[Finding]]:
    """A whole-file JSON object checked by ``build(obj)``: ``(record or None, findings)``."""
    findings: list[Finding] = []
    obj = _document(path, data, findings)
    if obj is None:
        return None, findings
    return _guard(path, None, findings, lambda: build(obj)), findings


def _parse_lines(path: str, data: bytes, findings: list[Finding], build: Callable[[dict, int], T],
                 fast: Callable[[dict, int], T | None] | None = None) -> Iterator[tuple[int, T]]:
    """Every JSON-object line checked by ``build(obj, line)``: yields ``(line, record)``
    for the lines that pass, lazily, so findings the caller adds stay in line order.

    ``fast(obj, line)``, when given, returns the record ``build`` would return for an
    ordinary line and None for anything it does not vouch for; such a line (and any line
    the plain decoder cannot vouch for) goes the strict way, which words every finding."""
    if fast is None:
        for number, obj in _lines(path, data, findings):
            record = _guard(path, number, findings, lambda: build(obj, number))
            if record is not None:
                yield number, record
        return
    lines = _split_lines(path, data, findings)
    if lines is None:
        return
    for number, raw in enumerate(lines, start=1):
        obj = _quick_object(raw)
        if obj is None:
            obj = _strict_object(path, number, raw, findings)
            if obj is None:
                continue
        record = fast(obj, number)
        if record is None:
            record = _guard(path, number, findings, lambda: build(obj, number))
            if record is None:
                continue
        yield number, record


# ---------------------------------------------------------------- field checks
@lru_cache(maxsize=256)
def _key_sets(required: tuple[str, ...], optional: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(required), frozenset(required) | frozenset(optional)


def _keys(obj: dict, required: Iterable[str], optional: Iterable[str] = ()) -> None:
    need, allowed = _key_sets(tuple(required), tuple(optional))
    if need <= obj.keys() <= allowed:
        return
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


@lru_cache(maxsize=4096)
def _parse_date_text(value: str) -> date:
    return parse_date(value)


def _date(obj: dict, key: str, *, nullable: bool = False) -> date | None:
    value = obj[key]
    if value is None and nullable:
        return None
    try:
        return _parse_date_text(value) if type(value) is str else parse_date(value)
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
        findings.append(Finding(path, line, Category.MALFORMED, str(exc), kind=exc.kind))
        return None


def _sha256_hex(obj: dict, key: str) -> str:
    value = obj[key]
    if not isinstance(value, str) or not _HEX64_RE.match(value):
        raise _Bad(f"{key!r} must be 64 lower-case hex digits, found {json.dumps(value)[:40]}")
    return value


def unique_lines(path: str, numbered: Iterable[tuple[int, T]], key: Callable[[T], Any], describe: Callable[[T], str],
                 kind: ProblemKind, findings: list[Finding]) -> list[T]:
    """The records of ``numbered`` ((line, record) pairs) whose ``key`` no earlier line had; each
    repeat is a MALFORMED finding ``<describe(record)> (first on line N)``."""
    out: list[T] = []
    seen: dict[Any, int] = {}
    for number, record in numbered:
        k = key(record)
        if k in seen:
            findings.append(Finding(path, number, Category.MALFORMED, f"{describe(record)} (first on line {seen[k]})", kind=kind))
            continue
        seen[k] = number
        out.append(record)
    return out


# ---------------------------------------------------------------- the toolkit under public names
# KINDS.md §2 counts this module as engine: other kinds' parsers (rapgen.kinds.*.archive)
# build on these rather than on the underscore names, which stay this stage's own.
SchemaProblem = _Bad
json_lines = _lines
json_document = _document
parse_lines = _parse_lines
check_keys = _keys
