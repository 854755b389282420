"""The submission folder ``rapgen agent run`` appends to: fresh, replaced or resumed.

On ``--resume`` the folder must be consistent before anything is added, or the
run refuses with one line naming the file, the line and the problem:

- every line of ``predictions.jsonl`` and ``traces.jsonl`` is a complete,
  strict JSON object with the format's keys, naming a unit of the archive;
  no unit is there twice;
- the trace lines of each finished unit are its calls 0 … n−1 in order, at
  most the call cap, each made with the prompt the kit renders today
  (``prompt_sha256``);
- ``model.json`` (if it records one) names the same prompt version
  (``prompt_sha256`` = :func:`rapgen.kit.prompt.template_sha256`).

Trace lines of a unit that has no prediction line yet are the calls of a unit
cut off mid-way: they are dropped (the file is rewritten atomically) and the
unit runs again from call 0.

Across a history (RELEASES.md) a unit's files depend on its origin
(:func:`unit_files`): origins.json's origins go to ``predictions.jsonl`` and
``traces.jsonl``, any later origin T of the history to
``origins/T/predictions.jsonl`` and ``origins/T/traces.jsonl`` — where
``rapgen submit check`` and the archive expect a later origin's files. A run
reads, replaces or resumes only the files of the origins it runs, and leaves an
existing ``model.json`` untouched when it runs later origins only (the model is
already listed, or its model.json is the submitter's).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rapgen.archive import CONDITIONS, ORIGIN_FILES, ORIGINS_SUBDIR, SEARCH_CONDITIONS, TRACE_KEYS, TRACE_OPTIONAL_KEYS, Archive
from rapgen.io import atomic_write_bytes
from rapgen.errors import SubmissionError, UsageProblem
from rapgen.kit.chat import decode_json
from rapgen.kit.journal import encode_lines
from rapgen.kit.prompt import build_prompt
from rapgen.kit.scaffold import MODEL_KEYS, OPTIONAL_KEYS, check_model_id, model_json_bytes, model_record

PREDICTION_KEYS = ("field_id", "origin", "condition", "weights", "rationale", "status", "reason")
FILES: tuple[str, str] = ORIGIN_FILES  # predictions.jsonl, traces.jsonl
HINT = "cannot resume; move the folder aside or rerun with --force to start again"


@dataclass
class FolderState:
    done: dict = field(default_factory=dict)  # (field_id, origin, condition) -> (condition, valid)
    calls: int = 0
    dropped_calls: int = 0
    wrote_model_json: bool = False


def _refuse(path: Path, line: int | None, problem: str) -> SubmissionError:
    where = f"{path} line {line}" if line else str(path)
    return SubmissionError(f"{where}: {problem}; {HINT}")


def _lines(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise _refuse(path, data.count(b"\n") + 1, "the last line is incomplete")
    out = []
    for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
        try:
            obj = decode_json(raw)
        except ValueError as exc:
            raise _refuse(path, number, f"not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise _refuse(path, number, "not a JSON object")
        out.append((number, obj))
    return out


def unit_files(archive: Archive, origin: str) -> tuple[str, str]:
    """(predictions, traces) file of a unit at ``origin`` (ISO), relative to the submission folder."""
    if origin in {o.isoformat() for o in archive.origins.origins}:
        return FILES
    return (f"{ORIGINS_SUBDIR}/{origin}/{FILES[0]}", f"{ORIGINS_SUBDIR}/{origin}/{FILES[1]}")


def file_groups(archive: Archive, origins: list[str]) -> dict[tuple[str, str], set[str]]:
    """(predictions, traces) file pair -> the origins of ``origins`` whose units it holds."""
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for origin in origins:
        groups[unit_files(archive, origin)].add(origin)
    return dict(groups)


def _unit(archive: Archive, path: Path, number: int, obj: dict, conditions, origins: set[str]) -> tuple[str, str, str]:
    fid, origin, condition = obj.get("field_id"), obj.get("origin"), obj.get("condition")
    if fid not in archive.field_map:
        raise _refuse(path, number, f"field_id {str(fid)[:60]!r} is not a field of this archive")
    if origin not in origins:
        known = isinstance(origin, str) and origin in {o.isoformat() for o in archive.known_origins}
        where = f"its units belong in {unit_files(archive, origin)[0]}" if known else f"not an origin of this archive ({archive.origin_listing()})"
        raise _refuse(path, number, f"origin {str(origin)[:60]!r} does not belong in this file: {where}")
    if condition not in conditions:
        raise _refuse(path, number, f"condition {str(condition)[:20]!r} is not one of {', '.join(conditions)}")
    return fid, origin, condition


def _predictions(archive: Archive, path: Path, origins: set[str]) -> dict:
    done: dict = {}
    for number, obj in _lines(path):
        extra = sorted(k for k in obj if k not in PREDICTION_KEYS)
        if extra or any(k not in obj for k in PREDICTION_KEYS[:4]):
            raise _refuse(path, number, f"unexpected key {extra[0]!r}" if extra else "missing one of field_id, origin, condition, weights")
        key = _unit(archive, path, number, obj, CONDITIONS, origins)
        if key in done:
            raise _refuse(path, number, f"unit {' '.join(key)} is there twice")
        if obj["weights"] is not None and not isinstance(obj["weights"], dict):
            raise _refuse(path, number, "weights is neither an object nor null")
        done[key] = (key[2], obj["weights"] is not None)
    return done


def _traces(archive: Archive, path: Path, done: dict, origins: set[str]) -> tuple[list[dict], int]:
    """The trace lines to keep, and how many of an unfinished unit were dropped."""
    max_calls = int(archive.ledger["search"]["max_calls"])
    keep: list[dict] = []
    per_unit: dict = defaultdict(int)
    prompts: dict = {}
    dropped = 0
    for number, obj in _lines(path):
        extra = sorted(k for k in obj if k not in TRACE_KEYS and k not in TRACE_OPTIONAL_KEYS)
        if extra or any(k not in obj for k in TRACE_KEYS):
            raise _refuse(path, number, f"unexpected key {extra[0]!r}" if extra else "not a traces.jsonl line (a key is missing)")
        key = _unit(archive, path, number, obj, SEARCH_CONDITIONS, origins)
        if key not in done:
            dropped += 1
            continue
        expected = per_unit[key]
        if obj["call_index"] != expected or expected >= max_calls:
            raise _refuse(path, number, f"call_index {obj['call_index']!r} of {' '.join(key)}, expected {expected} (calls 0 … n−1 in order, at most {max_calls})")
        per_unit[key] = expected + 1
        if "prompt_sha256" in obj:
            if key not in prompts:
                prompts[key] = build_prompt(archive, *key).prompt_sha256
            if obj["prompt_sha256"] != prompts[key]:
                raise _refuse(path, number, f"made with another prompt (prompt_sha256 {str(obj['prompt_sha256'])[:16]}…, the kit renders {prompts[key][:16]}… today)")
        keep.append(obj)
    return keep, dropped


def _read_model_json(path: Path) -> dict:
    try:
        obj = decode_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise UsageProblem(f"{path}: not a readable JSON object ({exc}); fix or remove it") from None
    if not isinstance(obj, dict):
        raise UsageProblem(f"{path}: not a JSON object; fix or remove it")
    return obj


def model_json_plan(out: Path, version: str, values: dict, resume: bool, *, later_only: bool = False) -> bytes | None:
    """The bytes model.json must get before the first unit is written (None: leave it).
    ``later_only``: the run writes only later origins' files, so an existing model.json is kept as it is."""
    path = out / "model.json"
    if not path.exists():
        return model_json_bytes(model_record(check_model_id(out, "--out"), prompt_sha256=version, **values))
    record = _read_model_json(path)
    if later_only:
        return None
    recorded = record.get("prompt_sha256")
    if recorded == version:
        return None
    if resume and recorded is not None:
        raise _refuse(path, None, f"made with another prompt version (prompt_sha256 {str(recorded)[:16]}…, the kit's is {version[:16]}…)")
    ordered = {k: record[k] for k in (*MODEL_KEYS, *OPTIONAL_KEYS) if k in record}
    ordered.update({k: v for k, v in record.items() if k not in ordered})
    ordered["prompt_sha256"] = version
    return model_json_bytes(ordered)


def prepare_folder(out: Path, archive: Archive, version: str, values: dict, *, force: bool, resume: bool,
                   origins: list[str] | None = None) -> tuple[FolderState, bytes | None]:
    """Check (and on --resume, repair) the files of the origins run (default origins.json's);
    returns the folder's state and the model.json to write."""
    check_model_id(out, "--out")
    if force and resume:
        raise UsageProblem("--force and --resume exclude each other: --force starts again, --resume continues")
    if out.exists() and not out.is_dir():
        raise UsageProblem(f"--out {out}: exists and is not a folder")
    groups = file_groups(archive, origins if origins is not None else [o.isoformat() for o in archive.origins.origins])
    existing = [out / name for pair in groups for name in pair if (out / name).exists()]
    state = FolderState()
    if existing and not (force or resume):
        raise UsageProblem(f"{existing[0]}: already exists; use --resume to continue the run, --force to replace it, or a new folder")
    plan = model_json_plan(out, version, values, resume, later_only=FILES not in groups)
    if force:
        for path in existing:
            path.unlink()
    elif resume:
        for units, traces in groups:
            all_origins = _file_origins(archive, units)
            done = _predictions(archive, out / units, all_origins)
            keep, dropped = _traces(archive, out / traces, done, all_origins)
            state.done.update(done)
            state.calls += len(keep)
            state.dropped_calls += dropped
            if dropped:
                atomic_write_bytes(out / traces, encode_lines(keep))
    state.wrote_model_json = plan is not None
    return state, plan


def _file_origins(archive: Archive, units: str) -> set[str]:
    """Every origin whose units may stand in the predictions file ``units``."""
    return {o.isoformat() for o in archive.known_origins if unit_files(archive, o.isoformat())[0] == units}
