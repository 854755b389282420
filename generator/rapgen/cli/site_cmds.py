"""Commands of the site stage: ``rapgen build`` (the whole pipeline) and ``rapgen render``.

``rapgen build`` builds the portal (every benchmark of ``rapgen.toml``) when the file lists several
benchmarks and no single one is asked for (``--benchmark``, ``--root``, ``--release``, ``--scores``);
otherwise one benchmark alone at ``/``, as a bare archive root always is."""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option, read_config
from rapgen.cli.common import EPILOG, debug_option, echo_json, handle_errors, json_option, open_release
from rapgen.errors import UsageProblem
from rapgen.text import escape_terminal


@click.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--site-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("site"), show_default=True,
              help="Folder that receives the built HTML site (replaced on each build).")
@click.option("--resamples", type=click.IntRange(min=1), default=None,
              help="Bootstrap resamples for scoring (default: the ledger's value). Fewer is faster, for previews only.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the intermediate scores and docs (default: build/, or ROOT/build for one archive; not committed).")
@click.option("--scores", "scores_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Reuse the output folder of an earlier 'rapgen score' instead of scoring again (one benchmark).")
@click.option("--site-url", default=None,
              help="Absolute http(s) URL the site will be served from (instant navigation needs it to match). "
                   "Default: none, every link is relative.")
@click.option("--repo-url", default=None,
              help="Absolute http(s) URL of the project's repository; the Submit page links its guides there. "
                   "Default: none, the guides are named without links.")
@click.option("--no-replay", is_flag=True, help="Skip replaying the recorded Search calls (model pages then show no replay status).")
@click.option("--no-cache", is_flag=True, help="Score without the cache of kept draws (see 'rapgen score --help').")
@click.option("--release", type=click.IntRange(min=1), default=None, metavar="N",
              help="Render release N's site from the files release N listed (scores of release N alone, no replay; "
                   "one benchmark); the same bytes whatever later releases added. Default: the latest state.")
@click.option("--all", "every", is_flag=True,
              help="The portal, even when rapgen.toml lists one benchmark (the default already builds it when it "
                   "lists several); takes no --benchmark, --root, --release or --scores.")
@json_option
@debug_option
@handle_errors
def build(root: Path, site_dir: Path, resamples: int | None, work_dir: Path | None, scores_dir: Path | None,
          site_url: str | None, repo_url: str | None, no_replay: bool, no_cache: bool, release: int | None, every: bool,
          as_json: bool, debug: bool, benchmark=None) -> None:
    """Verify, score, render and build the site.

    Runs verify -> score -> replay (when models have Search traces) -> render ->
    'mkdocs build --strict'. An archive that fails verification is refused
    before anything is written.

    What is built: where ./rapgen.toml lists several benchmarks, the portal --
    a home page at / with a card per benchmark, each benchmark under /<slug>/
    (work in build/<slug>/ and build/docs/), stubs at the default benchmark's
    old addresses (/leaderboard/ -> /rap/leaderboard/), both languages, one
    strict mkdocs build. Given --benchmark, --root, --release or --scores, or
    where there is no rapgen.toml (a bare archive root) or it lists one
    benchmark: that benchmark alone, at /.

    \b
      rapgen build                       # rapgen.toml's benchmarks -> ./site (the portal)
      rapgen build --resamples 200       # a quick preview
      rapgen build --benchmark ideas     # one benchmark alone (work in build/ideas/)
      rapgen build --root DIR            # the archive at DIR alone (DIR/SHA256SUMS + DIR/archive)
      rapgen build --release 1           # the default benchmark's site as release 1 listed it
      python -m http.server -d site      # then open http://localhost:8000/
      rapgen build --site-url https://OWNER.github.io/rapgen/ --repo-url https://github.com/OWNER/rapgen
    """
    from rapgen.cli.common import benchmark_kinds
    from rapgen.pipeline import run_build

    one = benchmark is not None or _given("root") or release is not None or scores_dir is not None
    if every and one:
        raise UsageProblem("--all builds every benchmark as it stands: it takes no --benchmark, --root, --release or --scores")
    if every or (not one and len(read_config().benchmarks) > 1):
        _build_portal(site_dir, resamples, work_dir, site_url, repo_url, no_replay, as_json, "--all" if every else "rapgen build",
                      cache=not no_cache)
        return
    if benchmark is not None and work_dir is None:
        work_dir = Path("build") / benchmark.slug  # KINDS.md §8: each benchmark's work in build/<slug>/
    result = run_build(root, site_dir, resamples=resamples, work_dir=work_dir, scores_dir=scores_dir, site_url=site_url,
                       repo_url=repo_url, replay=not no_replay, release=release, kinds=benchmark_kinds(), cache=not no_cache)
    if as_json:
        echo_json({"site_dir": str(result.site_dir), "docs_dir": str(result.docs_dir), "scores_dir": str(result.scores_dir),
                   "pages": result.n_pages, "manifest_sha256": result.manifest_sha256, "synthetic": result.synthetic,
                   "seconds": {k: round(v, 2) for k, v in result.timings.items()}})
        return
    click.echo(f"Built {result.n_pages} pages into {escape_terminal(str(result.site_dir))} ({_steps(result.timings)}).")
    if result.synthetic:
        click.echo("The archive is synthetic; every page says so.")


def _given(name: str) -> bool:
    """Whether option ``name`` was given on the command line (not left at its default)."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) not in (None, ParameterSource.DEFAULT)


def _steps(timings: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())


def _build_portal(site_dir: Path, resamples: int | None, work_dir: Path | None, site_url: str | None, repo_url: str | None,
                  no_replay: bool, as_json: bool, asked: str, *, cache: bool = True) -> None:
    """The site of every benchmark rapgen.toml lists (KINDS.md §8)."""
    from rapgen.cli.benchmarks import site_benchmarks
    from rapgen.cli.common import benchmark_kinds
    from rapgen.pipeline import SiteBenchmark, run_portal

    config, chosen, notes = site_benchmarks(benchmark_kinds(), asked)
    for note in notes:
        click.echo(note, err=True)
    sites = [SiteBenchmark(b.slug, b.label or b.slug, b.title or b.label or b.slug, b.root) for b in chosen]
    redirect = config.default if any(b.slug == config.default for b in chosen) else None
    result = run_portal(sites, site_dir, title=config.title, redirect=redirect, resamples=resamples,
                        work_dir=work_dir if work_dir is not None else Path("build"), site_url=site_url, repo_url=repo_url,
                        replay=not no_replay, kinds=benchmark_kinds(), cache=cache)
    if as_json:
        echo_json({"site_dir": str(result.site_dir), "docs_dir": str(result.docs_dir), "pages": result.n_pages,
                   "benchmarks": list(result.benchmarks), "redirects": result.redirects, "synthetic": list(result.synthetic),
                   "seconds": {k: round(v, 2) for k, v in result.timings.items()},
                   "benchmark_seconds": {slug: {k: round(v, 2) for k, v in stages.items()}
                                         for slug, stages in result.by_benchmark.items()}})
        return
    click.echo(f"Built {result.n_pages} pages of {len(result.benchmarks)} benchmarks ({', '.join(result.benchmarks)}) and "
               f"{result.redirects} redirect stubs into {escape_terminal(str(result.site_dir))} ({_steps(result.timings)}).")
    if result.synthetic:
        click.echo(f"Synthetic: {', '.join(result.synthetic)}; every page of theirs says so.")


@click.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--scores", "scores_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder of 'rapgen score' (leaderboard.csv, ranks.csv, ...).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Docs folder to write the Markdown pages and assets into (replaced).")
@click.option("--repo-url", default=None,
              help="Absolute http(s) URL of the project's repository; the Submit page links its guides there.")
@json_option
@debug_option
@handle_errors
def render(root: Path, scores_dir: Path, out_dir: Path, repo_url: str | None, as_json: bool, debug: bool) -> None:
    """Render the site's Markdown pages from existing scores (no mkdocs).

    Verifies the archive, then reads the score folder and the archive's descriptive
    records only; it never recomputes a score. Use 'rapgen build' to publish.
    """
    from rapgen.site import render_release

    kind, shown = open_release(root)
    if kind.site is None:
        raise UsageProblem(f"the {kind.name} benchmark kind has no site to render")
    result = render_release(kind.site, shown, scores_dir, out_dir, repo_url=repo_url)
    if as_json:
        echo_json({"docs_dir": str(result.docs_dir), "pages": list(result.pages), "synthetic": result.synthetic,
                   "manifest_sha256": result.manifest_sha256})
        return
    from rapgen.site import LANGUAGES

    each = len(result.pages) // len(LANGUAGES)
    click.echo(f"Rendered {len(result.pages)} pages ({each} in each of {', '.join(LANGUAGES)}) into "
               f"{escape_terminal(str(result.docs_dir))}.")


COMMANDS = [build, render]
