"""What ``rapgen submit check`` reads of an Ideas model folder (KINDS.md §6, IDEAS.md §3–§4, §6).

A pull request adds ``archive/models/<id>/`` with ``model.json``, ``predictions.jsonl`` (the cutoffs
of config.json) and, optionally, ``raw.jsonl``, ``features.parquet`` and the evaluator's
``eval/<judge>/`` tables, plus one group ``origins/<t>/`` of the same files for each later cutoff t:
the names seal allows in a new folder (:data:`~rapgen.kinds.ideas.archive.kind.FOLDER`).
:func:`parse` runs verify's own checks of one model folder (the parsers and the cross-file rules of
:mod:`rapgen.kinds.ideas.archive.check`) against the verified base archive, so a folder that passes
here verifies once it is listed. Coverage is counted against the cutoffs the release resolves: a
claimed strategy with no files for one of them would be a partial entry (no row, no rank), so the
folder fails with one ``COVERAGE`` problem naming the missing cutoffs, and the coverage table shows
them. The tables are what the report shows: coverage of every claimed strategy over the resolved
cutoffs' episodes, the counts of what the benchmark keeps but reports (empty episodes, duplicate
titles, repeats, failed judgments) and a preview of the first ideas.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import date

from rapgen.archive import Category, Finding, ProblemKind
from rapgen.kinds.base import ReviewSpec, ReviewTable
from rapgen.kinds.ideas.archive.check import ORIGIN_FILE, IdeasArchive, ModelFiles, _model, _Run
from rapgen.kinds.ideas.archive.kind import FOLDER
from rapgen.kinds.ideas.archive.predictions import parse_predictions

MiB = 1 << 20
FILES = FOLDER.files  # seal's rules of a new Ideas folder: its files and the groups origins/<t>/ of later cutoffs
REQUIRED = FOLDER.required
_GROUP_LIMITS = (("predictions.jsonl", 64 * MiB), ("raw.jsonl", 64 * MiB), ("features.parquet", 16 * MiB),
                 ("eval/{judge}/candidates.parquet", 64 * MiB), ("eval/{judge}/judgments.parquet", 64 * MiB))
SIZE_LIMITS = (("model.json", 1 * MiB), *_GROUP_LIMITS, *((f"origins/{{key}}/{name}", limit) for name, limit in _GROUP_LIMITS))
PREVIEW_TITLE_CHARS = 80


@dataclass(frozen=True)
class Reviewed:
    """One submitted Ideas folder, parsed: the model's files and the archive they were checked against."""

    model: ModelFiles
    archive: IdeasArchive


def _archive(release) -> IdeasArchive:
    return release.archive


def parse(release, files: dict[str, bytes], model_id: str):
    """The folder's files through verify's checks of a model folder, on the verified benchmark; then
    the cutoffs the release resolves that a claimed strategy has no files for (the folder is partial)."""
    archive = _archive(release)
    folder = f"archive/models/{model_id}"
    run = _Run({f"{folder}/{name}": data for name, data in files.items()})
    model = _model(run, archive, model_id)
    own = f"{folder}/model.json"  # the engine's check of model.json reports its problems once
    findings = _coverage_lines([f for f in run.findings if f.path != own], archive, files, folder)
    findings += _open_evaluations(archive, files, folder)
    if not findings:
        findings += _partial(archive, model, folder)
    return Reviewed(model, archive), findings


def _cutoff_of(episode_id: str) -> date:
    return date.fromisoformat(episode_id.rsplit("@", 1)[1])


def covered(model: ModelFiles) -> dict[str, set[date]]:
    """Each claimed strategy's cutoffs: those of its episodes with ideas or an empty line, over every unit group."""
    p = model.predictions
    out: dict[str, set[date]] = {c: set() for c in (p.conditions if p is not None else ())}
    if p is not None:
        for e, c in (*p.ideas, *p.empty):
            out.setdefault(c, set()).add(_cutoff_of(e))
    return out


def missing_cutoffs(archive: IdeasArchive, model: ModelFiles) -> dict[str, list[date]]:
    """Per claimed strategy, the resolved cutoffs of the release it has no forecasts for (none: left out)."""
    resolved = sorted(archive.resolved)
    gaps = {c: [t for t in resolved if t not in have] for c, have in covered(model).items()}
    return {c: ts for c, ts in gaps.items() if ts}


def _partial(archive: IdeasArchive, model: ModelFiles, folder: str) -> list[Finding]:
    """One finding for the folder when a claimed strategy misses a resolved cutoff: the scorer would
    give such an entry no row and no rank (partial), so a new model covers every resolved cutoff."""
    gaps = missing_cutoffs(archive, model)
    if not gaps:
        return []
    cutoffs = sorted({t for ts in gaps.values() for t in ts})
    strategies = sorted(gaps)
    who = "every strategy" if len(strategies) == len(covered(model)) else "strategy " + ", ".join(strategies)
    detail = (f"partial: {who} misses {len(cutoffs)} of the {len(archive.resolved)} resolved cutoffs "
              f"({', '.join(t.isoformat() for t in cutoffs)}); add origins/<cutoff>/predictions.jsonl for each "
              "(a partial entry gets no leaderboard row and no rank)")
    return [Finding(folder, None, Category.INVARIANT, detail, kind=ProblemKind.COVERAGE)]


def _open_evaluations(archive: IdeasArchive, files: dict[str, bytes], folder: str) -> list[Finding]:
    """An evaluator folder of a later cutoff the release has not resolved: its future is not known yet."""
    resolved = set(archive.resolved)
    out, seen = [], set()
    for name in sorted(files):
        m = ORIGIN_FILE.match(name)
        if not m or not m.group(2).startswith("eval/"):
            continue
        t, judge = date.fromisoformat(m.group(1)), m.group(2).split("/")[1]
        if t in resolved or (t, judge) in seen:
            continue
        seen.add((t, judge))
        out.append(Finding(f"{folder}/origins/{t.isoformat()}/eval/{judge}", None, Category.INVARIANT,
                           f"cutoff {t.isoformat()} is not resolved by this release: evaluator files come once its future is known"))
    return out


def _coverage_lines(findings: list, archive: IdeasArchive, files: dict[str, bytes], folder: str) -> list:
    """A claimed strategy missing an episode is reported at the first line of that strategy in its
    group's predictions.jsonl (the parser names the file only): the coverage findings come one per
    incomplete strategy of a group, in order."""
    if archive.config is None or archive.pools is None:
        return findings
    lines: dict[int, int] = {}
    for group in sorted({f.path for f in findings if f.line is None and f.kind is ProblemKind.COVERAGE}):
        if not group.startswith(f"{folder}/") or not group.endswith("/predictions.jsonl"):
            continue
        name = group[len(folder) + 1:]
        m = ORIGIN_FILE.match(name)
        cutoffs = {date.fromisoformat(m.group(1))} if m else set(archive.config.cutoffs)
        gaps = [f for f in findings if f.path == group and f.line is None and f.kind is ProblemKind.COVERAGE]
        episodes = {e.episode_id: e for e in archive.pools.episodes if e.cutoff in cutoffs}
        parsed, _ = parse_predictions(group, files[name], episodes, archive.config.top_k)
        first: dict[str, int] = {}
        for (e, c), ideas in parsed.ideas.items():
            first[c] = min([first.get(c, ideas[0].line), *(i.line for i in ideas)])
        for (e, c), line in parsed.empty.items():
            first[c] = min(first.get(c, line), line)
        incomplete = [c for c in parsed.conditions if any((e, c) not in parsed.ideas and (e, c) not in parsed.empty for e in episodes)]
        if len(incomplete) == len(gaps):
            lines.update({id(f): first[c] for f, c in zip(gaps, incomplete) if c in first})
    return [replace(f, line=lines[id(f)]) if lines.get(id(f)) else f for f in findings]


def _episodes(state: Reviewed) -> list[str]:
    """The episodes of the cutoffs the release resolves (config.json's and every later one it resolved)."""
    pools = state.archive.pools
    if pools is None:
        return []
    resolved = set(state.archive.resolved)
    return [e.episode_id for e in pools.episodes if e.cutoff in resolved]


def coverage(release, state: Reviewed) -> ReviewTable | None:
    p = state.model.predictions
    if p is None:
        return None
    episodes = _episodes(state)
    kept = set(episodes)
    n_resolved = len(state.archive.resolved)
    gaps = missing_cutoffs(state.archive, state.model)
    rows = []
    for condition in p.conditions:
        present = sum(1 for (e, c) in (*p.ideas, *p.empty) if c == condition and e in kept)
        missing = gaps.get(condition, [])
        status = ("partial: misses " + ", ".join(t.isoformat() for t in missing)) if missing else (
            "complete" if present >= len(episodes) else "incomplete")
        rows.append((condition, f"{n_resolved - len(missing)} of {n_resolved}", len(episodes), present, status))
    return ReviewTable("Coverage", ("strategy", "resolved cutoffs", "episodes expected", "episodes present", "coverage"), tuple(rows),
                       f"A claimed strategy covers every episode of the {n_resolved} cutoffs this release resolves: ideas, or one "
                       "line with \"status\": \"empty\" (predictions.jsonl for the cutoffs of config.json, "
                       "origins/<cutoff>/predictions.jsonl for each later one).")


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
