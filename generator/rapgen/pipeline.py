"""The one cross-stage orchestrator: verify -> score (+ replay) -> render -> mkdocs build.

``run_build`` refuses an archive that fails verification (``open_verified``
raises ArchiveError before anything is scored or written). Intermediate
outputs go to a work folder (default ``<root>/build``): ``scores/`` from the
scoring stage and ``docs/`` with the rendered Markdown; ``site_dir`` receives
the built HTML.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from rapgen.archive import open_verified
from rapgen.errors import UsageProblem
from rapgen.io import DOCS_OUTPUT, SCORES_OUTPUT, WORK_OUTPUT, guard_output_dir
from rapgen.search import validate_call
from rapgen.site import build_site, check_site_dir, check_url, render_docs


@dataclass(frozen=True)
class PipelineResult:
    site_dir: Path
    docs_dir: Path
    scores_dir: Path
    n_pages: int
    manifest_sha256: str
    synthetic: bool
    timings: dict[str, float] = field(default_factory=dict)


def intervention_records(archive):
    """The scorer's per-model intervention records, None when no model has any."""
    from rapgen.scores.interventions.sources import model_records

    return model_records(archive)


def write_counterfactual(archive, records, report, out_dir: str | Path) -> list[Path]:
    """After a counterfactual replay: ``OUT/option_reruns.json`` (the hand-off) and
    ``OUT/interventions/option_counterfactual.csv`` built from it by the scorer, on the
    draws of the score folder there (its scores.json's resamples, else the ledger's)."""
    import json

    from rapgen.scores.interventions.compute import counterfactual_file, read_reruns
    from rapgen.scores.outputs import write_folder
    from rapgen.search import call_is_malformed, write_reruns

    written = [write_reruns(report, out_dir)]
    resamples = None
    meta = Path(out_dir) / "scores.json"
    if meta.is_file():
        try:
            found = json.loads(meta.read_bytes())
        except ValueError:
            found = {}
        if found.get("manifest_sha256") == archive.manifest_sha256:
            resamples = found.get("resamples")
    reruns = read_reruns(out_dir, archive.manifest_sha256) or {}
    return written + write_folder(out_dir, counterfactual_file(archive, records, call_is_malformed, reruns, resamples))


def run_build(root: str | Path, site_dir: str | Path = "site", *, resamples: int | None = None,
              work_dir: str | Path | None = None, scores_dir: str | Path | None = None,
              site_url: str | None = None, repo_url: str | None = None, replay: bool = True,
              release: int | None = None) -> PipelineResult:
    """Verify the archive at ``root``, score it (unless ``scores_dir`` already holds
    scores to reuse), replay the recorded Search calls when any model has traces
    (``replay``; the model pages show the result), render the pages and build the
    site into ``site_dir``. ``site_url`` and ``repo_url`` are the addresses the site
    is served from and the project's repository; without them the site links only
    within itself, relatively. ``release``: render release N's site from the files
    release N listed (scores of that release alone, no replay), byte for byte the same
    whatever later releases added."""
    if resamples is not None and resamples < 1:
        raise UsageProblem(f"--resamples must be a positive integer, got {resamples}")
    check_url("--site-url", site_url)
    check_url("--repo-url", repo_url)
    root = Path(root)
    check_site_dir(Path(site_dir))  # before any work: building empties the site folder
    work = Path(work_dir) if work_dir is not None else root / "build"
    guard_output_dir(work, WORK_OUTPUT)
    guard_output_dir(work / "docs", DOCS_OUTPUT)
    if scores_dir is None:
        guard_output_dir(work / "scores", SCORES_OUTPUT)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    archive = open_verified(root, validate_call=validate_call)
    if release is not None:
        archive.release_view(release)  # a usage error for a release that does not exist
        replay = False  # replay.json describes the latest files, not release N's
    timings["verify"] = time.perf_counter() - t0
    if scores_dir is None:
        from rapgen.scores import compute_scores, write_scores

        t0 = time.perf_counter()
        scores_dir = work / "scores"
        from rapgen.search import call_is_malformed

        write_scores(compute_scores(archive, resamples=resamples, malformed=call_is_malformed, release=release), scores_dir)
        timings["score"] = time.perf_counter() - t0
        if replay and any(archive.has_traces(m) for m in archive.model_ids):
            from rapgen.search import replay_archive, write_replay

            t0 = time.perf_counter()
            records = intervention_records(archive)
            report = replay_archive(archive, counterfactual=records is not None)
            write_replay(report, scores_dir)
            if records is not None:
                write_counterfactual(archive, records, report, scores_dir)
            timings["replay"] = time.perf_counter() - t0
    scores_dir = Path(scores_dir)
    t0 = time.perf_counter()
    rendered = render_docs(archive, scores_dir, work / "docs", repo_url=repo_url, release=release)
    timings["render"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    built = build_site(rendered.docs_dir, site_dir, synthetic=rendered.synthetic,
                       manifest_sha256=rendered.manifest_sha256, archive_name=rendered.archive_name, site_url=site_url)
    timings["mkdocs"] = time.perf_counter() - t0
    return PipelineResult(Path(site_dir), rendered.docs_dir, scores_dir, built.n_pages, rendered.manifest_sha256,
                          rendered.synthetic, timings)
