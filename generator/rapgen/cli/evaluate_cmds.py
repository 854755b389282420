"""``rapgen evaluate``: run a kind's evaluator on one model (Ideas: retrieval and judgments).

The command verifies the root, hands the release to the kind's declared
``evaluate`` step (:class:`rapgen.kinds.base.BenchmarkKind`) and prints its
summary; the work is in the kind (``rapgen.kinds.ideas.kit.run``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option
from rapgen.cli.common import EPILOG, debug_option, echo_json, handle_errors, json_option, open_release, progress


@contextlib.contextmanager
def _bar(label: str, total: int):
    """A progress bar on a terminal (stderr), silent otherwise."""
    with progress(None, length=max(total, 1), label=label) as bar:
        yield bar.update


@click.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--model", "model", required=True, metavar="ID",
              help="The model to evaluate: a folder of archive/models/, or the model of --out.")
@click.option("--judge", "judges", required=True, multiple=True, metavar="JUDGE",
              help="A judge of archive/provenance/judges.jsonl (repeat for several: retrieval is shared).")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write into this model folder instead of archive/models/ID (a submission being prepared). "
                   "Its own predictions.jsonl is evaluated if it has one, else the archive's model ID.")
@click.option("--base-url", default=None, metavar="URL",
              help="OpenAI-compatible API base for a judge served by an endpoint and for the ledger's embedding "
                   "(POST {base}/chat/completions and {base}/embeddings), e.g. http://127.0.0.1:8000/v1.")
@click.option("--embeddings-url", default=None, metavar="URL", help="Another API base for the embeddings only (default: --base-url).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR",
              help="Environment variable holding the API key (unset: no Authorization header).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the verdict and vector journals go (default: $RAPGEN_CACHE, else ROOT/.rapgen-cache), under ideas/.")
@click.option("--force", is_flag=True, help="Replace evaluator files that SHA256SUMS already lists (a re-judgment; otherwise refused).")
@click.option("--no-cache", is_flag=True,
              help="Judge every pair again, ignoring cached and earlier verdicts (an audit; new verdicts are still journaled).")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds to wait for one reply.")
@click.option("--retries", default=2, show_default=True, type=click.IntRange(0, 10),
              help="Retries of a request after a connection error, a timeout, HTTP 408/409/429 or 5xx.")
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 2048), help="Texts per embeddings request.")
@json_option
@debug_option
@handle_errors
def evaluate(root: Path, model: str, judges: tuple[str, ...], out: Path | None, base_url: str | None, embeddings_url: str | None,
             api_key_env: str, cache_dir: Path | None, force: bool, no_cache: bool, timeout: float, retries: int, batch: int,
             as_json: bool, debug: bool) -> None:
    """Write a model's evaluator files: for every idea of a resolved episode its
    nearest future papers (the ledger's embedding and retrieval depth) into
    eval/JUDGE/candidates.parquet, each judge's P/M/S verdicts with their cache
    keys into eval/JUDGE/judgments.parquet, and features.parquet.

    Judges are the lines of judges.jsonl: a lexical judge is computed here, any
    other is asked through --base-url with the recorded prompt. Every verdict an
    endpoint gives is journaled at once (--cache-dir), so running the command
    again costs nothing and an interrupted run resumes where it stopped. Files
    are written only when complete; those already as computed are left alone.
    Files written into archive/models/ID are not yet listed in SHA256SUMS: a
    listed model gains them through a models release.

    \b
    Examples:
      rapgen evaluate --benchmark ideas --model recent-titles --judge lexical-a --out /tmp/recent-titles
      rapgen evaluate --root ROOT --model my-model --judge gpt-4.1-mini --out my-model --base-url http://127.0.0.1:8000/v1
    """
    from rapgen.cli.common import benchmark_kinds
    from rapgen.errors import UsageProblem

    kind, release = open_release(root)
    if kind.evaluate is None:
        with_step = ", ".join(k for k, v in benchmark_kinds().items() if v.evaluate is not None) or "none"
        raise UsageProblem(f"{root}: a benchmark of kind {kind.name!r} has no evaluator (kinds with one: {with_step})")
    summary = kind.evaluate(release, model=model, judges=judges, out=out, base_url=base_url, embeddings_url=embeddings_url,
                            api_key=os.environ.get(api_key_env) or None, cache_dir=cache_dir, force=force, reuse=not no_cache,
                            timeout=timeout, retries=retries, batch=batch, bar=_bar)
    if as_json:
        echo_json({k: v for k, v in summary.items() if k != "text"})
        return
    for line in summary["text"]:
        click.echo(line)


COMMANDS = [evaluate]
