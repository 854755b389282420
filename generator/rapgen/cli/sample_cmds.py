"""Sample-stage commands: ``rapgen sample build`` and ``rapgen synth``."""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.common import EPILOG, debug_option, echo_json, handle_errors, json_option


# The sample stage may not import the agents: the CLI composes them.
def reference_agents(root: Path, submitted) -> list[dict]:
    """Add the reference agents' model folders to a format-1 root (as ``rapgen reference-agents run``)."""
    from rapgen.agents import add_agents_to_archive

    return add_agents_to_archive(root, submitted=submitted)


def reference_records(root: Path) -> dict[str, bytes]:
    """The reference agents' intervention records and the tuned panel model of the committed sample."""
    from rapgen.agents import REFERENCE_AGENTS
    from rapgen.agents import intervention_files
    from rapgen.sample import PANEL

    return intervention_files(root, [a.model_id for a in REFERENCE_AGENTS], panel=PANEL)


def synth_records(root: Path) -> dict[str, bytes]:
    """The synthetic archive's intervention records and its panel model, by the reference agents' policies."""
    from rapgen.agents import intervention_files
    from rapgen.sample import BASE_ID, DAMPINGS, PANEL_ID

    return intervention_files(root, sorted(DAMPINGS), panel=(BASE_ID, PANEL_ID), dampings=DAMPINGS)


@click.group(epilog=EPILOG)
def sample() -> None:
    """Build the committed sample archive from real cs.CL arXiv papers."""


@sample.command("build", epilog=EPILOG)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Repository root to build into: archive/ and SHA256SUMS are written there. It must not hold an archive yet (see --force).",
)
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The arXiv metadata file papers.jsonl.gz.  [default: ../shared/data/arxiv-sample/papers.jsonl.gz, relative to the repository]",
)
@click.option("--force", is_flag=True, help="Replace an existing archive/ and SHA256SUMS in --out (refused if it holds model folders).")
@click.option("--history", is_flag=True, help="Build the committed sample: the base, the reference agents with their intervention records and the tuned panel model, replayed as a release history (simulated dates).")
@click.option("--kind", "kind_name", default="rap", show_default=True,
              help="The benchmark kind whose sample to build (see rapgen.toml). Kinds other than rap read the committed RAP papers of the repository at --source.")
@click.option("--source", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The repository root whose archive/ holds the committed papers (kinds other than rap).")
@json_option
@debug_option
@handle_errors
def build(out: Path, data: Path | None, force: bool, history: bool, kind_name: str, source: Path, as_json: bool, debug: bool) -> None:
    """Build the sample archive: 17 hand-written NLP fields over real cs.CL papers
    (2021-07 to 2025-06), labelled by a TF-IDF instrument, with blocks, split,
    manifests and the parameter ledger, then sealed with SHA256SUMS.

    With --history this is the committed sample as it is: the reference
    agents run on every episode, their intervention records are added, and
    the whole is replayed as a release history (every record simulated).
    The committed sample is built already; to check that it rebuilds byte
    for byte, build into a fresh folder and compare the checksums:

    \b
    Example (from the repository root):
      rapgen sample build --history --out /tmp/again && rapgen verify --root /tmp/again
      cmp SHA256SUMS /tmp/again/SHA256SUMS
    """
    from rapgen.sample import build_sample, default_data_path

    if kind_name != "rap":
        _kind_sample(kind_name, out, source, force, as_json)
        return
    if data is None:
        data = default_data_path()
    if history:
        from rapgen.sample import build_committed_sample

        summary = build_committed_sample(data, out, force=force, agents=reference_agents, records=reference_records)
    else:
        summary = build_sample(data, out, force=force)
    if as_json:
        echo_json(summary)
        return
    if history:
        t = summary["seconds"]
        click.echo(f"Built {out}/archive as a history of {len(summary['releases'])} releases "
                   f"({', '.join(summary['releases'])}) with {len(summary['agents'])} reference agents "
                   f"and {len(summary['intervention_files'])} intervention files in {t['total']:.0f} s.")
    click.echo(
        f"Built {out}/archive: {summary['fields']} fields in {summary['blocks']} blocks "
        f"({summary['dev_fields']} dev), {summary['papers']:,} papers, {summary['memberships']:,} memberships; "
        f"{summary['eligible_pre2024']} fields eligible before 2024."
    )
    click.echo(f"{'field':<26} {'members':>8} {'other':>7} {'boundary':>9}")
    for fid, r in sorted(summary["fields_report"].items()):
        click.echo(f"{fid:<26} {r['members']:>8,} {r['other_share']:>7.1%} {r['boundary_rate']:>9.1%}")


def _kind_sample(name: str, out: Path, source: Path, force: bool, as_json: bool) -> None:
    """``sample build --kind NAME``: the kind's own sample step."""
    from rapgen.cli.common import benchmark_kinds
    from rapgen.errors import UsageProblem

    kinds = benchmark_kinds()
    if name not in kinds or kinds[name].sample is None:
        with_sample = ", ".join(k for k in kinds if kinds[k].sample is not None)
        raise UsageProblem(f"--kind {name!r}: no installed benchmark kind of that name builds a sample (rap{', ' + with_sample if with_sample else ''})")
    summary = kinds[name].sample(out, source=source, force=force)
    if as_json:
        echo_json(summary)
        return
    click.echo(f"Built the {name} sample into {out}" + (f": {summary['text']}" if summary.get("text") else "."))


def _kind_synth(name: str, out: Path, scale: str, seed: int, force: bool, rap_options: list[str], as_json: bool) -> None:
    """``synth --kind NAME``: the kind's own ``synth`` step."""
    from rapgen.cli.common import benchmark_kinds
    from rapgen.errors import UsageProblem

    kinds = benchmark_kinds()
    if name not in kinds or kinds[name].synth is None:
        with_synth = ", ".join(k for k in kinds if kinds[k].synth is not None)
        raise UsageProblem(f"--kind {name!r}: no installed benchmark kind of that name writes a synthetic archive "
                           f"(rap{', ' + with_synth if with_synth else ''})")
    if rap_options:
        raise UsageProblem(f"{rap_options[0]} is an option of RAP's synthetic archive; --kind {name} takes --scale, --seed, --out and --force")
    summary = kinds[name].synth(out, scale=scale, seed=seed, force=force)
    if as_json:
        echo_json({k: v for k, v in summary.items() if k != "text"})
        return
    click.echo(f"Wrote synthetic {name} archive {out}" + (f": {summary['text']}." if summary.get("text") else "."))


@click.command(epilog=EPILOG)
@click.option("--kind", "kind_name", default="rap", show_default=True,
              help="The benchmark kind whose synthetic archive to write (rap, or a kind that declares one: ideas, inspire).")
@click.option("--scale", type=click.Choice(["full", "small"]), default="full", show_default=True, help="full: the benchmark's real size (RAP: 278 fields, 1,390 episodes, 279,365 papers; Ideas: 52 topics x 12 cutoffs; Inspire: 1,000 instances); small: a few of each, for tests.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the generator; the same seed gives the same bytes.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Root folder to write archive/ and SHA256SUMS into (must not hold an archive yet, see --force).")
@click.option("--force", is_flag=True, help="Replace an existing archive/ and SHA256SUMS in --out. Refused if it holds model folders, unless the archive is an earlier rapgen synth output holding only synth's own models.")
@click.option("--no-traces", is_flag=True, help="Skip the models' Search traces (made through the Search backend so that they replay).")
@click.option("--no-interventions", is_flag=True, help="Leave out the intervention records (replays, exact-history units) and the tuned panel model.")
@click.option("--no-history", is_flag=True, help="Write a format-1 archive (one implicit release) instead of a replayed release history.")
@json_option
@debug_option
@handle_errors
def synth(kind_name: str, scale: str, seed: int, out: Path, force: bool, no_traces: bool, no_interventions: bool, no_history: bool,
          as_json: bool, debug: bool) -> None:
    """Write an entirely SYNTHETIC archive (papers, labels, seven models, the
    intervention records of four of them and a tuned panel model) at the
    benchmark's size, as a replayed release history: two origins resolved at
    the start, three rolled in, the next one open, a models release on every
    Live deadline, one adding the intervention records and one errata release.
    For speed measurements and tests. Never commit it.

    With --kind ideas or --kind inspire, the kind's own synthetic archive
    (--scale, --seed, --out and --force apply; the other options are RAP's).

    \b
    Example:
      rapgen synth --scale full --seed 0 --out /tmp/synth && rapgen verify --root /tmp/synth
      rapgen synth --kind ideas --scale full --out /tmp/ideas-synth && rapgen score --root /tmp/ideas-synth --out /tmp/s
    """
    from rapgen.sample import write_synthetic_archive

    if kind_name != "rap":
        rap_options = [n for n, v in (("--no-traces", no_traces), ("--no-interventions", no_interventions),
                                      ("--no-history", no_history)) if v]
        _kind_synth(kind_name, out, scale, seed, force, rap_options, as_json)
        return

    summary = write_synthetic_archive(out, scale, seed, force=force, with_traces=not no_traces,
                                      records=None if no_interventions else synth_records, history=not no_history)
    if as_json:
        echo_json(summary)
        return
    history = f", {summary['releases']} releases" if "releases" in summary else ""
    click.echo(
        f"Wrote synthetic archive {out}: {summary['fields']} fields, {summary['episodes']:,} episodes, "
        f"{summary['papers']:,} papers, {summary['memberships']:,} memberships, {summary['models']} models "
        f"({summary['invalid_units']:,} of {summary['units']:,} units invalid){history} in {summary['total_seconds']:.1f} s."
    )


COMMANDS = [sample, synth]
