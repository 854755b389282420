"""Tracks per release and releases.csv (RELEASES.md "Tracks", "Outputs and site").

A :class:`ReleaseScope` says what release N lets scoring see: its resolved
origins R, its strict origin, which (model, origin) units its files list, and
which of them were received on time for the Live track. :func:`track_masks`
turns a scope into each track's participants and per-entry origins
(pure, over the union arrays of the latest scoring); :func:`releases_table`
scores every release from those masks on the same unit values and the same
count matrices (common random numbers, SCORING.md §5), so the counting, the
unit metrics and the draws are done once for the whole history.

Participation, exactly:

- ``all_origin``: a model takes part iff it covers every origin of R; one
  covering k of |R| (0 < k < |R|) is *partial*: listed, not scored, not ranked.
- ``forecast_strict``: a model takes part iff its effective cutoff is earlier
  than N's strict origin and it covers that origin.
- ``live``: per origin T of R that some release up to N opened, a model takes
  part in T iff its entry for T was received on time and its units for T are
  listed; its row is the field-macro over the union of those origins. Ranks
  compare only models with the same origin set, with the baselines scored
  over that set; a baseline's own row covers every live origin.
- Baselines take part in every track (every live origin).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from rapgen.scores import schema
from rapgen.scores.bootstrap import split_block_intervals
from rapgen.scores.counts import POLICIES
from rapgen.scores.kernels import mean_over, single_threaded_blas
from rapgen.scores.metrics import HIGHER_IS_BETTER, METRIC_NAMES
from rapgen.scores.outputs import Table
from rapgen.scores.ranking import RANKED_METRICS
from rapgen.scores.schema import HISTORY_TRACKS, LIVE_TRACK
from rapgen.scores.aggregate import rank_by_intervals
from rapgen.scores.units import BASELINE, MODEL, Entry

ALL_ORIGIN, STRICT = schema.TRACKS


@dataclass(frozen=True)
class ReleaseScope:
    """What release ``number`` lists, as scoring needs it."""

    number: int
    date: date | None
    resolved: tuple[date, ...]
    strict_origin: date
    listed: frozenset[tuple[str, date]] | None = None  # (model, origin) units listed; None: every unit scored
    on_time: frozenset[tuple[str, date]] = frozenset()  # Live entries received on time
    live_origins: tuple[date, ...] = ()  # origins of ``resolved`` ever open for Live entries


@dataclass(frozen=True)
class TrackMask:
    """One track of one release: participants, each entry's origins, and the partial models."""

    name: str
    participates: np.ndarray  # (E,) bool
    origin_mask: np.ndarray  # (E, O) bool: the origins an entry's score is taken over
    partial: np.ndarray  # (E,) bool: all_origin only, models covering some but not all of R
    n_origins: np.ndarray  # (E,) covered origins of R (all_origin), or live origins (live)


def covered(scope: ReleaseScope, entries: list[Entry], origins: tuple[date, ...], has_units: np.ndarray) -> np.ndarray:
    """(E, O): the entry has units at the origin in this release (baselines: every origin of R).

    ``has_units`` (E, O) says where the union scoring found a model's units."""
    in_r = np.array([o in scope.resolved for o in origins], dtype=bool)
    out = np.zeros((len(entries), len(origins)), dtype=bool)
    for e, entry in enumerate(entries):
        if entry.kind == BASELINE:
            out[e] = in_r
            continue
        listed = np.array([scope.listed is None or (entry.entry, o) in scope.listed for o in origins], dtype=bool)
        out[e] = in_r & listed & has_units[e]
    return out


def track_masks(scope: ReleaseScope, entries: list[Entry], origins: tuple[date, ...], has_units: np.ndarray) -> dict[str, TrackMask]:
    """Each track of ``scope`` (the live track only when the release has a live origin)."""
    cov = covered(scope, entries, origins, has_units)
    in_r = np.array([o in scope.resolved for o in origins], dtype=bool)
    is_base = np.array([e.kind == BASELINE for e in entries], dtype=bool)
    n_cov = cov.sum(axis=1)
    complete = n_cov == in_r.sum()
    none = np.zeros(len(entries), dtype=bool)
    out = {ALL_ORIGIN: TrackMask(ALL_ORIGIN, complete, np.broadcast_to(in_r, cov.shape).copy(), ~complete & (n_cov > 0) & ~is_base,
                                 n_cov)}
    strict = np.array([o == scope.strict_origin for o in origins], dtype=bool)
    cutoff_ok = np.array([e.kind == BASELINE or (e.cutoff is not None and e.cutoff < scope.strict_origin) for e in entries])
    out[STRICT] = TrackMask(STRICT, cutoff_ok & cov[:, strict].all(axis=1) & strict.any(), np.broadcast_to(strict, cov.shape).copy(),
                            none, np.where(cutoff_ok, strict.sum(), 0))
    live = np.array([o in scope.live_origins for o in origins], dtype=bool) & in_r
    if live.any():
        on_time = np.array([[entry.kind == BASELINE or (entry.entry, o) in scope.on_time for o in origins] for entry in entries],
                           dtype=bool)
        mask = cov & live[None, :] & on_time
        out[LIVE_TRACK] = TrackMask(LIVE_TRACK, mask.any(axis=1), mask, none, mask.sum(axis=1))
    return out


def field_scores(values: np.ndarray, origin_mask: np.ndarray) -> np.ndarray:
    """(E, P, M, F) mean of the defined unit values over each entry's origins."""
    masked = np.where(origin_mask[:, None, None, None, :], values, np.nan)
    return mean_over(masked, axis=-1)[0]


# A baseline's rank in releases.csv: its rank among the models of this condition (as the leaderboard shows it).
BASELINE_RANK_CONDITION = schema.PRIMARY.condition


@dataclass(frozen=True)
class StatKey:
    release: int
    track: str
    entry: int
    policy: int
    metric: int
    origin_set: tuple[int, ...] | None  # live: the origins the row is taken over; None elsewhere
    own: bool = True  # False: a baseline scored over a model group's live origin set (for ranking only)


def release_statistics(scope: ReleaseScope, entries: list[Entry], origins: tuple[date, ...], values: np.ndarray,
                       applicable: np.ndarray, has_units: np.ndarray) -> tuple[list[StatKey], list[np.ndarray]]:
    """The leaderboard statistics of one release: one field-score vector per (track, entry,
    policy, metric); in live, also each baseline over each models' origin set."""
    P = values.shape[1]
    keys: list[StatKey] = []
    rows: list[np.ndarray] = []
    for name, tm in track_masks(scope, entries, origins, has_units).items():
        scores = field_scores(values, tm.origin_mask)
        live = name == LIVE_TRACK
        for e in np.flatnonzero(tm.participates).tolist():
            oset = tuple(np.flatnonzero(tm.origin_mask[e]).tolist()) if live else None
            for p in range(P):
                for m in np.flatnonzero(applicable[e]).tolist():
                    keys.append(StatKey(scope.number, name, e, p, m, oset))
                    rows.append(scores[e, p, m])
        if not live:
            continue
        base = [e for e, x in enumerate(entries) if x.kind == BASELINE]
        every = tuple(np.flatnonzero(tm.origin_mask[base[0]]).tolist()) if base else ()
        sets = {tuple(np.flatnonzero(tm.origin_mask[e]).tolist()) for e in np.flatnonzero(tm.participates) if entries[e].kind == MODEL}
        for oset in sorted(sets - {every}):
            mask = np.zeros((len(base), len(origins)), dtype=bool)
            mask[:, list(oset)] = True
            sub = field_scores(values[base], mask)
            for j, e in enumerate(base):
                for p in range(P):
                    for m in np.flatnonzero(applicable[e]).tolist():
                        keys.append(StatKey(scope.number, name, e, p, m, oset, own=False))
                        rows.append(sub[j, p, m])
    return keys, rows


def statistic_ranks(keys: list[StatKey], entries: list[Entry], low: np.ndarray, high: np.ndarray, *,
                    every_baseline_row: bool = False) -> np.ndarray:
    """The CI-aware rank of every own row (NaN for the others and for descriptive metrics).

    Groups are (release, track, policy, condition, metric, origin set): the models of the
    condition (in live, those with the same origin set) with the baselines scored over the
    same origins. A baseline's own row takes its rank from the group of condition
    ``BASELINE_RANK_CONDITION`` (in live, the group whose origin set is every live origin);
    ``every_baseline_row`` ranks a baseline's rows over the models' origin sets too."""
    rank = np.full(len(keys), np.nan)
    ranked = {METRIC_NAMES.index(m) for m in RANKED_METRICS}
    baselines: dict[tuple, int] = {}
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        if k.metric not in ranked:
            continue
        if entries[k.entry].kind == BASELINE:
            baselines[(k.release, k.track, k.policy, k.metric, k.origin_set, k.entry)] = i
        else:
            groups.setdefault((k.release, k.track, k.policy, entries[k.entry].condition, k.metric, k.origin_set), []).append(i)
    base_ids = sorted({k.entry for k in keys if entries[k.entry].kind == BASELINE})
    for (n, track, p, condition, m, oset), members in groups.items():
        base = [baselines[key] for b in base_ids if (key := (n, track, p, m, oset, b)) in baselines]
        rows = np.array(members + base, dtype=np.int64)
        r = rank_by_intervals(low[rows], high[rows], bool(HIGHER_IS_BETTER[METRIC_NAMES[m]]))
        rank[members] = r[: len(members)]
        if condition == BASELINE_RANK_CONDITION:
            for i, value in zip(base, r[len(members):]):
                if keys[i].own or every_baseline_row:
                    rank[i] = value
    return rank


@dataclass(frozen=True)
class Resampled:
    """One split's field-macro estimates, field counts, intervals and ranks of a list of statistics."""

    split: str
    estimate: np.ndarray
    n_fields: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray


def resample(keys: list[StatKey], rows: list[np.ndarray], entries: list[Entry], field_split: np.ndarray, splits: list[str],
             units_of, draws, level: float, n_fields_total: int, **rank_options) -> list[Resampled]:
    """Per split: one bootstrap over every statistic (the split's block draws), then the ranks."""
    matrix = np.stack(rows) if rows else np.zeros((0, n_fields_total))
    out = []
    with single_threaded_blas():
        for split in splits:
            estimate, n_fields, result = split_block_intervals(matrix, field_split, split, units_of, draws, level)
            rank = statistic_ranks(keys, entries, result.low, result.high, **rank_options)
            out.append(Resampled(split, estimate, n_fields, result.low, result.high, rank))
    return out


def _entry_order(entries: list[Entry]) -> dict[int, int]:
    ordered = sorted(range(len(entries)), key=lambda e: (entries[e].kind != MODEL, entries[e].entry, entries[e].condition))
    return {e: i for i, e in enumerate(ordered)}


def releases_table(scopes: list[ReleaseScope], entries: list[Entry], origins: tuple[date, ...], values: np.ndarray,
                   applicable: np.ndarray, has_units: np.ndarray, field_split: np.ndarray, splits: list[str],
                   units_of, draws, level: float) -> Table:
    """releases.csv: every release's own rows, on the split's draws (one bootstrap per split for all releases)."""
    keys: list[StatKey] = []
    rows: list[np.ndarray] = []
    for scope in scopes:
        k, r = release_statistics(scope, entries, origins, values, applicable, has_units)
        keys += k
        rows += r
    dates = {s.number: "" if s.date is None else s.date.isoformat() for s in scopes}
    track_order = {t: i for i, t in enumerate(HISTORY_TRACKS)}
    order = _entry_order(entries)
    out = []
    for res in resample(keys, rows, entries, field_split, splits, units_of, draws, level, values.shape[3]):
        for i, k in enumerate(keys):
            if not k.own:
                continue
            entry = entries[k.entry]
            out.append(((k.release, track_order[k.track], res.split, k.policy, order[k.entry], k.metric), (
                k.release, dates[k.release], k.track, res.split, POLICIES[k.policy], entry.entry, entry.condition,
                METRIC_NAMES[k.metric], _none(res.estimate[i]), _none(res.low[i]), _none(res.high[i]),
                None if np.isnan(res.rank[i]) else int(res.rank[i]),
            )))
    return _table(schema.RELEASES_COLUMNS, out)


def live_table(scope: ReleaseScope, entries: list[Entry], origins: tuple[date, ...], values: np.ndarray, applicable: np.ndarray,
               has_units: np.ndarray, field_split: np.ndarray, splits: list[str], units_of, draws, level: float) -> Table:
    """live.csv: the Live track of the scored release. Each model over its on-time origins, each
    baseline over every live origin and again over each models' origin set (the ``origins``
    column tells the rows apart); ranks within (policy, condition, metric, origin set)."""
    keys, rows = release_statistics(scope, entries, origins, values, applicable, has_units)
    live = [i for i, k in enumerate(keys) if k.track == LIVE_TRACK]
    keys, rows = [keys[i] for i in live], [rows[i] for i in live]
    order = _entry_order(entries)
    out = []
    for res in resample(keys, rows, entries, field_split, splits, units_of, draws, level, values.shape[3], every_baseline_row=True):
        for i, k in enumerate(keys):
            entry = entries[k.entry]
            oset = k.origin_set or ()
            out.append(((res.split, k.policy, order[k.entry], len(oset), oset, k.metric), (
                res.split, POLICIES[k.policy], entry.entry, entry.kind, entry.condition, METRIC_NAMES[k.metric],
                " ".join(origins[o].isoformat() for o in oset), len(oset), _none(res.estimate[i]), _none(res.low[i]),
                _none(res.high[i]), int(res.n_fields[i]), None if np.isnan(res.rank[i]) else int(res.rank[i]),
            )))
    return _table(schema.LIVE_COLUMNS, out)


def _table(columns: tuple[str, ...], out: list[tuple]) -> Table:
    out.sort(key=lambda r: r[0])
    body = [r[1] for r in out]
    cols = list(zip(*body)) if body else [() for _ in columns]
    return Table(columns, {c: list(v) for c, v in zip(columns, cols)})


def _none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)
