"""Gates and greedy credit (IDEAS.md §5).

A judged candidate passes a gate iff P + M ≥ ``problem_method_min`` and
S ≥ ``realisation_min`` (``default``: 5 and 2; ``strict``: 5 and 3, i.e.
S = 3); a ``failed`` judgment (P, M, S null) passes no gate and is counted.

Credit is greedy in rank order, not a maximum matching: for r = 1 … top_k an
unfilled slot gets c_r = 0; otherwise the first passing candidate, in
``cand_rank`` order, that no earlier idea has taken gives c_r = 1 and is
taken. One credit per idea, one per paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapgen.kinds.ideas.archive.config import Gate

DEFAULT = Gate("default", 5, 2)
STRICT = Gate("strict", 5, 3)


@dataclass(frozen=True)
class Judged:
    """One candidate of an idea as judged: its paper and P, M, S (None for a failed judgment)."""

    cand_rank: int
    arxiv_id: str
    P: int | None
    M: int | None
    S: int | None

    @property
    def failed(self) -> bool:
        return self.P is None or self.M is None or self.S is None


def passes(j: Judged, gate: Gate) -> bool:
    if j.failed:
        return False
    return j.P + j.M >= gate.problem_method_min and j.S >= gate.realisation_min  # type: ignore[operator]


@dataclass(frozen=True)
class Credit:
    """The credit vector c_1 … c_top_k and, per credited rank, the candidate that earned it."""

    c: tuple[int, ...]
    credited: Mapping[int, Judged]  # rank -> candidate
    passing: Mapping[int, int]  # rank -> passing candidates (every emitted idea)


def greedy_credit(ideas: Mapping[int, Sequence[Judged]], top_k: int, gate: Gate) -> Credit:
    """``ideas``: emitted rank -> its judged candidates (any order; visited by ``cand_rank``)."""
    taken: set[str] = set()
    c = [0] * top_k
    credited: dict[int, Judged] = {}
    passing: dict[int, int] = {}
    for r in range(1, top_k + 1):
        if r not in ideas:
            continue
        ok = [j for j in sorted(ideas[r], key=lambda j: j.cand_rank) if passes(j, gate)]
        passing[r] = len(ok)
        for j in ok:
            if j.arxiv_id not in taken:
                taken.add(j.arxiv_id)
                c[r - 1] = 1
                credited[r] = j
                break
    return Credit(tuple(c), credited, passing)
