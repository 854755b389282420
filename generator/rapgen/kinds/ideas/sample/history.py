"""The sample's simulated release history (IDEAS.md §6, §8; KINDS.md §5), as a plan.

Release 1 holds the papers to 2024-12-31: cutoffs 2024-07 … 09 are resolved
(their futures end by then), every cutoff with complete history (2024-07 …
2025-01) has its episodes, and 2025-01 is open for Live forecasts. Each of
six monthly rolls ingests month M (``windows/<M>/``), resolves M − 3
(``cutoffs/<M−3>/futures.jsonl``) and opens M + 1
(``cutoffs/<M+1>/episodes.jsonl``, closing 14 days later). Three Live
cutoffs (2025-01 … 03) resolve before the end; 2025-04 … 07 stay open or
pending. ``simulated``: the dates are replayed, not lived.

This module only plans; cutting the releases (records, manifests, the hash
chain) is the shared history code's job once the kinds contract carries a
``HistorySpec`` (window 1 month, target 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from rapgen.archive import add_months

WINDOW_MONTHS, TARGET_MONTHS = 1, 4  # the HistorySpec of the kind (KINDS.md §5)
CLOSES_AFTER = timedelta(days=14)


@dataclass(frozen=True)
class PlannedRelease:
    release: int
    kind: str  # "initial" | "roll"
    date: date
    window: date | None  # the month a roll ingests
    resolved: tuple[date, ...]  # every resolved cutoff after this release
    opened: date | None  # the cutoff this release opens for Live forecasts
    closes: date | None
    episodes_for: tuple[date, ...]  # cutoffs whose episodes this release adds

    @property
    def files(self) -> tuple[str, ...]:
        """The benchmark files a roll adds (KINDS.md §5); release 1's are the base files."""
        if self.kind != "roll" or self.window is None:
            return ()
        m, r = self.window.isoformat(), self.resolved[-1].isoformat()
        return (f"archive/benchmark/windows/{m}/papers.parquet", f"archive/benchmark/windows/{m}/assignments.parquet",
                f"archive/benchmark/cutoffs/{self.opened.isoformat()}/episodes.jsonl", f"archive/benchmark/cutoffs/{r}/futures.jsonl")


def history_plan(first_cutoff: date = date(2024, 7, 1), data_end: date = date(2024, 12, 31), rolls: int = 6,
                 horizon_months: int = 3) -> list[PlannedRelease]:
    """Release 1 and ``rolls`` monthly rolls, each dated the first day after the data it holds."""
    open_cutoff = data_end + timedelta(days=1)  # the first month without data opens
    resolved = []
    t = first_cutoff
    while add_months(t, horizon_months + 1) <= open_cutoff:
        resolved.append(t)
        t = add_months(t, 1)
    episodes = []
    t = first_cutoff
    while t <= open_cutoff:
        episodes.append(t)
        t = add_months(t, 1)
    plan = [PlannedRelease(1, "initial", open_cutoff, None, tuple(resolved), open_cutoff, open_cutoff + CLOSES_AFTER, tuple(episodes))]
    for k in range(1, rolls + 1):
        window = add_months(open_cutoff, k - 1)
        opened = add_months(window, WINDOW_MONTHS)
        resolved.append(add_months(opened, -TARGET_MONTHS))
        plan.append(PlannedRelease(k + 1, "roll", opened, window, tuple(resolved), opened, opened + CLOSES_AFTER, (opened,)))
    return plan


def live_cutoffs(plan: list[PlannedRelease]) -> tuple[date, ...]:
    """Cutoffs that were open at some release and are resolved at the last: the Live track's."""
    final = set(plan[-1].resolved)
    return tuple(sorted({p.opened for p in plan if p.opened in final}))
