"""``rapgen synth`` as a history: intervention records, a panel model and replayed releases.

From the format-1 synthetic archive (sealed in a scratch folder) this adds
what INTERVENTIONS.md and RELEASES.md add at the paper's scale:

* the four diagnostic models' ``replays.jsonl``, ``oracle.jsonl`` and
  ``oracle_traces.jsonl``, and one tuned panel model (:data:`PANEL_ID`, with
  ``panel``, ``base_model`` and ``training.json``), by the reference agents'
  deterministic policies (:mod:`rapgen.agents.interventions`); the Search calls
  run through the real Backend, so they replay;
* the release history of :func:`rapgen.sample.history.build_sample_history`:
  two origins resolved in release 1, three rolled in, the next origin open,
  ``models`` releases for every Live deadline and the reveals, one for the
  intervention records, and one ``errata`` release (:func:`erratum`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rapgen.archive import ARCHIVE_DIR, SUMS_NAME
from rapgen.io import dumps_document

BASE_ID = "synth-alpha"
PANEL_ID = "synth-alpha-tuned"
OPEN_SUBMITTER = "synth-eta"
ERRATUM_MODEL = "synth-delta"
ERRATUM_CUTOFF = "2025-06-01"
# Exact-history damping of the four diagnostic models (how far each continues the change of the counts).
DAMPINGS = {"synth-alpha": 0.0, "synth-beta": 0.25, "synth-gamma": 0.5, "synth-delta": 0.75}


def intervention_records(src: Path) -> dict[str, bytes]:
    """Every intervention file of the sealed format-1 synthetic archive ``src``, by archive path."""
    from rapgen.agents.interventions import intervention_files

    return intervention_files(src, sorted(DAMPINGS), panel=(BASE_ID, PANEL_ID), dampings=DAMPINGS)


def erratum(src: Path):
    """The errata entry: :data:`ERRATUM_MODEL`'s model.json gains the knowledge cut-off it lacked."""
    from rapgen.sample.history import Erratum

    path = f"{ARCHIVE_DIR}/models/{ERRATUM_MODEL}/model.json"
    info = json.loads((src / path).read_text(encoding="utf-8"))
    info["knowledge_cutoff"] = ERRATUM_CUTOFF
    return Erratum(path, dumps_document(info).encode("utf-8"),
                   f"the knowledge cut-off was missing; the provider has since published {ERRATUM_CUTOFF}")


def write_history(src: Path, staging: Path, *, interventions: bool) -> dict:
    """Replay ``src`` (a sealed format-1 synthetic archive) as a history into ``staging``'s
    ``archive/`` and ``SHA256SUMS``; return the release count and timings."""
    from rapgen.sample.history import build_sample_history

    extra = intervention_records(src) if interventions else None
    hist = staging / ".history"
    built = build_sample_history(src, hist, open_submitter=OPEN_SUBMITTER, extra=extra,
                                 extra_notes="intervention records and the tuned panel model added",
                                 errata=(erratum(src),))
    os.replace(hist / ARCHIVE_DIR, staging / ARCHIVE_DIR)
    os.replace(hist / SUMS_NAME, staging / SUMS_NAME)
    hist.rmdir()
    return {"releases": len(built.releases), "release_seconds": round(sum(built.seconds), 1),
            "intervention_files": len(extra or {})}


def add_interventions(root: Path) -> int:
    """Write the intervention files into a format-1 archive ``root`` (unsealed); return how many."""
    from rapgen.io import atomic_write_bytes

    files = intervention_records(root)
    for path, data in sorted(files.items()):
        atomic_write_bytes(root / path, data)
    return len(files)
