"""``rapgen sample build --history``: the committed sample, byte for byte.

Four steps, each deterministic, in a staging folder next to the target:

1. the format-1 base (:func:`rapgen.sample.build.build_sample`): real cs.CL
   papers, hand-written fields, instrument labels, five origins;
2. the reference agents (:mod:`rapgen.agents`) on every field × origin, added
   and sealed as ``rapgen reference-agents run`` + ``rapgen seal`` would, with
   the fixed submission date :data:`SUBMITTED`;
3. their intervention records and the tuned panel model
   (:func:`rapgen.agents.interventions.intervention_files`);
4. the replayed release history (:func:`rapgen.sample.history.build_sample_history`):
   2023-01-01 and 2023-07-01 resolved in release 1, a Live deadline release and
   a roll for 2024-01-01, 2024-07-01 and 2025-01-01, the reveals, then one
   release adding the intervention records; 2025-07-01 stays open.

Only then are ``archive/`` and ``SHA256SUMS`` moved into the target.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date
from pathlib import Path
from typing import Callable

from rapgen.archive import ARCHIVE_DIR, MODEL_JSON, SUMS_NAME, model_file
from rapgen.io import write_json
from rapgen.sample.common import seal, staged

SUBMITTED = date(2026, 11, 29)  # model.json 'submitted' of the reference agents (fixed, so rebuilds are identical)
PANEL = ("ref-history-trend", "ref-history-trend-tuned")  # (base, tuned panel model)
OPEN_SUBMITTER = "ref-closed-book"
# One diagnostic reference agent declares a knowledge cut-off inside the sample's origins, so that the
# exposure analysis (INTERVENTIONS.md §4) has strict, exposed and boundary origins to show. The bound is
# conservative: the program's only fixed knowledge is its codebook words, written from the calibration
# period; it is stated at month precision, so c_eff is 2024-01-31 and 2024-01-01 becomes a boundary origin.
CUTOFF_MODEL = "ref-sample-classify"
CUTOFF = {
    "knowledge_cutoff": "2024-01-01",
    "cutoff_source": ("declared for the sample: a deterministic program whose only fixed knowledge is its codebook "
                      "words (calibration period, before 2023-01-01); 2024-01 is a conservative month-precision bound "
                      "set inside the sample's origins so that the Forecast-Strict and Joint-Strict masks have strict, "
                      "exposed and boundary origins"),
    "cutoff_precision": "month",
}


AgentsHook = Callable[[Path, date], list[dict]]  # (format-1 root, submitted) -> one summary per agent added
RecordsHook = Callable[[Path], dict[str, bytes]]  # sealed format-1 root -> {archive path: bytes}


def build_committed_sample(data_path: str | Path, out_root: str | Path, *, agents: AgentsHook,
                           records: RecordsHook | None, force: bool = False) -> dict:
    """Build the committed sample (format 2) under ``out_root``; return a summary with timings.

    The sample stage may not import the agents, so the caller (the CLI) passes
    them in: ``agents`` adds the reference agents' model folders to a format-1
    root, ``records`` returns their intervention files (None: none)."""
    from rapgen.sample.build import build_sample
    from rapgen.sample.history import build_sample_history

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    with staged(out_root, force) as staging:
        src = staging / ".format1"
        summary = build_sample(data_path, src)
        seconds["base"] = time.perf_counter() - start
        added = agents(src, SUBMITTED)
        declare_cutoff(src, CUTOFF_MODEL, CUTOFF)
        seal(src)
        seconds["agents"] = time.perf_counter() - start - seconds["base"]
        extra = records(src) if records is not None else None
        seconds["interventions"] = time.perf_counter() - start - seconds["base"] - seconds["agents"]
        hist = staging / ".history"
        built = build_sample_history(src, hist, open_submitter=OPEN_SUBMITTER, extra=extra,
                                     extra_notes="the reference agents' intervention records and the tuned panel model added")
        seconds["history"] = sum(built.seconds)
        os.replace(hist / ARCHIVE_DIR, staging / ARCHIVE_DIR)
        os.replace(hist / SUMS_NAME, staging / SUMS_NAME)
    seconds["total"] = time.perf_counter() - start
    return {**summary, "out": str(out_root), "agents": [a["model_id"] for a in added], "intervention_files": sorted(extra or {}),
            "releases": [r.record.kind.value for r in built.releases], "seconds": {k: round(v, 1) for k, v in seconds.items()}}


def declare_cutoff(root: Path, model_id: str, values: dict) -> None:
    """Set ``values`` (knowledge_cutoff, cutoff_source, cutoff_precision) in a model's model.json,
    keeping its other keys and their order; before the archive is sealed."""
    path = root / model_file(model_id, MODEL_JSON)
    record = json.loads(path.read_text(encoding="utf-8"))
    record.update(values)
    write_json(path, record)
