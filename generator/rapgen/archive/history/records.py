"""Release records and commitments of a format-2 archive (RELEASES.md), with strict parsers.

Parsers are pure: they take the file's archive path and bytes and return
``(value or None, findings)``. Every finding names the key, and the line of
the document where that key stands, so a maintainer can go straight to it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Any, Callable

from rapgen.archive.layout import COMMITMENTS_DIR, MODELS_DIR, RELEASES_DIR, SEARCH_DIR, WINDOW_FILES, WINDOWS_DIR
from rapgen.archive.layout import ORIGIN_FILES as REVEAL_FILES
from rapgen.archive.layout import MODEL_ID_PATTERN
from rapgen.archive.records import Category, Finding

SEARCH_FILES = ("manifest_fixed.jsonl", "manifest_expanding.jsonl")
RECORD_KEYS = (
    "release", "date", "kind", "resolved_origins", "strict_origin", "open_origin",
    "parent_sha256", "replaced", "simulated", "notes",
)
COMMITMENT_KEYS = ("model_id", "origin", "files", "kit")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MODEL_RE = re.compile(MODEL_ID_PATTERN)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PATH_COMPONENT = re.compile(r"^[A-Za-z0-9._-]+$")


class ReleaseKind(str, Enum):
    INITIAL = "initial"
    ROLL = "roll"
    MODELS = "models"
    ERRATA = "errata"


@dataclass(frozen=True)
class OpenOrigin:
    origin: date
    closes: date


@dataclass(frozen=True)
class Replaced:
    path: str  # an archive path as SHA256SUMS writes it (archive/...)
    reason: str


@dataclass(frozen=True)
class ReleaseRecord:
    release: int
    date: date
    kind: ReleaseKind
    resolved_origins: tuple[date, ...]
    strict_origin: date | None  # None only in a history without a time key (resolved_origins empty)
    open_origin: OpenOrigin | None
    parent_sha256: str | None
    replaced: tuple[Replaced, ...] = ()
    simulated: bool = False
    notes: str = ""

    def to_dict(self) -> dict:
        """The record as written to ``releases/NNNN.json`` (keys in the spec's order)."""
        return {
            "release": self.release,
            "date": self.date.isoformat(),
            "kind": self.kind.value,
            "resolved_origins": [o.isoformat() for o in self.resolved_origins],
            "strict_origin": None if self.strict_origin is None else self.strict_origin.isoformat(),
            "open_origin": None if self.open_origin is None
            else {"origin": self.open_origin.origin.isoformat(), "closes": self.open_origin.closes.isoformat()},
            "parent_sha256": self.parent_sha256,
            "replaced": [{"path": r.path, "reason": r.reason} for r in self.replaced],
            "simulated": self.simulated,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class Commitment:
    """A sealed Live submission: the digests of files revealed after the origin resolves."""

    model_id: str
    origin: date
    predictions_sha256: str
    traces_sha256: str | None
    kit: str

    def digest_of(self, name: str) -> str | None:
        return self.predictions_sha256 if name == "predictions.jsonl" else self.traces_sha256


def history_origins(base: tuple[date, ...] | list[date], records) -> tuple[date, ...]:
    """Every origin a history knows, ascending: ``base`` (origins.json's) and every origin a
    release record (``records``, any iterable of :class:`ReleaseRecord`) resolved or opened."""
    out = set(base)
    for record in records:
        out.update(record.resolved_origins)
        if record.open_origin is not None:
            out.add(record.open_origin.origin)
    return tuple(sorted(out))


# ---------------------------------------------------------------- paths
def record_path(number: int) -> str:
    return f"{RELEASES_DIR}/{number:04d}.json"


def manifest_path(number: int) -> str:
    return f"{RELEASES_DIR}/{number:04d}.SHA256SUMS"


def superseded_path(number: int, path: str) -> str:
    """Where an errata release keeps the old bytes of ``path`` (the ``archive/`` prefix dropped)."""
    inner = path[len("archive/"):] if path.startswith("archive/") else path
    return f"{RELEASES_DIR}/{number:04d}/superseded/{inner}"


def window_path(start: date, name: str) -> str:
    return f"{WINDOWS_DIR}/{start.isoformat()}/{name}"


def search_path(origin: date, name: str) -> str:
    return f"{SEARCH_DIR}/{origin.isoformat()}/{name}"


def commitment_path(origin: date, model_id: str) -> str:
    return f"{COMMITMENTS_DIR}/{origin.isoformat()}/{model_id}.json"


def reveal_path(model_id: str, origin: date, name: str) -> str:
    return f"{MODELS_DIR}/{model_id}/origins/{origin.isoformat()}/{name}"


def format_record(record: ReleaseRecord) -> bytes:
    return (json.dumps(record.to_dict(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def format_commitment(c: Commitment) -> bytes:
    obj = {
        "model_id": c.model_id, "origin": c.origin.isoformat(),
        "files": {"predictions.jsonl": c.predictions_sha256, "traces.jsonl": c.traces_sha256}, "kit": c.kit,
    }
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# ---------------------------------------------------------------- parsing helpers
class _Bad(ValueError):
    """One problem with one key; ``key`` locates its line in the document."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _Bad(key, f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _Bad(None, f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant)


def _document(path: str, data: bytes, findings: list[Finding]) -> tuple[dict | None, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(Finding(path, None, Category.MALFORMED, f"not valid UTF-8 at byte {exc.start}"))
        return None, ""
    try:
        obj = _DECODER.decode(text)
    except _Bad as exc:
        findings.append(Finding(path, _key_line(text, exc.key), Category.MALFORMED, str(exc)))
        return None, text
    except json.JSONDecodeError as exc:
        findings.append(Finding(path, exc.lineno, Category.MALFORMED, f"not JSON: {exc.msg} at column {exc.colno}"))
        return None, text
    except (RecursionError, ValueError) as exc:
        findings.append(Finding(path, None, Category.MALFORMED, f"not JSON: {str(exc).split(';')[0]}"))
        return None, text
    if not isinstance(obj, dict):
        findings.append(Finding(path, 1, Category.MALFORMED, f"expected a JSON object, found {type(obj).__name__}"))
        return None, text
    return obj, text


def _key_line(text: str, key: str | None) -> int | None:
    """The line on which ``"key":`` first appears (1-based), or None."""
    if key is None:
        return None
    needle = json.dumps(key) + ":"
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line.replace('": ', '":').replace('" :', '":'):
            return number
    return None


def _check_keys(obj: dict, expected: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    for key in obj:
        if key not in expected:
            raise _Bad(key, f"unknown key {key!r} (allowed: {', '.join(expected)})")
    for key in expected:
        if key not in obj and key not in optional:
            raise _Bad(None, f"missing key {key!r}")


def _date(value: Any, key: str, *, first_of_month: bool = False) -> date:
    if not isinstance(value, str) or not _DATE_RE.match(value):
        raise _Bad(key, f"{key!r} must be a YYYY-MM-DD date, found {json.dumps(value)}")
    try:
        d = date.fromisoformat(value)
    except ValueError:
        raise _Bad(key, f"{key!r} is not a calendar date: {value!r}") from None
    if first_of_month and d.day != 1:
        raise _Bad(key, f"{key!r} must be the first of a month (an origin), found {value}")
    return d


def _hex(value: Any, key: str) -> str:
    if not isinstance(value, str) or not _HEX64.match(value):
        raise _Bad(key, f"{key!r} must be 64 lower-case hex digits, found {json.dumps(value)[:80]}")
    return value


def _text(value: Any, key: str, *, empty_ok: bool = True) -> str:
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise _Bad(key, f"{key!r} must be a{'' if empty_ok else ' non-empty'} string, found {json.dumps(value)[:80]}")
    return value


def safe_archive_path(path: str) -> bool:
    """A canonical SHA256SUMS path: ``archive/`` then ``[A-Za-z0-9._-]`` components, no ``.``/``..``."""
    parts = path.split("/")
    return (
        len(parts) >= 2 and parts[0] == "archive"
        and all(_PATH_COMPONENT.match(p) and p not in (".", "..") for p in parts)
    )


# ---------------------------------------------------------------- release records
def release_number(path: str) -> int | None:
    """``archive/releases/0007.json`` → 7; None for any other path."""
    m = re.match(r"^archive/releases/(\d{4})\.json$", path)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def _parsed(path: str, data: bytes, build: Callable[[dict], Any]) -> tuple[Any, list[Finding]]:
    """``build(the document)``, or None with the finding naming the key's line."""
    findings: list[Finding] = []
    obj, text = _document(path, data, findings)
    if obj is None:
        return None, findings
    try:
        return build(obj), findings
    except _Bad as exc:
        findings.append(Finding(path, _key_line(text, exc.key), Category.MALFORMED, str(exc)))
        return None, findings


def parse_release_record(path: str, data: bytes, *, keyed: bool = True) -> tuple[ReleaseRecord | None, list[Finding]]:
    """Strictly parse ``releases/NNNN.json``; the record's number must match the file name. ``keyed``
    False: a history without a time key (no rolls), whose records resolve and open nothing."""
    return _parsed(path, data, lambda obj: _build_record(obj, release_number(path), keyed))


def _unkeyed(obj: dict) -> None:
    """A history without a time key: no origin resolved, none strict, none open."""
    if obj["resolved_origins"] != []:
        raise _Bad("resolved_origins", "'resolved_origins' must be [] in a benchmark without a time key (no rolls), "
                                       f"found {json.dumps(obj['resolved_origins'])[:80]}")
    if obj.get("strict_origin") is not None:
        raise _Bad("strict_origin", "'strict_origin' must be null in a benchmark without a time key (no rolls)")
    if obj["open_origin"] is not None:
        raise _Bad("open_origin", "'open_origin' must be null in a benchmark without a time key: nothing opens for Live forecasts")
    if obj["kind"] == ReleaseKind.ROLL.value:
        raise _Bad("kind", "'kind' is 'roll', but a benchmark without a time key has no rolls (initial, models, errata only)")


def _build_record(obj: dict, expected_number: int | None, keyed: bool = True) -> ReleaseRecord:
    _check_keys(obj, RECORD_KEYS, optional=("strict_origin",))
    number = obj["release"]
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise _Bad("release", f"'release' must be a positive integer, found {json.dumps(number)}")
    if expected_number is not None and number != expected_number:
        raise _Bad("release", f"'release' is {number} but the file is release {expected_number}'s")
    when = _date(obj["date"], "date")
    try:
        kind = ReleaseKind(obj["kind"])
    except ValueError:
        raise _Bad("kind", f"'kind' must be one of initial, roll, models, errata, found {json.dumps(obj['kind'])}") from None
    if kind is ReleaseKind.INITIAL and number != 1:
        raise _Bad("kind", f"only release 1 may be 'initial'; release {number} is")
    if number == 1 and kind is not ReleaseKind.INITIAL:
        raise _Bad("kind", f"release 1 must be 'initial', found {kind.value!r}")
    if not keyed:
        _unkeyed(obj)
        return ReleaseRecord(number, when, kind, (), None, None, _parent(obj["parent_sha256"], kind),
                             _replaced(obj["replaced"], kind), _simulated(obj["simulated"]), _text(obj["notes"], "notes"))
    resolved = obj["resolved_origins"]
    if not isinstance(resolved, list) or not resolved:
        raise _Bad("resolved_origins", "'resolved_origins' must be a non-empty list of origins")
    origins = tuple(_date(o, "resolved_origins", first_of_month=True) for o in resolved)
    if list(origins) != sorted(set(origins)):
        raise _Bad("resolved_origins", "'resolved_origins' must be ascending without repeats")
    strict = obj.get("strict_origin")
    strict_origin = origins[-1] if strict is None else _date(strict, "strict_origin", first_of_month=True)
    if strict_origin not in origins:
        raise _Bad("strict_origin", f"'strict_origin' {strict_origin} is not one of resolved_origins")
    open_origin = _open_origin(obj["open_origin"], origins)
    parent = _parent(obj["parent_sha256"], kind)
    replaced = _replaced(obj["replaced"], kind)
    return ReleaseRecord(
        number, when, kind, origins, strict_origin, open_origin, parent, replaced, _simulated(obj["simulated"]),
        _text(obj["notes"], "notes"),
    )


def _parent(parent: Any, kind: ReleaseKind) -> str | None:
    if kind is ReleaseKind.INITIAL:
        if parent is not None:
            raise _Bad("parent_sha256", "'parent_sha256' must be null for the initial release")
        return None
    return _hex(parent, "parent_sha256")


def _simulated(simulated: Any) -> bool:
    if not isinstance(simulated, bool):
        raise _Bad("simulated", f"'simulated' must be true or false, found {json.dumps(simulated)}")
    return simulated


def _open_origin(value: Any, resolved: tuple[date, ...]) -> OpenOrigin | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"origin", "closes"}:
        raise _Bad("open_origin", "'open_origin' must be null or {\"origin\": date, \"closes\": date}")
    origin = _date(value["origin"], "open_origin", first_of_month=True)
    closes = _date(value["closes"], "closes")
    if origin <= resolved[-1]:
        raise _Bad("open_origin", f"open origin {origin} must come after the last resolved origin {resolved[-1]}")
    return OpenOrigin(origin, closes)


def _replaced(value: Any, kind: ReleaseKind) -> tuple[Replaced, ...]:
    if not isinstance(value, list):
        raise _Bad("replaced", "'replaced' must be a list")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"path", "reason"}:
            raise _Bad("replaced", f"'replaced'[{i}] must be {{\"path\": …, \"reason\": …}}")
        path = _text(item["path"], "path", empty_ok=False)
        if not safe_archive_path(path) or path.startswith(RELEASES_DIR + "/"):
            raise _Bad("path", f"'replaced'[{i}] path {path!r} is not a replaceable archive path")
        out.append(Replaced(path, _text(item["reason"], "reason", empty_ok=False)))
    paths = [r.path for r in out]
    if len(set(paths)) != len(paths):
        raise _Bad("replaced", "'replaced' names a path twice")
    if kind is ReleaseKind.ERRATA and not out:
        raise _Bad("replaced", "an errata release must name every replaced path in 'replaced'")
    if kind is not ReleaseKind.ERRATA and out:
        raise _Bad("replaced", f"only an errata release replaces files; this one is {kind.value!r}")
    return tuple(out)


# ---------------------------------------------------------------- commitments
def commitment_key(path: str) -> tuple[date, str] | None:
    """``archive/commitments/<origin>/<model_id>.json`` → (origin, model_id); None otherwise."""
    m = re.match(r"^archive/commitments/(\d{4}-\d{2}-\d{2})/([^/]+)\.json$", path)
    if not m:
        return None
    try:
        return date.fromisoformat(m.group(1)), m.group(2)
    except ValueError:
        return None


def parse_commitment(path: str, data: bytes) -> tuple[Commitment | None, list[Finding]]:
    """Strictly parse a commitment; its model id and origin must match its path."""
    return _parsed(path, data, lambda obj: _build_commitment(obj, commitment_key(path)))


def _build_commitment(obj: dict, where: tuple[date, str] | None) -> Commitment:
    _check_keys(obj, COMMITMENT_KEYS)
    model_id = _text(obj["model_id"], "model_id")
    if not _MODEL_RE.match(model_id):
        raise _Bad("model_id", f"'model_id' {model_id!r} does not match {MODEL_ID_PATTERN}")
    origin = _date(obj["origin"], "origin", first_of_month=True)
    if where is not None and (origin, model_id) != where:
        raise _Bad("model_id", f"commitment says {model_id} for {origin} but its path is for {where[1]} at {where[0]}")
    files = obj["files"]
    if not isinstance(files, dict):
        raise _Bad("files", "'files' must be an object")
    for key in files:
        if key not in REVEAL_FILES:
            raise _Bad(key, f"unknown file {key!r} in 'files' (allowed: predictions.jsonl, traces.jsonl)")
    if "predictions.jsonl" not in files:
        raise _Bad("files", "'files' must give the digest of predictions.jsonl")
    predictions = _hex(files["predictions.jsonl"], "predictions.jsonl")
    traces = files.get("traces.jsonl")
    traces = None if traces is None else _hex(traces, "traces.jsonl")
    return Commitment(model_id, origin, predictions, traces, _text(obj["kit"], "kit", empty_ok=False))
