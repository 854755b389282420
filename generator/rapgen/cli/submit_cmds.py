"""``rapgen submit check|init|commit``: the pull-request check, the scaffold of a submission folder
and the sealed Live commitment.

The rest of the submitter's kit (``prompt``, ``serve-search``, ``agent run``,
``reference-agents``) is in :mod:`rapgen.cli.kit_cmds`. Each command parses
options, calls one library function and echoes the result.
"""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option, rap_only
from rapgen.cli.common import EPILOG, debug_option, echo_json, fail, handle_errors, json_option


@click.group(epilog=EPILOG)
def submit() -> None:
    """Check a submission folder, or scaffold a new one.

    \b
      rapgen submit init my-model            # model.json template + next steps
      rapgen submit check my-model           # everything a reviewer checks
      rapgen submit check --base origin/main archive/models/my-model
      rapgen submit check --benchmark ideas my-ideas-model
      rapgen submit commit my-model          # seal my-model's open-origin files (Live)
    """


@submit.command("check", epilog=EPILOG)
@benchmark_root_option
@click.option("--base", metavar="REF", help="Git ref of the main line (e.g. origin/main): also prove that nothing outside the folder changed, that the folder is new, and that existing SHA256SUMS lines are untouched.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the Markdown report to FILE (for a pull-request comment).")
@click.option("--no-scores", is_flag=True, help="Skip scoring, replay and the site render (fast schema check only).")
@click.option("--resamples", type=click.IntRange(min=1), default=None, help="Bootstrap resamples for the scores (default: the ledger's value). Fewer is faster, for previews only.")
@click.option("--diagnostics", is_flag=True, help="Also compute the §6 diagnostics and the interventions' files, and render the site from them, as 'rapgen build' does (minutes on a full-scale archive; the report is the same unless one of them fails).")
@click.option("--now", "now_text", metavar="DATE", help="The date a Live submission is judged by: YYYY-MM-DD or an ISO 8601 time (taken in UTC). CI passes the pull request's opening time. Default: today's date in UTC.")
@json_option
@debug_option
@click.argument("model_dir", type=click.Path(path_type=Path))
@handle_errors
def check(root: Path, base: str | None, report_path: Path | None, no_scores: bool, resamples: int | None, diagnostics: bool,
          now_text: str | None, as_json: bool, debug: bool, model_dir: Path) -> None:
    """Check the submission folder MODEL_DIR as a pull request would add it.

    MODEL_DIR is archive/models/<model_id> (the pull-request case) or any other
    folder, checked as if it were added under its name. In order: archive
    integrity, model.json / predictions.jsonl / traces.jsonl (every problem with
    its line), coverage and validity accounting, the folder's SHA256SUMS lines,
    then — only if all of that passed — the scores with intervals, a replay of
    the traces and a dry-run render of the site, on a temporary copy. Nothing is
    written to the archive.

    Prints a Markdown report (the model's leaderboard row in context, its
    validity counts, warnings such as Search conditions without recorded
    calls, every problem with its fix); every text of the submission in it is
    escaped. Exit 1 if any problem; warnings alone exit 0.

    \b
    Across releases (format 2), MODEL_DIR may also be an existing model that
    adds a later origin (origins/<origin>/...) or intervention records; its
    listed files never change. A commitment (archive/commitments/<origin>/
    <model_id>.json) or an open submission for the open origin must be dated
    on or before the origin's closes date, judged by --now (default: today in
    UTC); a reveal must match the committed digests.

    \b
    For the other benchmarks (--benchmark ideas|inspire) the same sections
    run through the kind's own checks: only the files the kind allows, every
    line parsed as verify parses it, coverage of every claimed condition,
    the kind's accounting and a preview, the scores, a replay of every
    recorded Search call (Inspire) and the render; the last line names the
    first problem's file and line.
    """
    import json

    from rapgen.io import atomic_write_bytes
    from rapgen.submit import check_submission, parse_now, problem_order, render_report
    from rapgen.text import escape_terminal

    if report_path is not None and report_path.parent.exists() and not report_path.parent.is_dir():
        fail(f"--report {escape_terminal(str(report_path))}: {escape_terminal(str(report_path.parent))} is not a folder", 2)
    now = parse_now(now_text) if now_text is not None else None
    wanted = not no_scores
    result = check_submission(root, model_dir, base=base, run_scores=wanted, run_replay=wanted, run_site=wanted, resamples=resamples,
                              now=now, diagnostics=diagnostics)
    report = render_report(result)
    if report_path is not None:
        try:
            atomic_write_bytes(report_path, report.encode("utf-8"))
        except OSError as exc:
            fail(f"--report {escape_terminal(str(report_path))}: cannot write the report ({exc.strerror or exc})", 2)
    if as_json:
        # ASCII-only JSON: no control, bidi or undecodable character of a submission reaches the terminal raw.
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=True, default=str))
    else:
        click.echo(report, nl=False)
    if not result.ok:
        n = len(result.problems)
        if result.kind is not None:  # the first problem on one line: file, line and what is wrong
            first = min(result.problems, key=problem_order)
            fail(f"{escape_terminal(first.location())}: {escape_terminal(first.detail)} ({first.keyword}; "
                 f"{n} problem{'s' * (n != 1)} in all, see the report above)", 1)
        fail(f"submission {escape_terminal(result.model_id)} has {n} problem{'s' * (n != 1)}; see the report above", 1)


@submit.command("init", epilog=EPILOG)
@debug_option
@click.argument("model_dir", type=click.Path(path_type=Path))
@handle_errors
def init(debug: bool, model_dir: Path) -> None:
    """Create MODEL_DIR with a model.json template and a README of next steps.

    The folder's name is the model id. Existing files are never overwritten.
    """
    from rapgen.kit import init_submission

    for path in init_submission(model_dir):
        click.echo(f"wrote {path}")
    click.echo(f"Next: fill in the TODOs of {model_dir / 'model.json'}, then see {model_dir / 'README.md'}.")


@submit.command("commit", epilog=EPILOG)
@benchmark_root_option
@click.option("--origin", metavar="DATE", help="The open origin (YYYY-MM-DD); default: the archive's open origin. Any other origin is refused.")
@click.option("--out", "out_path", metavar="FILE", help="Write the commitment to FILE instead of ROOT/archive/commitments/<origin>/<model_id>.json; '-' prints it.")
@json_option
@debug_option
@click.argument("model_dir", type=click.Path(path_type=Path))
@handle_errors
def commit(root: Path, origin: str | None, out_path: str | None, as_json: bool, debug: bool, model_dir: Path) -> None:
    """Seal MODEL_DIR's files for the open origin as a Live commitment.

    \b
    MODEL_DIR is your private submission folder (its name is the model id),
    holding origins/<origin>/predictions.jsonl and, if the model searched,
    origins/<origin>/traces.jsonl, as 'rapgen agent run --origins <origin>'
    writes them. The files are checked against that origin, then their SHA-256
    digests are written to ROOT/archive/commitments/<origin>/<model_id>.json,
    the one file (with model.json for a new model) a sealed pull request adds.
    Keep the files themselves private, unchanged, until the origin is resolved;
    then reveal them under archive/models/<model_id>/origins/<origin>/.
    Exit 1 if the origin is not open or the files do not parse, 2 for a bad
    folder, option or missing file.
    """
    from rapgen.submit import make_commitment
    from rapgen.text import escape_terminal

    rap_only(root, "rapgen submit commit")

    to_stdout = out_path == "-"
    result = make_commitment(root, model_dir, origin, out=None if to_stdout else out_path, to_stdout=to_stdout)
    c = result.commitment
    if as_json:
        echo_json({"path": result.path, "written": str(result.written) if result.written else None, "unchanged": result.unchanged,
                   "closes": result.open_origin.closes.isoformat(), "commitment": {
                       "model_id": c.model_id, "origin": c.origin.isoformat(), "kit": c.kit,
                       "files": {"predictions.jsonl": c.predictions_sha256, "traces.jsonl": c.traces_sha256}}})
        return
    if to_stdout:
        click.echo(result.data.decode("utf-8"), nl=False)
        return
    shown = escape_terminal(str(result.written))
    click.echo(f"{'unchanged' if result.unchanged else 'wrote'} {shown}: {c.model_id} sealed for {c.origin} "
               f"(predictions.jsonl {c.predictions_sha256[:16]}…, traces.jsonl {(c.traces_sha256 or 'none')[:16]}…)")
    from rapgen.submit import today_utc

    if today_utc() > result.open_origin.closes:
        click.echo(f"Warning: today is after {c.origin}'s deadline {result.open_origin.closes}; a pull request opened now is LATE.", err=True)
    click.echo(f"Open the pull request by {result.open_origin.closes} (the deadline, judged by its opening time). "
               f"Keep {escape_terminal(str(model_dir))}/origins/{c.origin}/ unchanged and private until {c.origin} is resolved.")
    if result.written == root / result.path:
        folder = escape_terminal(str(root / "archive" / "models" / c.model_id))
        click.echo(f"Next: a new model copies only its model.json to {folder}/; then rapgen seal --root {escape_terminal(str(root))} "
                   f"and rapgen submit check --root {escape_terminal(str(root))} {folder}")


COMMANDS = [submit]
