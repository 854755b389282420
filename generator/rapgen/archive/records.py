"""Typed records for the archive's content (ARCHIVE.md). Frozen dataclasses only."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from enum import Enum
from typing import Mapping


SLOTS: tuple[str, ...] = tuple(f"D{i}" for i in range(8))
# A unit's condition, by role (SUBMISSION.md, conditions table): Search closed, over the fixed
# recent window or over the expanding history, answering the Forecast or the State question.
# These lines are the one place a condition's name is spelt; every other module reads them.
CLOSED_FORECAST = "A0"
FIXED_FORECAST = "A1"
FIXED_STATE = "A2"
EXPANDING_FORECAST = "A3"
EXPANDING_STATE = "A4"
CONDITIONS: tuple[str, ...] = (CLOSED_FORECAST, FIXED_FORECAST, FIXED_STATE, EXPANDING_FORECAST, EXPANDING_STATE)
FORECAST_CONDITIONS: tuple[str, ...] = (CLOSED_FORECAST, FIXED_FORECAST, EXPANDING_FORECAST)
STATE_CONDITIONS: tuple[str, ...] = (FIXED_STATE, EXPANDING_STATE)
SEARCH_CONDITIONS: tuple[str, ...] = (FIXED_FORECAST, FIXED_STATE, EXPANDING_FORECAST, EXPANDING_STATE)
# Which manifest regime a Search condition uses (SUBMISSION.md, conditions table).
CONDITION_REGIME: dict[str, str] = {
    FIXED_FORECAST: "fixed", FIXED_STATE: "fixed", EXPANDING_FORECAST: "expanding", EXPANDING_STATE: "expanding",
}
# The exact-history conditions (INTERVENTIONS.md §2): exact counts of the recent window, of the
# whole shown history, and the history with the Expanding Search (O3 searches as A3 does).
ORACLE_RECENT = "O1"
ORACLE_HISTORY = "O2"
ORACLE_SEARCH = "O3"
ORACLE_CONDITIONS: tuple[str, ...] = (ORACLE_RECENT, ORACLE_HISTORY, ORACLE_SEARCH)
# The shard each condition that searches uses: A1–A4's, and O3's, the Expanding shard as for A3.
SEARCH_REGIME: dict[str, str] = {**CONDITION_REGIME, ORACLE_SEARCH: CONDITION_REGIME[EXPANDING_FORECAST]}
# The units a frozen-evidence readout replays (INTERVENTIONS.md §1): evidence F of A3, S of A4.
SOURCE_CONDITIONS: tuple[str, ...] = (EXPANDING_FORECAST, EXPANDING_STATE)
ASSIGNMENT_TYPES: tuple[str, ...] = ("single", "boundary", "bridge", "other", "low_evidence")
DEV_SPLIT = "dev"
TEST_SPLIT = "test"  # the headline split: the site shows it first
SPLITS: tuple[str, ...] = (DEV_SPLIT, TEST_SPLIT)
# The benchmark's parameter ledger (ARCHIVE.md, FINAL_PARAMETER_LEDGER_V1.json), verbatim.
# Scoring and search read constants from an archive's own ledger file, never from here;
# this copy is what new archives (the sample, synth, test fixtures) are written with.
BENCHMARK_LEDGER: dict = {
    "bm25": {"k1": 1.5, "b": 0.75},
    "search": {"top_k": 8, "max_calls": 20},
    "bootstrap": {"resamples": 10000, "seed": 0, "level": 0.95},
    "ewma_weights": [0.25, 0.25, 0.5],
    "arima110": {"phi": -0.4},
    "holt": {"alpha": 0.85, "beta": 0.6},
    "var_ridge": {"ratio": 133.352},
    "residual": {"direct_permutations": 2048, "seed": 0},
    "change_rich": {"p_max": 0.05, "repeatability_min": 0.5, "null_draws": 2000, "seed": 0},
    "reliability": {"splits": 200, "seed": 0},
}
FIELD_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"


class Category(str, Enum):
    """The fixed keywords of verification findings (VERIFY.md, Messages)."""

    FAILED = "FAILED"
    MISSING = "MISSING"
    UNLISTED = "UNLISTED"
    UNSAFE = "UNSAFE"
    MALFORMED = "MALFORMED"
    SYMLINK = "SYMLINK"
    NOT_REGULAR = "NOT-REGULAR"
    UNREADABLE = "UNREADABLE"
    DUPLICATE = "DUPLICATE"
    CONFLICT = "CONFLICT"
    INVARIANT = "INVARIANT"
    NOT_EVALUATED = "NOT-EVALUATED"
    WARNING = "WARNING"


class ProblemKind(str, Enum):
    """What a finding is about, as data, so callers never match message text.

    The category says how bad (``MALFORMED``, ``INVARIANT`` …); the kind says
    which rule broke. Parsers set a kind on every finding they make."""

    ENCODING = "encoding"  # not UTF-8
    SYNTAX = "syntax"  # not JSON, a blank line, not a JSON object
    SCHEMA = "schema"  # a key missing, unknown or of the wrong type or value
    COVERAGE = "coverage"  # a claimed condition does not cover every episode
    DUPLICATE_UNIT = "duplicate-unit"  # the same (field, origin, condition) twice
    CALL_CAP = "call-cap"  # a trace call_index at or beyond the ledger's cap
    DUPLICATE_CALL = "duplicate-call"  # the same call_index twice for one unit
    TRACE = "trace"  # a trace call that does not match the archive (e.g. outside its shard)
    DUPLICATE_RECORD = "duplicate-record"  # a second codebook / field / block line for one id
    EVIDENCE = "evidence"  # a readout disagrees with its source unit (INTERVENTIONS.md §1: unit, pair, calls_used, hash)
    INPUT = "input"  # an O unit's input_sha256 is not the hash of its exact-history block (§2)
    PANEL = "panel"  # a unit outside a panel's cells P or of an unlisted condition (§3)
    BASE_COVERAGE = "base-coverage"  # a panel's base model lacks a cell × listed condition (§3)


@dataclass(frozen=True, order=True)
class Finding:
    """One problem found in an archive. Sorted by path, then line, then category.

    ``kind`` (a :class:`ProblemKind`, or None where only the category matters) is
    not part of equality: it classifies a finding, it does not distinguish two."""

    path: str
    line: int | None
    category: Category
    detail: str = ""
    expected: str | None = None
    actual: str | None = None
    kind: ProblemKind | None = field(default=None, compare=False)

    def sort_key(self) -> tuple:
        return (self.path.encode("utf-8", "surrogateescape"), self.line or 0, self.category.value, self.detail)

    def to_dict(self) -> dict:
        return {
            "category": self.category.value,
            "path": self.path,
            "line": self.line,
            "expected": self.expected,
            "actual": self.actual,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Origins:
    origins: tuple[date, ...]
    window_months: int
    history_windows: int
    strict_origin: date


@dataclass(frozen=True)
class Field:
    field_id: str
    name: str
    definition: str
    split: str
    block_id: str
    eligible_pre2024: bool


@dataclass(frozen=True)
class Direction:
    slot: str
    name: str
    definition: str
    include: str
    exclude: str
    exemplars: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    block_id: str
    split: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class ShardManifest:
    field_id: str
    origin: date
    regime: str
    date_from: date | None
    date_to: date
    n_papers: int
    min_date: date | None
    max_date: date | None
    ids_sha256: str


@dataclass(frozen=True)
class ModelInfo:
    model_id: str
    display_name: str
    provider: str
    proprietary: bool
    knowledge_cutoff: date | None
    release_date: date | None
    cutoff_source: str
    diagnostic: bool
    submitted: date | None
    contact: str
    notes: str
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    # The whole object as decoded, once: the INTERVENTIONS.md keys are checked from it
    # (interventions.model_extensions) once the archive's origins and models are known.
    document: Mapping = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def effective_cutoff(self) -> date | None:
        """``knowledge_cutoff``, else ``release_date`` (SCORING.md §4, forecast_strict)."""
        return self.knowledge_cutoff or self.release_date


@dataclass(frozen=True)
class Unit:
    """One prediction line after validation (SUBMISSION.md).

    ``weights`` is the renormalised composition over D0..D7 for a valid unit,
    ``None`` for an invalid one; ``reason`` says why a unit is invalid.
    """

    field_id: str
    origin: date
    condition: str
    weights: tuple[float, ...] | None
    valid: bool
    reason: str = ""
    line: int = 0
    # INTERVENTIONS.md §7's shown keys the line carries (response_model, attempts, …); None: none
    provenance: Mapping | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TraceCall:
    field_id: str
    origin: date
    condition: str
    call_index: int
    query: str
    sort: str
    date_from: str | None
    date_to: str | None
    total_hits: int
    returned_ids: tuple[str, ...]
    line: int = 0
    prompt_sha256: str | None = None  # the prompt the kit sent for this unit, when recorded


__all__ = [name for name, value in dict(globals()).items()
           if not name.startswith("_") and name not in ("annotations", "dataclass", "field", "date", "Enum", "Mapping")]
