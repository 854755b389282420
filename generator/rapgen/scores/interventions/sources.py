"""Each model's intervention records, as the scorer needs them (:class:`ModelRecords`).

``model_records(archive)`` returns one :class:`ModelRecords` per listed model
when any model of the archive carries an intervention record (a readout, an
oracle unit or trace, a training.json, or one of model.json's ``panel``,
``base_model``, ``cutoff_precision`` and ``inference`` keys), else None: an
archive without them is scored exactly as before. The records are the ones
``verify`` parsed and checked, as the release scored lists them (``RapRelease.interventions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from rapgen.archive import InterventionRecords, ModelExtensions
from rapgen.scores.interventions.assemble import ModelRecords

DEFAULT_EXTENSIONS = ModelExtensions()
NO_RECORDS = InterventionRecords(DEFAULT_EXTENSIONS)


def folder_records(archive: Any, model_id: str) -> InterventionRecords:
    """A model's verified intervention records (empty when it has none)."""
    found = archive.interventions(model_id)
    return found if found is not None else NO_RECORDS


def _has_any(rec: InterventionRecords) -> bool:
    return bool(rec.readouts or rec.oracle or rec.oracle_traces or rec.training is not None
                or rec.extensions != DEFAULT_EXTENSIONS)


def model_records(archive: Any) -> list[ModelRecords] | None:
    """Every listed model's :class:`ModelRecords`, or None when no model has an intervention record."""
    folders = {mid: folder_records(archive, mid) for mid in archive.model_ids}
    if not any(_has_any(rec) for rec in folders.values()):
        return None
    out = []
    for info in archive.models:
        rec = folders[info.model_id]
        ext = rec.extensions
        out.append(ModelRecords(
            info.model_id, archive.predictions(info.model_id),
            archive.traces(info.model_id) if archive.has_traces(info.model_id) else (),
            rec.readouts, rec.oracle, rec.oracle_traces, info.knowledge_cutoff, info.release_date,
            ext.cutoff_precision, ext.panel, rec.panel_cells, ext.base_model,
        ))
    return out


def panel_models(records: Sequence[ModelRecords] | None) -> frozenset[str]:
    """Models with a ``panel``: off leaderboard.csv and ranks.csv (and every leaderboard-derived file)."""
    return frozenset(r.model_id for r in records or () if r.panel is not None)


def effective_cutoffs(records: Sequence[ModelRecords] | None) -> dict[str, date | None]:
    """model id -> c_eff (§4) for models whose ``cutoff_precision`` is not ``day``."""
    return {r.model_id: _effective_cutoff(r.knowledge_cutoff, r.release_date, r.cutoff_precision)
            for r in records or () if r.cutoff_precision != "day"}


def counting_rules(archive: Any) -> tuple[frozenset[str], dict[str, date | None]]:
    """``panel_models`` and ``effective_cutoffs`` of ``model_records(archive)``, read from the
    listed model.json files alone: what counting needs, without parsing any intervention record
    (releases.csv's blocks before an errata, scored on a past release, need no more)."""
    from rapgen.archive import model_extensions

    panels, cutoffs = set(), {}
    origins, model_ids = archive.known_origins, archive.model_ids
    for info in archive.models:
        ext, findings = model_extensions("model.json", info, origins, model_ids)
        if ext is None or findings:  # verify accepted it on its own origins: take the records' path
            records = model_records(archive)
            return panel_models(records), effective_cutoffs(records)
        if ext.panel is not None:
            panels.add(info.model_id)
        if ext.cutoff_precision != "day":
            cutoffs[info.model_id] = _effective_cutoff(info.knowledge_cutoff, info.release_date, ext.cutoff_precision)
    return frozenset(panels), cutoffs


def _effective_cutoff(cutoff: date | None, release: date | None, precision: str) -> date | None:
    from rapgen.scores.interventions.exposure import effective_cutoff

    return effective_cutoff(cutoff, release, precision)


def on_origins(records: Sequence[ModelRecords], origins: Sequence[date]) -> list[ModelRecords]:
    """The records of the scored origins only (a history archive scores its resolved origins)."""
    keep = set(origins)

    def inside(items: Sequence) -> tuple:
        return tuple(x for x in items if x.origin in keep)

    out = []
    for r in records:
        cells = None if r.panel_cells is None else frozenset(c for c in r.panel_cells if c[1] in keep)
        out.append(replace(r, units=inside(r.units), traces=inside(r.traces), readouts=inside(r.readouts), oracle=inside(r.oracle),
                           oracle_traces=inside(r.oracle_traces), panel_cells=cells))
    return out
