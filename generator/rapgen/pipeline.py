"""The one cross-stage orchestrator: verify -> score (+ replay) -> render -> mkdocs build.

``run_build`` verifies the root, reads the benchmark kind from its ``ARCHIVE.json``
(``format``, among the kinds of :func:`rapgen.kinds.registry`), takes the release asked
for and runs the kind's steps on it: ``score`` and ``write_scores``, ``replay`` (when the
kind has Search), the site (``render``) and ``mkdocs build``. An archive that fails
verification is refused before anything is scored or written. Intermediate outputs go
to a work folder (default ``<root>/build``): ``scores/`` and ``docs/`` with the rendered
Markdown; ``site_dir`` receives the built HTML.

``run_portal`` does the same for every benchmark of a site (KINDS.md §8): each scored in
``<work>/<slug>/scores/``, rendered under ``<work>/docs/<slug>/`` beside the portal page,
one ``mkdocs build --strict``, then redirect stubs at the default benchmark's old addresses.
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
from rapgen.site import (PortalPart, build_site, check_site_dir, check_url, compose_portal, render_release, start_mkdocs,
                         write_redirects)


@dataclass(frozen=True)
class BuiltSite:
    """What a build leaves: the HTML site, the Markdown it was built from, its page count and each step's seconds."""

    site_dir: Path
    docs_dir: Path
    n_pages: int
    timings: dict[str, float] = field(default_factory=dict, kw_only=True)  # step (verify, score, ...) -> seconds


@dataclass(frozen=True)
class PipelineResult(BuiltSite):
    scores_dir: Path
    manifest_sha256: str
    synthetic: bool


def _score_and_replay(kind, release, scores_dir: Path, timings: dict[str, float], *, replay: bool,
                      resamples: int | None, cache: bool) -> None:
    """Score ``release`` into ``scores_dir`` and, with ``replay``, replay its Search calls there. The
    kind's replay runs the score step itself, while its workers answer the calls (the two use the two
    cores together). ``timings`` gets ``score`` (the score step's own seconds) and ``replay`` (what the
    replay added to them: the seconds of both less the score's), so the steps still add up to the build."""
    def score_step() -> object:
        t0 = time.perf_counter()
        # counterfactual=True: a kind with a Search counterfactual hands its plan to its replay
        # (made on the scorer's own grid and draws; other kinds take no such option)
        result = kind.score(release, resamples=resamples, malformed=call_is_malformed, cache=cache, counterfactual=True)
        kind.write_scores(result, scores_dir)
        timings["score"] = time.perf_counter() - t0
        return getattr(result, "counterfactual", None)

    if not (replay and kind.replay is not None):
        score_step()
        return
    t0 = time.perf_counter()
    ran = kind.replay(release, scores_dir, beside=score_step)
    if "score" not in timings:  # a replay that never ran its beside: score now
        score_step()
    elif ran:
        timings["replay"] = max(0.0, time.perf_counter() - t0 - timings["score"])


def run_build(root: str | Path, site_dir: str | Path = "site", *, resamples: int | None = None,
              work_dir: str | Path | None = None, scores_dir: str | Path | None = None,
              site_url: str | None = None, repo_url: str | None = None, replay: bool = True,
              release: int | None = None, kinds: Registry | None = None, cache: bool = True) -> PipelineResult:
    """Verify the archive at ``root``, score it (unless ``scores_dir`` already holds
    scores to reuse), replay the recorded Search calls when any model has traces
    (``replay``; the model pages show the result), render the pages and build the
    site into ``site_dir``. ``site_url`` and ``repo_url`` are the addresses the site
    is served from and the project's repository; without them the site links only
    within itself, relatively. ``release``: render release N's site from the files
    release N listed (scores of that release alone, no replay), byte for byte the same
    whatever later releases added. ``kinds``: the benchmark kinds to choose from
    (default: every kind shipped with rapgen). ``cache``: let the scorer keep and reuse the
    draws that read the counts alone (``rapgen score --no-cache``)."""
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
        scores_dir = work / "scores"
        _score_and_replay(kind, archive, scores_dir, timings, replay=replay, resamples=resamples, cache=cache)
    scores_dir = Path(scores_dir)
    t0 = time.perf_counter()
    started = start_mkdocs()  # its imports beside the render
    try:
        rendered = render_release(kind.site, archive, scores_dir, work / "docs", repo_url=repo_url)
        timings["render"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        built = build_site(rendered.docs_dir, site_dir, synthetic=rendered.synthetic,
                           manifest_sha256=rendered.manifest_sha256, archive_name=rendered.archive_name,
                           site_url=site_url, spec=kind.site, started=started)
    finally:
        started.close()
    timings["mkdocs"] = time.perf_counter() - t0
    return PipelineResult(Path(site_dir), rendered.docs_dir, built.n_pages, scores_dir, rendered.manifest_sha256,
                          rendered.synthetic, timings=timings)


@dataclass(frozen=True)
class SiteBenchmark:
    """A benchmark of the site: its slug, tab label, title and root (``rapgen.toml``)."""

    slug: str
    label: str
    title: str
    root: Path


@dataclass(frozen=True)
class PortalResult(BuiltSite):
    benchmarks: tuple[str, ...]
    redirects: int
    synthetic: tuple[str, ...] = ()  # the slugs of the synthetic benchmarks (their pages say so)
    by_benchmark: dict[str, dict[str, float]] = field(default_factory=dict)  # slug -> verify/score/replay seconds


def run_portal(benchmarks: list[SiteBenchmark], site_dir: str | Path = "site", *, title: str = "rapgen", redirect: str | None = None,
               resamples: int | None = None, work_dir: str | Path = "build", site_url: str | None = None,
               repo_url: str | None = None, replay: bool = True, kinds: Registry | None = None, cache: bool = True) -> PortalResult:
    """One site for ``benchmarks``: each verified first (any failure refuses the build before anything
    is written), then scored, replayed (a kind with Search), rendered under its slug; the portal at the
    root; one strict mkdocs build; stubs at the old addresses of benchmark ``redirect``'s pages.
    ``timings`` holds the stages summed over the benchmarks, ``by_benchmark`` each one's share."""
    if resamples is not None and resamples < 1:
        raise UsageProblem(f"--resamples must be a positive integer, got {resamples}")
    check_url("--site-url", site_url)
    check_url("--repo-url", repo_url)
    check_site_dir(Path(site_dir))
    work = Path(work_dir)
    guard_output_dir(work, WORK_OUTPUT)
    guard_output_dir(work / "docs", DOCS_OUTPUT)
    for b in benchmarks:
        guard_output_dir(work / b.slug / "scores", SCORES_OUTPUT)
    kinds = kinds if kinds is not None else registry()
    timings: dict[str, float] = {"verify": 0.0, "score": 0.0}
    each: dict[str, dict[str, float]] = {}
    opened = []
    for b in benchmarks:
        t0 = time.perf_counter()
        verified = open_verified(b.root, validate_call=validate_call, kinds=kinds.formats)
        kind = kinds.for_format(verified.format)
        if kind.site is None:
            raise UsageProblem(f"benchmark {b.slug!r}: the {kind.name} benchmark kind has no site to build")
        opened.append((b, kind, verified.release()))
        each[b.slug] = {"verify": time.perf_counter() - t0}
    parts = []
    for b, kind, release in opened:
        scores = work / b.slug / "scores"
        _score_and_replay(kind, release, scores, each[b.slug], replay=replay, resamples=resamples, cache=cache)
        parts.append(PortalPart(b.slug, b.label, b.title, kind.name, kind.unit, kind.site, release, scores))
    for stages in each.values():
        for stage, seconds in stages.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
    t0 = time.perf_counter()
    started = start_mkdocs()  # its imports beside the render
    try:
        portal = compose_portal(parts, work / "docs", title=title, repo_url=repo_url)
        timings["render"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        first = opened[0][2]
        built = build_site(portal.docs_dir, site_dir, synthetic=any(r.synthetic for _b, _k, r in opened),
                           manifest_sha256=first.manifest_sha256, archive_name=title, site_url=site_url,
                           plan=portal.plan, started=started)
    finally:
        started.close()
    stubs = write_redirects(site_dir, redirect, title=title) if redirect else []
    timings["mkdocs"] = time.perf_counter() - t0
    return PortalResult(Path(site_dir), portal.docs_dir, built.n_pages, tuple(b.slug for b, _k, _r in opened), len(stubs),
                        tuple(b.slug for b, _k, r in opened if r.synthetic), each, timings=timings)
