"""``models/<id>/predictions.jsonl`` of an Ideas archive (IDEAS.md §3).

One line per idea — ``episode_id``, ``condition`` (the strategy), ``rank``
(1 … top_k, contiguous), ``title`` (non-empty), ``rationale``, ``approach``,
``key_terms``, ``raw_sha256`` — or one line
``{"episode_id", "condition", "rank": null, "status": "empty"}`` for an
episode a strategy left empty. Malformed, each one finding with its line: an
unknown or missing key, an episode the file does not cover, a rank over
``top_k``, a duplicate (episode, condition, rank), ranks with a gap, an empty
line beside ideas, a claimed condition missing an episode. Duplicate titles
within an episode and repeats from the previous cutoff are *reported*, never
removed (the paper treats them as diagnostics).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from rapgen.archive import Finding, ProblemKind, add_months
from rapgen.kinds.ideas.archive.episodes import Episode
from rapgen.kinds.ideas.archive.lines import Bad, digest, integer, keys, malformed, read_lines, shown, string, strings
from rapgen.kinds.ideas.archive.normalise import norm

IDEA_KEYS = ("episode_id", "condition", "rank", "title", "rationale", "approach", "key_terms", "raw_sha256")
EMPTY_KEYS = ("episode_id", "condition", "rank", "status")
IDEA_FIELDS = ("title", "rationale", "approach", "key_terms")  # what the evaluator sees (and hashes)
CONDITION = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
STRATEGIES = ("summary", "memory", "retrieval", "topic_trend", "direct", "mdf")  # the paper's; others are allowed


@dataclass(frozen=True)
class Idea:
    episode_id: str
    condition: str
    rank: int
    title: str
    rationale: str
    approach: str
    key_terms: tuple[str, ...]
    raw_sha256: str | None
    line: int = 0

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.episode_id, self.condition, self.rank)

    def fields(self) -> dict:
        """The JSON object the cache key's ``pred`` digest hashes, keys in IDEAS.md §4's order."""
        return {"title": self.title, "rationale": self.rationale, "approach": self.approach, "key_terms": list(self.key_terms)}


@dataclass(frozen=True)
class Empty:
    episode_id: str
    condition: str
    line: int


@dataclass
class Predictions:
    """A parsed predictions file: each unit (episode, condition) is ideas by rank, or empty."""

    ideas: dict[tuple[str, str], tuple[Idea, ...]] = field(default_factory=dict)
    empty: dict[tuple[str, str], int] = field(default_factory=dict)  # unit -> its line
    conditions: tuple[str, ...] = ()
    duplicate_titles: list[tuple[str, str, str]] = field(default_factory=list)  # (episode, condition, title)
    repeats: list[tuple[str, str, str]] = field(default_factory=list)  # (episode, condition, title) as at the cutoff before

    def all_ideas(self) -> list[Idea]:
        return [i for unit in sorted(self.ideas) for i in self.ideas[unit]]


def _line(obj: dict, _n: int, episodes: Mapping[str, Episode], top_k: int) -> Idea | Empty:
    if "status" in obj:
        keys(obj, EMPTY_KEYS)
        if obj["status"] != "empty":
            raise Bad(f"'status' must be \"empty\" (an idea line has no status), found {shown(obj['status'])}")
        if obj["rank"] is not None:
            raise Bad("an empty episode's line has \"rank\": null")
    else:
        keys(obj, IDEA_KEYS)
    eid = string(obj, "episode_id")
    if eid not in episodes:
        raise Bad(f"episode_id {shown(eid)} is not an episode of this file's cutoffs", ProblemKind.COVERAGE)
    condition = string(obj, "condition", pattern=CONDITION)
    if "status" in obj:
        return Empty(eid, condition, _n)
    rank = integer(obj, "rank", 1)
    if rank > top_k:
        raise Bad(f"rank {rank}: more than top_k = {top_k} ideas for {eid} {condition}")
    return Idea(eid, condition, rank, string(obj, "title", nonempty=True), string(obj, "rationale"), string(obj, "approach"),
                strings(obj, "key_terms"), digest(obj, "raw_sha256", nullable=True), _n)


def parse_predictions(path: str, data: bytes, episodes: Mapping[str, Episode], top_k: int) -> tuple[Predictions, list[Finding]]:
    """Parse and check one predictions file against the episodes of its cutoffs."""
    findings: list[Finding] = []
    by_unit: dict[tuple[str, str], dict[int, Idea]] = defaultdict(dict)
    empty: dict[tuple[str, str], int] = {}
    order: dict[str, None] = {}
    bad: set[tuple[object, object]] = set()  # units with a malformed line: no gap or coverage finding on top

    def build(obj: dict, n: int) -> Idea | Empty:
        try:
            return _line(obj, n, episodes, top_k)
        except Bad:
            bad.add((obj.get("episode_id"), obj.get("condition")))
            raise

    for line, rec in read_lines(path, data, findings, build):
        unit = (rec.episode_id, rec.condition)
        order.setdefault(rec.condition)
        if isinstance(rec, Empty):
            if unit in empty or unit in by_unit:
                first = empty.get(unit) or min(i.line for i in by_unit[unit].values())
                findings.append(malformed(path, line, f"{unit[0]} {unit[1]}: an empty line beside another line of the episode (line {first})",
                                          ProblemKind.DUPLICATE_UNIT))
                continue
            empty[unit] = line
            continue
        if unit in empty:
            findings.append(malformed(path, line, f"{unit[0]} {unit[1]}: an idea beside the episode's empty line (line {empty[unit]})",
                                      ProblemKind.DUPLICATE_UNIT))
            continue
        if rec.rank in by_unit[unit]:
            findings.append(malformed(path, line, f"{unit[0]} {unit[1]} rank {rec.rank} is there twice (first on line {by_unit[unit][rec.rank].line})",
                                      ProblemKind.DUPLICATE_UNIT))
            continue
        by_unit[unit][rec.rank] = rec
    out = Predictions(empty=empty, conditions=tuple(order))
    for unit, ranks in by_unit.items():
        ideas = tuple(ranks[r] for r in sorted(ranks))
        if unit not in bad and [i.rank for i in ideas] != list(range(1, len(ideas) + 1)):
            gap = next(r for r in range(1, len(ideas) + 2) if r not in ranks)
            findings.append(malformed(path, ideas[-1].line, f"{unit[0]} {unit[1]}: ranks {', '.join(str(i.rank) for i in ideas)} skip rank {gap} (ranks run 1, 2, … without a gap)"))
        out.ideas[unit] = ideas
    findings.extend(_coverage(path, out, episodes, bad))
    _audit(out, episodes)
    return out, findings


def _coverage(path: str, p: Predictions, episodes: Mapping[str, Episode], bad: set) -> list[Finding]:
    """A claimed condition covers every episode of the file (an idea line or an empty line each)."""
    out = []
    for condition in p.conditions:
        missing = [e for e in episodes if (e, condition) not in p.ideas and (e, condition) not in p.empty and (e, condition) not in bad]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            out.append(malformed(path, None, f"condition {condition} misses episode {missing[0]}{more}: a claimed condition covers every episode "
                                             "(an empty episode is one line with \"status\": \"empty\")", ProblemKind.COVERAGE))
    return out


def _audit(p: Predictions, episodes: Mapping[str, Episode]) -> None:
    """Duplicate titles within a unit; titles repeated from the same topic's previous cutoff."""
    titles = {unit: [norm(i.title) for i in ideas] for unit, ideas in p.ideas.items()}
    by_cell = {(episodes[e].topic_id, episodes[e].cutoff, c): set(t) for (e, c), t in titles.items()}
    for (e, c), ideas in sorted(p.ideas.items()):
        seen: set[str] = set()
        ep = episodes[e]
        before = by_cell.get((ep.topic_id, add_months(ep.cutoff, -1), c), set())
        for idea, t in zip(ideas, titles[(e, c)]):
            if t in seen:
                p.duplicate_titles.append((e, c, idea.title))
            seen.add(t)
            if t in before:
                p.repeats.append((e, c, idea.title))
