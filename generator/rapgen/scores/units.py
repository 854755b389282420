"""Entries and the unit table (SCORING.md §2): every (entry, condition, policy,
field, origin) with its prediction and its metric values, as dense arrays.

Axis order everywhere: entry E, policy P, metric M, field F, origin O, slot 8.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np

from rapgen.archive import SLOTS, STATE_CONDITIONS, Archive, ModelInfo
from rapgen.errors import ScoringError
from rapgen.scores.baselines import BASELINES
from rapgen.scores.metrics import METRIC_NAMES, REGISTRY, UnitInputs, applies
from rapgen.scores.schema import BASELINE_CONDITION

MODEL = "model"
BASELINE = "baseline"


@dataclass(frozen=True)
class Entry:
    """One leaderboard entry-condition: a model under one condition, or a baseline."""

    entry: str
    kind: str  # "model" or "baseline"
    condition: str  # A0..A4, or BASE
    cutoff: date | None = None  # a model's effective cutoff

    @property
    def is_state(self) -> bool:
        return self.condition in STATE_CONDITIONS

    def metrics(self) -> tuple[str, ...]:
        """The §2 metric names this entry is scored on, in output order."""
        return tuple(name for name, spec in REGISTRY.items() if applies(spec, self.is_state))


@dataclass
class ModelUnits:
    """All models' predictions: ``weights[e, f, o, slot]`` (NaN if invalid)."""

    entries: list[Entry]
    weights: np.ndarray  # (Em, F, O, 8)
    valid: np.ndarray  # (Em, F, O) bool
    reasons: np.ndarray  # (Em, F, O) object: reason string ('' when valid)
    covered: np.ndarray | None = None  # (Em, O) bool: the entry has units at the origin (None: every origin)


def read_model_units(archive: Archive, field_ids: list[str], origins: tuple[date, ...], skip: frozenset[str] = frozenset(),
                     cutoffs: Mapping[str, date | None] | None = None, *, partial: bool = False,
                     keep: Callable[[str, date], bool] | None = None) -> ModelUnits:
    """Read every model's predictions; the conditions a model has come from its lines.
    ``skip``: models left out (panel models); ``cutoffs``: model -> c_eff where it is not
    the plain cut-off (INTERVENTIONS.md §4, ``cutoff_precision``).

    ``partial`` (an archive with a history): a condition may lack whole origins (coverage is
    per origin, RELEASES.md), and units of origins outside ``origins`` (not resolved in the
    release scored) are left out; ``covered`` then says which origins each entry has.
    ``keep(model_id, origin)``: False for units the release scored did not list."""
    field_index = {f: i for i, f in enumerate(field_ids)}
    origin_index = {o: i for i, o in enumerate(origins)}
    entries: list[Entry] = []
    blocks_w, blocks_v, blocks_r, blocks_c = [], [], [], []
    infos: list[ModelInfo] = [info for info in archive.models if info.model_id not in skip]
    cutoffs = cutoffs or {}
    for info in infos:
        # Format 2: units of origins after the last one scored here (later releases) wait for their release.
        units = [u for u in archive.predictions(info.model_id) if not origins or u.origin <= origins[-1]]
        if partial:
            units = [u for u in units if u.origin in origin_index and (keep is None or keep(info.model_id, u.origin))]
        by_condition: dict[str, list] = {}
        for unit in units:
            by_condition.setdefault(unit.condition, []).append(unit)
        for condition in sorted(by_condition):
            w = np.full((len(field_ids), len(origins), len(SLOTS)), np.nan)
            v = np.zeros((len(field_ids), len(origins)), dtype=bool)
            r = np.full((len(field_ids), len(origins)), "", dtype=object)
            seen = np.zeros_like(v)
            valid_at: list[tuple[int, int]] = []
            valid_w: list[tuple[float, ...]] = []
            for unit in by_condition[condition]:
                fi = field_index.get(unit.field_id)
                oi = origin_index.get(unit.origin)
                if fi is None or oi is None:
                    raise ScoringError(
                        f"archive/models/{info.model_id}/predictions.jsonl:{unit.line}: "
                        f"unit {unit.field_id} {unit.origin} is not an episode of this archive"
                    )
                seen[fi, oi] = True
                if unit.valid:
                    if unit.weights is None or len(unit.weights) != len(SLOTS):
                        raise ScoringError(f"archive/models/{info.model_id}/predictions.jsonl:{unit.line}: a valid unit must carry eight weights")
                    valid_at.append((fi, oi))
                    valid_w.append(unit.weights)
                else:
                    r[fi, oi] = unit.reason or "invalid"
            if valid_at:
                at = np.array(valid_at, dtype=np.int64)
                w[at[:, 0], at[:, 1]] = np.array(valid_w, dtype=np.float64)
                v[at[:, 0], at[:, 1]] = True
            whole = seen.all(axis=0) | (partial & ~seen.any(axis=0))
            if not whole.all():
                fi, oi = np.argwhere(~seen & ~whole[None, :])[0]
                raise ScoringError(
                    f"archive/models/{info.model_id}/predictions.jsonl: condition {condition} does not cover "
                    f"{field_ids[fi]} {origins[oi]} ({int((~seen).sum())} episodes missing)"
                )
            entries.append(Entry(info.model_id, MODEL, condition, cutoffs.get(info.model_id, info.effective_cutoff)))
            blocks_w.append(w)
            blocks_v.append(v)
            blocks_r.append(r)
            blocks_c.append(seen.all(axis=0))
    shape = (0, len(field_ids), len(origins))
    return ModelUnits(
        entries,
        np.stack(blocks_w) if blocks_w else np.zeros(shape + (len(SLOTS),)),
        np.stack(blocks_v) if blocks_v else np.zeros(shape, dtype=bool),
        np.stack(blocks_r) if blocks_r else np.zeros(shape, dtype=object),
        np.stack(blocks_c) if blocks_c else np.zeros((0, len(origins)), dtype=bool),
    )


def baseline_entries() -> list[Entry]:
    return [Entry(name, BASELINE, BASELINE_CONDITION) for name in BASELINES]


def compute_unit_values(entries: list[Entry], predictions: np.ndarray, y: np.ndarray, x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``values[E, P, M, F, O]`` for the §2 metrics (NaN: undefined, invalid or not applicable).

    ``predictions`` is (E, P, F, O, 8); ``y``, ``x``, ``e`` are (P, F, O, 8).
    """
    units = UnitInputs(predictions, y[None], x[None], e[None])
    E, P, F, O = predictions.shape[:4]
    values = np.full((E, P, len(METRIC_NAMES), F, O), np.nan)
    state = np.array([entry.is_state for entry in entries], dtype=bool)
    for m, spec in enumerate(REGISTRY.values()):
        scored = np.array([applies(spec, bool(s)) for s in state], dtype=bool)[:, None, None, None]
        values[:, :, m] = np.where(scored, spec.fn(units), np.nan)
    return values
