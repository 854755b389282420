"""Score a checked Ideas archive: every statistic of IDEAS.md §5–§6, with intervals, ranks and pairs.

Items are the resolved episodes in manifest order (topic, then cutoff); the
clusters are topics, drawn once (``draw_counts`` over topic ids in byte
order, the ledger's resamples and seed). Axes judge × gate: every judge of
judges.jsonl (primary first) × ``default``, ``strict``. Rank groups
(track, judge, gate, metric) hold every (model, strategy) entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import numpy as np

from rapgen.kinds.ideas.archive.check import IdeasArchive
from rapgen.kinds.ideas.scores.credit_table import unit_table_values
from rapgen.kinds.ideas.scores.units import AXES, GROUP_BY, SPLIT, Coverage, Track, UnitValues, cutoff_tracks, statistics, unit_values
from rapgen.scores import ScoredSet, SplitDraws, cluster_index, leaderboard_csv, pairs_csv, score_statistics, split_draws


def judge_order(archive: IdeasArchive) -> list[str]:
    """The ledger's primary judge first, then the others in judges.jsonl order."""
    primary = archive.ledger.primary_judge if archive.ledger else None
    ids = list(archive.judges)
    return ([primary] if primary in ids else []) + [j for j in ids if j != primary]


def per_model_values(archive: IdeasArchive, *, reference: bool = False) -> dict[str, dict[tuple[str, str], UnitValues]]:
    """model -> (judge, gate) -> its unit values over the resolved episodes.

    Computed from the judgment columns for every gate at once (:func:`unit_table_values`);
    ``reference``: one episode at a time from judgment records (:func:`unit_values`), the
    slow statement of the same rules, which gives the same numbers."""
    assert archive.pools is not None and archive.config is not None and archive.ledger is not None
    items = resolved_items(archive)
    coverage = archive_coverage(archive, items)
    top_k, gates = archive.config.top_k, archive.ledger.gates
    extra = {"clusters": archive.clusters, "n_clusters": archive.ledger.kmeans_k}
    out: dict[str, dict[tuple[str, str], UnitValues]] = {}
    for model_id, mf in sorted(archive.models.items()):
        if mf.predictions is None:
            continue
        out[model_id] = {}
        for judge_id in judge_order(archive):
            evaluated = mf.evals.get(judge_id)
            table = evaluated[1] if evaluated else None
            if reference:
                records = table.records() if table is not None else None
                by_gate = {g.name: unit_values(items, mf.predictions, records, g, top_k, features=mf.features, **extra) for g in gates}
            else:
                by_gate = unit_table_values(items, mf.predictions, table, gates, top_k, features=mf.features, **extra)
            for gate in gates:
                out[model_id][(judge_id, gate.name)] = _covered_only(by_gate[gate.name], model_id, judge_id, coverage)
    return out


def archive_coverage(archive: IdeasArchive, items=None) -> dict[tuple[str, str, str], Coverage]:
    """(model, judge, strategy) -> which resolved episodes it forecast and which its judge's files cover.

    A strategy covers a cutoff when the model's unit group of that cutoff claims it (the group's own
    check makes a claimed strategy cover every episode of it); the judge covers it when the group has
    the judge's ``eval/<judge>/`` folder (in a past release: when that release lists it)."""
    assert archive.config is not None
    items = resolved_items(archive) if items is None else items
    cutoffs = np.array([e.cutoff.toordinal() for e in items], dtype=np.int64)
    judges = judge_order(archive)
    out: dict[tuple[str, str, str], Coverage] = {}
    for model_id, mf in sorted(archive.models.items()):
        p = mf.predictions
        if p is None:
            continue
        evaluated = {j: np.isin(cutoffs, [c.toordinal() for c in mf.judged_cutoffs(j, archive.config.cutoffs)]) for j in judges}
        for condition in p.conditions:
            forecast = np.array([(e.episode_id, condition) in p.ideas or (e.episode_id, condition) in p.empty for e in items], dtype=bool)
            for judge_id in judges:
                out[(model_id, judge_id, condition)] = Coverage(forecast, evaluated[judge_id])
    return out


def _covered_only(uv: UnitValues, model: str, judge: str, coverage: dict[tuple[str, str, str], Coverage]) -> UnitValues:
    """``uv`` without the strategies that forecast no resolved episode, and undefined (NaN) on the episodes
    a strategy did not forecast or its judge has not evaluated (never a zero for a missing forecast)."""
    values, n_ideas = {}, {}
    for condition, table in uv.values.items():
        cov = coverage[(model, judge, condition)]
        if not cov.forecast.any():
            continue
        scored = cov.scored
        values[condition] = table if scored.all() else {m: np.where(scored, v, np.nan) for m, v in table.items()}
        n_ideas[condition] = uv.n_ideas[condition]
    return UnitValues(values, uv.failed, n_ideas)


def resolved_items(archive: IdeasArchive):
    assert archive.pools is not None
    resolved = set(archive.resolved)
    return [e for e in archive.pools.episodes if e.cutoff in resolved]


def effective_cutoffs(archive: IdeasArchive) -> dict[str, date | None]:
    return {m: (mf.info.effective_cutoff if mf.info else None) for m, mf in archive.models.items()}


def archive_tracks(archive: IdeasArchive, items, extra_tracks: Sequence[Track] = ()) -> tuple[Track, ...]:
    """``all_cutoff``, ``forecast_strict``, then ``extra_tracks`` (such as ``live``), as item masks."""
    assert archive.config is not None
    return (*cutoff_tracks(items, archive.config.strict_cutoff, effective_cutoffs(archive)), *extra_tracks)


def archive_draws(archive: IdeasArchive, items, resamples: int | None = None) -> dict[str, SplitDraws]:
    """The one topic draw matrix of the release (topic ids in byte order; the ledger's resamples and seed)."""
    assert archive.ledger is not None
    return {SPLIT: split_draws(cluster_index([e.topic_id for e in items]), resamples or archive.ledger.resamples, archive.ledger.seed)}


def score_archive(archive: IdeasArchive, *, extra_tracks: Sequence[Track] = (), resamples: int | None = None,
                  values: Mapping[str, Mapping[tuple[str, str], UnitValues]] | None = None,
                  draws: Mapping[str, SplitDraws] | None = None) -> ScoredSet:
    """The leaderboard statistics of the archive (``all_cutoff``, ``forecast_strict``, then ``extra_tracks``
    such as ``live``), scored on one topic draw matrix (``draws``, else :func:`archive_draws`)."""
    assert archive.ledger is not None
    items = resolved_items(archive)
    stats = statistics(items, values if values is not None else per_model_values(archive), archive_tracks(archive, items, extra_tracks),
                       archive_coverage(archive, items))
    return score_statistics(stats, dict(draws) if draws is not None else archive_draws(archive, items, resamples), archive.ledger.level,
                            axes=AXES, group_by=GROUP_BY)


def score_files(archive: IdeasArchive, **kwargs) -> dict[str, bytes]:
    """``leaderboard.csv`` and ``pairs.csv`` of the archive."""
    scored = score_archive(archive, **kwargs)
    return {"leaderboard.csv": leaderboard_csv(scored), "pairs.csv": pairs_csv(scored)}
