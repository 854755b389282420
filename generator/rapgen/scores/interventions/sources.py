"""Each model's intervention records, as the scorer needs them (:class:`ModelRecords`).

``model_records(archive)`` returns one :class:`ModelRecords` per listed model
when any model of the archive carries an intervention record (a readout, an
oracle unit or trace, a training.json, or one of model.json's ``panel``,
``base_model``, ``cutoff_precision`` and ``inference`` keys), else None: an
archive without them is scored exactly as before.

ADAPTER (delete once the verified archive hands out these records): until
:class:`~rapgen.archive.VerifiedArchive` exposes the parsed intervention
records, ``_parse_folder`` reads them from each model folder with the
archive's own parsers. Checking them is verify's job, not this module's: a
finding here is raised as a scoring error.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from rapgen.archive.intervention_checks import panel_cells
from rapgen.archive.intervention_folder import (
    ORACLE_JSONL,
    ORACLE_TRACES_JSONL,
    REPLAYS_JSONL,
    TRAINING_JSON,
    InterventionRecords,
)
from rapgen.archive.interventions import (
    ModelExtensions,
    parse_model_extensions,
    parse_oracle,
    parse_oracle_traces,
    parse_replays,
    parse_training,
)
from rapgen.archive.layout import MODEL_JSON, model_file
from rapgen.errors import ScoringError
from rapgen.scores.interventions.assemble import ModelRecords

DEFAULT_EXTENSIONS = ModelExtensions()


def _read(archive: Any, model_id: str, name: str) -> bytes | None:
    path = Path(archive.root) / model_file(model_id, name)
    return path.read_bytes() if path.is_file() else None


def _checked(found: list, what: str) -> None:
    if found:
        f = found[0]
        raise ScoringError(f"{what}: {getattr(f, 'detail', f)} (run 'rapgen verify')")


def _parse_folder(archive: Any, model_id: str) -> InterventionRecords:
    """ADAPTER: one model folder's intervention records, parsed from disk."""
    field_ids = [f.field_id for f in archive.fields]
    origins = list(archive.origins.origins)
    ext, found = parse_model_extensions(model_file(model_id, MODEL_JSON), _read(archive, model_id, MODEL_JSON) or b"{}",
                                        origins, archive.model_ids)
    _checked(found, model_file(model_id, MODEL_JSON))
    ext = ext or DEFAULT_EXTENSIONS
    parsed: dict[str, Any] = {}
    for name, parse in ((REPLAYS_JSONL, parse_replays), (ORACLE_JSONL, parse_oracle)):
        data = _read(archive, model_id, name)
        if data is not None:
            parsed[name], found = parse(model_file(model_id, name), data, field_ids, origins)
            _checked(found, model_file(model_id, name))
    data = _read(archive, model_id, ORACLE_TRACES_JSONL)
    if data is not None:
        max_calls = int(archive.ledger["search"]["max_calls"])
        parsed[ORACLE_TRACES_JSONL], found = parse_oracle_traces(model_file(model_id, ORACLE_TRACES_JSONL), data, field_ids, origins,
                                                                 max_calls)
        _checked(found, model_file(model_id, ORACLE_TRACES_JSONL))
    training = None
    data = _read(archive, model_id, TRAINING_JSON)
    if data is not None:
        training, found = parse_training(model_file(model_id, TRAINING_JSON), data, field_ids, origins, ext.base_model)
        _checked(found, model_file(model_id, TRAINING_JSON))
    cells = frozenset(panel_cells(ext.panel, archive.fields, archive.blocks, training)) if ext.panel is not None else None
    return InterventionRecords(ext, tuple(parsed.get(REPLAYS_JSONL, ())), tuple(parsed.get(ORACLE_JSONL, ())),
                               tuple(parsed.get(ORACLE_TRACES_JSONL, ())), training, cells)


def folder_records(archive: Any, model_id: str) -> InterventionRecords:
    """A model's intervention records: the verified archive's when it has them, else parsed (adapter)."""
    accessor = getattr(archive, "interventions", None)
    if callable(accessor):
        return accessor(model_id)
    return _parse_folder(archive, model_id)


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
    from rapgen.scores.interventions.exposure import effective_cutoff

    return {r.model_id: effective_cutoff(r.knowledge_cutoff, r.release_date, r.cutoff_precision)
            for r in records or () if r.cutoff_precision != "day"}
