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

import os
import time
from datetime import date
from pathlib import Path

from rapgen.archive import ARCHIVE_DIR, SUMS_NAME
from rapgen.sample.common import seal, staged

SUBMITTED = date(2026, 11, 29)  # model.json 'submitted' of the reference agents (fixed, so rebuilds are identical)
PANEL = ("ref-history-trend", "ref-history-trend-tuned")  # (base, tuned panel model)
OPEN_SUBMITTER = "ref-closed-book"


def build_committed_sample(data_path: str | Path, out_root: str | Path, *, force: bool = False,
                           interventions: bool = True, cache_dir: str | Path | None = None) -> dict:
    """Build the committed sample (format 2) under ``out_root``; return a summary with timings."""
    from rapgen.agents import REFERENCE_AGENTS, add_agents_to_archive
    from rapgen.agents.interventions import intervention_files
    from rapgen.sample.build import build_sample
    from rapgen.sample.history import build_sample_history

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    with staged(out_root, force) as staging:
        src = staging / ".format1"
        summary = build_sample(data_path, src)
        seconds["base"] = time.perf_counter() - start
        agents = add_agents_to_archive(src, submitted=SUBMITTED, cache_dir=cache_dir)
        seal(src)
        seconds["agents"] = time.perf_counter() - start - seconds["base"]
        extra = intervention_files(src, [a.model_id for a in REFERENCE_AGENTS], panel=PANEL, cache_dir=cache_dir) if interventions else None
        seconds["interventions"] = time.perf_counter() - start - seconds["base"] - seconds["agents"]
        hist = staging / ".history"
        built = build_sample_history(src, hist, open_submitter=OPEN_SUBMITTER, extra=extra,
                                     extra_notes="the reference agents' intervention records and the tuned panel model added")
        seconds["history"] = sum(built.seconds)
        os.replace(hist / ARCHIVE_DIR, staging / ARCHIVE_DIR)
        os.replace(hist / SUMS_NAME, staging / SUMS_NAME)
    seconds["total"] = time.perf_counter() - start
    return {**summary, "out": str(out_root), "agents": [a["model_id"] for a in agents], "intervention_files": sorted(extra or {}),
            "releases": [r.record.kind.value for r in built.releases], "seconds": {k: round(v, 1) for k, v in seconds.items()}}
