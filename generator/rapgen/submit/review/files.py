"""The submission's own files: the folder, model.json, predictions.jsonl, traces.jsonl.

Files are read so that nothing in a pull request can block, follow a link or
exhaust memory: regular files only (``O_NOFOLLOW | O_NONBLOCK``, checked with
``fstat``), each within a size limit, every JSONL line within a line limit.
Bidirectional controls anywhere in the text are problems naming file, line and key.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rapgen.archive import (
    CONDITIONS, FORECAST_CONDITIONS, MODEL_FILES, MODEL_ID_PATTERN, REQUIRED_MODEL_FILES, SEARCH_CONDITIONS,
    STATE_CONDITIONS, Archive, Finding, ModelInfo, ProblemKind, TraceCall, Unit, loads_strict, parse_model_json,
    parse_predictions, parse_traces, model_extensions,
)
from rapgen.errors import RapgenError
from rapgen.submit.review.result import CheckResult, ConditionCount
from rapgen.text import BIDI_OVERRIDES as BIDI_CONTROLS

MODEL_ID = re.compile(MODEL_ID_PATTERN)
MiB = 1 << 20
# What a submission's files may weigh. A full-scale submission is a few MiB; the limits keep
# the check's memory well under 2 GiB whatever a pull request carries.
SIZE_LIMITS = {"model.json": 1 * MiB, "predictions.jsonl": 64 * MiB, "traces.jsonl": 128 * MiB,
               "replays.jsonl": 64 * MiB, "oracle.jsonl": 64 * MiB, "oracle_traces.jsonl": 128 * MiB, "training.json": 1 * MiB}
ORIGINS_DIR = "origins"
ORIGIN_FILES = ("predictions.jsonl", "traces.jsonl")  # what models/<id>/origins/<origin>/ may hold
_ORIGIN_NAME = re.compile(r"^\d{4}-\d{2}-01$")
LINE_LIMIT = 1 * MiB
MAX_TEXT_PROBLEMS = 50  # per file: bidi controls in every line of a big file are one story, not 100,000
PLACEHOLDER = "TODO"
# model.json's "reference_agent" marks rapgen's own reference agents, which maintainers
# add with `rapgen reference-agents run --into-archive`; a submission may not claim it.
RESERVED_MODEL_KEY = "reference_agent"
RESERVED_MODEL_KEY_DETAIL = (
    "the key 'reference_agent' is reserved for rapgen's own reference agents, which maintainers add with "
    "`rapgen reference-agents run --into-archive`; remove it from a submission's model.json"
)


@dataclass
class Submission:
    """What the files of one model folder hold, once read and parsed."""

    present: dict[str, Path] = field(default_factory=dict)  # model files that are regular files
    data: dict[str, bytes] = field(default_factory=dict)  # file name -> bytes, for the files that were read
    model: ModelInfo | None = None
    units: list[Unit] = field(default_factory=list)
    calls: list[TraceCall] = field(default_factory=list)
    listed: dict[str, str] = field(default_factory=dict)  # name -> digest of the files already listed (an existing model)
    origin_units: dict[str, list[Unit]] = field(default_factory=dict)  # origin (ISO) -> units of origins/<origin>/
    origin_calls: dict[str, list[TraceCall]] = field(default_factory=dict)

    @property
    def existing(self) -> bool:
        """An existing, listed model folder: the pull request may only add files to it."""
        return "model.json" in self.listed

    @property
    def refused(self) -> bool:
        """A model file was too large (or unreadable) to be read."""
        return any(name not in self.data for name in self.present)


class Unreadable(Exception):
    """A submission file that cannot be read safely; the message is the problem's detail."""

    def __init__(self, keyword: str, detail: str) -> None:
        super().__init__(detail)
        self.keyword = keyword


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "file"


def read_limited(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; never follows a link, never blocks."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable("UNEXPECTED-FILE", f"cannot be opened as a regular file ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable("UNEXPECTED-FILE", f"is a {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise Unreadable("TOO-LARGE", f"is {st.st_size:,} bytes; a submission's {path.name} holds at most {limit // MiB} MiB")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(MiB, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise Unreadable("TOO-LARGE", f"grew past {limit // MiB} MiB while it was read")
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable("UNEXPECTED-FILE", f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def list_folder(result: CheckResult, model_dir: Path, display: str, *, predictions_optional: bool = False) -> dict[str, Path]:
    """The folder's model files that are regular files, by name relative to the folder (a later
    origin's as ``origins/<origin>/<file>``); everything else is a problem (or, outside the archive,
    a README note). ``predictions_optional``: the model arrives sealed (a commitment) or is listed."""
    present: dict[str, Path] = {}
    for entry in sorted(os.scandir(model_dir), key=lambda e: e.name):
        mode = entry.stat(follow_symlinks=False).st_mode
        if entry.name in MODEL_FILES and stat.S_ISREG(mode):
            present[entry.name] = Path(entry.path)
            continue
        if entry.name == ORIGINS_DIR and stat.S_ISDIR(mode):
            present.update(_list_origins(result, Path(entry.path), display))
            continue
        if entry.name == "README.md" and not result.in_archive and stat.S_ISREG(mode):
            result.notes.append(f"{display}README.md is ignored: it is not part of the submission (copy only {', '.join(MODEL_FILES)})")
            continue
        result.add("submission", "UNEXPECTED-FILE", display + entry.name, None, f"unexpected {_kind(mode)} in the model folder")
    later = any(name.startswith(ORIGINS_DIR + "/") for name in present)
    for name in REQUIRED_MODEL_FILES:
        if name not in present and not (name != "model.json" and (later or predictions_optional)):
            result.add("submission", "MISSING-FILE", display + name, None, f"{name} is missing")
    return present


def _list_origins(result: CheckResult, folder: Path, display: str) -> dict[str, Path]:
    """``origins/<origin>/{predictions,traces}.jsonl``: a later origin's files (RELEASES.md)."""
    present: dict[str, Path] = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        mode = entry.stat(follow_symlinks=False).st_mode
        rel = f"{ORIGINS_DIR}/{entry.name}"
        if not (_ORIGIN_NAME.match(entry.name) and stat.S_ISDIR(mode)):
            result.add("submission", "UNEXPECTED-FILE", display + rel, None,
                       f"unexpected {_kind(mode)} in {ORIGINS_DIR}/ (it holds one folder per origin, named YYYY-MM-01)")
            continue
        for inner in sorted(os.scandir(entry.path), key=lambda e: e.name):
            imode = inner.stat(follow_symlinks=False).st_mode
            if inner.name in ORIGIN_FILES and stat.S_ISREG(imode):
                present[f"{rel}/{inner.name}"] = Path(inner.path)
            else:
                result.add("submission", "UNEXPECTED-FILE", display + f"{rel}/{inner.name}", None,
                           f"unexpected {_kind(imode)} in a later origin's folder (it holds predictions.jsonl and traces.jsonl)")
        if f"{rel}/predictions.jsonl" not in present:
            result.add("submission", "MISSING-FILE", display + f"{rel}/predictions.jsonl", None,
                       f"origin {entry.name} has no predictions.jsonl")
    return present


def line_limits(archive: Archive) -> dict[str, int]:
    """The most lines each JSONL file can hold: one per unit, one per call within the cap.

    Any line beyond these is certainly a problem, so a longer file is refused in one
    problem instead of being parsed into millions."""
    episodes = len(archive.field_map) * len(archive.origins.origins)
    max_calls = int(archive.ledger["search"]["max_calls"])
    one = len(archive.field_map)  # a later origin's file: every field at one origin
    return {"predictions.jsonl": len(CONDITIONS) * episodes, "traces.jsonl": len(SEARCH_CONDITIONS) * episodes * max_calls,
            "origin:predictions.jsonl": len(CONDITIONS) * one, "origin:traces.jsonl": len(SEARCH_CONDITIONS) * one * max_calls}


def _limit_key(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return f"origin:{base}" if name.startswith(ORIGINS_DIR + "/") else base


def read_files(result: CheckResult, present: dict[str, Path], display: str, max_lines: dict[str, int]) -> dict[str, bytes]:
    """Each present file's bytes, within its size limit and (for JSONL) its line limits."""
    data: dict[str, bytes] = {}
    for name, path in present.items():
        try:
            raw = read_limited(path, SIZE_LIMITS[name.rsplit("/", 1)[-1]])
        except Unreadable as exc:
            result.add("submission", exc.keyword, display + name, None, f"{name} {exc}")
            continue
        key = _limit_key(name)
        if key in max_lines:
            lines = raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
            if lines > max_lines[key]:
                result.add("submission", "TOO-LARGE", display + name, None,
                           f"{name} has {lines:,} lines; it can hold at most {max_lines[key]:,} in this archive ({_one_line_per[key.split(':')[-1]]})")
                continue
            if _long_lines(result, display + name, raw):
                continue
        data[name] = raw
    return data


_one_line_per = {"predictions.jsonl": "one line per field × origin × condition",
                 "traces.jsonl": "one line per Search call, within the call cap of every unit"}


def _long_lines(result: CheckResult, rel: str, raw: bytes) -> bool:
    """Report every line over LINE_LIMIT (the file is then not parsed); True if there was one."""
    found = 0
    start, number = 0, 1
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        if end - start > LINE_LIMIT:
            found += 1
            if found <= MAX_TEXT_PROBLEMS:
                result.add("submission", "TOO-LARGE", rel, number, f"the line is {end - start:,} bytes; a line holds at most {LINE_LIMIT // MiB} MiB")
        start, number = end + 1, number + 1
    return found > 0


# ---------------------------------------------------------------- text safety
def _bidi_keys(value: object, key: str = "") -> list[tuple[str, str]]:
    """(key as a dotted path, first control) for every key whose name or string value holds a bidirectional control."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{key}.{k}" if key else str(k)
            hit = _first_bidi(str(k))
            if hit:
                out.append((path, hit))
            out.extend(_bidi_keys(v, path))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_bidi_keys(v, f"{key}[{i}]"))
    elif isinstance(value, str):
        hit = _first_bidi(value)
        if hit:
            out.append((key or "(value)", hit))
    return out


def _first_bidi(text: str) -> str:
    return next((f"U+{ord(c):04X}" for c in text if c in BIDI_CONTROLS), "")


# A bidi control written raw, or as a JSON escape (\u202e) that decodes to one.
_BIDI_TEXT = re.compile("[\u202a-\u202e\u2066-\u2069]|\\\\u20(?:2[a-eA-E]|6[6-9])")


def _has_bidi(text: str) -> bool:
    return _BIDI_TEXT.search(text) is not None


def _bidi_where(text: str) -> list[tuple[str, str]]:
    """(key, first control) for every key of the JSON text that holds a bidi control."""
    try:
        keys = _bidi_keys(loads_strict(text))
    except (ValueError, RecursionError):
        keys = []
    if not keys and _first_bidi(text):
        return [("(text that is not a JSON value)", _first_bidi(text))]
    return keys  # empty for an escaped control in a line that is not JSON: the parser reports that line


def check_bidi(result: CheckResult, rel: str, raw: bytes, *, lines: bool) -> None:
    """A problem for every key whose text holds a bidirectional embedding, override or isolate."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return  # reported by the parser
    if not _has_bidi(text):
        return
    found = 0
    chunks = enumerate(text.split("\n"), start=1) if lines else [(None, text)]
    for number, chunk in chunks:
        if not _has_bidi(chunk):
            continue
        for key, code in _bidi_where(chunk):
            found += 1
            if found <= MAX_TEXT_PROBLEMS:
                result.add("submission", "BIDI", rel, number if lines else _key_line(raw, key.split(".")[0].split("[")[0]),
                           f"key {key!r} holds a bidirectional control character ({code})")
    if found > MAX_TEXT_PROBLEMS:
        result.add("submission", "BIDI", rel, None, f"… and {found - MAX_TEXT_PROBLEMS} more keys with bidirectional control characters")


def _key_line(raw: bytes, key: str) -> int | None:
    for number, line in enumerate(raw.decode("utf-8", "replace").split("\n"), start=1):
        if f'"{key}"' in line:
            return number
    return None


# ---------------------------------------------------------------- the three files
def check_model_json(result: CheckResult, rel: str, raw: bytes, *, listed: bool = False) -> ModelInfo | None:
    """model.json's problems; a listed one (an existing model) is only read: its checks were made when it was added."""
    model, findings = parse_model_json(rel, raw, folder=result.model_id)
    for f in findings:
        result.add("submission", "MODEL-JSON", f.path, f.line, f.detail)
    if model is None or listed:
        return model
    for key, value in model.document.items():
        if isinstance(value, str) and PLACEHOLDER in value:
            result.add("submission", "PLACEHOLDER", rel, _key_line(raw, key), f"{key!r} still holds the template placeholder {value!r}")
    if RESERVED_MODEL_KEY in model.extra:
        result.add("submission", "MODEL-JSON", rel, _key_line(raw, RESERVED_MODEL_KEY), RESERVED_MODEL_KEY_DETAIL)
    return model


def check_model_extensions(result: CheckResult, rel: str, model: ModelInfo, archive: Archive) -> None:
    """The INTERVENTIONS.md keys of a new model.json (panel, base_model, cutoff_precision, inference)."""
    # every origin of the history: origins.json's and each one a release resolved or opened
    _, findings = model_extensions(rel, model, list(archive.known_origins), archive.model_ids)
    for f in findings:
        result.add("submission", "MODEL-JSON", f.path, f.line, f.detail)


# A parser finding's kind -> the report's keyword (every other kind of a line is MALFORMED).
KEYWORD_OF_KIND = {
    ProblemKind.COVERAGE: "COVERAGE",
    ProblemKind.DUPLICATE_UNIT: "DUPLICATE",
    ProblemKind.CALL_CAP: "CALL-CAP",
    ProblemKind.DUPLICATE_CALL: "TRACE",
    ProblemKind.TRACE: "TRACE",
}


def keyword_of(finding: Finding) -> str:
    return KEYWORD_OF_KIND.get(finding.kind, "MALFORMED") if finding.kind is not None else "MALFORMED"


def check_predictions(result: CheckResult, rel: str, raw: bytes, archive: Archive, model: ModelInfo | None, model_rel: str) -> list[Unit]:
    fields, origins = archive.field_map, archive.origins.origins
    panel = model is not None and model.extra.get("panel") is not None  # a panel's coverage is its cells (INTERVENTIONS.md §3)
    units, findings = parse_predictions(rel, raw, fields, origins, coverage=not panel)
    for f in findings:
        result.add("submission", keyword_of(f), f.path, f.line, f.detail)
    claimed = {u.condition for u in units}
    for condition in FORECAST_CONDITIONS:
        if condition not in claimed and units and not panel:
            result.add("submission", "COVERAGE", rel, None, f"condition {condition} is missing: a submission covers A0, A1 and A3")
    if not units and not findings:
        result.add("submission", "COVERAGE", rel, None, "predictions.jsonl has no units")
    state = sorted(claimed & set(STATE_CONDITIONS))
    if model is not None and state and not model.diagnostic:
        result.add("submission", "DIAGNOSTIC", model_rel, None, f"predictions include {', '.join(state)}, so 'diagnostic' must be true")
    if model is not None and model.diagnostic and units and not state:
        result.add("submission", "DIAGNOSTIC", model_rel, None, "'diagnostic' is true but predictions include no A2 or A4 units")
    result.accounting = accounting(units, len(fields) * len(origins))
    return units


def check_trace_file(result: CheckResult, rel: str, raw: bytes, archive: Archive, max_calls: int) -> list[TraceCall]:
    calls, findings = parse_traces(rel, raw, archive.field_map, archive.origins.origins, max_calls)
    for f in findings:
        result.add("submission", keyword_of(f), f.path, f.line, f.detail)
    result.n_trace_calls = len(calls)
    return calls


def accounting(units: list[Unit], expected: int) -> list[ConditionCount]:
    out = []
    for condition in CONDITIONS:
        mine = [u for u in units if u.condition == condition]
        if not mine:
            continue
        reasons = Counter(u.reason or "invalid" for u in mine if not u.valid)
        valid = sum(1 for u in mine if u.valid)
        out.append(ConditionCount(condition, expected, len(mine), valid, len(mine) - valid, tuple(sorted(reasons.items()))))
    return out


def warn_missing_calls(result: CheckResult, rel: str, units: list[Unit], calls: list[TraceCall], *, has_file: bool) -> None:
    """A claimed Search condition without any recorded call is shown to the reviewer (never a failure)."""
    claimed = sorted({u.condition for u in units} & set(SEARCH_CONDITIONS))
    if not claimed:
        return
    if not has_file:
        result.warn("submission", "NO-SEARCH-CALLS", rel, None,
                    f"no Search calls recorded: predictions.jsonl claims {', '.join(claimed)}, but the folder has no traces.jsonl")
        return
    searched = {c.condition for c in calls}
    for condition in claimed:
        if condition not in searched:
            result.warn("submission", "NO-SEARCH-CALLS", rel, None, f"no Search calls recorded for {condition}: traces.jsonl has no call of any {condition} unit")


def read_submission(result: CheckResult, archive: Archive, model_dir: Path, display: str, *,
                    listed: dict[str, str] | None = None, sealed: bool = False) -> Submission:
    """The folder's files, listed and read within their limits (nothing parsed yet).

    ``listed``: the files of an existing model already listed (name -> digest);
    ``sealed``: the pull request carries a commitment for this model."""
    listed = dict(listed or {})
    optional = sealed or ("model.json" in listed and "predictions.jsonl" not in listed)
    sub = Submission(present=list_folder(result, model_dir, display, predictions_optional=optional), listed=listed)
    try:
        max_lines = line_limits(archive)
    except RapgenError:
        max_lines = {}  # the archive cannot be read: check_contents reports it and parses nothing
    sub.data = read_files(result, sub.present, display, max_lines)
    return sub


def check_contents(result: CheckResult, archive: Archive, sub: Submission, display: str) -> None:
    """Section 2: every file of the folder, each problem with its file and line."""
    try:
        max_calls = int(archive.ledger["search"]["max_calls"])
        existing = set(archive.model_ids)
        archive.field_map, archive.origins  # noqa: B018 - read here so a broken archive is one problem
    except RapgenError as exc:
        if result.stage_problems("integrity"):
            result.notes.append(f"the submission's files were not checked against the archive, which cannot be read: {exc}")
        else:
            result.add("integrity", "INTEGRITY", "archive/", None, f"the archive cannot be read: {exc}")
        return
    for name, raw in sub.data.items():
        check_bidi(result, display + name, raw, lines=name.endswith(".jsonl"))
    if "model.json" in sub.data:
        sub.model = result.model = check_model_json(result, display + "model.json", sub.data["model.json"], listed=sub.existing)
        if sub.model is not None and not sub.existing:
            check_model_extensions(result, display + "model.json", sub.model, archive)
    if not result.in_archive and result.model_id in existing:
        result.add("submission", "EXISTS", display.rstrip("/"), None, f"model {result.model_id!r} already exists in archive/models/{result.model_id}/")
    if "predictions.jsonl" in sub.data:
        sub.units = check_predictions(result, display + "predictions.jsonl", sub.data["predictions.jsonl"], archive, sub.model, display + "model.json")
    if "traces.jsonl" in sub.data:
        sub.calls = check_trace_file(result, display + "traces.jsonl", sub.data["traces.jsonl"], archive, max_calls)
    if "predictions.jsonl" in sub.present and ("traces.jsonl" not in sub.present or "traces.jsonl" in sub.data):
        warn_missing_calls(result, display + "traces.jsonl", sub.units, sub.calls, has_file="traces.jsonl" in sub.present)
