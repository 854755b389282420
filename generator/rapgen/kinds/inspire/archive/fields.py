"""The schema toolkit Inspire's parsers share: JSON lines and parquet tables to
plain values, every problem a finding (never an exception for bad input)."""

from __future__ import annotations

import io
import json
import re
from datetime import date
from typing import Any, Callable, Hashable, Iterable, Mapping, TypeVar

from rapgen.archive import Category, Finding, ProblemKind, as_float
from rapgen.archive import SchemaProblem, check_keys as keys, json_document, json_lines, parse_lines as parse_each  # noqa: F401 - the kind's toolkit

T = TypeVar("T")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


Bad = SchemaProblem  # a value that breaks the schema; its message is the finding's detail


def malformed(path: str, line: int | None, detail: str, kind: ProblemKind = ProblemKind.SCHEMA) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail, kind=kind)


def invariant(path: str, line: int | None, detail: str, kind: ProblemKind | None = None) -> Finding:
    return Finding(path, line, Category.INVARIANT, detail, kind=kind)


def show(value: Any) -> str:
    """A short JSON rendering of a value for a message (never raises)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:60]
    except (ValueError, RecursionError):
        return type(value).__name__


# ---------------------------------------------------------------- values of an object
def text(obj: Mapping, key: str, *, nonempty: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise Bad(f"{key!r} must be a string, found {show(value)}")
    if nonempty and not value.strip():
        raise Bad(f"{key!r} is empty")
    return value


def optional_text(obj: Mapping, key: str) -> str | None:
    return None if obj.get(key) is None else text(obj, key)


def integer(obj: Mapping, key: str, minimum: int | None = 0, *, nullable: bool = False) -> int | None:
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise Bad(f"{key!r} must be an integer, found {show(value)}")
    if minimum is not None and value < minimum:
        raise Bad(f"{key!r} must be at least {minimum}, found {value}")
    return value


def number(obj: Mapping, key: str, *, nullable: bool = False, minimum: float | None = None) -> float | None:
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise Bad(f"{key!r} must be a number{' or null' if nullable else ''}, found {show(value)}")
    out = as_float(value)
    if minimum is not None and out < minimum:
        raise Bad(f"{key!r} must be at least {minimum:g}, found {show(value)}")
    return out


def one_of(obj: Mapping, key: str, choices: tuple[str, ...]) -> str:
    value = obj[key]
    if value not in choices or not isinstance(value, str):
        raise Bad(f"{key!r} must be one of {', '.join(choices)}, found {show(value)}")
    return value


def iso_date(obj: Mapping, key: str, *, nullable: bool = False) -> date | None:
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        raise Bad(f"{key!r} must be a YYYY-MM-DD date, found {show(value)}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise Bad(f"{key!r} {value!r} is not a calendar date") from None


def sha256_hex(obj: Mapping, key: str) -> str:
    value = obj[key]
    if not isinstance(value, str) or _HEX64.fullmatch(value) is None:
        raise Bad(f"{key!r} must be 64 lower-case hex digits, found {show(value)}")
    return value


# ---------------------------------------------------------------- parquet tables
# column kind -> accepted Arrow type names
_ARROW_KINDS = {
    "string": ("string", "large_string"),
    "date": ("date32[day]", "date64[ms]"),
    "bool": ("bool",),
    "double": ("double",),
    "int": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"),
}


def read_table(path: str, data: bytes, columns: Mapping[str, str], nullable: frozenset[str] = frozenset(),
               findings: list[Finding] | None = None) -> list[dict] | None:
    """The rows of a parquet file as dicts, after checking its columns (names and
    kinds: ``string``, ``date``, ``bool``, ``double``, ``int``) and that only the
    ``nullable`` columns hold nulls; None with findings when it cannot be read.
    Extra columns are a finding too: the contract lists every column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = findings if findings is not None else []
    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        out.append(malformed(path, None, f"not a readable parquet file ({str(exc).splitlines()[0][:120]})"))
        return None
    names = table.column_names
    problems = []
    for name, kind in columns.items():
        if name not in names:
            problems.append(f"missing column {name!r}")
        elif str(table.schema.field(name).type) not in _ARROW_KINDS[kind]:
            problems.append(f"column {name!r} must be {kind.upper()}, found {table.schema.field(name).type}")
        elif name not in nullable and table.column(name).null_count:
            problems.append(f"column {name!r} holds {table.column(name).null_count} null(s)")
    problems += [f"unknown column {n!r}" for n in names if n not in columns]
    for problem in problems:
        out.append(malformed(path, None, problem))
    if problems:
        return None
    return table.select(list(columns)).to_pylist()


def first_of_each(path: str, numbered: Iterable[tuple[int, T]], key: Callable[[T], Hashable], what: Callable[[T], str],
                  findings: list[Finding], kind: ProblemKind = ProblemKind.DUPLICATE_RECORD, *, rows: bool = False) -> list[T]:
    """The records whose key has not been seen before; each later copy is a finding
    (``duplicate <what> (first on line N)``; for parquet ``rows``, row numbers)."""
    out: list[T] = []
    seen: dict[Hashable, int] = {}
    for number, record in numbered:
        k = key(record)
        if k in seen:
            if rows:
                findings.append(malformed(path, None, f"row {number}: duplicate {what(record)} (first in row {seen[k]})", kind))
            else:
                findings.append(malformed(path, number, f"duplicate {what(record)} (first on line {seen[k]})", kind))
            continue
        seen[k] = number
        out.append(record)
    return out
