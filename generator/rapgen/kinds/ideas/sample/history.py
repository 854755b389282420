"""The sample's simulated release history (IDEAS.md §6, §8; KINDS.md §5), as a plan.

Release 1 holds the papers to 2024-12-31: cutoffs 2024-07 … 09 are resolved
(their futures end by then), every cutoff with complete history (2024-07 …
2025-01) has its episodes, and 2025-01 is open for Live forecasts. Each of
six monthly rolls ingests month M (``windows/<M>/``), resolves M − 3
(``cutoffs/<M−3>/futures.jsonl``) and opens M + 1
(``cutoffs/<M+1>/episodes.jsonl``, closing 14 days later). Three Live
cutoffs (2025-01 … 03) resolve before the end; 2025-04 … 07 stay open or
pending. ``simulated``: the dates are replayed, not lived.

Between the rolls, ``models`` releases carry what submissions would add
(:func:`cut_history`): on each Live deadline the forecasts for the open cutoff
(one model submits openly, the other seals a commitment) and, on the first
one, both models' units of the cutoffs between the release-1 cutoffs and the
first Live one (not Live: their cutoffs had passed); after each roll, the
evaluator folders (and ``features.parquet``) of the cutoff it resolved and
the sealed entry's reveal.

The builder cuts them with :class:`rapgen.archive.MemoryHistory`: the bytes
``rapgen release start|roll|cut`` would write, assembled in memory, so the
sample builds without verifying the archive after every release (the
builder's caller verifies once; a test replays the commands on a copy and
compares).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from rapgen.archive import Commitment, OpenOrigin, add_months, commitment_path, default_open, format_commitment, sha256_bytes
from rapgen.kinds.ideas.archive.assignment import Assignment
from rapgen.kinds.ideas.archive.config import Config
from rapgen.kinds.ideas.archive.history import cutoff_files, window_bytes, window_paths, window_rows
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.topics import Topic

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


OPEN_SUBMITTER = "recent-titles"  # submits its Live forecasts openly; every other model seals them
KIT = "rapgen sample build"  # the commitments' kit (fixed, so the sample's bytes do not follow the version)
UnitFiles = Mapping[str, Mapping[str, bytes]]  # model id -> {path under models/<id>/ -> bytes} of one cutoff


def _between(last: date, until: date) -> list[date]:
    """The cutoffs after ``last`` up to ``until``, as ``release start`` opens them."""
    out, key = [], add_months(last, WINDOW_MONTHS)
    while key <= until:
        out.append(key)
        key = add_months(key, WINDOW_MONTHS)
    return out


def _model_files(units: Mapping[date, UnitFiles], cutoff: date, names: tuple[str, ...] | None) -> dict[str, bytes]:
    """Archive paths -> bytes of every model's files of ``cutoff`` (only ``names`` if given)."""
    return {f"archive/models/{m}/{p}": b for m, files in sorted(units[cutoff].items()) for p, b in sorted(files.items())
            if names is None or p.rsplit("/", 1)[-1] in names}


def _live_entries(units: Mapping[date, UnitFiles], cutoff: date) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(files merged before the deadline, files revealed once the cutoff resolves) of one Live cutoff."""
    now, later = {}, {}
    for model_id, files in sorted(units[cutoff].items()):
        mine = {f"archive/models/{model_id}/{p}": b for p, b in files.items() if p.rsplit("/", 1)[-1] in SUBMITTED}
        if model_id == OPEN_SUBMITTER:
            now.update(mine)
            continue
        predictions = files[f"origins/{cutoff.isoformat()}/predictions.jsonl"]
        now[commitment_path(cutoff, model_id)] = format_commitment(Commitment(model_id, cutoff, sha256_bytes(predictions), None, KIT))
        later.update(mine)
    return now, later


SUBMITTED = ("predictions.jsonl", "raw.jsonl")  # what a model submits; the evaluator adds the rest once the cutoff resolves


class Releases(Protocol):
    """What :func:`cut_history` drives: :class:`~rapgen.archive.MemoryHistory` (the sample), or the
    commands on a folder (the test that compares the two)."""

    files: Mapping[str, bytes] | Collection[str]  # the paths the root lists

    def start(self, *, when: date, resolved: tuple[date, ...], opened: OpenOrigin | None, added: Mapping[str, bytes],
              simulated: bool, notes: str) -> object: ...

    def merge(self, files: Mapping[str, bytes]) -> None: ...

    def cut_models(self, *, when: date, notes: str) -> object: ...

    def roll(self, *, when: date, target: date, opened: OpenOrigin | None, added: Mapping[str, bytes], notes: str) -> object: ...


def cut_history(history: Releases, plan: list[PlannedRelease], config: Config, topics: Sequence[Topic],
                base_rows: Sequence[Assignment], later_papers: Mapping[str, Paper], units: Mapping[date, UnitFiles]) -> None:
    """Cut the sample's releases, following ``plan``, on ``history`` (holding release 1's format-1 files;
    ``config``: their config.json). ``later_papers``: the papers the rolls ingest; ``units``: every later
    cutoff's model files (predictions, raw, features, evaluator folders) by cutoff and model."""
    first = plan[0]
    rows = list(base_rows)
    added = {}
    for key in _between(config.cutoffs[-1], first.opened):
        added.update(cutoff_files(rows, topics, config, key, False))
    history.start(when=first.date, resolved=tuple(config.cutoffs), opened=default_open(first.opened), added=added, simulated=True,
                  notes=f"papers to {first.date - timedelta(days=1)}; cutoffs {', '.join(c.isoformat() for c in config.cutoffs)} "
                        "resolved; a replayed history")
    live = set(live_cutoffs(plan))
    sealed: dict[date, dict[str, bytes]] = {}  # Live cutoff -> the sealed forecasts, revealed once it resolves
    earlier = [c for c in sorted(units) if c < first.opened]  # cutoffs already past when the history starts
    merged: dict[str, bytes] = {}
    for c in earlier:
        merged.update(_model_files(units, c, SUBMITTED))
    what = [f"units of {', '.join(c.isoformat() for c in earlier)} added"] if earlier else []
    for step in plan:
        if step.release > 1:
            month, target = step.window, step.resolved[-1]
            chosen, window = window_rows(later_papers, month, topics)
            rows.extend(window)
            added = dict(zip(window_paths(month), window_bytes(chosen, window)))
            added.update(cutoff_files(rows, topics, config, target, True))
            added.update(cutoff_files(rows, topics, config, step.opened, False))
            history.roll(when=step.date, target=target, opened=default_open(step.opened), added=added,
                         notes=f"window {month} ingested; {target} resolved")
            merged = sealed.pop(target, {})
            what = [f"sealed forecasts for {target} revealed"] if merged else []
            merged.update({p: b for p, b in _model_files(units, target, None).items() if p not in history.files and p not in merged})
            what.insert(0, f"evaluator files for {target}")
        if step.opened in live:
            now, sealed[step.opened] = _live_entries(units, step.opened)
            merged.update(now)
            what.append(f"Live forecasts for {step.opened} received (one open, one sealed)")
        history.merge(merged)
        history.cut_models(when=step.closes, notes="; ".join(what))
