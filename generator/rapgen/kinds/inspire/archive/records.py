"""Frozen records of Inspire's files (INSPIRE.md §1–§2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Instance:
    """One line of instances.jsonl: what a policy may see."""

    instance_id: str
    split: str
    cutoff: date
    brief: str
    brief_terse: str
    brief_sha256: str
    line: int = 0

    def brief_for(self, condition: str) -> str:
        """The brief a condition shows: ``brief`` (detailed) or ``brief_terse``."""
        return self.brief_terse if condition == "terse" else self.brief


@dataclass(frozen=True)
class Target:
    """One row of targets.parquet (evaluator-only)."""

    instance_id: str
    arxiv_id: str
    title: str
    abstract: str
    first_submitted: date
    topic: str
    audit_named: bool
    audit_confidence: float
    title_overlap: float
    view: str


@dataclass(frozen=True)
class Judgement:
    """One graded antecedent of an instance (a member of Y_i)."""

    instance_id: str
    arxiv_id: str
    tier: str
    role: str
    gain: float
    n_votes: int
    agreement: int
    rationale: str


@dataclass(frozen=True)
class Reference:
    """One row of references.parquet: a cited paper and why it is (not) graded."""

    instance_id: str
    arxiv_id: str
    first_submitted: date | None
    status: str
    tier: str | None
    role: str | None


@dataclass(frozen=True)
class CorpusPaper:
    arxiv_id: str
    title: str
    abstract: str
    first_submitted: date
    categories: str


@dataclass(frozen=True)
class ManifestRow:
    """One line of search/manifest.jsonl: an instance's shard, the corpus before its cutoff."""

    instance_id: str
    date_to: date
    n_papers: int
    min_date: date | None
    max_date: date | None
    ids_sha256: str
    line: int = 0


@dataclass(frozen=True)
class RankedEntry:
    arxiv_id: str
    rationale: str | None = None


@dataclass(frozen=True)
class Prediction:
    """One line of predictions.jsonl: a unit (instance, condition) and its ranked list."""

    instance_id: str
    condition: str
    status: str
    ranking: tuple[RankedEntry, ...] | None  # None iff failed
    reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float | None
    cost_usd: float | None
    prompt_sha256: str | None = None
    line: int = 0

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def submitted_ids(self) -> tuple[str, ...]:
        """The raw submitted strings in order (empty for a failed unit)."""
        return tuple(e.arxiv_id for e in self.ranking or ())


@dataclass(frozen=True)
class Call:
    """One line of traces.jsonl: a recorded ``search_papers`` call and its answer."""

    instance_id: str
    condition: str
    call_index: int
    query: str
    sort: str
    date_from: str | None
    date_to: str | None
    total_hits: int
    returned_ids: tuple[str, ...]
    line: int = 0
    prompt_sha256: str | None = None

    @property
    def unit(self) -> tuple[str, str]:
        return (self.instance_id, self.condition)

    @property
    def args(self) -> dict:
        """The call's arguments as the tool received them."""
        return {"query": self.query, "sort": self.sort, "date_from": self.date_from, "date_to": self.date_to}

    def describe(self) -> str:
        """How a message names the call: ``call 3 of insp-0001 detailed``."""
        return f"call {self.call_index} of {self.instance_id} {self.condition}"
