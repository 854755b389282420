"""The intervention files ``rapgen agent run --readout|--oracle`` appends to: fresh, replaced or resumed.

On ``--resume`` every existing line must parse with the archive's own parsers
(:mod:`rapgen.archive.interventions`) with no finding, and must have been made
from what the kit would send today: the same template (``prompt_sha256``),
the same evidence (``calls_used``, ``evidence_sha256``) or counts block
(``input_sha256``). Otherwise the run refuses with one line naming the file,
the line and the problem. O3 trace lines of a unit that has no line in
``oracle.jsonl`` yet were cut off mid-unit: they are dropped (the file is
rewritten atomically) and the unit runs again from call 0.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Callable

from rapgen.archive import ORACLE_SEARCH, Archive, Finding, TraceCall, parse_oracle, parse_oracle_traces, parse_replays
from rapgen.errors import SubmissionError, UsageProblem
from rapgen.io import atomic_write_bytes
from rapgen.kit.resume import HINT
from rapgen.kit.scaffold import check_model_id

UnitKey = tuple[str, str, str]


def refuse(path: Path, line: int | None, problem: str) -> SubmissionError:
    where = f"{path} line {line}" if line else str(path)
    return SubmissionError(f"{where}: {problem}; {HINT}")


def prepare_files(out: Path, names: tuple[str, ...], *, force: bool, resume: bool) -> None:
    """Check the flags against the files present; ``force`` deletes them."""
    check_model_id(out, "--out")
    if force and resume:
        raise UsageProblem("--force and --resume exclude each other: --force starts again, --resume continues")
    if out.exists() and not out.is_dir():
        raise UsageProblem(f"--out {out}: exists and is not a folder")
    existing = [out / n for n in names if (out / n).exists()]
    if existing and not (force or resume):
        raise UsageProblem(f"{existing[0]}: already exists; use --resume to continue the run, --force to replace it, or a new folder")
    if force:
        for path in existing:
            path.unlink()


def _data(path: Path) -> bytes:
    if not path.is_file():
        return b""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise refuse(path, data.count(b"\n") + 1, "the last line is incomplete")
    return data


def _first(path: Path, findings: list[Finding]) -> None:
    if findings:
        raise refuse(path, findings[0].line, findings[0].detail)


def done_readouts(archive: Archive, path: Path, template: str, expected: Callable[[tuple], tuple[int, str] | None]) -> dict:
    """key -> valid for the readouts already in ``path``; ``expected(key)`` gives (calls_used,
    evidence_sha256) as the kit would build them today, or None for a key that is no readout of the folder."""
    records, findings = parse_replays(str(path), _data(path), archive.field_map, archive.resolved_origins)
    _first(path, findings)
    done = {}
    for r in records:
        key = (r.field_id, r.origin.isoformat(), r.source_condition, r.readout, r.budget)
        if r.prompt_sha256 != template:
            raise refuse(path, r.line, f"made with another readout template (prompt_sha256 {r.prompt_sha256[:16]}…, the kit's is {template[:16]}…)")
        want = expected(key)
        if want is None:
            raise refuse(path, r.line, f"{r.field_id} {r.origin} {r.source_condition} is not a source of this folder's pairs")
        if (r.calls_used, r.evidence_sha256) != want:
            raise refuse(path, r.line, f"made from other evidence (calls_used {r.calls_used}, evidence_sha256 {r.evidence_sha256[:16]}…; "
                                       f"the folder's traces give {want[0]}, {want[1][:16]}…)")
        done[key] = r.valid
    return done


def done_oracle(archive: Archive, path: Path, template: str, expected_input: Callable[[str, date, str], str]) -> dict:
    """(field, origin, condition) -> valid for the O units already in ``path``."""
    records, findings = parse_oracle(str(path), _data(path), archive.field_map, archive.resolved_origins)
    _first(path, findings)
    done = {}
    for u in records:
        if u.prompt_sha256 != template:
            raise refuse(path, u.line, f"made with another exact-history template (prompt_sha256 {u.prompt_sha256[:16]}…, the kit's is {template[:16]}…)")
        want = expected_input(u.field_id, u.origin, u.condition)
        if u.input_sha256 != want:
            raise refuse(path, u.line, f"'input_sha256' {u.input_sha256[:16]}… is not the hash of the exact-history block ({want[0:16]}…)")
        done[(u.field_id, u.origin.isoformat(), u.condition)] = u.valid
    return done


def keep_oracle_traces(archive: Archive, path: Path, done: dict, prompt_of: Callable[[str, str], str]) -> tuple[int, int]:
    """Check ``path`` against the finished O3 units; drop the lines of unfinished ones.
    ``prompt_of(field, origin)`` is the rendered O3 prompt's sha. Returns (kept, dropped)."""
    data = _data(path)
    max_calls = int(archive.ledger["search"]["max_calls"])
    calls, findings = parse_oracle_traces(str(path), data, archive.field_map, archive.resolved_origins, max_calls)
    _first(path, findings)
    lines = data.split(b"\n")[:-1]
    keep: list[bytes] = []
    per_unit: dict = defaultdict(int)
    dropped = 0
    for call in calls:
        key = (call.field_id, call.origin.isoformat(), ORACLE_SEARCH)
        if key not in done:
            dropped += 1
            continue
        _check_call(path, call, per_unit[key], prompt_of)
        per_unit[key] += 1
        keep.append(lines[call.line - 1] + b"\n")
    if dropped:
        atomic_write_bytes(path, b"".join(keep))
    return len(keep), dropped


def _check_call(path: Path, call: TraceCall, expected: int, prompt_of: Callable[[str, str], str]) -> None:
    if call.call_index != expected:
        raise refuse(path, call.line, f"call_index {call.call_index} of {call.field_id} {call.origin} O3, expected {expected} (calls 0 … n−1 in order)")
    recorded = getattr(call, "prompt_sha256", None)
    if recorded is not None and recorded != prompt_of(call.field_id, call.origin.isoformat()):
        raise refuse(path, call.line, "made with another prompt (prompt_sha256)")

