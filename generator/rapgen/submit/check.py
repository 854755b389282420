"""The pull-request check (SUBMISSION.md, "The pull-request check").

:func:`check_submission` runs every check a reviewer needs on one new model
folder and returns a :class:`CheckResult` holding every problem found, each with
its fix. Stages, cheap to expensive:

1. integrity — the frozen archive verifies; with ``base`` (a git ref), nothing
   outside the new folder changed and the folder is new;
2. submission — model.json, predictions.jsonl, traces.jsonl, coverage,
   validity accounting;
3. checksums — the folder's SHA256SUMS lines are present, correct, canonical,
   and the only lines that changed;
4. scores, replay and a dry-run site render, on a temporary overlay of the
   archive plus the submission — run only when stages 1–3 found nothing, so
   the command stops at the first class of failure.

Nothing is ever written under the repository root: the overlay lives in a
temporary folder (hard links to the frozen files, copies of the submission).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import (
    CONDITION_REGIME,
    CONDITIONS,
    FORECAST_CONDITIONS,
    STATE_CONDITIONS,
    Archive,
    ModelInfo,
    TraceCall,
    Unit,
    recent_window,
)
from rapgen.archive.parse import parse_model_json, parse_predictions, parse_traces
from rapgen.errors import RapgenError, UsageProblem

MODELS_PREFIX = "archive/models/"
SUMS = "SHA256SUMS"
MODEL_FILES = ("model.json", "predictions.jsonl", "traces.jsonl")
REQUIRED_FILES = ("model.json", "predictions.jsonl")
MODEL_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
CANONICAL_SUMS_LINE = re.compile(r"^([0-9a-f]{64})  ([A-Za-z0-9._/-]+)$")
LOOSE_SUMS_LINE = re.compile(r"^([0-9A-Fa-f]{64}) [ *](.+)$")
PLACEHOLDER = "TODO"
VALID_SORTS = ("relevance", "date")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# model.json's "reference_agent" marks rapgen's own reference agents, which maintainers
# add with `rapgen agents run --into-archive`; a submission may not claim it.
RESERVED_MODEL_KEY = "reference_agent"
RESERVED_MODEL_KEY_DETAIL = (
    "the key 'reference_agent' is reserved for rapgen's own reference agents, which maintainers add with "
    "`rapgen agents run --into-archive`; remove it from a submission's model.json"
)

STAGES = ("integrity", "submission", "checksums", "scores", "replay", "site")

# Fix-it texts, one per problem keyword (STYLE: long texts live as constants).
FIXES: dict[str, str] = {
    "INTEGRITY": "Restore the frozen file from main (`git checkout origin/main -- PATH`) and rerun `rapgen verify`.",
    "TOUCHED": "Revert every change outside your model folder and `SHA256SUMS`; send unrelated changes in a separate pull request.",
    "EXISTS": "Choose a new `model_id` (and rename the folder to match); an existing model's files never change.",
    "FOLDER": "Rename the folder to a model id matching `^[a-z0-9][a-z0-9._-]{0,63}$`.",
    "MISSING-FILE": "Add the file; `rapgen submit init` writes a model.json template and `rapgen agent run` writes the rest.",
    "UNEXPECTED-FILE": "Delete it: a model folder holds only model.json, predictions.jsonl and (for Search conditions) traces.jsonl.",
    "MODEL-JSON": "Fix model.json so it has exactly the keys of the template written by `rapgen submit init`, with valid values.",
    "PLACEHOLDER": "Replace the template placeholder with the real value.",
    "MALFORMED": "Fix the line: one JSON object with keys field_id, origin, condition, weights (and optionally rationale, status, reason); weights an object of JSON numbers or null.",
    "DUPLICATE": "Keep one line per (field_id, origin, condition).",
    "COVERAGE": "Give every claimed condition one line for every field × origin of the archive (use `\"weights\": null, \"status\": \"invalid\", \"reason\": …` for a unit without an answer); A0, A1 and A3 are required.",
    "DIAGNOSTIC": "Set `\"diagnostic\": true` in model.json exactly when predictions.jsonl has A2 or A4 units.",
    "TRACE": "Record every Search call exactly as the tool returned it (`rapgen serve-search` and `rapgen agent run` write this format).",
    "CALL-CAP": "A unit may make at most the ledger's `search.max_calls` Search calls; drop the unit's extra calls and rerun it within the cap.",
    "LEAK": "A Search call can never return a paper on or after its origin; rerun the unit with the frozen backend (`rapgen serve-search`), which enforces the bounds.",
    "CHECKSUM": "Run `rapgen seal --root .` after adding the folder: it appends the canonical lines for exactly the new files.",
    "CHECKSUM-CHANGED": "Restore `SHA256SUMS` from main and run `rapgen seal --root .`: existing lines never change.",
    "SCORES": "The scoring stage could not score the submission; the message names the cause.",
    "REPLAY": "Recorded calls must reproduce exactly on the frozen backend; rerun the unit with `rapgen serve-search` or `rapgen agent run`.",
    "SITE": "The site could not be rendered with the submission; the message names the cause.",
}


@dataclass(frozen=True, order=True)
class Problem:
    """One problem with a submission: where, what, and how to fix it."""

    stage: str
    path: str
    line: int | None
    keyword: str
    detail: str
    fix: str = ""

    def location(self) -> str:
        return self.path + (f":{self.line}" if self.line else "")

    def one_line(self) -> str:
        return f"{self.keyword} {self.location()}: {self.detail}"

    def to_dict(self) -> dict:
        return {"stage": self.stage, "keyword": self.keyword, "path": self.path, "line": self.line, "detail": self.detail, "fix": self.fix}


@dataclass(frozen=True)
class ConditionCount:
    """Validity accounting for one condition (SUBMISSION.md: expected, valid, invalid)."""

    condition: str
    expected: int
    present: int
    valid: int
    invalid: int
    reasons: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict:
        return {
            "condition": self.condition, "expected": self.expected, "present": self.present,
            "valid": self.valid, "invalid": self.invalid, "reasons": dict(self.reasons),
        }


@dataclass
class StageStatus:
    status: str  # passed | failed | skipped | unavailable
    note: str = ""


@dataclass
class CheckResult:
    """Everything ``rapgen submit check`` found; :func:`render_report` formats it."""

    root: Path
    model_dir: Path
    model_id: str
    in_archive: bool
    base: str | None = None
    model: ModelInfo | None = None
    problems: list[Problem] = field(default_factory=list)
    accounting: list[ConditionCount] = field(default_factory=list)
    stages: dict[str, StageStatus] = field(default_factory=dict)
    sums_lines: list[str] = field(default_factory=list)
    n_trace_calls: int = 0
    leaderboard: list[dict] = field(default_factory=list)  # rows of leaderboard.csv for context
    replay: dict = field(default_factory=dict)
    site_pages: list[str] = field(default_factory=list)
    manifest_sha256: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, stage: str, keyword: str, path: str, line: int | None, detail: str, fix: str | None = None) -> None:
        self.problems.append(Problem(stage, path, line, keyword, detail, FIXES.get(keyword, "") if fix is None else fix))

    def stage_problems(self, stage: str) -> list[Problem]:
        return [p for p in self.problems if p.stage == stage]

    def to_dict(self) -> dict:
        return {
            "schema_version": 1,
            "ok": self.ok,
            "model_id": self.model_id,
            "model_dir": str(self.model_dir),
            "in_archive": self.in_archive,
            "base": self.base,
            "manifest_sha256": self.manifest_sha256,
            "stages": {k: {"status": v.status, "note": v.note} for k, v in self.stages.items()},
            "problems": [p.to_dict() for p in sorted(self.problems, key=_problem_order)],
            "validity": [c.to_dict() for c in self.accounting],
            "sha256sums_lines": self.sums_lines,
            "n_trace_calls": self.n_trace_calls,
            "leaderboard": [r for r in self.leaderboard if r.get("entry") == self.model_id],
            "replay": self.replay,
            "site_pages": self.site_pages,
            "notes": self.notes,
        }


def _problem_order(p: Problem) -> tuple:
    return (STAGES.index(p.stage) if p.stage in STAGES else 99, p.path, p.line or 0, p.keyword, p.detail)


# ====================================================================== entry point
def check_submission(
    root: str | Path,
    model_dir: str | Path,
    *,
    base: str | None = None,
    run_scores: bool = True,
    run_replay: bool = True,
    run_site: bool = True,
    resamples: int | None = None,
) -> CheckResult:
    """Check the model folder ``model_dir`` against the archive at ``root``.

    ``model_dir`` may be ``root/archive/models/<id>`` (the pull-request case) or
    any other folder (checked as if it were added under that name). ``base`` is a
    git ref of the repository's main line: with it, the check also proves that
    nothing outside the folder changed and that the folder is new.
    ``resamples`` overrides the ledger's bootstrap resamples (previews and tests
    only; CI uses the ledger). Raises :class:`UsageProblem` for a bad root,
    folder or ref.
    """
    root = Path(root)
    model_dir = Path(model_dir)
    if not root.is_dir():
        raise UsageProblem(f"{root}: the repository root is not a directory")
    if not (root / "archive").is_dir():
        raise UsageProblem(f"{root}: no archive/ folder here; pass the repository root with --root")
    if not model_dir.is_dir():
        hint = ""
        if _git(root, "rev-parse", "--verify", "--quiet", f"{model_dir}^{{commit}}").returncode == 0:
            hint = f"; {model_dir} is a git ref: check it out and run '.ci/submit-check pr --base <main>' to check the folders it adds"
        raise UsageProblem(f"{model_dir}: the model folder does not exist or is not a directory{hint}")
    model_id = model_dir.resolve().name
    in_archive = model_dir.resolve().parent == (root / "archive" / "models").resolve()
    result = CheckResult(root=root, model_dir=model_dir, model_id=model_id, in_archive=in_archive, base=base)
    prefix = f"{MODELS_PREFIX}{model_id}/"
    display = prefix if in_archive else (str(model_dir).rstrip("/") + "/")

    base_sums: bytes | None = None
    if base is not None:
        base_sums = _check_git(result, root, base, prefix)

    archive = Archive(root)
    _check_integrity(result, root, prefix)
    try:
        result.manifest_sha256 = archive.manifest_sha256
    except RapgenError:
        pass

    units, calls = _check_submission_files(result, archive, model_dir, display, prefix)
    if in_archive:
        _check_sums(result, root, model_dir, prefix, base_sums)
    else:
        result.sums_lines = [f"{sha}  {prefix}{name}" for name, sha in _folder_digests(model_dir).items()]
        result.stages["checksums"] = StageStatus("skipped", "the folder is outside archive/models/; `rapgen seal` writes these lines once it is copied in")
    for stage in ("integrity", "submission", "checksums"):
        if stage not in result.stages:
            result.stages[stage] = StageStatus("failed" if result.stage_problems(stage) else "passed")

    later = [s for s, wanted in (("scores", run_scores), ("replay", run_replay), ("site", run_site)) if wanted]
    if result.problems:
        for stage in later:
            result.stages[stage] = StageStatus("skipped", "earlier checks found problems")
    elif later:
        _run_overlay_stages(result, root, model_dir, prefix, set(later), has_traces=bool(calls), resamples=resamples)
    return result


# ====================================================================== 1. integrity
def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def _check_git(result: CheckResult, root: Path, base: str, prefix: str) -> bytes | None:
    """Files changed since ``base`` (committed, staged, unstaged, untracked under archive/)."""
    probe = _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    if probe.returncode != 0:
        raise UsageProblem(f"--base {base}: not a commit of the git repository at {root}")
    changed: set[str] = set()
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", base, "--")
    if diff.returncode != 0:
        raise UsageProblem(f"--base {base}: git diff failed: {diff.stderr.decode(errors='replace').strip()}")
    changed.update(p for p in diff.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", "archive", SUMS)
    changed.update(p for p in untracked.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    for path in sorted(changed):
        if path == SUMS or path.startswith(prefix):
            continue
        result.add("integrity", "TOUCHED", path, None, f"changed since {base}, but a submission may only add {prefix} and its SHA256SUMS lines")
    existing = _git(root, "ls-tree", "--name-only", base, "--", prefix.rstrip("/"))
    if existing.returncode == 0 and existing.stdout.strip():
        result.add("integrity", "EXISTS", prefix.rstrip("/"), None, f"model {result.model_id!r} already exists on {base}; an existing model's files never change")
    shown = _git(root, "show", f"{base}:{SUMS}")
    return shown.stdout if shown.returncode == 0 else b""


def _check_integrity(result: CheckResult, root: Path, prefix: str) -> None:
    try:
        from rapgen.archive import verify_archive
    except (ImportError, AttributeError):
        result.stages["integrity"] = StageStatus("unavailable", "verify_archive is not available; frozen files were not hashed")
        return
    report = verify_archive(root)
    for finding in report.findings:
        category = getattr(finding.category, "value", str(finding.category))
        if category == "WARNING":
            result.notes.append(f"{finding.path}{':' + str(finding.line) if finding.line else ''}: {finding.detail}")
            continue
        if finding.path.startswith(prefix) or (finding.path == SUMS and finding.line is not None):
            # The new folder's files and SHA256SUMS lines are checked below, with precise fixes.
            if finding.path.startswith(prefix) or _sums_line_is_folder(root, finding.line, prefix):
                continue
        detail = finding.detail or category.lower()
        if finding.expected or finding.actual:
            detail += f" (expected {finding.expected}, found {finding.actual})"
        result.add("integrity", "INTEGRITY", finding.path, finding.line, f"{category}: {detail}")


def _sums_line_is_folder(root: Path, line: int | None, prefix: str) -> bool:
    if not line:
        return False
    try:
        lines = (root / SUMS).read_bytes().decode("utf-8", "replace").split("\n")
    except OSError:
        return False
    return 0 < line <= len(lines) and prefix in lines[line - 1]


# ====================================================================== 2. submission files
def _check_submission_files(
    result: CheckResult, archive: Archive, model_dir: Path, display: str, prefix: str
) -> tuple[list[Unit], list[TraceCall]]:
    stage = "submission"
    mid = result.model_id
    if not MODEL_ID_RE.match(mid):
        result.add(stage, "FOLDER", display.rstrip("/"), None, f"folder name {mid!r} is not a valid model id")
    # Which files are there.
    present: dict[str, Path] = {}
    for entry in sorted(os.scandir(model_dir), key=lambda e: e.name):
        path = Path(entry.path)
        if entry.name in MODEL_FILES and entry.is_file(follow_symlinks=False):
            present[entry.name] = path
            continue
        if entry.name == "README.md" and not result.in_archive:
            result.notes.append(f"{display}README.md is ignored: it is not part of the submission (copy only {', '.join(MODEL_FILES)})")
            continue
        kind = "symbolic link" if entry.is_symlink() else "folder" if entry.is_dir(follow_symlinks=False) else "file"
        result.add(stage, "UNEXPECTED-FILE", display + entry.name, None, f"unexpected {kind} in the model folder")
    for name in REQUIRED_FILES:
        if name not in present:
            result.add(stage, "MISSING-FILE", display + name, None, f"{name} is missing")

    # The archive this submission is checked against.
    try:
        fields = archive.field_map
        origins = archive.origins.origins
        max_calls = int(archive.ledger["search"]["max_calls"])
        top_k = int(archive.ledger["search"]["top_k"])
        existing = set(archive.model_ids)
    except RapgenError as exc:
        if result.stage_problems("integrity"):
            result.notes.append(f"the submission's files were not checked against the archive, which cannot be read: {exc}")
        else:
            result.add("integrity", "INTEGRITY", "archive/", None, f"the archive cannot be read: {exc}")
        return [], []

    # model.json
    model: ModelInfo | None = None
    if "model.json" in present:
        raw = present["model.json"].read_bytes()
        model, findings = parse_model_json(display + "model.json", raw, folder=mid)
        for f in findings:
            result.add(stage, "MODEL-JSON", f.path, f.line, f.detail)
        if model is not None:
            _placeholders(result, display + "model.json", raw)
            if RESERVED_MODEL_KEY in model.extra:
                result.add(stage, "MODEL-JSON", display + "model.json", _key_line(raw, RESERVED_MODEL_KEY), RESERVED_MODEL_KEY_DETAIL)
        result.model = model
    if not result.in_archive and mid in existing:
        result.add(stage, "EXISTS", display.rstrip("/"), None, f"model {mid!r} already exists in {MODELS_PREFIX}{mid}/")

    # predictions.jsonl
    units: list[Unit] = []
    if "predictions.jsonl" in present:
        rel = display + "predictions.jsonl"
        units, findings = parse_predictions(rel, present["predictions.jsonl"].read_bytes(), fields, origins)
        for f in findings:
            keyword = "MALFORMED"
            if "does not cover every episode" in f.detail:
                keyword = "COVERAGE"
            elif f.detail.startswith("duplicate unit"):
                keyword = "DUPLICATE"
            result.add(stage, keyword, f.path, f.line, f.detail)
        claimed = {u.condition for u in units}
        for condition in FORECAST_CONDITIONS:
            if condition not in claimed and units:
                result.add(stage, "COVERAGE", rel, None, f"condition {condition} is missing: a submission covers A0, A1 and A3")
        if not units and not findings:
            result.add(stage, "COVERAGE", rel, None, "predictions.jsonl has no units")
        state = sorted(claimed & set(STATE_CONDITIONS))
        if model is not None and state and not model.diagnostic:
            result.add(stage, "DIAGNOSTIC", display + "model.json", None, f"predictions include {', '.join(state)}, so 'diagnostic' must be true")
        if model is not None and model.diagnostic and units and not state:
            result.add(stage, "DIAGNOSTIC", display + "model.json", None, "'diagnostic' is true but predictions include no A2 or A4 units")
        result.accounting = _accounting(units, len(fields) * len(origins))

    # traces.jsonl
    calls: list[TraceCall] = []
    if "traces.jsonl" in present:
        rel = display + "traces.jsonl"
        calls, findings = parse_traces(rel, present["traces.jsonl"].read_bytes(), fields, origins, max_calls)
        for f in findings:
            keyword = "CALL-CAP" if "beyond the cap" in f.detail else "TRACE" if f.detail.startswith("duplicate call") else "MALFORMED"
            result.add(stage, keyword, f.path, f.line, f.detail)
        result.n_trace_calls = len(calls)
        _check_trace_semantics(result, archive, rel, calls, {u.condition for u in units}, top_k, max_calls)
    return units, calls


def _placeholders(result: CheckResult, rel: str, raw: bytes) -> None:
    from rapgen.archive.parse import loads_strict

    obj = loads_strict(raw.decode("utf-8"))
    for key, value in obj.items():
        if isinstance(value, str) and PLACEHOLDER in value:
            result.add("submission", "PLACEHOLDER", rel, _key_line(raw, key), f"{key!r} still holds the template placeholder {value!r}")


def _key_line(raw: bytes, key: str) -> int | None:
    for number, line in enumerate(raw.decode("utf-8", "replace").split("\n"), start=1):
        if f'"{key}"' in line:
            return number
    return None


def _accounting(units: list[Unit], expected: int) -> list[ConditionCount]:
    out = []
    for condition in CONDITIONS:
        mine = [u for u in units if u.condition == condition]
        if not mine:
            continue
        reasons = Counter(u.reason or "invalid" for u in mine if not u.valid)
        valid = sum(1 for u in mine if u.valid)
        out.append(ConditionCount(condition, expected, len(mine), valid, len(mine) - valid, tuple(sorted(reasons.items()))))
    return out


def _check_trace_semantics(
    result: CheckResult,
    archive: Archive,
    rel: str,
    calls: list[TraceCall],
    claimed: set[str],
    top_k: int,
    max_calls: int,
) -> None:
    """What parse_traces cannot know: the call order, the cap, and every returned paper's shard."""
    stage = "submission"
    by_unit: dict[tuple, list[TraceCall]] = defaultdict(list)
    for call in calls:
        by_unit[(call.field_id, call.origin, call.condition)].append(call)
        if claimed and call.condition not in claimed:
            result.add(stage, "TRACE", rel, call.line, f"a Search call for condition {call.condition}, which predictions.jsonl does not contain")
        if len(call.returned_ids) > top_k:
            result.add(stage, "TRACE", rel, call.line, f"returned {len(call.returned_ids)} papers, more than top_k = {top_k}")
        if len(set(call.returned_ids)) != len(call.returned_ids):
            result.add(stage, "TRACE", rel, call.line, "the same paper is returned twice")
        if call.total_hits < len(call.returned_ids):
            result.add(stage, "TRACE", rel, call.line, f"total_hits {call.total_hits} is smaller than the {len(call.returned_ids)} papers returned")
        if _malformed_call(call) and (call.returned_ids or call.total_hits):
            result.add(stage, "TRACE", rel, call.line, "a malformed call (bad sort, empty query or bad dates) must return no papers and total_hits 0")
    for (fid, origin, condition), unit_calls in sorted(by_unit.items()):
        indexes = sorted(c.call_index for c in unit_calls)
        if len(unit_calls) > max_calls:
            result.add(stage, "CALL-CAP", rel, max(unit_calls, key=lambda c: c.line).line, f"{fid} {origin} {condition} made {len(unit_calls)} calls; the cap is {max_calls}")
        if indexes != list(range(len(indexes))):
            gap = next(i for i, v in enumerate(indexes) if v != i)
            first = min((c for c in unit_calls if c.call_index > gap), key=lambda c: c.call_index)
            result.add(stage, "TRACE", rel, first.line, f"call_index {first.call_index} of {fid} {origin} {condition} follows no call {gap}: indexes run 0, 1, 2, … per unit")
    _check_returned_papers(result, archive, rel, calls)


def _malformed_call(call: TraceCall) -> bool:
    if call.sort not in VALID_SORTS or not call.query.strip():
        return True
    try:
        lo = _strict_date(call.date_from)
        hi = _strict_date(call.date_to)
    except ValueError:
        return True
    return lo is not None and hi is not None and lo >= hi


def _strict_date(value: str | None) -> date | None:
    if value is None:
        return None
    if not ISO_DATE.match(value):
        raise ValueError(value)
    return date.fromisoformat(value)


def _check_returned_papers(result: CheckResult, archive: Archive, rel: str, calls: list[TraceCall]) -> None:
    """Every returned paper exists, belongs to the field, and lies in the unit's shard window."""
    ids = sorted({i for c in calls for i in c.returned_ids})
    if not ids:
        return
    import pandas as pd

    try:
        con = archive.connect()
        con.register("wanted", pd.DataFrame({"arxiv_id": ids}))
        dates = dict(con.execute("SELECT p.arxiv_id, p.first_submitted FROM papers p JOIN wanted USING (arxiv_id)").fetchall())
        members = {(a, f) for a, f in con.execute("SELECT a.arxiv_id, a.field_id FROM assignments a JOIN wanted USING (arxiv_id)").fetchall()}
        con.close()
    except Exception as exc:  # noqa: BLE001 - a broken archive is reported by the integrity stage
        result.notes.append(f"returned papers were not checked: the archive's tables cannot be read ({type(exc).__name__})")
        return
    window = archive.origins.window_months
    for call in calls:
        lower = recent_window(call.origin, window)[0] if CONDITION_REGIME[call.condition] == "fixed" else None
        for paper in call.returned_ids:
            first = dates.get(paper)
            if first is None:
                result.add("submission", "TRACE", rel, call.line, f"returned paper {paper} is not in the archive's papers")
                continue
            if first >= call.origin:
                result.add("submission", "LEAK", rel, call.line, f"returned paper {paper} was first submitted {first}, on or after the origin {call.origin}")
                continue
            if (paper, call.field_id) not in members:
                result.add("submission", "TRACE", rel, call.line, f"returned paper {paper} is not in field {call.field_id!r}, so not in its shard")
            elif lower is not None and first < lower:
                result.add("submission", "TRACE", rel, call.line, f"returned paper {paper} ({first}) is before the {call.condition} shard's window [{lower}, {call.origin})")


# ====================================================================== 3. checksums
def _folder_digests(model_dir: Path) -> dict[str, str]:
    out = {}
    for name in MODEL_FILES:
        path = model_dir / name
        if path.is_file() and not path.is_symlink():
            out[name] = _sha256(path)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sums_lines(data: bytes) -> list[tuple[int, str, str | None, str | None]]:
    """(line number, raw text, digest, path) for every line; digest/path None when unparsable."""
    text = data.decode("utf-8", "replace")
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    out = []
    for number, raw in enumerate(raw_lines, start=1):
        match = LOOSE_SUMS_LINE.match(raw.rstrip("\r"))
        out.append((number, raw, match.group(1).lower() if match else None, match.group(2) if match else None))
    return out


def _check_sums(result: CheckResult, root: Path, model_dir: Path, prefix: str, base_sums: bytes | None) -> None:
    stage = "checksums"
    try:
        data = (root / SUMS).read_bytes()
    except OSError:
        result.add(stage, "CHECKSUM", SUMS, None, "SHA256SUMS is missing")
        return
    digests = _folder_digests(model_dir)
    result.sums_lines = [f"{sha}  {prefix}{name}" for name, sha in digests.items()]
    lines = _sums_lines(data)
    seen: dict[str, int] = {}
    for number, raw, digest, path in lines:
        if path is None or not path.startswith(prefix):
            continue
        name = path[len(prefix):]
        if not CANONICAL_SUMS_LINE.match(raw):
            result.add(stage, "CHECKSUM", SUMS, number, f"the line for {path} is not canonical ('<64 lower-case hex>  <path>')")
        if path in seen:
            result.add(stage, "CHECKSUM", SUMS, number, f"{path} is listed twice (first on line {seen[path]})")
            continue
        seen[path] = number
        if name not in digests:
            result.add(stage, "CHECKSUM", SUMS, number, f"lists {path}, which is not a file of the submission")
        elif digest != digests[name]:
            result.add(stage, "CHECKSUM", SUMS, number, f"wrong digest for {path}: listed {digest}, actual {digests[name]}")
    for name in digests:
        if prefix + name not in seen:
            result.add(stage, "CHECKSUM", SUMS, None, f"no line for {prefix}{name}")
    paths = [p for _, _, _, p in lines if p is not None]
    keys = [p.encode("utf-8") for p in paths]
    if keys != sorted(keys):
        bad = next(i for i in range(1, len(keys)) if keys[i] < keys[i - 1])
        result.add(stage, "CHECKSUM", SUMS, [n for n, _, _, p in lines if p is not None][bad], "lines are not sorted by path (byte order)")
    if data and not data.endswith(b"\n"):
        result.add(stage, "CHECKSUM", SUMS, len(lines), "the last line has no newline")
    if base_sums is None:
        return
    # With a base: every base line is still there, byte for byte; nothing else is new.
    now = {raw: number for number, raw, _, path in lines if not (path or "").startswith(prefix)}
    base_lines = _sums_lines(base_sums)
    base_set = {raw for _, raw, _, _ in base_lines}
    base_paths = {p: number for number, _, _, p in base_lines if p}
    current_paths = {p: number for number, _, _, p in lines if p}
    for number, raw, _, path in base_lines:
        if raw in now:
            continue
        if path and path in current_paths:
            result.add(stage, "CHECKSUM-CHANGED", SUMS, current_paths[path], f"the existing line for {path} changed (base line {number})")
        else:
            result.add(stage, "CHECKSUM-CHANGED", SUMS, None, f"the existing line for {path or raw!r} was removed (base line {number})")
    for raw, number in sorted(now.items(), key=lambda kv: kv[1]):
        if raw in base_set:
            continue
        path = next((p for n, _, _, p in lines if n == number), None)
        if path and path in base_paths:
            continue  # already reported as changed
        result.add(stage, "CHECKSUM-CHANGED", SUMS, number, f"a new line outside {prefix}: {raw[:100]!r}")


# ====================================================================== 4. overlay stages
def build_overlay(root: Path, model_dir: Path, model_id: str, target: Path) -> Path:
    """A repository root under ``target`` holding the archive plus the submission.

    Frozen files are hard-linked (copied where linking fails); the submission's
    files are copied; SHA256SUMS is the base lines plus the canonical lines of the
    new folder. Nothing is written under ``root``.
    """
    prefix = f"{MODELS_PREFIX}{model_id}/"
    src_archive = root / "archive"
    for dirpath, dirnames, filenames in os.walk(src_archive):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        if (rel_dir + "/").startswith(prefix):
            dirnames[:] = []
            continue
        dirnames.sort()
        (target / rel_dir).mkdir(parents=True, exist_ok=True)
        for name in sorted(filenames):
            src = Path(dirpath) / name
            if src.is_symlink() or not src.is_file():
                continue
            dst = target / rel_dir / name
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
    out_dir = target / prefix
    out_dir.mkdir(parents=True, exist_ok=True)
    entries: dict[str, str] = {}
    for number, raw, digest, path in _sums_lines((root / SUMS).read_bytes()):
        if digest and path and not path.startswith(prefix):
            entries[path] = digest
    for name in MODEL_FILES:
        src = model_dir / name
        if src.is_file():
            shutil.copyfile(src, out_dir / name)
            entries[prefix + name] = _sha256(out_dir / name)
    body = "".join(f"{entries[p]}  {p}\n" for p in sorted(entries, key=lambda p: p.encode("utf-8")))
    (target / SUMS).write_bytes(body.encode("utf-8"))
    return target


def _run_overlay_stages(result: CheckResult, root: Path, model_dir: Path, prefix: str, wanted: set[str], *,
                        has_traces: bool, resamples: int | None) -> None:
    from rapgen.submit import stages

    with tempfile.TemporaryDirectory(prefix="rapgen-submit-") as tmp:
        overlay = build_overlay(root, model_dir, result.model_id, Path(tmp) / "repo")
        holder: dict = {}

        def opened():
            if "archive" not in holder:
                holder["archive"] = stages.open_overlay(overlay)
            return holder["archive"]

        scores_dir = Path(tmp) / "scores"
        scored = False
        if "scores" in wanted:
            scored = _stage(result, "scores", lambda: _score(result, opened(), scores_dir, resamples))
        if "replay" in wanted:
            if not has_traces:
                result.stages["replay"] = StageStatus("skipped", "the submission has no traces")
            else:
                _stage(result, "replay", lambda: _replay(result, opened()))
        if "site" in wanted:
            if "scores" in wanted and not scored:
                result.stages["site"] = StageStatus("skipped", "no scores to render")
            else:
                _stage(result, "site", lambda: _render(result, opened(), scores_dir, Path(tmp) / "docs"))


class StageUnavailable(Exception):
    """The stage's public API is not present in this installation."""


def _stage(result: CheckResult, name: str, run: Callable[[], str]) -> bool:
    keyword = name.upper()
    try:
        note = run()
    except StageUnavailable as exc:
        result.stages[name] = StageStatus("unavailable", str(exc))
        return False
    except RapgenError as exc:
        result.add(name, keyword, result.model_id, None, str(exc))
        result.stages[name] = StageStatus("failed", str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - report, never crash the check
        result.add(name, keyword, result.model_id, None, f"internal error in the {name} stage: {type(exc).__name__}: {exc}")
        result.stages[name] = StageStatus("failed", f"{type(exc).__name__}")
        return False
    failed = bool(result.stage_problems(name))
    result.stages[name] = StageStatus("failed" if failed else "passed", note or "")
    return not failed


def _import_stage(module: str, *names: str) -> tuple[Any, ...]:
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise StageUnavailable(f"{module} is not installed ({exc})") from None
    missing = [n for n in names if not hasattr(mod, n)]
    if missing:
        raise StageUnavailable(f"{module} has no {', '.join(missing)}")
    return tuple(getattr(mod, n) for n in names)


def _score(result: CheckResult, archive, out: Path, resamples: int | None) -> str:
    from rapgen.submit import stages

    rows = stages.score_overlay(archive, out, resamples)
    result.leaderboard = rows
    mine = [r for r in rows if r.get("entry") == result.model_id]
    if not mine:
        result.add("scores", "SCORES", result.model_id, None, "the scoring stage produced no leaderboard rows for this model")
    return f"{len(mine)} leaderboard rows for {result.model_id}"


def _replay(result: CheckResult, archive) -> str:
    from rapgen.submit import stages

    summary = stages.replay_overlay(archive, result.model_id, stages.cache_dir_for(result.root))
    result.replay = summary
    for diff in summary.get("differences", []):
        result.add("replay", "REPLAY", diff.get("path", result.model_id), diff.get("line"), diff.get("detail", "a call does not reproduce"))
    return f"{summary.get('reproduced', 0)} of {summary.get('calls', 0)} calls reproduce exactly"


def _render(result: CheckResult, archive, scores_dir: Path, out: Path) -> str:
    from rapgen.submit import stages

    pages = stages.render_overlay(archive, scores_dir, out, result.model_id)
    result.site_pages = pages
    if not any(result.model_id in p for p in pages):
        result.add("site", "SITE", result.model_id, None, "the rendered site has no page for this model")
    return f"{len(pages)} pages rendered"
