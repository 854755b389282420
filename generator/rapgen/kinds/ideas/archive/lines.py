"""Strict reading of the Ideas kind's JSON files into findings (one line, one problem).

Built on the archive stage's one strict decoder (:func:`rapgen.archive.loads_strict`,
which refuses NaN literals, duplicate keys and inputs Python cannot hold) and
its :class:`~rapgen.archive.Finding`. A ``build`` function raises :class:`Bad`
for a value that breaks the schema; :func:`read_lines` turns that into a
``MALFORMED`` finding with the file, the line and the problem, and goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from typing import Any, TypeVar

from rapgen.archive import Category, Finding, ProblemKind, loads_strict

HEX64 = re.compile(r"^[0-9a-f]{64}$")
T = TypeVar("T")


class Bad(ValueError):
    """A value that breaks the schema: the message is the finding's detail."""

    def __init__(self, message: str, kind: ProblemKind = ProblemKind.SCHEMA):
        super().__init__(message)
        self.kind = kind


def malformed(path: str, line: int | None, detail: str, kind: ProblemKind = ProblemKind.SCHEMA) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail, kind=kind)


def invariant(path: str, line: int | None, detail: str, kind: ProblemKind | None = None, *,
              expected: str | None = None, actual: str | None = None) -> Finding:
    return Finding(path, line, Category.INVARIANT, detail, expected, actual, kind=kind)


def _decode(text: str) -> Any:
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise Bad(f"not JSON: {exc.msg} at column {exc.colno}", ProblemKind.SYNTAX) from None
    except ValueError as exc:  # the decoder's own refusals (NaN, duplicate key, …)
        raise Bad(str(exc), ProblemKind.SYNTAX) from None


def _text(path: str, data: bytes, findings: list[Finding]) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(malformed(path, None, f"not valid UTF-8 at byte {exc.start}", ProblemKind.ENCODING))
        return None


def read_lines(path: str, data: bytes, findings: list[Finding], build: Callable[[dict, int], T]) -> Iterator[tuple[int, T]]:
    """(line, record) for every JSONL line that ``build(obj, line)`` accepts; a finding for each other line."""
    text = _text(path, data, findings)
    if text is None:
        return
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    for number, raw in enumerate(rows, start=1):
        try:
            if not raw.strip():
                raise Bad("blank line", ProblemKind.SYNTAX)
            obj = _decode(raw)
            if not isinstance(obj, dict):
                raise Bad(f"expected a JSON object, found {type(obj).__name__}", ProblemKind.SYNTAX)
            yield number, build(obj, number)
        except Bad as exc:
            findings.append(malformed(path, number, str(exc), exc.kind))


def read_document(path: str, data: bytes, findings: list[Finding], build: Callable[[dict], T]) -> T | None:
    """A whole-file JSON object checked by ``build``; None (and a finding) if it is not one."""
    text = _text(path, data, findings)
    if text is None:
        return None
    try:
        obj = _decode(text)
        if not isinstance(obj, dict):
            raise Bad("expected a JSON object", ProblemKind.SYNTAX)
        return build(obj)
    except Bad as exc:
        findings.append(malformed(path, None, str(exc), exc.kind))
        return None


# ---------------------------------------------------------------- value checks
def keys(obj: dict, required: Iterable[str], optional: Iterable[str] = ()) -> None:
    required = tuple(required)
    if len(obj) == len(required) and all(k in obj for k in required):
        return  # exactly the required keys (the usual line)
    allowed = set(required) | set(optional)
    missing = [k for k in required if k not in obj]
    unknown = sorted(k for k in obj if k not in allowed)
    if missing:
        raise Bad(f"missing key {missing[0]!r}")
    if unknown:
        raise Bad(f"unknown key {unknown[0]!r}")


def shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)[:40]


def string(obj: dict, key: str, *, nonempty: bool = False, pattern: re.Pattern | None = None) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise Bad(f"{key!r} must be a string, found {shown(value)}")
    if nonempty and not value.strip():
        raise Bad(f"{key!r} must not be empty")
    if pattern is not None and not pattern.match(value):
        raise Bad(f"{key!r} {shown(value)} does not match {pattern.pattern}")
    return value


def strings(obj: dict, key: str, *, nonempty: bool = False) -> tuple[str, ...]:
    value = obj[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Bad(f"{key!r} must be a list of strings, found {shown(value)}")
    if nonempty and any(not v.strip() for v in value):
        raise Bad(f"{key!r} holds an empty string")
    return tuple(value)


def integer(obj: dict, key: str, low: int | None = None, high: int | None = None) -> int:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low) or (high is not None and value > high):
        bounds = f" in {low}–{high}" if low is not None and high is not None else (f" ≥ {low}" if low is not None else "")
        raise Bad(f"{key!r} must be an integer{bounds}, found {shown(value)}")
    return value


def number(obj: dict, key: str) -> float:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Bad(f"{key!r} must be a number, found {shown(value)}")
    return float(value)


def day(obj: dict, key: str, *, first_of_month: bool = False) -> date:
    value = obj[key]
    try:
        if not isinstance(value, str) or len(value) != 10:
            raise ValueError
        parsed = date.fromisoformat(value)
    except ValueError:
        raise Bad(f"{key!r} must be a YYYY-MM-DD date, found {shown(value)}") from None
    if first_of_month and parsed.day != 1:
        raise Bad(f"{key!r} {value} is not the first of a month")
    return parsed


def month(obj: dict, key: str) -> date:
    """A ``YYYY-MM`` month as its first day."""
    value = obj[key]
    try:
        if not isinstance(value, str) or len(value) != 7:
            raise ValueError
        return date.fromisoformat(value + "-01")
    except ValueError:
        raise Bad(f"{key!r} must be a YYYY-MM month, found {shown(value)}") from None


def digest(obj: dict, key: str, *, nullable: bool = False) -> str | None:
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not HEX64.match(value):
        raise Bad(f"{key!r} must be 64 lower-case hex digits{' or null' if nullable else ''}, found {shown(value)}")
    return value


def unique(path: str, rows: Iterable[tuple[int, T]], key: Callable[[T], object], what: Callable[[T], str],
           findings: list[Finding]) -> list[tuple[int, T]]:
    """The rows whose ``key`` comes first; a ``MALFORMED`` finding naming the first line for each repeat."""
    first: dict[object, int] = {}
    out = []
    for line, rec in rows:
        k = key(rec)
        if k in first:
            findings.append(malformed(path, line, f"{what(rec)} is there twice (first on line {first[k]})", ProblemKind.DUPLICATE_RECORD))
            continue
        first[k] = line
        out.append((line, rec))
    return out
