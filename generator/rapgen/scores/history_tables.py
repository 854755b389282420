"""pairs.csv, releases.csv and the release-aware tracks, from what the pipeline already computed.

Both files are built from the scoring's arrays: the unit values of every
entry at every origin, the split's count matrices and resampling units. No
count, unit metric or draw is recomputed per release or per pair; each release
only chooses which units (entries x origins) its tracks take (see
:mod:`rapgen.scores.releases`). For a format-2 archive, :func:`history_tracks`
replaces the format-1 participation (every model in all_origin) by the
release's: complete models only, partial ones listed in scores.json.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rapgen.archive import HistoryInput
from rapgen.scores import steps
from rapgen.scores.outputs import Table
from rapgen.scores.pairs import PairTrack, pairs_table
from rapgen.scores.release_scopes import history_scopes, implicit_scope
from rapgen.scores.releases import ReleaseScope, live_table, releases_table, track_masks
from rapgen.scores.schema import LIVE_TRACK, TRACKS
from rapgen.scores.units import MODEL


def unit_options(scope: ReleaseScope | None) -> dict:
    """read_model_units options for the release scored (none for format 1)."""
    if scope is None:
        return {}
    listed = scope.listed
    return {"partial": True, "keep": None if listed is None else (lambda model_id, origin: (model_id, origin) in listed)}


def entry_units(counted: steps.Counted, uv: steps.UnitValues, n_origins: int) -> np.ndarray:
    """(E, O): where an entry has units (a model's covered origins; baselines everywhere)."""
    out = np.ones((len(uv.entries), n_origins), dtype=bool)
    covered = counted.models.covered
    if covered is not None and len(covered):
        out[: uv.n_models] = covered
    return out


def history_tracks(tr: steps.Tracks, scope: ReleaseScope, fr: steps.Frame, counted: steps.Counted, uv: steps.UnitValues) -> steps.Tracks:
    masks = track_masks(scope, uv.entries, fr.origins, entry_units(counted, uv, len(fr.origins)))
    return replace(tr, participates={t: masks[t].participates for t in TRACKS})


def _scopes(archive, fr: steps.Frame, uv: steps.UnitValues, history: HistoryInput | None, scope: ReleaseScope | None,
            every_release: bool = True) -> list[ReleaseScope]:
    if history is None or scope is None:
        return [implicit_scope(archive)]
    if not every_release:
        return [history_scopes(history, sorted({e.entry for e in uv.entries[: uv.n_models]}), fr.origins, upto=scope.number)[-1]]
    model_ids = sorted({e.entry for e in uv.entries[: uv.n_models]})
    return history_scopes(history, model_ids, fr.origins, upto=scope.number)


def history_tables(archive, fr: steps.Frame, counted: steps.Counted, uv: steps.UnitValues, tr: steps.Tracks, level: float,
                   history: HistoryInput | None = None, scope: ReleaseScope | None = None,
                   every_release: bool = True, names: tuple[str, ...] = ("pairs.csv", "releases.csv", "live.csv")) -> dict[str, Table]:
    """pairs.csv, releases.csv and live.csv (or those of ``names``); pairs and live follow the scored
    release's tracks (format 1: the implicit release, so live.csv has no rows)."""
    has_units = entry_units(counted, uv, len(fr.origins))
    scopes = _scopes(archive, fr, uv, history, scope, every_release)
    latest = track_masks(scope or scopes[-1], uv.entries, fr.origins, has_units)
    pair_tracks = [PairTrack(name, tm.participates, tm.origin_mask) for name, tm in latest.items()]
    block = {key: value for key, value in counted.units_of.items() if key[1] == "block"}
    tables = {
        "pairs.csv": lambda: pairs_table(uv.entries, uv.values, pair_tracks, fr.field_split, fr.splits, block, counted.draws, level),
        "releases.csv": lambda: releases_table(scopes, uv.entries, fr.origins, uv.values, tr.applicable, has_units, fr.field_split,
                                               fr.splits, block, counted.draws, level),
        "live.csv": lambda: live_table(scope or scopes[-1], uv.entries, fr.origins, uv.values, tr.applicable, has_units,
                                       fr.field_split, fr.splits, block, counted.draws, level),
    }
    return {name: make() for name, make in tables.items() if name in names}


def release_meta(history: HistoryInput, scope: ReleaseScope, fr: steps.Frame, counted: steps.Counted,
                 uv: steps.UnitValues, releases: Table, current: bool) -> dict:
    """scores.json ``release``: the release scored, its partial models (model -> condition ->
    k of |R| origins and the last release in which that entry had a complete all_origin row;
    releases.csv holds that row) and each Live participant's on-time origins."""
    masks = track_masks(scope, uv.entries, fr.origins, entry_units(counted, uv, len(fr.origins)))
    complete_in: dict[tuple[str, str], int] = {}
    for number, track, entry, condition in zip(releases.column("release"), releases.column("track"), releases.column("entry"),
                                               releases.column("condition")):
        if track == TRACKS[0]:
            complete_in[(entry, condition)] = max(complete_in.get((entry, condition), 0), int(number))
    partial: dict[str, dict[str, dict]] = {}
    for e, entry in enumerate(uv.entries):
        if entry.kind == MODEL and masks[TRACKS[0]].partial[e]:
            partial.setdefault(entry.entry, {})[entry.condition] = {
                "origins": int(masks[TRACKS[0]].n_origins[e]), "of": len(scope.resolved),
                "last_complete_release": complete_in.get((entry.entry, entry.condition))}
    live = masks.get(LIVE_TRACK)
    record = history.records[scope.number].to_dict()  # as releases/NNNN.json has it (the scope's origins are its)
    return {
        "number": scope.number, **{key: record[key] for key in ("date", "kind", "resolved_origins", "strict_origin")},
        "includes_unreleased": current,
        "simulated": record["simulated"],
        # merged lines no release lists yet (scored only without --release; the site marks them unreleased)
        "unreleased": sorted(p for p in set(history.root) - set(history.manifests.get(max(history.manifests), {}))
                             if p.startswith(("archive/models/", "archive/commitments/"))) if current else [],
        "partial": dict(sorted(partial.items())),
        "live": {} if live is None else {
            uv.entries[e].entry: [fr.origins[o].isoformat() for o in np.flatnonzero(live.origin_mask[e])]
            for e in np.flatnonzero(live.participates) if uv.entries[e].kind == MODEL
        },
    }
