"""The named steps of ``compute_scores`` (SCORING.md §1-§5), each a function over
frozen records: frame -> count -> compose -> unit values -> tracks -> statistics
-> intervals. The pipeline calls them in this order; tables.py turns their
results into the score files.

Axis letters as in units.py: entry E, policy P, metric M, field F, origin O,
slot 8; a *statistic* is a vector of field scores over all F fields.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Callable

import numpy as np

from rapgen.archive import SLOTS, Archive
from rapgen.errors import ScoringError
from rapgen.scores.aggregate import Contrast, build_contrasts
from rapgen.scores.baselines import BASELINES, compute_baselines
from rapgen.scores.bootstrap import bootstrap_intervals, draw_counts, unit_sums
from rapgen.scores.counts import Windows, build_windows, compositions, compute_counts
from rapgen.scores.kernels import mean_over, single_threaded_blas
from rapgen.scores.metrics import METRIC_NAMES, contrast_difference
from rapgen.scores.ranking import RANKED_METRICS
from rapgen.scores.schema import ALL_ORIGIN_TRACK, FORECAST_STRICT_TRACK, TRACKS
from rapgen.scores.units import BASELINE, Entry, ModelUnits, baseline_entries, compute_unit_values, read_model_units

UNIT_KINDS: tuple[str, ...] = ("block", "field")  # primary, then the field-clustered sensitivity
M_INDEX = {m: i for i, m in enumerate(METRIC_NAMES)}
# (split, unit kind) -> (unit ids in byte order, the unit index of each of the split's fields)
ResamplingUnits = dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray]]


@dataclass(frozen=True)
class Frame:
    """The archive's episodes: fields (with split and block), origins, splits."""

    field_ids: list[str]
    field_split: np.ndarray  # (F,) split name
    field_block: np.ndarray  # (F,) block id
    origins: tuple[date, ...]
    strict_origin: date
    window_months: int
    history_windows: int
    splits: list[str]


@dataclass(frozen=True)
class Counted:
    """§1 exact counts, the §5 count matrices, and the models' predictions."""

    windows: Windows
    counts: np.ndarray  # (P, F, W, 8)
    units_of: ResamplingUnits
    draws: dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray]]  # (split, kind) -> (unit ids, C (R, K))
    models: ModelUnits


@dataclass(frozen=True)
class Composed:
    """§1 compositions and the §3 baselines."""

    comps: np.ndarray  # (P, F, W, 8)
    y: np.ndarray  # (P, F, O, 8) target
    x: np.ndarray  # (P, F, O, 8) recent window
    baselines: np.ndarray  # (6, P, F, O, 8)
    ewma: np.ndarray  # (P, F, O, 8)


@dataclass(frozen=True)
class UnitValues:
    """§2 per-unit predictions and metric values of every entry (models, then baselines)."""

    entries: list[Entry]
    n_models: int  # model entries come first
    predictions: np.ndarray  # (E, P, F, O, 8)
    values: np.ndarray  # (E, P, M, F, O)
    baseline_ok: np.ndarray  # (6, P, F, O) a baseline has all its history windows


@dataclass(frozen=True)
class Tracks:
    """§4 tracks, participation, applicable metrics and the paired contrasts' unit values."""

    origins: dict[str, np.ndarray]  # track -> origin indices
    participates: dict[str, np.ndarray]  # track -> (E,) bool
    applicable: np.ndarray  # (E, M) bool
    contrasts: list[Contrast]
    contrast_values: np.ndarray  # (C, P, M, F, O)
    contrast_applicable: np.ndarray  # (C, M) bool


@dataclass(frozen=True)
class Statistics:
    """One field-score row per leaderboard statistic, then one per contrast statistic."""

    field_scores: dict[str, tuple[np.ndarray, np.ndarray]]  # track -> ((E, P, M, F) scores, origin counts)
    leaderboard_keys: list[tuple[int, int, int, int]]  # (track, entry, policy, metric)
    contrast_keys: list[tuple[int, int, int, int]]  # (track, contrast, policy, metric)
    matrix: np.ndarray  # (n_statistics, F): leaderboard rows, then contrast rows
    rank_rows: np.ndarray  # leaderboard rows of the ranked metrics (their replicates are kept)

    @property
    def n_leaderboard(self) -> int:
        return len(self.leaderboard_keys)


@dataclass(frozen=True)
class Intervals:
    """§5 per split: field-macro estimates, field counts and intervals of every statistic."""

    estimate: dict[str, np.ndarray]  # split -> (n_statistics,)
    n_fields: dict[str, np.ndarray]
    bounds: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]  # (split, unit kind) -> (low, high)
    replicates: dict[str, dict[int, np.ndarray]]  # split -> kept block-bootstrap replicates of the rank rows


def frame(archive: Archive) -> Frame:
    """The episodes to score; refuses an archive the baselines or tracks cannot use."""
    og = archive.origins
    if og.history_windows != 3:
        raise ScoringError(f"archive/benchmark/origins.json: the baselines need history_windows = 3, found {og.history_windows}")
    origins = tuple(og.origins)
    if og.strict_origin not in origins:
        raise ScoringError(f"archive/benchmark/origins.json: strict_origin {og.strict_origin} is not one of the origins")
    fields = archive.fields
    if not fields:
        raise ScoringError("archive/benchmark/fields.jsonl: no fields; nothing to score")
    field_split = np.array([f.split for f in fields], dtype=object)
    return Frame(
        field_ids=[f.field_id for f in fields], field_split=field_split,
        field_block=np.array([f.block_id for f in fields], dtype=object), origins=origins,
        strict_origin=og.strict_origin, window_months=og.window_months, history_windows=og.history_windows,
        splits=sorted(set(field_split.tolist())),
    )


def resampling_units(archive: Archive, fr: Frame) -> ResamplingUnits:
    """(split, unit kind) -> (unit ids sorted in byte order, the unit index of each of the split's fields)."""
    blocks_by_split: dict[str, list[str]] = {}
    for block in archive.blocks:
        blocks_by_split.setdefault(block.split, []).append(block.block_id)
    out = {}
    for split in fr.splits:
        cols = np.flatnonzero(fr.field_split == split)
        for kind in UNIT_KINDS:
            if kind == "block":
                unit_ids = tuple(sorted(blocks_by_split.get(split, []), key=lambda b: b.encode("utf-8")))
                members = [fr.field_block[c] for c in cols]
            else:
                unit_ids = tuple(sorted((fr.field_ids[c] for c in cols), key=lambda f: f.encode("utf-8")))
                members = [fr.field_ids[c] for c in cols]
            position = {u: i for i, u in enumerate(unit_ids)}
            missing = [c for c, m in zip(cols, members) if m not in position]
            if missing:
                raise ScoringError(
                    f"archive/benchmark/fields.jsonl: field {fr.field_ids[missing[0]]!r} names block "
                    f"{fr.field_block[missing[0]]!r}, which is not a {split} block in blocks.jsonl"
                )
            out[(split, kind)] = (unit_ids, np.array([position[m] for m in members], dtype=np.int64))
    return out


def count(archive: Archive, fr: Frame, resamples: int, seed: int, skip: frozenset[str] = frozenset(),
          cutoffs: dict[str, date | None] | None = None, **unit_options) -> Counted:
    """§1 counts (DuckDB) and the §5 count matrices, in worker threads (both release
    the GIL) while the predictions are parsed. A fresh ``default_rng(seed)`` per
    (split, unit kind), drawn once. ``skip``, ``cutoffs`` and ``unit_options`` (``partial``,
    ``keep``): as :func:`read_model_units`."""
    units_of = resampling_units(archive, fr)
    windows = build_windows(fr.origins, fr.window_months, fr.history_windows)
    with ThreadPoolExecutor(max_workers=2) as pool:
        counting = pool.submit(compute_counts, archive, fr.field_ids, windows)
        drawing = {key: pool.submit(draw_counts, len(unit_ids), resamples, seed) for key, (unit_ids, _) in units_of.items()}
        models = read_model_units(archive, fr.field_ids, fr.origins, skip, cutoffs, **unit_options)
        counts = counting.result()
        draws = {key: (units_of[key][0], future.result()) for key, future in drawing.items()}
    return Counted(windows, counts, units_of, draws, models)


def compose(counted: Counted, ledger: dict) -> Composed:
    """Compositions of every window, and the §3 baselines from the three history windows."""
    comps = compositions(counted.counts)
    hist = comps[:, :, counted.windows.history]  # (P, F, O, 3, 8)
    base = compute_baselines(hist[..., 0, :], hist[..., 1, :], hist[..., 2, :], ledger)
    return Composed(comps, comps[:, :, counted.windows.target], hist[..., -1, :], base, base[BASELINES.index("ewma")])


def unit_values(models: ModelUnits, composed: Composed) -> UnitValues:
    """§2 metric values of every unit of every entry (model conditions, then baselines)."""
    entries = models.entries + baseline_entries()
    n_models = len(models.entries)
    P, F, O = composed.y.shape[:3]
    predictions = np.concatenate(
        [np.broadcast_to(models.weights[:, None], (n_models, P, F, O, len(SLOTS))), composed.baselines], axis=0)
    values = compute_unit_values(entries, predictions, composed.y, composed.x, composed.ewma)
    return UnitValues(entries, n_models, predictions, values, ~np.isnan(composed.baselines).any(axis=-1))


def tracks(fr: Frame, uv: UnitValues) -> Tracks:
    """§4: each track's origins and participants; the contrasts' per-unit differences
    (only origins where both sides are defined: NaN propagates through the difference)."""
    entries = uv.entries
    strict = np.array([e.kind == BASELINE or (e.cutoff is not None and e.cutoff < fr.strict_origin) for e in entries], dtype=bool)
    contrasts = build_contrasts(entries)
    P, M, F, O = uv.values.shape[1:]
    contrast_values = np.full((len(contrasts), P, M, F, O), np.nan)
    for c, con in enumerate(contrasts):
        for name in con.metrics:
            m = M_INDEX[name]
            contrast_values[c, :, m] = contrast_difference(name, uv.values[con.left, :, m], uv.values[con.right, :, m])
    return Tracks(
        origins={ALL_ORIGIN_TRACK: np.arange(O), FORECAST_STRICT_TRACK: np.array([fr.origins.index(fr.strict_origin)])},
        participates={ALL_ORIGIN_TRACK: np.ones(len(entries), dtype=bool), FORECAST_STRICT_TRACK: strict},
        applicable=np.array([[m in e.metrics() for m in METRIC_NAMES] for e in entries], dtype=bool),
        contrasts=contrasts,
        contrast_values=contrast_values,
        contrast_applicable=np.array([[m in con.metrics for m in METRIC_NAMES] for con in contrasts], dtype=bool).reshape(
            len(contrasts), M),
    )


def statistics(uv: UnitValues, tr: Tracks) -> Statistics:
    """One field-score vector per (track, entry, policy, metric) and per (track, contrast, policy, metric)."""
    P, F = uv.values.shape[1], uv.values.shape[3]
    every_policy = np.ones((1, P, 1), dtype=bool)
    field_scores: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    lb_rows: list[np.ndarray] = []
    ct_rows: list[np.ndarray] = []
    lb_keys: list[tuple[int, int, int, int]] = []
    ct_keys: list[tuple[int, int, int, int]] = []
    for t, track in enumerate(TRACKS):
        idx = tr.origins[track]
        scores, n_origins = mean_over(uv.values[..., idx], axis=-1)  # (E, P, M, F)
        field_scores[track] = (scores, n_origins)
        e_i, p_i, m_i = np.nonzero(tr.participates[track][:, None, None] & tr.applicable[:, None, :] & every_policy)
        lb_keys.extend((t, int(a), int(b), int(c)) for a, b, c in zip(e_i, p_i, m_i))
        lb_rows.append(scores[e_i, p_i, m_i])
        if tr.contrasts:
            contrast_scores, _ = mean_over(tr.contrast_values[..., idx], axis=-1)  # (C, P, M, F)
            left_takes_part = tr.participates[track][[con.left for con in tr.contrasts]]
            c_i, p_i, m_i = np.nonzero(left_takes_part[:, None, None] & tr.contrast_applicable[:, None, :] & every_policy)
            ct_keys.extend((t, int(a), int(b), int(c)) for a, b, c in zip(c_i, p_i, m_i))
            ct_rows.append(contrast_scores[c_i, p_i, m_i])
    matrix = np.concatenate(lb_rows + ct_rows, axis=0) if lb_rows + ct_rows else np.zeros((0, F))
    ranked = {M_INDEX[m] for m in RANKED_METRICS}
    rank_rows = np.array([i for i, k in enumerate(lb_keys) if k[3] in ranked], dtype=np.int64)
    return Statistics(field_scores, lb_keys, ct_keys, matrix, rank_rows)


def intervals(fr: Frame, counted: Counted, st: Statistics, level: float,
              meanwhile: Callable[[], dict] | None = None) -> tuple[Intervals, dict]:
    """§5 per split: the plain field-macro estimate and both bootstrap intervals of every
    statistic. The (split, unit kind) jobs are independent and numpy releases the GIL in
    its products and partitions, so two run side by side while ``meanwhile()`` (work that
    needs no interval) runs in this thread; its result is returned too. BLAS runs on one
    thread here: a threaded BLAS under two job threads only spins."""
    estimate, n_fields, jobs = {}, {}, {}
    for split in fr.splits:
        cols = np.flatnonzero(fr.field_split == split)
        Zs = st.matrix[:, cols]
        estimate[split], n_fields[split] = mean_over(Zs, axis=1)
        for kind in UNIT_KINDS:
            unit_ids, unit_of = counted.units_of[(split, kind)]
            S, N = unit_sums(Zs, unit_of, len(unit_ids))
            jobs[(split, kind)] = (counted.draws[(split, kind)][1], S, N, st.rank_rows if kind == "block" else None)
    bounds: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    replicates: dict[str, dict[int, np.ndarray]] = {}
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(bootstrap_intervals, C, S, N, level, keep) for key, (C, S, N, keep) in jobs.items()}
        extra = meanwhile() if meanwhile is not None else {}
        for (split, kind), future in futures.items():
            result = future.result()
            bounds[(split, kind)] = (result.low, result.high)
            if kind == "block":
                replicates[split] = result.replicates
    return Intervals(estimate, n_fields, bounds, replicates), extra


