"""Archive-stage commands: ``rapgen verify`` and ``rapgen seal``."""

from __future__ import annotations

import atexit
import gc
import sys
from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option
from rapgen.cli.common import EPILOG, benchmark_kinds, debug_option, echo_json, handle_errors

VERIFY_EPILOG = (
    "Exit codes: 0 verified; 1 any finding (FAILED, MISSING, UNLISTED, UNSAFE, MALFORMED, SYMLINK, "
    "NOT-REGULAR, UNREADABLE, DUPLICATE, CONFLICT, INVARIANT, NOT-EVALUATED); 2 usage error; 3 internal error."
)


@click.command(epilog=VERIFY_EPILOG)
@benchmark_root_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (findings with category, path, line, expected, actual, detail).")
@click.option("--strict", is_flag=True, help="Treat accepted non-canonical SHA256SUMS forms (upper-case hex, ' *' marker, CRLF, BOM, comments, blank lines, './') as errors.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success; on failure print only the findings.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Hashing threads (default: every core).")
@debug_option
@handle_errors
def verify(root: Path, as_json: bool, strict: bool, quiet: bool, jobs: int | None, debug: bool) -> None:
    """Check every archived file against SHA256SUMS and the archive's invariants.

    Stricter than 'sha256sum -c': unlisted files, unsafe paths, symlinks, FIFOs
    and malformed lines are findings, and after the bytes verify the structural
    invariants of the archive format are checked (codebooks, blocks, ledger,
    search manifests rebuilt from the ledger, model folders, trace call cap),
    then the release history of a format-2 archive (each finding names its
    release) and every model's intervention records. Every finding is
    reported, one per line, sorted by path.
    """
    from rapgen.archive import format_finding, verify_archive
    from rapgen.search import validate_call

    _skip_final_collection()
    report = _with_progress(
        lambda start, done: verify_archive(root, strict=strict, jobs=jobs, on_hash_start=start, on_hashed=done, validate_call=validate_call,
                                           kinds=benchmark_kinds().formats),
        quiet or as_json,
    )
    if as_json:
        echo_json(report.to_dict())
        sys.exit(0 if report.ok else 1)
    if not quiet:
        for w in report.warnings:
            click.echo(format_finding(w), err=True)
    for f in report.errors:
        click.echo(format_finding(f))
    if report.ok:
        if not quiet:
            click.echo(f"OK: {report.n_files} files, {report.n_bytes:,} bytes verified; structural invariants hold.")
        sys.exit(0)
    counts = ", ".join(f"{n} {k}" for k, n in report.counts().items())
    click.echo(f"FAILED: {len(report.errors)} finding{'s' * (len(report.errors) != 1)} ({counts}); {report.n_files} of {report.n_listed} listed files verified.", err=True)
    sys.exit(1)


def _skip_final_collection() -> None:
    """At exit, freeze what is left, so the interpreter's last collector passes skip it: on a full
    archive those passes took about half a second and found nothing to free that the system does not
    take back anyway (handlers registered with atexit or weakref.finalize still run). Registered once
    per process."""
    if not _FREEZE_AT_EXIT:
        _FREEZE_AT_EXIT.append(True)
        atexit.register(gc.freeze)


_FREEZE_AT_EXIT: list[bool] = []


def _with_progress(run, silent: bool):
    """Run ``run(on_start, on_done)`` with a byte-count progress bar, on a terminal only."""
    if silent or not sys.stderr.isatty():
        return run(None, None)
    bars = []

    def start(n_files: int, n_bytes: int) -> None:
        bar = click.progressbar(length=max(n_bytes, 1), label=f"hashing {n_files} files", file=sys.stderr)
        bar.__enter__()
        bars.append(bar)

    def done(result) -> None:
        bars[0].update(result.size)

    try:
        return run(start, done)
    finally:
        for bar in bars:
            bar.__exit__(None, None, None)


@click.command(epilog=EPILOG)
@benchmark_root_option
@click.option("--json", "as_json", is_flag=True, help="Print the lines added as JSON.")
@click.option("--croissant", is_flag=True, help="For a new format-1 archive: first write archive/croissant.json, "
              "its Croissant metadata, describing every file (refused once SHA256SUMS exists).")
@debug_option
@handle_errors
def seal(root: Path, as_json: bool, croissant: bool, debug: bool) -> None:
    """Write SHA256SUMS for a new archive, or append the lines of new model folders.

    With no SHA256SUMS, every regular file under archive/ is listed in canonical
    form. With one, the existing lines must still match their files: seal refuses
    to change a line (the frozen parts never change, and a sealed model folder is
    never altered) and only adds the files of new archive/models/<model_id>/ folders.
    With --croissant, a new archive's Croissant file is written and listed first.
    """
    from rapgen.archive import seal_archive
    from rapgen.text import escape_terminal

    result = seal_archive(root, croissant=croissant, kinds=benchmark_kinds().formats)
    if as_json:
        echo_json({"created": result.created, "added": list(result.added), "total": result.total})
        return
    if result.created:
        click.echo(f"Wrote SHA256SUMS listing {result.total} files.")
    elif result.added:
        for p in result.added:
            click.echo(f"added {escape_terminal(p, backslash=True)}")
        click.echo(f"Appended {len(result.added)} lines; SHA256SUMS now lists {result.total} files.")
    else:
        click.echo(f"Nothing to add; SHA256SUMS lists {result.total} files.")


COMMANDS = [verify, seal]
