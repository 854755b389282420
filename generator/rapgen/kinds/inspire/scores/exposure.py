"""E_i: what a unit's own searches returned, in order of first exposure (INSPIRE.md §2–§3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rapgen.kinds.inspire.archive import Call, canon


@dataclass(frozen=True)
class Exposure:
    """The canonical ids each call returned (calls in ``call_index`` order) and the
    unique ids by first exposure (call_index, then position)."""

    per_call: tuple[tuple[str, ...], ...]
    order: tuple[str, ...]

    @property
    def n_calls(self) -> int:
        return len(self.per_call)

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self.order)

    def first(self, n: int) -> frozenset[str]:
        """The first ``n`` unique ids by first exposure."""
        return frozenset(self.order[:n])

    def after_calls(self, n: int) -> frozenset[str]:
        """E(p) with ⌊p·n_i⌋ = ``n``: the ids the first ``n`` calls returned."""
        return frozenset(i for ids in self.per_call[:n] for i in ids)

    def progress(self, steps: int) -> tuple[frozenset[str], ...]:
        """E(p) for p = 0, 1/steps, …, 1, with ⌊p·n⌋ computed in integers."""
        return tuple(self.after_calls((k * self.n_calls) // steps) for k in range(steps + 1))


NO_EXPOSURE = Exposure((), ())


def exposure_of(calls: Sequence[Call]) -> Exposure:
    """E_i from one unit's calls (any order; sorted by ``call_index`` here). Malformed
    calls return nothing but still count as calls."""
    per_call = []
    order: list[str] = []
    seen: set[str] = set()
    for call in sorted(calls, key=lambda c: c.call_index):
        ids = tuple(c.key for c in map(canon, call.returned_ids) if c.canonical)
        per_call.append(ids)
        for i in ids:
            if i not in seen:
                seen.add(i)
                order.append(i)
    return Exposure(tuple(per_call), tuple(order))
