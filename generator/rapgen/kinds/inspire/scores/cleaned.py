"""The cleaned ranked list S_i of a unit and the outcome of each of its slots (INSPIRE.md §2).

Every submitted string keeps a slot unless it repeats an earlier key: canon()
drops a version suffix, a string that is no arXiv id is its own (malformed) key,
later copies of a key are dropped so the list shortens, and the list is then cut
at K. A slot scores only when its id is canonical, labelled and was returned by
the unit's own searches; every other slot stays in place at zero and is counted
under exactly one outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Callable, Mapping, Sequence

from rapgen.kinds.inspire.archive import canon

# A slot's outcome, first match wins.
OUTCOMES: tuple[str, ...] = ("malformed", "unknown", "post_cutoff", "unsurfaced", "unlabelled", "scored")


@dataclass(frozen=True)
class CleanedList:
    """S_i: the slot keys in order, which of them are canonical ids, and what cleaning did."""

    keys: tuple[str, ...]
    canonical: tuple[bool, ...]
    n_submitted: int  # strings in the submitted ranking
    n_versioned: int  # version suffixes dropped (before de-duplication)
    n_duplicate: int  # later copies of a key, dropped
    n_over_limit: int  # slots past K after de-duplication, dropped

    @property
    def support(self) -> frozenset[str]:
        """S̄_i: the canonical ids of the list, unordered."""
        return frozenset(k for k, c in zip(self.keys, self.canonical) if c)


EMPTY = CleanedList((), (), 0, 0, 0, 0)


def clean_ranking(submitted: Sequence[str], K: int) -> CleanedList:
    """S_i from the submitted strings (a failed unit passes none)."""
    keys: list[str] = []
    canonical: list[bool] = []
    seen: set[str] = set()
    versioned = duplicate = 0
    for raw in submitted:
        c = canon(raw)
        versioned += c.versioned
        if c.key in seen:
            duplicate += 1
            continue
        seen.add(c.key)
        keys.append(c.key)
        canonical.append(c.canonical)
    over = max(0, len(keys) - K)
    return CleanedList(tuple(keys[:K]), tuple(canonical[:K]), len(submitted), versioned, duplicate, over)


def slot_outcomes(cleaned: CleanedList, labels: Mapping[str, float], exposed: frozenset[str],
                  date_of: Callable[[str], date | None], cutoff: date) -> tuple[str, ...]:
    """Each slot's outcome: ``malformed`` (no arXiv id), ``unknown`` (not a corpus
    paper), ``post_cutoff`` (dated on or after the cutoff), ``unsurfaced`` (never
    returned by the unit's searches), ``unlabelled`` (returned, not in Y_i) or
    ``scored``. ``labels``: Y_i's gains (> 0); ``date_of``: a corpus paper's date."""
    out = []
    for key, is_id in zip(cleaned.keys, cleaned.canonical):
        when = date_of(key) if is_id else None
        if not is_id:
            out.append("malformed")
        elif when is None:
            out.append("unknown")
        elif when >= cutoff:
            out.append("post_cutoff")
        elif key not in exposed:
            out.append("unsurfaced")
        elif key not in labels:
            out.append("unlabelled")
        else:
            out.append("scored")
    return tuple(out)


def slot_gains(cleaned: CleanedList, labels: Mapping[str, float], exposed: frozenset[str]) -> tuple[float, ...]:
    """g_i(s) per slot: the label's gain iff s is canonical, in Y_i and in E_i; else 0."""
    return tuple(labels.get(k, 0.0) if c and k in exposed else 0.0 for k, c in zip(cleaned.keys, cleaned.canonical))
