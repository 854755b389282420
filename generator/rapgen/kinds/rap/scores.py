"""RAP's scoring, declared for the engine: metrics, tracks, the counting-policy axis, the clusters.

The numbers themselves are :func:`rapgen.scores.compute_scores` (SCORING.md), unchanged;
this part names what it computes, from the scores stage's own declarations (one home each).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from rapgen.archive import RapRelease
from rapgen.io import cache_root
from rapgen.scores import (
    HISTORY_TRACKS, METRICS, POLICIES, PRIMARY, AxisSpec, ClusterSpec, ScoreResult, TrackSpec, compute_scores,
    write_scores, TRACK_TITLES,
)

TRACKS: tuple[TrackSpec, ...] = tuple(TrackSpec(name, TRACK_TITLES[name]) for name in HISTORY_TRACKS)
AXES: tuple[AxisSpec, ...] = (AxisSpec("policy", POLICIES, PRIMARY.policy),)
# The block bootstrap gives the intervals; the field-clustered one is the sensitivity (SCORING.md §5).
CLUSTERS: tuple[ClusterSpec, ...] = (
    ClusterSpec("block", lambda field: field.block_id, primary=True),
    ClusterSpec("field", lambda field: field.field_id),
)


def score(release: RapRelease, *, resamples: int | None = None, malformed: Callable | None = None,
          reruns: Mapping | None = None, diagnostics: bool = True, cache: bool = True,
          cache_dir: str | Path | None = None, counterfactual: bool = False) -> ScoreResult:
    """Every score of one RAP release (``rapgen score``). ``cache``: keep the §6 draws that read the
    counts alone in ``<cache>/scores/`` (``cache_dir``, else ``$RAPGEN_CACHE``, else
    ``<root>/.rapgen-cache``) and take them from there when the same counts come again.
    ``counterfactual``: also the Search-option counterfactual's plan (``result.counterfactual``),
    which the build's replay completes (see :func:`rapgen.kinds.rap.replay.replay`)."""
    draws = cache_root(release.root, cache_dir) / "scores" if cache and diagnostics else None
    return compute_scores(release, resamples, malformed=malformed, reruns=reruns, diagnostics=diagnostics, draws_cache=draws,
                          counterfactual=counterfactual)


def write(result: ScoreResult, out_dir: str | Path) -> list[Path]:
    return write_scores(result, out_dir)


def summary(result: ScoreResult) -> tuple[dict, list[str]]:
    """What ``rapgen score`` reports: scores.json's fields (``--json``) and two lines for a terminal."""
    meta = result.meta
    counts = meta["counts"]
    fields = ", ".join(f"{n} {split}" for split, n in counts["fields"].items())
    lines = [f"Scored {counts['models']} model{'s' * (counts['models'] != 1)} and {len(meta['policies'])} policies on "
             f"{fields} fields ({meta['resamples']} resamples, seed {meta['seed']})."]
    if "release" in meta:
        scored = meta["release"]
        lines.append(f"Release {scored['number']} ({scored['date']}, {scored['kind']})"
                     + (" with every merged file." if scored["includes_unreleased"] else ", from the files it listed."))
    return meta, lines


__all__ = ["AXES", "CLUSTERS", "METRICS", "PRIMARY", "TRACKS", "score", "summary", "write"]
