"""Ideas' release history (IDEAS.md §6, KINDS.md §5): monthly cutoffs, each resolved four months after it opens.

:data:`IDEAS_HISTORY` declares the rhythm: a roll ingests the month M of the
open cutoff (``windows/<M>/``), resolves M − 3 (``cutoffs/<M−3>/futures.jsonl``)
and opens M + 1 (``cutoffs/<M+1>/episodes.jsonl``). Its hooks build those files
from the archive's own topics, config and assignments (the union of the base
ledger and every window), so a roll is the same rebuild verify runs.

:func:`history_findings` adds the rules only Ideas has: an evaluator folder
(``eval/<judge>/``) of a later cutoff is listed only by a release that has
resolved that cutoff — a judgment is made against a known future, never
against one still open.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from rapgen.archive import Category, Finding, HistoryHooks, HistoryInput, HistorySpec, WindowFiles, add_months, first_release
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.kinds.ideas.archive.assignment import Assignment, assign, parse_assignments
from rapgen.kinds.ideas.archive.check import ASSIGNMENTS_PARQUET, BENCHMARK, CONFIG_JSON, PAPERS_PARQUET, TOPICS_JSONL
from rapgen.kinds.ideas.archive.config import Config, parse_config
from rapgen.kinds.ideas.archive.episodes import build_pools
from rapgen.kinds.ideas.archive.papers import Paper, parse_papers
from rapgen.kinds.ideas.archive.topics import Topic, parse_topics
from rapgen.kinds.ideas.archive.writers import jsonl_bytes

WINDOW_MONTHS, TARGET_MONTHS = 1, 4
_LATER_EVAL = re.compile(r"^archive/models/([^/]+)/origins/(\d{4}-\d{2}-01)/eval/([^/]+)/[^/]+$")


def episodes_path(key: date) -> str:
    return f"{BENCHMARK}/cutoffs/{key.isoformat()}/episodes.jsonl"


def futures_path(key: date) -> str:
    return f"{BENCHMARK}/cutoffs/{key.isoformat()}/futures.jsonl"


def window_paths(start: date) -> tuple[str, str]:
    return (f"{BENCHMARK}/windows/{start.isoformat()}/papers.parquet", f"{BENCHMARK}/windows/{start.isoformat()}/assignments.parquet")


# ---------------------------------------------------------------- reading a root for the hooks
def _parsed(path: str, data: bytes, parser):
    value, findings = parser(path, data)
    if findings:
        f = findings[0]
        raise ArchiveError(f"{f.path}{f':{f.line}' if f.line else ''}: {f.detail}")
    return value


def _read(root: Path, path: str, parser):
    return _parsed(path, (root / path).read_bytes(), parser)


def _basics(root: Path) -> tuple[Config, list[Topic]]:
    return _read(root, CONFIG_JSON, parse_config), _read(root, TOPICS_JSONL, parse_topics)


def _assignments(root: Path, windows: Sequence[WindowFiles]) -> list[Assignment]:
    rows = [a for _, a in _read(root, ASSIGNMENTS_PARQUET, parse_assignments)]
    for w in windows:
        rows.extend(a for _, a in _parsed(str(w.assignments), w.assignments.read_bytes(), parse_assignments))
    return rows


def cutoff_files(assignments: Sequence[Assignment], topics: Sequence[Topic], config: Config, key: date, resolved: bool
                 ) -> dict[str, bytes]:
    """The file that opens ``key`` (its episodes) or, with ``resolved``, resolves it (its futures), from
    the assignment rows of every listed ledger part: what a release adds, and what verify rebuilds."""
    pools = build_pools(assignments, [t.topic_id for t in topics], config, [key], [key] if resolved else [])
    if resolved:
        return {futures_path(key): jsonl_bytes(f.__dict__ | {"future_to": f.future_to.isoformat()} for f in pools.futures)}
    return {episodes_path(key): jsonl_bytes(e.__dict__ | {"cutoff": e.cutoff.isoformat()} for e in pools.episodes)}


def _rebuilt(root: Path, key: date, windows: Sequence[WindowFiles], resolved: bool) -> Mapping[str, bytes]:
    config, topics = _basics(root)
    return cutoff_files(_assignments(root, windows), topics, config, key, resolved)


def _initial(root: Path) -> tuple[date, ...]:
    """Release 1 resolves the cutoffs of config.json (those whose futures are in futures.jsonl)."""
    return tuple(_read(root, CONFIG_JSON, parse_config).cutoffs)


def _opened(root: Path, key: date, windows: Sequence[WindowFiles]) -> Mapping[str, bytes]:
    return _rebuilt(root, key, windows, resolved=False)


def _resolved(root: Path, key: date, windows: Sequence[WindowFiles]) -> Mapping[str, bytes]:
    return _rebuilt(root, key, windows, resolved=True)


def _window(root: Path, folder: Path, start: date, end: date, windows: Sequence[WindowFiles]) -> Mapping[str, bytes]:
    """The month's papers and their ``phrase-v1`` rows: every paper dated in [start, end), none already
    in the archive, and the assignment exactly the rule's (checked again by verify after the roll)."""
    papers_file, rows_file = folder / "papers.parquet", folder / "assignments.parquet"
    papers = _parsed(str(papers_file), papers_file.read_bytes(), parse_papers)
    rows = _parsed(str(rows_file), rows_file.read_bytes(), parse_assignments)
    for pid, p in papers.items():
        if not start <= p.first_submitted < end:
            raise UsageProblem(f"{papers_file}: {pid} is dated {p.first_submitted}, outside the window [{start}, {end})")
    known = set(_read(root, PAPERS_PARQUET, parse_papers))
    for w in windows:
        known |= set(_parsed(str(w.papers), w.papers.read_bytes(), parse_papers))
    again = sorted(set(papers) & known)
    if again:
        raise UsageProblem(f"{papers_file}: {again[0]} is already in the archive (and {len(again) - 1} more); a window adds new papers")
    _, topics = _basics(root)
    expected = sorted(assign(papers, topics))
    found = sorted(a for _, a in rows)
    if found != expected:
        missing = sorted(set(expected) - set(found))
        extra = sorted(set(found) - set(expected))
        first = (f"lacks {missing[0].arxiv_id} → {missing[0].topic_id}" if missing else
                 f"holds {extra[0].arxiv_id} → {extra[0].topic_id}, which phrase-v1 does not give")
        raise UsageProblem(f"{rows_file}: the assignment is not phrase-v1 of the window's papers: it {first}")
    p_path, a_path = window_paths(start)
    return {p_path: papers_file.read_bytes(), a_path: rows_file.read_bytes()}


IDEAS_HISTORY = HistorySpec(
    window_months=WINDOW_MONTHS,
    target_months=TARGET_MONTHS,
    window_files=(f"{BENCHMARK}/windows/{{start}}/papers.parquet", f"{BENCHMARK}/windows/{{start}}/assignments.parquet"),
    opened_files=(f"{BENCHMARK}/cutoffs/{{key}}/episodes.jsonl",),
    resolved_files=(f"{BENCHMARK}/cutoffs/{{key}}/futures.jsonl",),
    reveal_files=("archive/models/{model}/origins/{key}/predictions.jsonl",),
    hooks=HistoryHooks(initial=_initial, window=_window, opened=_opened, resolved=_resolved),
)


# ---------------------------------------------------------------- Ideas' own history rules
def history_findings(inp: HistoryInput) -> list[Finding]:
    """An evaluator folder of a later cutoff t is judged against t's future, so the first release that
    lists it (or, unreleased, the latest) must have t resolved; its record says which are."""
    out: list[Finding] = []
    if not inp.records:
        return out
    latest = max(inp.records)
    for path in sorted(inp.root):
        m = _LATER_EVAL.match(path)
        if not m:
            continue
        t = date.fromisoformat(m.group(2))
        k = first_release(inp, path)
        record = inp.records.get(k if k is not None else latest)
        if record is None or t in record.resolved_origins:
            continue
        where = f"listed by release {k}" if k is not None else f"unreleased (release {latest} is the latest)"
        out.append(Finding(path, None, Category.INVARIANT,
                           f"release {record.release}: judged against cutoff {t}, {where}, which does not resolve it: "
                           f"an evaluator folder arrives in a models release once its cutoff's future is known "
                           f"(resolved: {', '.join(o.isoformat() for o in record.resolved_origins)})"))
    return out


def resolved_keys(inp: HistoryInput) -> tuple[date, ...] | None:
    """The cutoffs the latest release resolves (None: format 1, every cutoff of config.json)."""
    return inp.records[max(inp.records)].resolved_origins if inp.records else None


def next_open(resolved: Sequence[date]) -> date:
    """The cutoff that ``release start`` opens after ``resolved``: its answers come next."""
    return add_months(resolved[-1], TARGET_MONTHS)


def window_folder(root: Path, papers_file: Path, month: date, out: Path) -> tuple[int, int]:
    """Write the window folder of ``month`` into ``out``: the papers of ``papers_file`` (Ideas' papers
    columns) dated in that month, and their ``phrase-v1`` rows under the archive's topics.
    Returns (papers, memberships)."""
    from rapgen.io import atomic_write_bytes

    if month.day != 1:
        raise UsageProblem(f"--month {month}: a window starts on the first of a month")
    papers = _parsed(str(papers_file), Path(papers_file).read_bytes(), parse_papers)
    _, topics = _basics(Path(root))
    chosen, rows = window_rows(papers, month, topics)
    if not chosen:
        raise UsageProblem(f"{papers_file}: no paper is dated in [{month}, {add_months(month, WINDOW_MONTHS)})")
    data = window_bytes(chosen, rows)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / "papers.parquet", data[0])
    atomic_write_bytes(out / "assignments.parquet", data[1])
    return len(chosen), len(rows)


def window_rows(papers: Mapping[str, Paper], month: date, topics: Sequence[Topic]) -> tuple[dict[str, Paper], list[Assignment]]:
    """The papers of ``papers`` dated in ``month`` and their ``phrase-v1`` rows under ``topics``."""
    end = add_months(month, WINDOW_MONTHS)
    chosen = {pid: p for pid, p in papers.items() if month <= p.first_submitted < end}
    return chosen, assign(chosen, topics)


def window_bytes(papers: Mapping[str, Paper], rows: Sequence[Assignment]) -> tuple[bytes, bytes]:
    """A window folder's two files (papers.parquet, assignments.parquet), as ``release window`` writes them."""
    from rapgen.kinds.ideas.archive.writers import assignments_bytes, papers_bytes

    return papers_bytes(papers.values()), assignments_bytes(rows)
