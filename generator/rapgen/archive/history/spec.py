"""What a benchmark kind's release history is made of (KINDS.md §5): :class:`HistorySpec`.

The history code (records, the hash chain, ``models`` and ``errata`` releases,
commitments, ``--release N``) is shared by every kind; a kind declares only its time
key's rhythm and the files a roll may add. A roll that ingests the window
[s, s + window) — s the previous open key — resolves s + window − target and opens
s + window, adding exactly the window's files, the files that open and resolve those
keys, and its own two release files.

File names are templates: ``{start}`` is the window's first day, ``{key}`` the
opened or resolved key (ISO dates), ``{model}`` a model id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from rapgen.archive.layout import ORIGIN_FILES, REGIMES, SEARCH_DIR, WINDOW_FILES, WINDOWS_DIR


@dataclass(frozen=True)
class WindowFiles:
    """One window's two tables on disk: its first day and the papers and assignments files."""

    start: date
    papers: Path
    assignments: Path


@dataclass(frozen=True)
class HistoryHooks:
    """How a kind other than RAP builds the files a release adds (the release operations call them;
    RAP's are built in). Each returns archive path -> bytes, or raises a ``RapgenError`` naming the
    file and the problem.

    - ``initial(root)``: release 1's resolved keys (ascending) of a format-1 root;
    - ``window(root, folder, start, end, windows)``: the canonical bytes of the window [start, end)
      read from ``folder`` (its papers and assignments), checked against the root and ``windows``;
    - ``opened(root, key, windows)``: the files that open ``key`` (``windows``: every window listed,
      the staged one included);
    - ``resolved(root, key, windows)``: the files that resolve ``key``."""

    initial: Callable[[Path], tuple[date, ...]]
    window: Callable[[Path, Path, date, date, Sequence[WindowFiles]], Mapping[str, bytes]]
    opened: Callable[[Path, date, Sequence[WindowFiles]], Mapping[str, bytes]]
    resolved: Callable[[Path, date, Sequence[WindowFiles]], Mapping[str, bytes]]


@dataclass(frozen=True)
class HistorySpec:
    """A kind's release rhythm. ``rolls=False``: only ``initial``, ``models`` and ``errata``
    releases (no window, no open key)."""

    window_months: int
    target_months: int | None  # None: the window itself (a roll resolves the key it ingests)
    window_files: tuple[str, ...]  # under archive/, with {start}
    opened_files: tuple[str, ...]  # added by the roll that opens {key}
    resolved_files: tuple[str, ...] = ()  # added by the roll that resolves {key}
    reveal_files: tuple[str, ...] = ()  # a model's files for one later key, with {model} and {key}
    rolls: bool = True
    hooks: HistoryHooks | None = field(default=None, repr=False, compare=False)  # None: RAP's built-in operations

    @property
    def answer_months(self) -> int:
        """Months from a key until its answers are known (the target; RAP: the window)."""
        return self.target_months if self.target_months is not None else self.window_months

    def window_paths(self, start: date) -> tuple[str, ...]:
        return tuple(p.format(start=start.isoformat()) for p in self.window_files)

    def opened_paths(self, key: date) -> tuple[str, ...]:
        return tuple(p.format(key=key.isoformat()) for p in self.opened_files)

    def resolved_paths(self, key: date) -> tuple[str, ...]:
        return tuple(p.format(key=key.isoformat()) for p in self.resolved_files)

    def reveal_paths(self, model_id: str, key: date) -> tuple[str, ...]:
        return tuple(p.format(model=model_id, key=key.isoformat()) for p in self.reveal_files)


# RAP (RELEASES.md): six-month windows whose target is the window itself, so a roll resolves
# the origin it ingests and opens the next; no file marks a resolved origin. An archive's
# origins.json may set another window_months; the history checks read that value.
RAP_HISTORY = HistorySpec(
    window_months=6,
    target_months=None,
    window_files=tuple(f"{WINDOWS_DIR}/{{start}}/{name}" for name in WINDOW_FILES),
    opened_files=tuple(f"{SEARCH_DIR}/{{key}}/manifest_{regime}.jsonl" for regime in REGIMES),
    reveal_files=tuple(f"archive/models/{{model}}/origins/{{key}}/{name}" for name in ORIGIN_FILES),
)
