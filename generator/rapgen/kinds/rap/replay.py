"""RAP's replay step of ``rapgen build`` and ``rapgen replay --out``: every recorded Search call
re-executed on the frozen backend (``replay.json``), and, for models with intervention records,
the Search-option counterfactual handed to the scorer (INTERVENTIONS.md §5)."""

from __future__ import annotations

import json
from pathlib import Path

from rapgen.archive import RapRelease
from rapgen.scores import counterfactual_file, model_records, parse_reruns, write_folder
from rapgen.search import ReplayReport, call_is_malformed, replay_archive, write_replay, write_reruns


def intervention_records(release: RapRelease):
    """The scorer's per-model intervention records, None when no model has any."""
    return model_records(release)


def write_counterfactual(release: RapRelease, records, report: ReplayReport, out_dir: str | Path) -> list[Path]:
    """After a counterfactual replay: ``OUT/option_reruns.json`` (the hand-off) and
    ``OUT/interventions/option_counterfactual.csv`` built from it by the scorer, on the
    draws of the score folder there (its scores.json's resamples, else the ledger's)."""
    written = [write_reruns(report, out_dir)]
    resamples = None
    meta = Path(out_dir) / "scores.json"
    if meta.is_file():
        try:
            found = json.loads(meta.read_bytes())
        except ValueError:
            found = {}
        if found.get("manifest_sha256") == release.manifest_sha256:
            resamples = found.get("resamples")
    # the rows just written, as read_reruns would read them back
    reruns = parse_reruns({"manifest_sha256": report.data["manifest_sha256"], "calls": report.reruns}, release.manifest_sha256) or {}
    return written + write_folder(out_dir, counterfactual_file(release, records, call_is_malformed, reruns, resamples))


def replay(release: RapRelease, scores_dir: str | Path) -> bool:
    """Replay into ``scores_dir`` when some model has traces; True if it ran."""
    if not any(release.has_traces(m) for m in release.model_ids):
        return False
    records = intervention_records(release)
    report = replay_archive(release, counterfactual=records is not None)
    write_replay(report, scores_dir)
    if records is not None:
        write_counterfactual(release, records, report, scores_dir)
    return True
