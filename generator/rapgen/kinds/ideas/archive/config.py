"""``benchmark/config.json`` and ``provenance/LEDGER.json`` of an Ideas archive (IDEAS.md §1).

The cutoff calendar: a cutoff t is the first day of a month and the *start* of
that day, so a paper dated t belongs to t's future, not its history.
H(τ, t) = [start, t), F(τ, t) = [t, e(t)] with e(t) the last day of the month
``horizon_months`` after t's (2024-07-01 → 2024-10-31).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from rapgen.archive import Finding, add_months
from rapgen.kinds.ideas.archive.lines import Bad, day, integer, keys, month, number, read_document, string

CONFIG_KEYS = ("start_month", "min_cutoff_month", "cutoffs", "horizon_months", "top_k", "min_history", "strict_cutoff")
LEDGER_KEYS = ("assignment", "adapter", "retrieval_depth", "embedding", "kmeans", "gates", "primary", "bootstrap", "metric_version")
GATE_NAMES = ("default", "strict")


@dataclass(frozen=True)
class Config:
    start: date  # first day of start_month
    min_cutoff: date  # first day of min_cutoff_month
    cutoffs: tuple[date, ...]
    horizon_months: int
    top_k: int
    min_history: int
    strict_cutoff: date


def future_end(cutoff: date, horizon_months: int) -> date:
    """e(t): the last day of the month ``horizon_months`` after t's month (inclusive end of F)."""
    return add_months(cutoff.replace(day=1), horizon_months + 1) - timedelta(days=1)


def in_history(d: date, start: date, cutoff: date) -> bool:
    return start <= d < cutoff


def in_future(d: date, cutoff: date, horizon_months: int) -> bool:
    return cutoff <= d <= future_end(cutoff, horizon_months)


def _config(obj: dict) -> Config:
    keys(obj, CONFIG_KEYS)
    start, min_cutoff = month(obj, "start_month"), month(obj, "min_cutoff_month")
    if not isinstance(obj["cutoffs"], list) or not obj["cutoffs"]:
        raise Bad("'cutoffs' must be a non-empty list of dates")
    cutoffs = tuple(day({"cutoffs": v}, "cutoffs", first_of_month=True) for v in obj["cutoffs"])
    if any(b <= a for a, b in zip(cutoffs, cutoffs[1:])):
        raise Bad("'cutoffs' must be strictly ascending")
    if min_cutoff <= start:
        raise Bad("'min_cutoff_month' must come after 'start_month'")
    if cutoffs[0] < min_cutoff:
        raise Bad(f"cutoff {cutoffs[0].isoformat()} is before min_cutoff_month {obj['min_cutoff_month']}")
    return Config(start, min_cutoff, cutoffs, integer(obj, "horizon_months", 0), integer(obj, "top_k", 1),
                  integer(obj, "min_history", 0), day(obj, "strict_cutoff", first_of_month=True))


def parse_config(path: str, data: bytes) -> tuple[Config | None, list[Finding]]:
    findings: list[Finding] = []
    return read_document(path, data, findings, _config), findings


# ---------------------------------------------------------------- the ledger
@dataclass(frozen=True)
class Gate:
    """Passes iff P + M ≥ ``problem_method_min`` and S ≥ ``realisation_min``."""

    name: str
    problem_method_min: int
    realisation_min: int


@dataclass(frozen=True)
class Ledger:
    assignment: str  # "phrase-v1"
    adapter: str  # "v1"
    retrieval_depth: int
    embedding: str
    dimensions: int | None
    kmeans_k: int
    kmeans_seed: int
    gates: tuple[Gate, ...]
    primary_judge: str
    primary_gate: str
    primary_track: str
    resamples: int
    seed: int
    level: float
    metric_version: int
    raw: dict  # the document as read (its other keys are recorded, not checked)


def _object(obj: dict, key: str, required: tuple[str, ...]) -> dict:
    value = obj[key]
    if not isinstance(value, dict):
        raise Bad(f"{key!r} must be an object")
    try:
        keys(value, required, optional=tuple(k for k in value if k not in required))
    except Bad as exc:
        raise Bad(f"{key!r}: {exc}") from None
    return value


def _ledger(obj: dict) -> Ledger:
    keys(obj, LEDGER_KEYS)
    assignment, adapter = _object(obj, "assignment", ("name",)), _object(obj, "adapter", ("name",))
    embedding, kmeans = _object(obj, "embedding", ("name", "dimensions")), _object(obj, "kmeans", ("k", "seed"))
    primary, boot = _object(obj, "primary", ("judge", "gate", "track")), _object(obj, "bootstrap", ("resamples", "seed", "level"))
    gates_obj = obj["gates"]
    if not isinstance(gates_obj, dict) or tuple(gates_obj) != GATE_NAMES:
        raise Bad(f"'gates' must be an object with exactly {', '.join(GATE_NAMES)}")
    gates = []
    for name in GATE_NAMES:
        g = _object(gates_obj, name, ("problem_method_min", "realisation_min"))
        gates.append(Gate(name, integer(g, "problem_method_min", 0, 6), integer(g, "realisation_min", 0, 3)))
    dims = embedding["dimensions"]
    if dims is not None:
        dims = integer(embedding, "dimensions", 1)
    if primary["gate"] not in GATE_NAMES:
        raise Bad(f"'primary': gate {primary['gate']!r} is not one of {', '.join(GATE_NAMES)}")
    level = number(boot, "level")
    if not 0 < level < 1:
        raise Bad("'bootstrap': level must lie strictly between 0 and 1")
    return Ledger(string(assignment, "name", nonempty=True), string(adapter, "name", nonempty=True),
                  integer(obj, "retrieval_depth", 1), string(embedding, "name", nonempty=True), dims,
                  integer(kmeans, "k", 1), integer(kmeans, "seed", 0), tuple(gates),
                  string(primary, "judge", nonempty=True), primary["gate"], string(primary, "track", nonempty=True),
                  integer(boot, "resamples", 1), integer(boot, "seed", 0), level, integer(obj, "metric_version", 1), obj)


def parse_ledger(path: str, data: bytes) -> tuple[Ledger | None, list[Finding]]:
    findings: list[Finding] = []
    return read_document(path, data, findings, _ledger), findings
