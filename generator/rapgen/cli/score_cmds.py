"""Score-stage command: ``rapgen score``."""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option
from rapgen.cli.common import EPILOG, debug_option, echo_json, handle_errors, json_option, open_release


@click.command(epilog=EPILOG)
@benchmark_root_option
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the score files (created if missing; only the files rapgen writes are replaced).",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=None,
    help="Bootstrap resamples (default: bootstrap.resamples from the parameter ledger). Seed and level always come from the ledger.",
)
@click.option(
    "--release",
    type=click.IntRange(min=1),
    default=None,
    help="Score release N alone, from the files it listed (what 'rapgen build --release N' uses); "
         "releases.csv then covers releases 1..N. Default: the latest release with every merged file.",
)
@click.option("--no-cache", is_flag=True,
              help="Draw every §6 diagnostic afresh instead of taking the draws that read the counts alone from "
                   "the cache ($RAPGEN_CACHE, else ROOT/.rapgen-cache/scores); nothing is written to the cache.")
@json_option
@debug_option
@handle_errors
def score(root: Path, out_dir: Path, resamples: int | None, release: int | None, no_cache: bool, as_json: bool,
          debug: bool) -> None:
    """Recompute every leaderboard number from the verified archive.

    Verifies the archive first, then computes direction counts under the four
    counting policies, the six mechanical baselines, every unit metric, the
    field-macro scores of both tracks with block-bootstrap intervals (and the
    field-clustered sensitivity), the paired contrasts and ranks, and writes
    leaderboard.csv, contrasts.csv, ranks.csv, field_clustered.csv,
    field_scores.csv, origin_scores.csv, compositions.csv, units.parquet,
    scores.json and diagnostics.json into --out, with pairs.csv (every pair of
    entries) and releases.csv (every release's headline rows). See docs/scoring.md. When
    models carry intervention records, also --out/interventions/ (the
    Search-option counterfactual from --out/option_reruns.json, written by
    'rapgen replay --out', when present). See docs/interventions.md.

    The change-rich test and the split-half reliability read the episode counts
    alone; their draws are kept in the cache and reused while the counts, the
    ledger's parameters and numpy stay the same (--no-cache draws them again).
    """
    from rapgen.io import SCORES_OUTPUT, guard_output_dir
    from rapgen.scores import read_reruns
    from rapgen.search import call_is_malformed

    guard_output_dir(out_dir, SCORES_OUTPUT)  # before any work
    kind, scored = open_release(root, release)  # a usage error for a release that does not exist
    reruns = read_reruns(out_dir, scored.verified.manifest_sha256)  # rapgen replay --out ran on the archive as it stands
    result = kind.score(scored, resamples=resamples, malformed=call_is_malformed, reruns=reruns, cache=not no_cache)
    written = kind.write_scores(result, out_dir)
    data, lines = kind.summary(result) if kind.summary is not None else ({}, [])
    if as_json:
        echo_json({**data, "out": str(out_dir), "files": [p.name for p in written]})
        return
    for line in lines:
        click.echo(line)
    click.echo(f"Wrote {len(written)} files to {out_dir} (manifest {scored.manifest_sha256[:12]}).")


COMMANDS = [score]
