"""Commands of a format-2 archive's history: ``rapgen release start|roll|cut|verify|list|live``, for every kind.

Each command takes ``--benchmark SLUG`` (rapgen.toml) or ``--root DIR``; the archive's
``format`` picks its kind, whose :class:`~rapgen.archive.HistorySpec` says what a
release may add (RAP: six-month origins; Ideas: monthly cutoffs resolved four
months later; Inspire: no time key, so no rolls).
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option
from rapgen.cli.common import EPILOG, benchmark_kinds, debug_option, echo_json, fail, handle_errors, json_option


class DateType(click.ParamType):
    """A YYYY-MM-DD calendar date; anything else is a usage error (exit 2)."""

    name = "DATE"

    def convert(self, value, param, ctx):
        if isinstance(value, date):
            return value
        try:
            if len(value) != 10:
                raise ValueError
            return date.fromisoformat(value)
        except ValueError:
            self.fail(f"{value!r} is not a YYYY-MM-DD date", param, ctx)


DATE = DateType()


def date_option(f):
    return click.option("--date", "release_date", type=DATE, default=None,
                        help="The release's date (default: today). Release dates never decrease.")(f)


def simulated_option(f):
    return click.option("--simulated/--not-simulated", default=None,
                        help="Mark the record's dates as replayed after the fact (default: as the previous release).")(f)


def _echo_result(result, as_json: bool) -> None:
    if as_json:
        echo_json({"record": result.record.to_dict(), "added": list(result.added)})
        return
    for line in result.summary():
        click.echo(line)


def _formats():
    return benchmark_kinds().formats


def _kind(root: Path):
    """The installed kind of the archive at ``root`` (by ARCHIVE.json's ``format``), or None when the
    file cannot be read (verify then names the problem)."""
    import json

    try:
        fmt = json.loads((Path(root) / "archive" / "ARCHIVE.json").read_bytes()).get("format")
    except (OSError, ValueError, AttributeError):
        return None
    return next((k for k in benchmark_kinds().values() if k.format == fmt), None)


def _spec(root: Path):
    """The root's HistorySpec (RAP's when its kind is unknown)."""
    from rapgen.archive import RAP_HISTORY

    kind = _kind(root)
    return (kind.archive.history if kind is not None else None) or RAP_HISTORY


def _loaded(root: Path):
    from rapgen.archive import load_history

    return load_history(root, with_ledger=False, spec=_spec(root))


@click.group(epilog=EPILOG)
def release() -> None:
    """Cut, roll and check the releases of a format-2 archive (RELEASES.md).

    \b
      rapgen release start --date 2025-07-01      # format 1 -> release 1, next origin open
      rapgen release roll --window new-window/    # ingest the open origin's target window
      rapgen release cut --kind models            # release merged submissions and commitments
      rapgen release verify                       # verify plus every history rule
      rapgen release roll --benchmark ideas --window 2025-07/   # any benchmark of rapgen.toml
    """


@release.command(epilog=EPILOG)
@benchmark_root_option
@date_option
@click.option("--closes", type=DATE, default=None, help="Deadline for Live submissions to the opened origin (default: origin + 14 days).")
@click.option("--no-open", is_flag=True, help="Open no origin for Live submissions.")
@click.option("--simulated", is_flag=True, help="Mark the record's date as replayed after the fact.")
@click.option("--notes", default="", help="Free text stored in the record.")
@json_option
@debug_option
@handle_errors
def start(root: Path, release_date, closes, no_open: bool, simulated: bool, notes: str, as_json: bool, debug: bool) -> None:
    """Record a format-1 archive as release 1 of a history (format_version 2).

    The origin after the last resolved one opens for Live submissions, with
    its Search manifests built from the ledger, unless --no-open is given.
    Release 1's Croissant file replaces a format-1 archive/croissant.json.
    """
    from rapgen.archive import release_start

    _echo_result(release_start(root, kinds=_formats(), release_date=release_date, open_next=not no_open, closes=closes,
                               simulated=simulated, notes=notes), as_json)


@release.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--window", "window_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True,
              help="Folder with the window's papers.parquet and assignments.parquet (ARCHIVE.md columns).")
@click.option("--closes", type=DATE, default=None, help="Deadline for Live submissions to the next origin (default: origin + 14 days).")
@click.option("--no-open", is_flag=True, help="Resolve the open origin without opening the next one.")
@date_option
@simulated_option
@click.option("--notes", default=None, help="Free text stored in the record (default: 'window <start> ingested').")
@json_option
@debug_option
@handle_errors
def roll(root: Path, window_dir: Path, closes, no_open: bool, release_date, simulated, notes, as_json: bool, debug: bool) -> None:
    """Ingest the open origin's target window, resolve that origin and open the next.

    Refuses an archive that does not verify, a window whose rows fall outside
    [origin, origin + 6 months), and arxiv ids already in the archive. Writes
    the window, the next origin's Search manifests, the release record, its
    Croissant file and its manifest, and re-seals SHA256SUMS; on any error
    nothing is written.
    """
    from rapgen.archive import NO_ROLLS, release_roll

    spec = _spec(root)
    if not spec.rolls:
        kind = _kind(root)
        fail(NO_ROLLS.format(root=root, kind=kind.name if kind is not None else "this"), 2)
    _echo_result(release_roll(root, window_dir, kinds=_formats(), closes=closes, release_date=release_date,
                              open_next=not no_open, simulated=simulated, notes=notes), as_json)


@release.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--kind", type=click.Choice(["models", "errata"]), required=True,
              help="models: release every merged submission and commitment; errata: replace files, keeping the old bytes.")
@click.option("--replace", "replacements", multiple=True, metavar="PATH=FILE",
              help="errata: replace archive PATH by the bytes of FILE (repeatable, one --reason each).")
@click.option("--reason", "reasons", multiple=True, help="errata: why the matching --replace is needed.")
@date_option
@simulated_option
@click.option("--notes", default="", help="Free text stored in the record.")
@json_option
@debug_option
@handle_errors
def cut(root: Path, kind: str, replacements: tuple[str, ...], reasons: tuple[str, ...], release_date, simulated,
        notes: str, as_json: bool, debug: bool) -> None:
    """Cut a models release (merged submissions, commitments, reveals) or an errata release.

    Both write the release's Croissant file, and that of every earlier release
    that has none (releases cut before rapgen wrote them).

    \b
      rapgen release cut --kind models --date 2026-01-15
      rapgen release cut --kind errata --replace archive/models/m/model.json=fixed.json --reason "wrong cut-off"
    """
    from rapgen.archive import Replacement, release_cut

    if len(replacements) != len(reasons):
        raise click.UsageError(f"give one --reason per --replace ({len(replacements)} --replace, {len(reasons)} --reason)")
    replaced = []
    for spec, reason in zip(replacements, reasons):
        path, sep, source = spec.partition("=")
        if not sep or not path or not source:
            raise click.UsageError(f"--replace {spec!r}: expected PATH=FILE")
        replaced.append(Replacement(path, reason, Path(source)))
    _echo_result(release_cut(root, kind, kinds=_formats(), replaced=replaced, release_date=release_date, simulated=simulated,
                             notes=notes), as_json)


@release.command(name="verify", epilog="Exit codes: 0 verified; 1 any finding; 2 usage error; 3 internal error.")
@benchmark_root_option
@json_option
@debug_option
@handle_errors
def verify_cmd(root: Path, as_json: bool, debug: bool) -> None:
    """Verify the archive and its history: the hash chain, what each release added, windows, commitments.

    Every finding of 'rapgen verify' is reported, and every history finding
    names the release it concerns ('release 3: ...').
    """
    from rapgen.archive import format_finding, verify_archive
    from rapgen.search import validate_call

    report = verify_archive(root, validate_call=validate_call, kinds=_formats())
    if as_json:
        echo_json(report.to_dict())
        sys.exit(0 if report.ok else 1)
    for f in report.errors:
        click.echo(format_finding(f))
    latest = report.history.latest if report.history is not None else None
    if report.ok:
        what = f"{latest.release} release{'s' * (latest.release != 1)}" if latest else "one implicit release (format 1)"
        click.echo(f"OK: {report.n_files} files verified; history of {what} holds.")
        return
    click.echo(f"FAILED: {len(report.errors)} finding{'s' * (len(report.errors) != 1)}.", err=True)
    sys.exit(1)


@release.command(name="list", epilog=EPILOG)
@benchmark_root_option
@json_option
@debug_option
@handle_errors
def list_cmd(root: Path, as_json: bool, debug: bool) -> None:
    """List the releases of an archive: number, date, kind, origins and manifest digest (nothing is verified)."""
    loaded = _loaded(root)
    rows = []
    for k, record in sorted(loaded.input.records.items()):
        rows.append({**record.to_dict(), "manifest_sha256": loaded.input.root.get(f"archive/releases/{k:04d}.SHA256SUMS")})
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("format 1: one implicit release (number 1, kind initial)")
    for r in rows:
        open_ = f" open {r['open_origin']['origin']} until {r['open_origin']['closes']}" if r["open_origin"] else ""
        resolved = f"resolved {r['resolved_origins'][-1]}" if r["resolved_origins"] else "no time key"
        click.echo(f"{r['release']:>4} {r['date']} {r['kind']:<8} {resolved}{open_} "
                   f"{(r['manifest_sha256'] or '?')[:12]}{' (simulated)' if r['simulated'] else ''}")


@release.command(name="live", epilog=EPILOG)
@benchmark_root_option
@click.option("--as-of", "as_of", type=click.IntRange(min=1), default=None, help="See the history as release N saw it.")
@json_option
@debug_option
@handle_errors
def live_cmd(root: Path, as_of: int | None, as_json: bool, debug: bool) -> None:
    """List every Live entry: model, origin, open or sealed, receipt release and date, on time, status.

    Sealed entries never revealed after their origin resolved are listed as unrevealed, never dropped.
    """
    from rapgen.archive import live_entries

    entries = live_entries(_loaded(root).input, as_of=as_of)
    if as_json:
        echo_json([{**e.__dict__, "status": e.status.value} for e in entries])
        return
    if not entries:
        click.echo("no Live entries")
    for e in entries:
        receipt = f"release {e.receipt} ({e.receipt_date})" if e.receipt else "not yet released"
        click.echo(f"{e.origin} {e.model_id:<24} {'sealed' if e.sealed else 'open':<6} {receipt}; "
                   f"{'on time' if e.on_time else 'late'} (closes {e.closes}); {e.status.value}")


@release.command(name="window", epilog=EPILOG)
@benchmark_root_option
@click.option("--papers", "papers_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True,
              help="A parquet of new papers in the benchmark's papers columns (any dates; the month's are kept).")
@click.option("--month", type=DATE, required=True, help="The window's first day (the open cutoff, a first of a month).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Folder for the window's two files.")
@debug_option
@handle_errors
def window_cmd(root: Path, papers_file: Path, month, out: Path, debug: bool) -> None:
    """Write an Ideas window folder for 'rapgen release roll': the month's papers and their phrase-v1 rows.

    \b
      rapgen release window --benchmark ideas --papers new.parquet --month 2025-07-01 --out w/
      rapgen release roll --benchmark ideas --window w/ --date 2025-08-01
    """
    from rapgen.kinds.ideas import IDEAS_HISTORY, window_folder

    if _spec(root) is not IDEAS_HISTORY:
        kind = _kind(root)
        fail(f"{root}: 'rapgen release window' builds Ideas windows (phrase-v1 rows); this root is of kind "
             f"{kind.name if kind else 'unknown'!r}", 2)
    n, rows = window_folder(root, papers_file, month, out)
    click.echo(f"Wrote {out}: {n} papers of {month:%Y-%m}, {rows} topic memberships.")


@release.command(name="sample-history", epilog=EPILOG)
@click.option("--source", type=click.Path(file_okay=False, exists=True, path_type=Path), default=Path("."), show_default=True,
              help="Root of a verified format-1 archive with origins six months apart (the committed sample, or rapgen synth output).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Empty folder that receives the history.")
@click.option("--open-submitter", default="ref-closed-book", show_default=True,
              help="The model that submits its Live entries openly; every other model seals them.")
@json_option
@debug_option
@handle_errors
def sample_history(source: Path, out: Path, open_submitter: str, as_json: bool, debug: bool) -> None:
    """Replay a format-1 archive as a history: two origins resolved, one roll per later window, the next origin open.

    For the committed sample: 2023-01-01 and 2023-07-01 resolved in release 1,
    rolls of the 2024-01-01, 2024-07-01 and 2025-01-01 windows, 2025-07-01 open.

    Papers, labels and model outputs are the source's, split by date and origin;
    the release dates are replayed, so every record says simulated: true.
    """
    from rapgen import __version__
    from rapgen.sample import build_sample_history

    built = build_sample_history(source, out, kit=f"rapgen {__version__}", open_submitter=open_submitter)
    if as_json:
        echo_json([{"record": r.record.to_dict(), "added": list(r.added)} for r in built.releases])
        return
    for result, seconds in zip(built.releases, built.seconds):
        click.echo(result.summary()[0] + f" ({len(result.added)} files, {seconds:.1f} s)")
    click.echo(f"Wrote a history of {len(built.releases)} releases into {out}.")


COMMANDS = [release]
