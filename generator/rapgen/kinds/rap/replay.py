"""RAP's replay step of ``rapgen build`` and ``rapgen replay --out``: every recorded Search call
re-executed on the frozen backend (``replay.json``), and, for models with intervention records,
the Search-option counterfactual handed to the scorer (INTERVENTIONS.md §5)."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path

from rapgen.archive import RapRelease
from rapgen.scores import CounterfactualInputs, counterfactual_plan, model_records, parse_reruns, write_folder
from rapgen.search import ReplayReport, call_is_malformed, replay_archive, write_replay, write_reruns


def intervention_records(release: RapRelease):
    """The scorer's per-model intervention records, None when no model has any."""
    return model_records(release)


def _resamples(release: RapRelease, out_dir: str | Path) -> int | None:
    """The draws of the score folder at ``out_dir`` (its scores.json's resamples), None: the ledger's."""
    meta = Path(out_dir) / "scores.json"
    if meta.is_file():
        try:
            found = json.loads(meta.read_bytes())
        except ValueError:
            found = {}
        if found.get("manifest_sha256") == release.manifest_sha256:
            return found.get("resamples")
    return None


def write_counterfactual(release: RapRelease, records, report: ReplayReport, out_dir: str | Path, plan=None) -> list[Path]:
    """After a counterfactual replay: ``OUT/option_reruns.json`` (the hand-off) and
    ``OUT/interventions/option_counterfactual.csv`` built from it by the scorer, on the
    draws of the score folder there (its scores.json's resamples, else the ledger's).
    ``plan``: ``counterfactual_plan`` of the same release, records and draws, if made already."""
    written = [write_reruns(report, out_dir)]  # first, as before the plan could be made ahead
    if plan is None:
        plan = counterfactual_plan(release, records, call_is_malformed, _resamples(release, out_dir))
    # the rows just written, as read_reruns would read them back
    reruns = parse_reruns({"manifest_sha256": report.data["manifest_sha256"], "calls": report.reruns}, release.manifest_sha256) or {}
    return written + write_folder(out_dir, plan.file(reruns))


def replay(release: RapRelease, scores_dir: str | Path, *, beside: Callable[[], object] | None = None) -> bool:
    """Replay into ``scores_dir`` when some model has traces; True if it ran. ``beside`` (the build's
    score step, which writes ``scores_dir``) runs once: in a thread while the forked workers answer
    the calls, or first when there is nothing to replay; the counterfactual's grid and recorded calls
    are made after it in the same thread (they read the draws of the score folder it wrote), unless
    ``beside`` returns them: the scorer's plan (``score(..., counterfactual=True).counterfactual``, on
    the very draws it wrote). An exception of ``beside`` is raised once the workers are done, before
    any replay file is written."""
    if not any(release.has_traces(m) for m in release.model_ids):
        if beside is not None:
            beside()
        return False
    records = intervention_records(release)
    made: dict = {}

    def alongside() -> None:
        handed = beside() if beside is not None else None
        if records is None:
            return
        if isinstance(handed, CounterfactualInputs):
            made["plan"] = handed
            return
        try:
            made["plan"] = counterfactual_plan(release, records, call_is_malformed, _resamples(release, scores_dir))
        except Exception:  # noqa: BLE001 - made again by write_counterfactual, which raises it after the replay files
            pass

    report = replay_archive(release, counterfactual=records is not None, beside=alongside)
    write_replay(report, scores_dir)
    if records is not None:
        # The release and the plan stay out of the collector's passes while the file is made
        # (they hold no cycles to free; each pass would walk all of them again).
        gc.freeze()
        try:
            write_counterfactual(release, records, report, scores_dir, made.get("plan"))
        finally:
            gc.unfreeze()
    return True
