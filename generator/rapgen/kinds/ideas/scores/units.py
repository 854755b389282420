"""Per-unit metric values and the leaderboard statistics of an Ideas release (IDEAS.md §5–§6).

A unit is (episode, condition) of one model; an item is an episode, its
cluster the topic. Per judge × gate, every resolved episode of the manifest
gets its metric values: an empty episode (or a model not yet evaluated by the
judge, "awaiting evaluation") is a unit too. The statistics are one ``mean``
row per (track, judge, gate, model, condition, metric) over the items of the
track, on one draw matrix: tracks are item masks, so gate − gate,
judge − judge and strategy − strategy differences are paired.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rapgen.kinds.ideas.archive.config import Gate
from rapgen.kinds.ideas.archive.episodes import Episode
from rapgen.kinds.ideas.archive.evaluation import Judgment
from rapgen.kinds.ideas.archive.predictions import Predictions
from rapgen.kinds.ideas.scores.credit import Judged, greedy_credit
from rapgen.kinds.ideas.scores.metrics import METRICS, EpisodeInputs, episode_metrics
from rapgen.scores import Statistic

SPLIT = "all"  # Ideas has one split: every episode
AXES = ("judge", "gate")
ALL_CUTOFF, FORECAST_STRICT, LIVE = "all_cutoff", "forecast_strict", "live"  # the tracks (IDEAS.md §6)
MODEL_KIND = "model"


def judged_by_idea(judgments: Sequence[Judgment]) -> dict[tuple[str, str, int], list[Judged]]:
    out: dict[tuple[str, str, int], list[Judged]] = defaultdict(list)
    for j in judgments:
        out[j.idea].append(Judged(j.cand_rank, j.arxiv_id, j.P, j.M, j.S))
    return out


@dataclass(frozen=True)
class UnitValues:
    """One model's per-episode values under one (judge, gate): condition -> metric -> (n_items,)."""

    values: dict[str, dict[str, np.ndarray]]
    failed: int  # failed judgments among this model's candidates
    n_ideas: dict[str, np.ndarray]  # condition -> emitted ideas per item


def unit_values(items: Sequence[Episode], predictions: Predictions, judgments: Sequence[Judgment] | None, gate: Gate, top_k: int, *,
                clusters: Mapping[str, Mapping[str, int]] | None = None, n_clusters: int = 5,
                features: Mapping[tuple[str, str, int], float] | None = None) -> UnitValues:
    """Every metric of every (item, condition) of one model; ``judgments`` None: awaiting evaluation (NaN)."""
    judged = judged_by_idea(judgments or [])
    values: dict[str, dict[str, np.ndarray]] = {}
    n_ideas: dict[str, np.ndarray] = {}
    for condition in predictions.conditions:
        table = {m.name: np.full(len(items), np.nan) for m in METRICS}
        counts = np.zeros(len(items), dtype=np.int64)
        for i, ep in enumerate(items):
            ideas = predictions.ideas.get((ep.episode_id, condition), ())
            counts[i] = len(ideas)
            if judgments is None:
                continue
            credit = greedy_credit({idea.rank: judged.get(idea.key, []) for idea in ideas}, top_k, gate)
            x = EpisodeInputs(credit, len(ideas), top_k,
                              cluster_of=None if clusters is None else clusters.get(ep.episode_id), n_clusters=n_clusters,
                              nn_distances=None if features is None else [features[idea.key] for idea in ideas])
            for name, v in episode_metrics(x).items():
                table[name][i] = v
        values[condition], n_ideas[condition] = table, counts
    failed = sum(1 for j in judgments or [] if j.status == "failed")
    return UnitValues(values, failed, n_ideas)


@dataclass(frozen=True)
class Track:
    """A track: which items count for a model (None: the model takes no part). ``whole``: an entry takes
    part only if it is scored on every item of the track (``all_cutoff``, ``forecast_strict``); otherwise
    (``live``) its items are those of the track it is scored on."""

    name: str
    mask: Callable[[str], np.ndarray | None]
    whole: bool = True


@dataclass(frozen=True)
class Coverage:
    """One entry (model, strategy) under one judge, per item: has it units (``forecast``: idea or empty
    lines), and has the judge's evaluator folder of the item's cutoff been listed (``evaluated``)?"""

    forecast: np.ndarray
    evaluated: np.ndarray

    @property
    def scored(self) -> np.ndarray:
        return self.forecast & self.evaluated


CoverageMap = Mapping[tuple[str, str, str], Coverage]
GROUP_BY = ("track", "split", *AXES, "metric", "cutoffs")  # the rank groups (pairs.csv keeps its columns: cutoffs is not one)


@dataclass(frozen=True)
class IdeasStatistic(Statistic):
    """A statistic with the cutoffs its Live row is taken over (``""`` in the other tracks): Live ranks
    and pairs compare only entries scored on the same cutoffs (RELEASES.md "Tracks")."""

    cutoffs: str = ""  # (model, judge, condition) -> its coverage


def entry_mask(track: Track, model: str, judge: str, condition: str, coverage: CoverageMap | None) -> np.ndarray | None:
    """The items ``track`` scores (model, condition) on under ``judge``; None: it takes no part.

    A whole track needs the entry's units on every item of the track and the judge's files either on
    every one of them or on none (then the row is there, awaiting evaluation); an entry lacking some
    is *partial* (:func:`partial_entries`). In ``live`` the entry's items are the track's it is scored on."""
    mask = track.mask(model)
    if mask is None or coverage is None:
        return mask
    cov = coverage.get((model, judge, condition))
    if cov is None:
        return mask
    if not track.whole:
        mine = mask & cov.scored
        return mine if mine.any() else None
    if not cov.forecast[mask].all():
        return None
    evaluated = cov.evaluated[mask]
    return mask if evaluated.all() or not evaluated.any() else None


def cutoff_tracks(items: Sequence[Episode], strict_cutoff, effective_cutoffs: Mapping[str, object | None]) -> tuple[Track, ...]:
    """``all_cutoff`` (every resolved episode) and ``forecast_strict`` (cutoffs ≥ ``strict_cutoff``,
    for models whose effective knowledge cutoff is known and earlier). ``live`` comes from the history."""
    every = np.ones(len(items), dtype=bool)
    strict = np.array([ep.cutoff >= strict_cutoff for ep in items], dtype=bool)

    def strict_mask(model: str) -> np.ndarray | None:
        c = effective_cutoffs.get(model)
        return strict if c is not None and c < strict_cutoff else None

    return (Track(ALL_CUTOFF, lambda _m: every), Track(FORECAST_STRICT, strict_mask))


def statistics(items: Sequence[Episode], per_model: Mapping[str, Mapping[tuple[str, str], UnitValues]], tracks: Sequence[Track],
               coverage: CoverageMap | None = None) -> list[Statistic]:
    """Leaderboard statistics: track, then judge and gate (as given), then model, condition, metric.

    ``per_model``: model -> (judge, gate) -> its unit values. ``n_valid`` counts the
    track's episodes with ideas, ``n_invalid`` its empty episodes (scored zero).
    ``coverage`` (None: every entry covers every item): which entries take part (:func:`entry_mask`)."""
    out: list[Statistic] = []
    axes_order: list[tuple[str, str]] = list(dict.fromkeys(k for v in per_model.values() for k in v))
    for track in tracks:
        for axis in axes_order:
            for model in sorted(per_model):
                uv = per_model[model].get(axis)
                if track.mask(model) is None or uv is None:
                    continue
                for condition in uv.values:
                    mask = entry_mask(track, model, axis[0], condition, coverage)
                    if mask is None:
                        continue
                    emitted = uv.n_ideas[condition][mask]
                    n_valid, n_invalid = int((emitted > 0).sum()), int((emitted == 0).sum())
                    cutoffs = "" if track.whole else ",".join(sorted({items[i].cutoff.isoformat() for i in np.flatnonzero(mask).tolist()}))
                    for m in METRICS:
                        vals = np.where(mask, uv.values[condition][m.name], np.nan)
                        out.append(IdeasStatistic(track.name, SPLIT, axis, model, MODEL_KIND, condition, m.name, vals,
                                                  m.rank_direction, n_valid, n_invalid, cutoffs=cutoffs))
    return out
