"""What the pull-request check found: problems, warnings, validity counts, section statuses.

Pure data. :mod:`rapgen.submit.review.checks` and :mod:`~rapgen.submit.review.overlay`
fill a :class:`CheckResult`; :mod:`~rapgen.submit.review.report` renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rapgen.archive import ModelInfo

# The report's sections, in the order the check runs them (cheap to expensive).
SECTIONS = ("integrity", "submission", "checksums", "live", "scores", "replay", "site")

# Fix-it texts, one per problem keyword (STYLE: long texts live as constants).
FIXES: dict[str, str] = {
    "INTEGRITY": "Restore the frozen file from main (`git checkout origin/main -- PATH`) and rerun `rapgen verify`.",
    "TOUCHED": "Revert every change outside your model folder and `SHA256SUMS`; send unrelated changes in a separate pull request.",
    "EXISTS": "Restore the model's listed files from main: an existing model's files never change. A pull request may add a later origin (`origins/<origin>/…`) or intervention records (replays.jsonl, oracle.jsonl, oracle_traces.jsonl, training.json) to it; a new model needs a new `model_id`.",
    "ORIGIN": "Put a later origin's units in `origins/<origin>/predictions.jsonl` (and its calls in `traces.jsonl` beside it), for an origin a release resolved or opened; origins.json's origins belong in the main predictions.jsonl.",
    "LATE": "A Live submission counts only if it is received by the open origin's `closes` date. Once the origin is resolved, add the files as a later origin instead (not a Live entry).",
    "REVEAL": "Reveal exactly the files you committed: their SHA-256 must equal the digests in `commitments/<origin>/<model_id>.json` (`sha256sum` them before opening the pull request).",
    "COPY": "Commit the digests of your own model's files (`rapgen submit commit` computes them): a commitment with another model's digests would reveal its forecasts as yours.",
    "COMMITMENT": "Write the commitment with the keys model_id, origin, files (predictions.jsonl and traces.jsonl digests, 64 lower-case hex or null) and kit, at `archive/commitments/<origin>/<model_id>.json`, and keep its predictions to yourself until the origin is resolved.",
    "FOLDER": "Rename the folder to a model id matching `^[a-z0-9][a-z0-9._-]{0,63}$`.",
    "MISSING-FILE": "Add the file; `rapgen submit init` writes a model.json template and `rapgen agent run` writes the rest.",
    "UNEXPECTED-FILE": "Delete it: a model folder holds only model.json, predictions.jsonl and (for Search conditions) traces.jsonl, as regular files.",
    "TOO-LARGE": "Keep the file within the size limit: predictions and traces hold one short line per unit or call.",
    "MODEL-JSON": "Fix model.json so it has exactly the keys of the template written by `rapgen submit init`, with valid values.",
    "PLACEHOLDER": "Replace the template placeholder with the real value.",
    "BIDI": "Remove the bidirectional control character: it makes text display in a different order than it is stored.",
    "MALFORMED": "Fix the line: one JSON object with keys field_id, origin, condition, weights (and optionally rationale, status, reason); weights an object of JSON numbers or null.",
    "DUPLICATE": "Keep one line per (field_id, origin, condition).",
    "COVERAGE": "Give every claimed condition one line for every field × origin of the archive (use `\"weights\": null, \"status\": \"invalid\", \"reason\": …` for a unit without an answer); A0, A1 and A3 are required.",
    "DIAGNOSTIC": "Set `\"diagnostic\": true` in model.json exactly when predictions.jsonl has A2 or A4 units.",
    "TRACE": "Record every Search call exactly as the tool returned it (`rapgen serve-search` and `rapgen agent run` write this format), and only for units of predictions.jsonl with a Search condition.",
    "CALL-CAP": "A unit may make at most the ledger's `search.max_calls` Search calls; drop the unit's extra calls and rerun it within the cap.",
    "LEAK": "A Search call can never return a paper on or after its origin; rerun the unit with the frozen backend (`rapgen serve-search`), which enforces the bounds.",
    "CHECKSUM": "Run `rapgen seal --root .` after adding the folder: it appends the canonical lines for exactly the new files.",
    "CHECKSUM-CHANGED": "Restore `SHA256SUMS` from main and run `rapgen seal --root .`: existing lines never change.",
    "SCORES": "The scoring stage could not score the submission; the message names the cause.",
    "REPLAY": "Recorded calls must reproduce exactly on the frozen backend; rerun the unit with `rapgen serve-search` or `rapgen agent run`.",
    "SITE": "The site could not be rendered with the submission; the message names the cause.",
    # Warnings: shown to the reviewer, never a failure.
    "NO-SEARCH-CALLS": "If the model really never searched, say so in model.json's notes; otherwise add the traces.jsonl that `rapgen agent run` or `rapgen serve-search --traces` wrote.",
}


@dataclass(frozen=True, order=True)
class Problem:
    """One problem (or warning) with a submission: where, what, and how to fix it."""

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


def problem_order(p: Problem) -> tuple:
    """Report order: section, then path, line, keyword and detail."""
    return (SECTIONS.index(p.stage) if p.stage in SECTIONS else len(SECTIONS), p.path, p.line or 0, p.keyword, p.detail)


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
    status: str  # passed | failed | skipped
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
    warnings: list[Problem] = field(default_factory=list)
    accounting: list[ConditionCount] = field(default_factory=list)
    stages: dict[str, StageStatus] = field(default_factory=dict)
    sums_lines: list[str] = field(default_factory=list)
    n_trace_calls: int = 0
    leaderboard: list[dict] = field(default_factory=list)  # headline rows of every entry, for context
    replay: dict = field(default_factory=dict)
    site_pages: list[str] = field(default_factory=list)
    manifest_sha256: str = ""
    notes: list[str] = field(default_factory=list)
    origins: list[dict] = field(default_factory=list)  # per-origin coverage: origin, file, conditions, complete
    live: list[dict] = field(default_factory=list)  # this model's Live entries (sealed or open), with receipt and timing
    unrevealed: list[dict] = field(default_factory=list)  # every sealed entry of the archive never revealed
    now: str = ""  # the date the Live deadline was judged by
    now_source: str = ""  # "--now" or "today (UTC)"
    kind: str | None = None  # a kind other than RAP, checked through its ReviewSpec (kind_check)
    tables: list = field(default_factory=list)  # that kind's coverage, accounting and preview (ReviewTable)
    headline: dict = field(default_factory=dict)  # the leaderboard.csv cell of its headline rows

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, stage: str, keyword: str, path: str, line: int | None, detail: str, fix: str | None = None) -> None:
        self.problems.append(Problem(stage, path, line, keyword, detail, FIXES.get(keyword, "") if fix is None else fix))

    def warn(self, stage: str, keyword: str, path: str, line: int | None, detail: str) -> None:
        self.warnings.append(Problem(stage, path, line, keyword, detail, FIXES.get(keyword, "")))

    def stage_problems(self, stage: str) -> list[Problem]:
        return [p for p in self.problems if p.stage == stage]

    def to_dict(self) -> dict:
        out = self._common_dict()
        if self.kind is not None:
            out.update({"kind": self.kind, "headline": self.headline,
                        "tables": [{"title": t.title, "columns": list(t.columns), "rows": [list(r) for r in t.rows], "note": t.note}
                                   for t in self.tables]})
            for key in ("validity", "origins", "live", "unrevealed", "now", "now_source"):
                out.pop(key)  # RAP's Live and per-origin sections
        return out

    def _common_dict(self) -> dict:
        return {
            "schema_version": 1,
            "ok": self.ok,
            "model_id": self.model_id,
            "model_dir": str(self.model_dir),
            "in_archive": self.in_archive,
            "base": self.base,
            "manifest_sha256": self.manifest_sha256,
            "stages": {k: {"status": v.status, "note": v.note} for k, v in self.stages.items()},
            "problems": [p.to_dict() for p in sorted(self.problems, key=problem_order)],
            "warnings": [p.to_dict() for p in sorted(self.warnings, key=problem_order)],
            "validity": [c.to_dict() for c in self.accounting],
            "sha256sums_lines": self.sums_lines,
            "n_trace_calls": self.n_trace_calls,
            "leaderboard": [r for r in self.leaderboard if r.get("entry") == self.model_id],
            "replay": self.replay,
            "site_pages": self.site_pages,
            "origins": self.origins,
            "live": self.live,
            "unrevealed": self.unrevealed,
            "now": self.now,
            "now_source": self.now_source,
            "notes": self.notes,
        }
