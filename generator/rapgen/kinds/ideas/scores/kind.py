"""Ideas' scoring as the engine calls it (KINDS.md §3–§4): declarations, ``score``, ``write_scores``, ``summary``.

``score(release)`` computes every statistic of the release on one topic draw
matrix (:func:`~rapgen.kinds.ideas.scores.score.score_archive`) and the six
files of KINDS.md §4:

- ``leaderboard.csv`` and ``pairs.csv`` (the one statistic form);
- ``units.parquet``: one row per (judge, gate, model, strategy, episode) with its
  status (``ok``, ``empty`` or ``awaiting`` evaluation) and every metric;
- ``scores.json``: what was scored (release, draws, axes, tracks, metrics, counts,
  each model's audit) and the headline leader;
- ``diagnostics.json``: judge agreement, gate sensitivity, evaluation counts;
- ``releases.csv``: each release's ranked rows (format 1: its one release).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rapgen.kinds.ideas.archive.check import FORMAT, IdeasArchive
from rapgen.kinds.ideas.archive.config import GATE_NAMES
from rapgen.kinds.ideas.archive.kind import IdeasRelease
from rapgen.kinds.ideas.archive.tables import DATE, DOUBLE, INT, STRING
from rapgen.kinds.ideas.archive.writers import columns_parquet_bytes, json_bytes
from rapgen.kinds.ideas.scores import diagnostics as diag
from rapgen.kinds.ideas.scores.live import live_tracks
from rapgen.kinds.ideas.scores.metrics import METRICS, PRIMARY_METRIC
from rapgen.kinds.ideas.scores.coverage import last_complete_rows, partial_entries
from rapgen.kinds.ideas.scores.score import (
    archive_coverage,
    archive_draws,
    archive_tracks,
    judge_order,
    per_model_values,
    resolved_items,
    score_archive,
)
from rapgen.kinds.ideas.scores.units import ALL_CUTOFF, AXES as AXIS_NAMES, FORECAST_STRICT, LIVE, MODEL_KIND, SPLIT
from rapgen.scores import AxisSpec, ClusterSpec, Primary, ScoredSet, TrackSpec, leaderboard_csv, pairs_csv, rows_csv, write_folder

SCHEMA_VERSION = 1
TRACKS: tuple[TrackSpec, ...] = (
    TrackSpec(ALL_CUTOFF, "All cutoffs"),
    TrackSpec(FORECAST_STRICT, "Forecast-Strict"),
    TrackSpec(LIVE, "Live"),
)
AXES: tuple[AxisSpec, ...] = (
    AxisSpec("judge", (), None),  # the archive's judges (judges.jsonl); the ledger names the headline's
    AxisSpec("gate", GATE_NAMES, "default"),
)
CLUSTERS: tuple[ClusterSpec, ...] = (ClusterSpec("topic", lambda episode: episode.topic_id, primary=True),)
PRIMARY = Primary(PRIMARY_METRIC, ALL_CUTOFF, (("gate", "default"),))
UNIT_COLUMNS = (("entry", STRING), ("kind", STRING), ("condition", STRING), ("judge", STRING), ("gate", STRING),
                ("episode_id", STRING), ("topic_id", STRING), ("cutoff", DATE), ("status", STRING), ("n_ideas", INT),
                *((m.name, DOUBLE) for m in METRICS))
RELEASE_COLUMNS = ("release", "date", "track", "split", *AXIS_NAMES, "entry", "kind", "condition", "metric", "estimate",
                   "ci_low", "ci_high", "rank", "p_first")
FILES = ("leaderboard.csv", "pairs.csv", "units.parquet", "scores.json", "diagnostics.json", "releases.csv")


@dataclass
class IdeasScores:
    """One release's scores: the scored statistics, the header of scores.json and every file's bytes."""

    scored: ScoredSet
    meta: dict[str, Any]
    files: dict[str, bytes]


def score(release: IdeasRelease, *, resamples: int | None = None, **_options: Any) -> IdeasScores:
    """Every score of one Ideas release (``rapgen score``); Search options (``malformed``, ``reruns``) do not apply."""
    archive = release.archive
    assert archive.config is not None and archive.ledger is not None
    items = resolved_items(archive)
    values = per_model_values(archive)
    judges = judge_order(archive)
    R = resamples or archive.ledger.resamples
    live = live_tracks(release, items)
    tracks, draws = archive_tracks(archive, items, live), archive_draws(archive, items, R)
    coverage = archive_coverage(archive, items)
    scored = score_archive(archive, values=values, draws=draws, extra_tracks=live)
    meta = _meta(release, archive, scored, judges, R, len(items))
    past = functools.cache(lambda k: _scored(release.verified.release(k), R))  # an earlier release's statistics, made once
    if release.is_history:  # format 2: who covers only some cutoffs (format 1 has one release, every model complete)
        partial = partial_entries(items, tracks, coverage, judges)
        last_complete_rows(release, partial, past)
        meta["partial"] = partial
    diagnostics = {
        "schema_version": SCHEMA_VERSION, "manifest_sha256": release.manifest_sha256, "diagnostics_version": diag.DIAGNOSTICS_VERSION,
        "judge": meta["primary"]["judge"], "gate": meta["primary"]["gate"], "track": meta["primary"]["track"],
        "judge_agreement": diag.judge_agreement(archive, judges),
        "gate_sensitivity": diag.gate_sensitivity(scored, values, tracks, draws, archive.ledger.level, judges, coverage),
        "evaluation": diag.evaluation(archive, values, judges, coverage),
    }
    files = {
        "leaderboard.csv": leaderboard_csv(scored),
        "pairs.csv": pairs_csv(scored),
        "units.parquet": _units(items, values, archive, coverage),
        "scores.json": json_bytes(meta),
        "diagnostics.json": json_bytes(diagnostics),
        "releases.csv": _releases(release, scored, past),
    }
    return IdeasScores(scored, meta, files)


def write_scores(result: IdeasScores, out_dir: str | Path) -> list[Path]:
    """Write the six files into ``out_dir`` (each whole, then renamed into place)."""
    return write_folder(out_dir, result.files)


def _headline(scored: ScoredSet, track: str, judge: str, gate: str) -> dict | None:
    """The headline cell's leader: rank 1 with the highest estimate (ties: first in file order)."""
    cells = [r for r in scored.rows if r.stat.track == track and r.stat.axes == (judge, gate) and r.stat.metric == PRIMARY_METRIC
             and r.estimate is not None]
    if not cells:
        return None
    best = max(cells, key=lambda r: (r.rank == 1, r.estimate))
    return {"entry": best.stat.entry, "kind": best.stat.kind, "condition": best.stat.condition, "metric": PRIMARY_METRIC,
            "estimate": best.estimate, "ci_low": best.ci_low, "ci_high": best.ci_high, "rank": best.rank, "p_first": best.p_first}


def _model_audit(archive: IdeasArchive) -> dict[str, dict]:
    """Per model, what the Models page shows: validity, repeats and the adapter's audit."""
    out = {}
    for model_id, mf in sorted(archive.models.items()):
        p = mf.predictions
        if p is None:
            continue
        ideas = p.all_ideas()
        out[model_id] = {
            "display_name": mf.info.display_name if mf.info else model_id,
            "effective_cutoff": mf.info.effective_cutoff.isoformat() if mf.info and mf.info.effective_cutoff else None,
            "conditions": list(p.conditions), "n_ideas": len(ideas), "n_empty": len(p.empty),
            "duplicate_titles": len(p.duplicate_titles), "repeats": len(p.repeats), "raw": mf.raw is not None,
            "approach_length": float(np.mean([len(i.approach) for i in ideas])) if ideas else None,
            "empty_key_terms": sum(1 for i in ideas if not i.key_terms),
            "evaluated_by": [j for j in judge_order(archive) if j in mf.evals],
        }
    return out


def _meta(release: IdeasRelease, archive: IdeasArchive, scored: ScoredSet, judges: list[str], resamples: int, n_items: int) -> dict:
    ledger, config = archive.ledger, archive.config
    assert ledger is not None and config is not None
    primary = {"metric": PRIMARY_METRIC, "track": ledger.primary_track, "judge": ledger.primary_judge, "gate": ledger.primary_gate}
    return {
        "schema_version": SCHEMA_VERSION, "kind": "ideas", "format": FORMAT, "manifest_sha256": release.manifest_sha256,
        "name": release.info.get("name"), "synthetic": release.synthetic,
        "release": {"number": release.number, "date": release.record.date.isoformat(), "kind": release.record.kind.value,
                    "includes_unreleased": bool(release.unreleased)},
        "resamples": resamples, "seed": ledger.seed, "level": ledger.level, "split": SPLIT,
        "primary": primary, "headline": _headline(scored, primary["track"], primary["judge"], primary["gate"]),
        "axes": {"judge": judges, "gate": [g.name for g in ledger.gates]},
        "tracks": [{"name": t.name, "label": t.label} for t in TRACKS],
        "metrics": [{"name": m.name, "label": m.label, "higher_is_better": m.higher_is_better, "ranked": m.rank_direction is not None,
                     "form": m.form, "missing": m.missing, "description": m.description} for m in METRICS],
        "counts": {"models": len(_model_audit(archive)), "entries": len({(r.stat.entry, r.stat.condition) for r in scored.rows}),
                   "topics": len({t.topic_id for t in archive.topics}), "episodes": n_items,
                   "resolved_cutoffs": [c.isoformat() for c in archive.resolved], "strict_cutoff": config.strict_cutoff.isoformat()},
        "models": _model_audit(archive),
        "files": list(FILES),
    }


def _units(items, values: Mapping[str, Mapping[tuple[str, str], Any]], archive: IdeasArchive, coverage: Mapping | None = None) -> bytes:
    """units.parquet: (judge, gate, model, strategy) blocks of one row per resolved episode, in the leaderboard's order.

    ``status``: ``ok``, ``empty`` (scored zero), ``awaiting`` (the judge's files for the episode's cutoff are not
    there yet) or ``no_forecast`` (the model sent nothing for that cutoff: undefined, never a zero)."""
    n = len(items)
    cols: dict[str, list] = {name: [] for name, _ in UNIT_COLUMNS}
    for judge in judge_order(archive):
        for gate in (g.name for g in archive.ledger.gates):  # type: ignore[union-attr]
            for model in sorted(values):
                uv = values[model].get((judge, gate))
                if uv is None:
                    continue
                awaiting = judge not in archive.models[model].evals
                for condition, table in uv.values.items():
                    emitted = uv.n_ideas[condition]
                    cov = coverage.get((model, judge, condition)) if coverage is not None else None
                    for name, value in (("entry", model), ("kind", MODEL_KIND), ("condition", condition), ("judge", judge), ("gate", gate)):
                        cols[name].extend([value] * n)
                    cols["episode_id"].extend(e.episode_id for e in items)
                    cols["topic_id"].extend(e.topic_id for e in items)
                    cols["cutoff"].extend(e.cutoff for e in items)
                    if cov is None:
                        cols["status"].extend("awaiting" if awaiting else ("empty" if k == 0 else "ok") for k in emitted.tolist())
                    else:
                        cols["status"].extend("no_forecast" if not f else "awaiting" if not e else "empty" if k == 0 else "ok"
                                              for k, f, e in zip(emitted.tolist(), cov.forecast.tolist(), cov.evaluated.tolist()))
                    cols["n_ideas"].extend(emitted.tolist())
                    for m in METRICS:
                        cols[m.name].append(table[m.name])
    data = [np.concatenate(cols[m]) if m in {x.name for x in METRICS} and cols[m] else cols[m] for m, _ in UNIT_COLUMNS]
    return columns_parquet_bytes(UNIT_COLUMNS, [_nullable(d) for d in data])


def _nullable(column):
    """A float column with NaN as null (an undefined value), as the other score files write it."""
    import pyarrow as pa

    if isinstance(column, np.ndarray) and column.dtype == np.float64:
        return pa.array(column, type=pa.float64(), mask=np.isnan(column))
    return column


def _releases(release: IdeasRelease, scored: ScoredSet, past: Callable[[int], ScoredSet]) -> bytes:
    """releases.csv: the ranked rows of every release up to this one (format 1: the one release), each
    scored from the files it listed (its own episodes, futures, model files and Live entries)."""
    rows = []
    for k in sorted(n for n in release.releases if n <= release.number):
        view = release if k == release.number else release.verified.release(k)
        date = view.record.date.isoformat()
        rows.extend((k, date, r.stat.track, r.stat.split, *r.stat.axes, r.stat.entry, r.stat.kind, r.stat.condition, r.stat.metric,
                     r.estimate, r.ci_low, r.ci_high, r.rank, r.p_first)
                    for r in (scored if view is release else past(k)).rows if r.rank is not None)
    return rows_csv(RELEASE_COLUMNS, rows)


def _scored(release: IdeasRelease, resamples: int) -> ScoredSet:
    """The leaderboard statistics of one (earlier) release, on its own draws."""
    archive = release.archive
    items = resolved_items(archive)
    return score_archive(archive, values=per_model_values(archive), draws=archive_draws(archive, items, resamples),
                         extra_tracks=live_tracks(release, items))


def summary(result: IdeasScores) -> tuple[dict, list[str]]:
    """What ``rapgen score`` reports: scores.json's fields (``--json``) and two lines for a terminal."""
    meta = result.meta
    c = meta["counts"]
    lines = [f"Scored {c['models']} model{'s' * (c['models'] != 1)} ({c['entries']} entries) on {c['episodes']} episodes of "
             f"{c['topics']} topics under {len(meta['axes']['judge'])} judges × {len(meta['axes']['gate'])} gates "
             f"({meta['resamples']} resamples, seed {meta['seed']})."]
    head, p = meta["headline"], meta["primary"]
    if head is not None:
        lines.append(f"Leader ({p['metric']}, {p['track']}, {p['judge']}, {p['gate']}): {head['entry']} / {head['condition']} "
                     f"{head['estimate']:.3f} [{head['ci_low']:.3f}, {head['ci_high']:.3f}].")
    return meta, lines


__all__ = ["AXES", "CLUSTERS", "FILES", "PRIMARY", "TRACKS", "IdeasScores", "score", "summary", "write_scores"]
