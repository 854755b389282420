"""What ``rapgen submit check`` reads of an Ideas model folder (KINDS.md §6, IDEAS.md §3–§4).

A pull request adds ``archive/models/<id>/`` with ``model.json``, ``predictions.jsonl`` and,
optionally, ``raw.jsonl``, ``features.parquet`` and the evaluator's ``eval/<judge>/`` tables.
:func:`parse` runs verify's own checks of one model folder (the parsers and the cross-file
rules of :mod:`rapgen.kinds.ideas.archive.check`) against the verified base archive, so a
folder that passes here verifies once it is listed. The tables are what the report shows:
coverage of every claimed strategy over the benchmark's episodes, the counts of what the
benchmark keeps but reports (empty episodes, duplicate titles, repeats, failed judgments) and
a preview of the first ideas.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from rapgen.archive import ProblemKind
from rapgen.kinds.base import ReviewSpec, ReviewTable
from rapgen.kinds.ideas.archive.check import IdeasArchive, ModelFiles, _model, _Run
from rapgen.kinds.ideas.archive.predictions import parse_predictions

MiB = 1 << 20
FILES = ("model.json", "predictions.jsonl", "raw.jsonl", "features.parquet", "eval/*/candidates.parquet", "eval/*/judgments.parquet")
REQUIRED = ("model.json", "predictions.jsonl")
SIZE_LIMITS = (("model.json", 1 * MiB), ("predictions.jsonl", 64 * MiB), ("raw.jsonl", 64 * MiB), ("features.parquet", 16 * MiB),
               ("eval/*/candidates.parquet", 64 * MiB), ("eval/*/judgments.parquet", 64 * MiB))
PREVIEW_TITLE_CHARS = 80


@dataclass(frozen=True)
class Reviewed:
    """One submitted Ideas folder, parsed: the model's files and the archive they were checked against."""

    model: ModelFiles
    archive: IdeasArchive


def _archive(release) -> IdeasArchive:
    return release.archive


def parse(release, files: dict[str, bytes], model_id: str):
    """The folder's files through verify's checks of a model folder, on the verified benchmark."""
    archive = _archive(release)
    folder = f"archive/models/{model_id}"
    run = _Run({f"{folder}/{name}": data for name, data in files.items()})
    model = _model(run, archive, model_id)
    own = f"{folder}/model.json"  # the engine's check of model.json reports its problems once
    findings = _coverage_lines([f for f in run.findings if f.path != own], archive, files, folder)
    return Reviewed(model, archive), findings


def _coverage_lines(findings: list, archive: IdeasArchive, files: dict[str, bytes], folder: str) -> list:
    """A claimed strategy missing an episode is reported at the first line of that strategy (the
    parser names the file only): the coverage findings come one per incomplete strategy, in order."""
    path = f"{folder}/predictions.jsonl"
    gaps = [f for f in findings if f.path == path and f.line is None and f.kind is ProblemKind.COVERAGE]
    if not gaps or archive.config is None or archive.pools is None:
        return findings
    resolved = set(archive.config.cutoffs)
    episodes = {e.episode_id: e for e in archive.pools.episodes if e.cutoff in resolved}
    parsed, _ = parse_predictions(path, files["predictions.jsonl"], episodes, archive.config.top_k)
    first: dict[str, int] = {}
    for (e, c), ideas in parsed.ideas.items():
        first[c] = min([first.get(c, ideas[0].line), *(i.line for i in ideas)])
    for (e, c), line in parsed.empty.items():
        first[c] = min(first.get(c, line), line)
    incomplete = [c for c in parsed.conditions if any((e, c) not in parsed.ideas and (e, c) not in parsed.empty for e in episodes)]
    lines = dict(zip(map(id, gaps), (first.get(c) for c in incomplete))) if len(incomplete) == len(gaps) else {}
    return [replace(f, line=lines[id(f)]) if lines.get(id(f)) else f for f in findings]


def _episodes(state: Reviewed) -> list[str]:
    config, pools = state.archive.config, state.archive.pools
    if pools is None or config is None:
        return []
    resolved = set(config.cutoffs)
    return [e.episode_id for e in pools.episodes if e.cutoff in resolved]


def coverage(release, state: Reviewed) -> ReviewTable | None:
    p = state.model.predictions
    if p is None:
        return None
    episodes = _episodes(state)
    rows = []
    for condition in p.conditions:
        ideas = sum(1 for (e, c) in p.ideas if c == condition)
        empty = sum(1 for (e, c) in p.empty if c == condition)
        rows.append((condition, len(episodes), ideas + empty, "complete" if ideas + empty >= len(episodes) else "incomplete"))
    return ReviewTable("Coverage", ("strategy", "episodes expected", "episodes present", "coverage"), tuple(rows),
                       "A claimed strategy covers every episode of the benchmark's cutoffs: ideas, or one line with "
                       "\"status\": \"empty\".")


def accounting(release, state: Reviewed) -> ReviewTable | None:
    p = state.model.predictions
    if p is None:
        return None
    top_k = state.archive.config.top_k if state.archive.config is not None else 5
    dup = Counter(c for _, c, _ in p.duplicate_titles)
    rep = Counter(c for _, c, _ in p.repeats)
    judged = {judge: (len(j), int(sum(1 for s in j.status.to_pylist() if s == "failed"))) for judge, (_, j) in state.model.evals.items()}
    rows = []
    for condition in p.conditions:
        units = [ideas for (e, c), ideas in p.ideas.items() if c == condition]
        n_ideas = sum(len(u) for u in units)
        empty = sum(1 for (e, c) in p.empty if c == condition)
        short = sum(1 for u in units if len(u) < top_k)
        raw = sum(1 for u in units for i in u if i.raw_sha256 is not None)
        rows.append((condition, n_ideas, empty, short, dup.get(condition, 0), rep.get(condition, 0), raw))
    note = (f"An empty episode and an unfilled slot score zero (the budget is {top_k} ideas); duplicate titles and repeats "
            "from the topic's previous cutoff are reported, never removed.")
    if judged:
        note += " Evaluator files: " + "; ".join(f"{judge} {n:,} judgments, {failed:,} failed" for judge, (n, failed) in sorted(judged.items())) + "."
    else:
        note += " No evaluator files (eval/<judge>/): the model's rows wait for evaluation."
    return ReviewTable("Accounting", ("strategy", "ideas", "empty episodes", "episodes under budget", "duplicate titles", "repeats",
                                      "with raw text"), tuple(rows), note)


def preview_row(release, state: Reviewed, limit: int = 3) -> ReviewTable | None:
    p = state.model.predictions
    if p is None:
        return None
    rows = []
    for idea in p.all_ideas()[:limit]:
        title = idea.title if len(idea.title) <= PREVIEW_TITLE_CHARS else idea.title[:PREVIEW_TITLE_CHARS - 1] + "…"
        rows.append((idea.episode_id, idea.condition, idea.rank, title, len(idea.key_terms)))
    return ReviewTable("Preview", ("episode", "strategy", "rank", "title", "key terms"), tuple(rows),
                       f"The first {len(rows)} of {len(p.all_ideas()):,} ideas, as the evaluator reads them.")


REVIEW = ReviewSpec(FILES, REQUIRED, SIZE_LIMITS, parse=parse, coverage=coverage, accounting=accounting, preview_row=preview_row)
