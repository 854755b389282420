"""Score-stage command: ``rapgen score``."""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.common import EPILOG, debug_option, echo_json, handle_errors, json_option, root_option


@click.command(epilog=EPILOG)
@root_option
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
@json_option
@debug_option
@handle_errors
def score(root: Path, out_dir: Path, resamples: int | None, release: int | None, as_json: bool, debug: bool) -> None:
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
    """
    from rapgen.archive import open_verified
    from rapgen.io import SCORES_OUTPUT, guard_output_dir
    from rapgen.scores import compute_scores, write_scores
    from rapgen.scores.interventions.compute import read_reruns
    from rapgen.search import call_is_malformed, validate_call

    guard_output_dir(out_dir, SCORES_OUTPUT)  # before any work
    archive = open_verified(root, validate_call=validate_call)
    reruns = read_reruns(out_dir, archive.manifest_sha256)
    result = compute_scores(archive, resamples=resamples, malformed=call_is_malformed, reruns=reruns, release=release)
    written = write_scores(result, out_dir)
    if as_json:
        echo_json({**result.meta, "out": str(out_dir), "files": [p.name for p in written]})
        return
    meta = result.meta
    counts = meta["counts"]
    fields = ", ".join(f"{n} {split}" for split, n in counts["fields"].items())
    click.echo(
        f"Scored {counts['models']} model{'s' * (counts['models'] != 1)} and {len(meta['policies'])} policies on "
        f"{fields} fields ({meta['resamples']} resamples, seed {meta['seed']})."
    )
    if "release" in meta:
        scored = meta["release"]
        click.echo(f"Release {scored['number']} ({scored['date']}, {scored['kind']})"
                   + (" with every merged file." if scored["includes_unreleased"] else ", from the files it listed."))
    click.echo(f"Wrote {len(written)} files to {out_dir} (manifest {meta['manifest_sha256'][:12]}).")


COMMANDS = [score]
