"""The one cross-stage orchestrator: verify -> score (+ replay) -> render -> mkdocs build.

``run_build`` verifies the root, reads the benchmark kind from its ``ARCHIVE.json``
(``format``, among the kinds of :func:`rapgen.kinds.registry`), takes the release asked
for and runs the kind's steps on it: ``score`` and ``write_scores``, ``replay`` (when the
kind has Search), the site (``render``) and ``mkdocs build``. An archive that fails
verification is refused before anything is scored or written. Intermediate outputs go
to a work folder (default ``<root>/build``): ``scores/`` and ``docs/`` with the rendered
Markdown; ``site_dir`` receives the built HTML.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from rapgen.archive import open_verified
from rapgen.errors import UsageProblem
from rapgen.io import DOCS_OUTPUT, SCORES_OUTPUT, WORK_OUTPUT, guard_output_dir
from rapgen.kinds import Registry, registry
from rapgen.search import call_is_malformed, validate_call
from rapgen.site import build_site, check_site_dir, check_url, render_release


@dataclass(frozen=True)
class PipelineResult:
    site_dir: Path
    docs_dir: Path
    scores_dir: Path
    n_pages: int
    manifest_sha256: str
    synthetic: bool
    timings: dict[str, float] = field(default_factory=dict)


def run_build(root: str | Path, site_dir: str | Path = "site", *, resamples: int | None = None,
              work_dir: str | Path | None = None, scores_dir: str | Path | None = None,
              site_url: str | None = None, repo_url: str | None = None, replay: bool = True,
              release: int | None = None, kinds: Registry | None = None) -> PipelineResult:
    """Verify the archive at ``root``, score it (unless ``scores_dir`` already holds
    scores to reuse), replay the recorded Search calls when any model has traces
    (``replay``; the model pages show the result), render the pages and build the
    site into ``site_dir``. ``site_url`` and ``repo_url`` are the addresses the site
    is served from and the project's repository; without them the site links only
    within itself, relatively. ``release``: render release N's site from the files
    release N listed (scores of that release alone, no replay), byte for byte the same
    whatever later releases added. ``kinds``: the benchmark kinds to choose from
    (default: every kind shipped with rapgen)."""
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
    kinds = kinds if kinds is not None else registry()
    verified = open_verified(root, validate_call=validate_call, kinds=kinds.formats)
    kind = kinds.for_format(verified.format)
    if kind.site is None:
        raise UsageProblem(f"the {kind.name} benchmark kind has no site to build")
    archive = verified.release(release)  # a usage error for an unknown release
    if release is not None:
        replay = False  # replay.json describes the archive as it stands, not release N
    timings["verify"] = time.perf_counter() - t0
    if scores_dir is None:
        t0 = time.perf_counter()
        scores_dir = work / "scores"
        kind.write_scores(kind.score(archive, resamples=resamples, malformed=call_is_malformed), scores_dir)
        timings["score"] = time.perf_counter() - t0
        if replay and kind.replay is not None:
            t0 = time.perf_counter()
            if kind.replay(archive, scores_dir):
                timings["replay"] = time.perf_counter() - t0
    scores_dir = Path(scores_dir)
    t0 = time.perf_counter()
    rendered = render_release(kind.site, archive, scores_dir, work / "docs", repo_url=repo_url)
    timings["render"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    built = build_site(rendered.docs_dir, site_dir, synthetic=rendered.synthetic,
                       manifest_sha256=rendered.manifest_sha256, archive_name=rendered.archive_name, site_url=site_url,
                       spec=kind.site)
    timings["mkdocs"] = time.perf_counter() - t0
    return PipelineResult(Path(site_dir), rendered.docs_dir, scores_dir, built.n_pages, rendered.manifest_sha256,
                          rendered.synthetic, timings)
