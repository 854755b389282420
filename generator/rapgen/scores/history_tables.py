"""pairs.csv and releases.csv, from the unit values and draws the pipeline already computed.

Both are built from the latest scoring's arrays: the unit values of every
entry at every origin, the split's count matrices and resampling units. No
count, unit metric or draw is recomputed per release or per pair; each release
only chooses which units (entries x origins) its tracks take (see
:mod:`rapgen.scores.releases`).
"""

from __future__ import annotations

import numpy as np

from rapgen.scores import steps
from rapgen.scores.outputs import Table
from rapgen.scores.pairs import PairTrack, pairs_table
from rapgen.scores.release_scopes import archive_history, history_scopes, implicit_scope
from rapgen.scores.releases import ReleaseScope, releases_table, track_masks


def entry_units(counted: steps.Counted, uv: steps.UnitValues, n_origins: int) -> np.ndarray:
    """(E, O): where an entry has units (a model's covered origins; baselines everywhere)."""
    out = np.ones((len(uv.entries), n_origins), dtype=bool)
    covered = counted.models.covered
    if covered is not None and len(covered):
        out[: uv.n_models] = covered
    return out


def scopes_of(archive, fr: steps.Frame, uv: steps.UnitValues, release: int | None = None) -> list[ReleaseScope]:
    """Every release's scope up to ``release`` (format 1: the one implicit release)."""
    inp = archive_history(archive)
    if inp is None:
        return [implicit_scope(archive)]
    model_ids = sorted({e.entry for e in uv.entries[: uv.n_models]})
    return history_scopes(inp, model_ids, fr.origins, upto=release)


def history_tables(archive, fr: steps.Frame, counted: steps.Counted, uv: steps.UnitValues, tr: steps.Tracks, level: float,
                   *, release: int | None = None) -> dict[str, Table]:
    """``{"pairs.csv": ..., "releases.csv": ...}``; pairs follow the latest scope's tracks."""
    has_units = entry_units(counted, uv, len(fr.origins))
    scopes = scopes_of(archive, fr, uv, release)
    latest = track_masks(scopes[-1], uv.entries, fr.origins, has_units)
    pair_tracks = [PairTrack(name, tm.participates, tm.origin_mask) for name, tm in latest.items()]
    block = {key: value for key, value in counted.units_of.items() if key[1] == "block"}
    return {
        "pairs.csv": pairs_table(uv.entries, uv.values, pair_tracks, fr.field_split, fr.splits, block, counted.draws, level),
        "releases.csv": releases_table(scopes, uv.entries, fr.origins, uv.values, tr.applicable, has_units, fr.field_split,
                                       fr.splits, block, counted.draws, level),
    }
