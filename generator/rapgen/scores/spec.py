"""The scoring side of a benchmark kind (KINDS.md §3, §4): metrics, tracks, axes, clusters, the headline.

Frozen declarations only; a kind lists them and the scoring code reads them, so a
name, label or direction is written once. ``rapgen.kinds.base`` re-exports them.

- A **metric** is a per-item value (``fn``) reduced either as a ``mean`` of the defined
  item values or as a ``ratio`` of summed numerators and denominators. ``missing``
  says what an invalid unit counts as: ``exclude`` (left out, counted) or ``zero``.
- A **track** is a mask over items (``item_mask``) and over entries (``participates``):
  every track shares one draw matrix, so differences between tracks are paired.
- An **axis** is a further key of every score row with a fixed set of values (RAP's
  counting policy; Ideas' judge and gate).
- A **cluster** is what the bootstrap resamples (``of_item``: item -> cluster id); the
  ``primary`` one gives the intervals, the others are sensitivities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMS: tuple[str, ...] = ("mean", "ratio")
MISSING: tuple[str, ...] = ("exclude", "zero")


@dataclass(frozen=True)
class MetricSpec:
    """A score column. ``higher_is_better`` is None for a descriptive metric (never ranked);
    ``fn`` takes the kind's per-item inputs and returns one value per item (NaN: undefined).
    ``scope`` is a kind-defined tag naming the entries the metric applies to ("all" for every
    entry; RAP uses "forecast" and "state"). ``ranked=False`` keeps a metric that has a
    direction out of the ranks (Ideas' soft score and coverage)."""

    name: str
    label: str
    higher_is_better: bool | None
    form: str
    missing: str
    description: str
    fn: Callable[[Any], Any] = field(repr=False, compare=False)
    scope: str = "all"
    ranked: bool = True

    @property
    def rank_direction(self) -> bool | None:
        """The direction ranks use: None for a descriptive or unranked metric."""
        return self.higher_is_better if self.ranked else None

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"metric {self.name!r}: form must be one of {', '.join(FORMS)}, found {self.form!r}")
        if self.missing not in MISSING:
            raise ValueError(f"metric {self.name!r}: missing must be one of {', '.join(MISSING)}, found {self.missing!r}")


@dataclass(frozen=True)
class TrackSpec:
    """A track: ``item_mask(release, items) -> bool per item`` and ``participates(release, entry) -> bool``
    (None: every item, every entry)."""

    name: str
    label: str
    item_mask: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    participates: Callable[..., bool] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class AxisSpec:
    """A key of every score row with fixed ``values``; ``primary`` is the headline's value.
    An *open* axis has no fixed values (``values=()``, ``primary=None``): each archive names
    them and its headline value (Ideas' judges, from judges.jsonl and the ledger)."""

    name: str
    values: tuple[str, ...]
    primary: str | None

    @property
    def open(self) -> bool:
        return not self.values

    def __post_init__(self) -> None:
        if self.open and self.primary is None:
            return
        if self.primary not in self.values:
            raise ValueError(f"axis {self.name!r}: primary {self.primary!r} is not one of {', '.join(self.values)}")


@dataclass(frozen=True)
class ClusterSpec:
    """A resampling unit: ``of_item(item) -> cluster id``; ``primary`` gives the intervals."""

    name: str
    of_item: Callable[[Any], str] = field(repr=False, compare=False)
    primary: bool = False


@dataclass(frozen=True)
class Primary:
    """The headline cell: ``metric`` on ``track`` at the given value of each axis
    (``axes``: (axis, value) pairs), for entries under ``condition`` (None: a kind whose
    entries have no conditions)."""

    metric: str
    track: str
    axes: tuple[tuple[str, str], ...] = ()
    condition: str | None = None

    def axis(self, name: str) -> str:
        for axis, value in self.axes:
            if axis == name:
                return value
        raise KeyError(f"the headline has no axis {name!r} (axes: {', '.join(a for a, _ in self.axes) or 'none'})")
