"""Commands of the search stage: ``rapgen search`` and ``rapgen replay``."""

from __future__ import annotations

from pathlib import Path

import click

from rapgen.cli.benchmarks import benchmark_root_option, rap_only
from rapgen.cli.common import debug_option, echo_json, fail, handle_errors, json_option, progress, root_option

CACHE_HELP = "Cache folder for shard indexes (default: $RAPGEN_CACHE, else ROOT/.rapgen-cache)."


def cache_option(f):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=CACHE_HELP)(f)


def _open(root: Path, verify: bool):
    from rapgen.archive import Archive, open_verified

    return open_verified(root).release() if verify else Archive(root)


def _log(message: str) -> None:
    click.echo(message, err=True)


class _Bar:
    """A progress bar created once the total is known (TTY only, via common.progress)."""

    def __init__(self, label: str):
        self.label = label
        self.bar = None

    def start(self, total: int) -> None:
        self.bar = progress(None, length=max(total, 1), label=self.label)
        self.bar.__enter__()

    def tick(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@click.command("search")
@click.argument("field_id")
@click.argument("origin")
@click.argument("regime", type=click.Choice(["fixed", "expanding"]))
@click.argument("query")
@click.option("--sort", type=click.Choice(["relevance", "date"]), default="relevance", show_default=True,
              help="Order by BM25F score or by first_submitted (newest first); ties by arXiv id.")
@click.option("--date-from", default=None, metavar="YYYY-MM-DD", help="Inclusive lower bound (clipped to the shard).")
@click.option("--date-to", default=None, metavar="YYYY-MM-DD", help="Exclusive upper bound (clipped to the shard).")
@click.option("--no-verify", is_flag=True, help="Skip archive verification (the index is still keyed by the parquet digests).")
@cache_option
@root_option
@json_option
@debug_option
@handle_errors
def search(field_id, origin, regime, query, sort, date_from, date_to, no_verify, cache_dir, root, as_json, debug):
    """Run one Search call on the FIELD_ID / ORIGIN / REGIME shard.

    Exactly the tool the benchmark's agents use: BM25F (k1, b and top_k from
    the ledger) over title and abstract, a flat OR of the analysed query terms,
    the exact number of matches within the date bounds, and the top papers.

    \b
      rapgen search nlp-agents 2025-07-01 fixed "tool use benchmark"
      rapgen search nlp-agents 2025-07-01 expanding "tool use" --sort date --date-from 2024-01-01
    """
    from rapgen.search import Backend, resolve_unit
    from rapgen.text import escape_terminal

    archive = _open(root, not no_verify)
    resolve_unit(archive, field_id, origin)  # unknown field or origin: exit 2, listing the choices
    backend = Backend(archive, cache_dir=cache_dir, log=_log)
    shard = backend.shard(field_id, origin, regime)
    args = {"query": query, "sort": sort, "date_from": date_from, "date_to": date_to}
    result = shard.search(args, top_k=backend.top_k, k1=backend.k1, b=backend.b)
    # A query that is not Unicode text (lone surrogates from undecodable argv bytes) is echoed escaped.
    args = {**args, "query": query.encode("utf-8", "backslashreplace").decode("utf-8")}
    if result.error:
        if as_json:
            echo_json({"field_id": field_id, "origin": origin, "regime": regime, "call": args, "error": result.error,
                       "total_hits": 0, "results": []})
        fail(f"malformed Search call: {result.error}", 2)
    papers = backend.papers(list(result.ids))
    if result.scores:
        for p, s in zip(papers, result.scores):
            p["score"] = s
    window = f"[{shard.date_from or 'start'}, {shard.date_to})"
    if as_json:
        echo_json({
            "field_id": field_id, "origin": origin, "regime": regime,
            "shard": {"date_from": shard.date_from, "date_to": shard.date_to, "n_papers": shard.n},
            "call": args, "total_hits": result.total_hits, "results": papers,
        })
        return
    click.echo(f"{result.total_hits:,} hits in {field_id} {origin} {regime} {window} ({shard.n:,} papers); "
               f"top {len(papers)} by {sort}:")
    for rank, p in enumerate(papers, 1):
        score = f"  {p['score']:.4f}" if "score" in p else ""
        # Titles come from the archive: control characters and bidi overrides are shown escaped.
        click.echo(f"{rank:>2}. {escape_terminal(p['arxiv_id'])}  {p['first_submitted']}{score}  {escape_terminal(p['title'] or '')}")


@click.command("replay")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Worker processes (default: 2, or 1 on a 1-core machine).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write OUT/replay.json (the schema is in docs/search.md).")
@click.option("--model", "models", multiple=True, help="Replay only this model (repeatable).")
@cache_option
@benchmark_root_option
@json_option
@debug_option
@handle_errors
def replay(jobs, out_dir, models, cache_dir, root, as_json, debug):
    """Re-execute every recorded Search call and check it reproduces.

    Verifies the archive, builds the shard indexes if the cache is cold, then
    replays each model's traces.jsonl on its shards (split by field across
    processes). Prints per model and condition how many calls reproduced
    (same total_hits, same ids in the same order) and the first differences.
    Exits 1 if any call does not reproduce. The evidence statistics of the
    same traces are in the score folder's diagnostics.json (search_evidence).
    O3 calls (oracle_traces.jsonl) replay on the Expanding shard. With --out and
    intervention records, every well-formed A1-A4 call is also re-run with sort
    relevance and bounds [T - 6 months, T): OUT/option_reruns.json and
    OUT/interventions/option_counterfactual.csv (docs/interventions.md).
    An Inspire root (--benchmark inspire) replays each instance's calls on the
    corpus before its cutoff; the first call that does not reproduce is named.
    """
    from rapgen.archive import open_verified
    from rapgen.cli.common import benchmark_kinds
    from rapgen.kinds.rap import intervention_records, write_counterfactual
    from rapgen.search import format_summary, replay_archive, write_replay

    kinds = benchmark_kinds()
    named = _kind_named(root, kinds)
    if named is not None and named.replay is None:
        rap_only(root, "rapgen replay")  # a kind without Search: stop at once, naming it (RAP and Inspire replay)
    if out_dir is not None:
        from rapgen.io import SCORES_OUTPUT, guard_output_dir

        guard_output_dir(out_dir, SCORES_OUTPUT)  # before any work
    verified = open_verified(root, kinds=kinds.formats)  # a RAP root: the same verification as before
    kind = kinds.for_format(verified.format)
    if kind.name != "rap":  # another kind replays through its own step (KINDS.md §7)
        _replay_kind(kind, verified.release(), jobs=jobs, out_dir=out_dir, models=models, cache_dir=cache_dir, as_json=as_json)
        return
    archive = verified.release()
    records = intervention_records(archive) if out_dir is not None else None
    bar = _Bar("replaying")
    try:
        report = replay_archive(archive, cache_dir=cache_dir, jobs=jobs, models=list(models) or None,
                                on_start=bar.start, tick=bar.tick, log=_log, counterfactual=records is not None)
    finally:
        bar.close()
    if out_dir is not None:
        path = write_replay(report, out_dir)
        click.echo(f"wrote {path}", err=True)
        if records is not None:
            for path in write_counterfactual(archive, records, report, out_dir):
                click.echo(f"wrote {path}", err=True)
    if as_json:
        echo_json(report.data)
    else:
        click.echo(format_summary(report))
    if not report.ok:
        d = report.data
        fail(f"{d['failed']:,} of {d['calls']:,} recorded Search calls did not reproduce")


def _kind_named(root: Path, kinds):
    """The installed kind ARCHIVE.json's ``format`` names, or None (an unreadable file is verify's to report)."""
    import json

    from rapgen.errors import RapgenError

    try:
        return kinds.for_format(json.loads((Path(root) / "archive" / "ARCHIVE.json").read_bytes()).get("format"))
    except (OSError, ValueError, AttributeError, RapgenError):
        return None


def _replay_kind(kind, release, *, jobs, out_dir, models, cache_dir, as_json) -> None:
    """``rapgen replay`` for a kind other than RAP: ``kind.replay(release, out_dir, **options)`` runs every
    recorded call (False: no model has any); its outcome carries the lines to print, the record
    (``--json``, ``OUT/replay.json``) and, when a call does not reproduce, the line naming it (exit 1)."""
    from rapgen.errors import UsageProblem

    unknown = sorted(set(models) - set(release.model_ids))
    if unknown:
        raise UsageProblem(f"model {unknown[0]!r} is not in the archive; its models are: {', '.join(release.model_ids) or 'none'}")
    outcome = kind.replay(release, out_dir, jobs=jobs, models=list(models) or None, cache_dir=cache_dir, log=_log)
    if not outcome:
        if as_json:
            echo_json({"kind": kind.name, "manifest_sha256": release.manifest_sha256, "n_calls": 0, "n_reproduced": 0, "ok": True})
        else:
            click.echo("no recorded Search calls to replay")
        return
    if out_dir is not None:
        click.echo(f"wrote {out_dir / 'replay.json'}", err=True)
    if as_json:
        echo_json(outcome.record)
    else:
        click.echo("\n".join(outcome.lines))
    if not outcome.ok:
        fail(outcome.failure)


COMMANDS = [search, replay]
