"""Build the Ideas sample archive (IDEAS.md §8) from the committed cs.CL papers only.

Input: the RAP sample's real papers, ``archive/benchmark/papers.parquet`` and
``archive/benchmark/windows/*/papers.parquet`` of a repository root, dated
2024-04-01 … 2025-06-30. Titles only are assigned (``key_points`` = []), to the
twelve hand-written topics of ``topics.yaml``. Cutoffs 2024-07-01 … 2025-03-01.
Two reference models, two lexical judges, the ``tfidf-sample-v1`` evaluator;
``future_clusters.parquet`` from 5-means (seed 0) over each future.

The output is deterministic (no clock, no randomness beyond declared seeds):
the same inputs give the same bytes. It is the file set of §1, format 1,
with ``SHA256SUMS``, written whole into the target folder (staged, swapped in).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import yaml

from rapgen.archive import MemoryHistory, format_sums, sha256_bytes
from rapgen.errors import UsageProblem
from rapgen.io import ARCHIVE_OUTPUT, guard_output_dir, staged_dir
from rapgen.kinds.ideas.archive.adapter import ADAPTER
from rapgen.kinds.ideas.archive.assignment import RULE, assign
from rapgen.kinds.ideas.archive.check import (
    ASSIGNMENTS_PARQUET,
    CLUSTERS_PARQUET,
    CONFIG_JSON,
    EPISODES_JSONL,
    FORMAT,
    FUTURES_JSONL,
    JUDGES_JSONL,
    LEDGER_JSON,
    PAPERS_PARQUET,
    TOPICS_JSONL,
)
from rapgen.kinds.ideas.archive.config import Config
from rapgen.kinds.ideas.archive.episodes import Pools, build_pools
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import parse_predictions
from rapgen.kinds.ideas.archive.topics import Topic
from rapgen.kinds.ideas.archive.writers import assignments_bytes, clusters_bytes, json_bytes, jsonl_bytes, papers_bytes
from rapgen.kinds.ideas.kit.embedding import TFIDF, TfidfEmbedder
from rapgen.kinds.ideas.kit.evaluate import Retrieval, Space, episode_space, eval_files, features_file, judge_candidates, retrieve
from rapgen.kinds.ideas.kit.judges import judge_line
from rapgen.kinds.ideas.kit.retrieval import kmeans
from rapgen.kinds.ideas.sample import models as ref
from rapgen.kinds.ideas.sample.history import PlannedRelease, cut_history, history_plan

FIRST_DAY, LAST_DAY = date(2024, 4, 1), date(2025, 6, 30)
CUTOFFS = tuple(date(2024, m, 1) for m in range(7, 13)) + tuple(date(2025, m, 1) for m in range(1, 4))
STRICT_CUTOFF = date(2025, 1, 1)
CREATED = "2025-07-01"
TOPICS_YAML = Path(__file__).with_name("topics.yaml")
SOURCE_FILES = ("archive/benchmark/papers.parquet", "archive/benchmark/windows/*/papers.parquet")
LICENSE = "arXiv metadata as in the RAP sample; generated files CC0-1.0"


SAMPLE_CONFIG = Config(FIRST_DAY, CUTOFFS[0], CUTOFFS, 3, ref.TOP_K, 2, STRICT_CUTOFF)


def config_document(config: Config) -> dict:
    return {"start_month": config.start.isoformat()[:7], "min_cutoff_month": config.min_cutoff.isoformat()[:7],
            "cutoffs": [c.isoformat() for c in config.cutoffs], "horizon_months": config.horizon_months, "top_k": config.top_k,
            "min_history": config.min_history, "strict_cutoff": config.strict_cutoff.isoformat()}


def ledger_document() -> dict:
    return {"assignment": {"name": RULE}, "adapter": {"name": ADAPTER}, "retrieval_depth": 10,
            "embedding": {"name": TFIDF, "dimensions": None}, "kmeans": {"k": 5, "seed": 0},
            "gates": {"default": {"problem_method_min": 5, "realisation_min": 2}, "strict": {"problem_method_min": 5, "realisation_min": 3}},
            "primary": {"judge": ref.JUDGES[0].judge_id, "gate": "default", "track": "all_cutoff"},
            "bootstrap": {"resamples": 10000, "seed": 0, "level": 0.95}, "metric_version": 1}


HISTORY_NOTE = (" Its release history is replayed: release 1 holds the papers to 2024-12-31, six monthly rolls ingest 2025-01 … "
                "2025-06, and the reference models' Live forecasts for 2025-01 … 2025-03 resolve.")


def archive_document(*, history: bool = False) -> dict:
    return {"format": FORMAT, "format_version": 1, "name": "Ideas sample (synthetic)",
            "description": "Idea forecasting on real cs.CL titles with hand-written topics, two mechanical reference models and two lexical "
                           "judges; the models, judges and embedding are stand-ins, so every score is synthetic."
                           + (HISTORY_NOTE if history else ""),
            "created": CREATED, "synthetic": True, "source": "rapgen sample build --kind ideas (the RAP sample's committed papers)",
            "license": LICENSE}


def read_topics(path: Path = TOPICS_YAML) -> list[Topic]:
    return [Topic(t["topic_id"], t["name"], tuple(t["aliases"]), tuple(t["keywords"])) for t in yaml.safe_load(path.read_text("utf-8"))]


def read_committed_papers(root: str | Path) -> tuple[dict[str, Paper], dict[str, str]]:
    """The committed papers of [FIRST_DAY, LAST_DAY] (titles only: no key points) and their categories."""
    import duckdb

    root = Path(root)
    files = [str(root / "archive/benchmark/papers.parquet")] + sorted(str(p) for p in (root / "archive/benchmark/windows").glob("*/papers.parquet"))
    con = duckdb.connect()
    rows = con.execute("SELECT arxiv_id, title, abstract, first_submitted, categories FROM read_parquet(?) "
                       "WHERE first_submitted BETWEEN ? AND ? ORDER BY arxiv_id", [files, FIRST_DAY, LAST_DAY]).fetchall()
    papers = {a: Paper(a, t, ab or "", (), d) for a, t, ab, d, _ in rows}
    return papers, {a: c or "" for a, _, _, _, c in rows}


def without_unused_abstracts(papers: Mapping[str, Paper], assigned: set[str]) -> dict[str, Paper]:
    """Every paper stays (phrase-v1 is rebuilt over the whole period), but only an assigned paper keeps
    its abstract: an unassigned one is in no history and no future, so nothing reads it (and the
    sample stays under 12 MB)."""
    return {pid: p if pid in assigned else Paper(pid, p.title, "", p.key_points, p.first_submitted) for pid, p in papers.items()}


@dataclass
class SampleReport:
    n_papers: int
    n_assigned: int
    n_memberships: int
    n_episodes: int
    history: tuple[int, int]
    future: tuple[int, int]
    files: dict[str, int]  # path -> bytes

    @property
    def size(self) -> int:
        return sum(self.files.values())


def _clusters(papers: Mapping[str, Paper], pools: Pools, k: int, seed: int, spaces: dict[str, Space]) -> list[tuple[str, str, int]]:
    """k-means labels of each future, in the episode's ``tfidf-sample-v1`` space."""
    rows = []
    for eid in sorted(pools.future):
        labels = kmeans(episode_space(papers, pools, eid, TfidfEmbedder(), spaces).future, k, seed)
        rows.extend((eid, pid, int(c)) for pid, c in zip(pools.future[eid], labels))
    return rows


def sample_files(root: str | Path) -> tuple[dict[str, bytes], SampleReport]:
    """Every file of the sample (path under the output folder -> bytes) and the measured counts."""
    papers, categories = read_committed_papers(root)
    return history_files(papers, categories, read_topics(), SAMPLE_CONFIG, history_plan())


def history_files(papers: Mapping[str, Paper], categories: Mapping[str, str], topics: list[Topic], config: Config,
                  plan: list[PlannedRelease]) -> tuple[dict[str, bytes], SampleReport]:
    """The archive of ``papers`` under ``topics`` and ``config`` (every cutoff that ``plan`` resolves) as the
    replayed history ``plan``: release 1 holds the papers dated before its date and resolves its cutoffs;
    the rolls ingest the later months, the models releases the later cutoffs' model files."""
    inputs = history_inputs(papers, categories, topics, config, plan)
    history = MemoryHistory(inputs.base)
    cut_history(history, plan, inputs.config, topics, inputs.base_rows, inputs.later_papers, inputs.units)
    out = history.output()
    return out, replace(inputs.report, files={p: len(b) for p, b in out.items()})


@dataclass(frozen=True)
class HistoryInputs:
    """What :func:`cut_history` starts from: release 1's format-1 files (no SHA256SUMS) and config, its
    assignment rows, the papers the rolls ingest, and the later cutoffs' model files."""

    base: dict[str, bytes]
    config: Config
    base_rows: list
    later_papers: dict[str, Paper]
    units: dict[date, dict[str, dict[str, bytes]]]
    report: SampleReport


def history_inputs(papers: Mapping[str, Paper], categories: Mapping[str, str], topics: list[Topic], config: Config,
                   plan: list[PlannedRelease]) -> HistoryInputs:
    rows = assign(papers, topics)
    papers = without_unused_abstracts(papers, {a.arxiv_id for a in rows})
    first = plan[0]
    initial = replace(config, cutoffs=first.resolved)
    base_papers = {pid: p for pid, p in papers.items() if p.first_submitted < first.date}
    base_rows = [a for a in rows if a.first_submitted < first.date]
    files, report = _format1_files(base_papers, categories, topics, initial, papers, rows, config)
    units: dict[date, dict[str, dict[str, bytes]]] = {}
    for path in [p for p in files if p.startswith("archive/models/")]:
        model_id, rest = path[len("archive/models/"):].split("/", 1)
        if rest.startswith("origins/"):
            units.setdefault(date.fromisoformat(rest.split("/")[1]), {}).setdefault(model_id, {})[rest] = files.pop(path)
    del files["SHA256SUMS"]
    files["archive/ARCHIVE.json"] = json_bytes(archive_document(history=True))
    later = {pid: p for pid, p in papers.items() if p.first_submitted >= first.date}
    return HistoryInputs(files, initial, base_rows, later, units, report)


def archive_files(papers: Mapping[str, Paper], categories: Mapping[str, str], topics: list[Topic], config: Config
                  ) -> tuple[dict[str, bytes], SampleReport]:
    """The §1 file set (format 1, every cutoff resolved) of ``papers`` under ``topics`` and ``config``,
    with the reference models evaluated by both lexical judges, and ``SHA256SUMS``."""
    rows = assign(papers, topics)
    papers = without_unused_abstracts(papers, {a.arxiv_id for a in rows})
    return _format1_files(papers, categories, topics, config, papers, rows, config)


def _format1_files(papers: Mapping[str, Paper], categories: Mapping[str, str], topics: list[Topic], config: Config,
                   every_paper: Mapping[str, Paper], every_row: list, full: Config) -> tuple[dict[str, bytes], SampleReport]:
    """The format-1 files of ``papers`` under ``config``. The models' units and evaluator files cover the
    cutoffs of ``full`` (episodes over ``every_paper`` and ``every_row``); those after ``config``'s are
    under ``models/<id>/origins/<t>/`` (the history's later releases add them)."""
    rows = [a for a in every_row if a.arxiv_id in papers]
    pools = build_pools(rows, [t.topic_id for t in topics], config, config.cutoffs, config.cutoffs)
    spaces: dict[str, Space] = {}
    files: dict[str, bytes] = {
        "archive/ARCHIVE.json": json_bytes(archive_document()),
        CONFIG_JSON: json_bytes(config_document(config)),
        LEDGER_JSON: json_bytes(ledger_document()),
        TOPICS_JSONL: jsonl_bytes({"topic_id": t.topic_id, "name": t.name, "aliases": list(t.aliases), "keywords": list(t.keywords)} for t in topics),
        JUDGES_JSONL: b"".join(judge_line(j.record()) + b"\n" for j in ref.JUDGES),
        PAPERS_PARQUET: papers_bytes(papers.values(), dict(categories)),
        ASSIGNMENTS_PARQUET: assignments_bytes(rows),
        EPISODES_JSONL: jsonl_bytes(e.__dict__ | {"cutoff": e.cutoff.isoformat()} for e in pools.episodes),
        FUTURES_JSONL: jsonl_bytes(f.__dict__ | {"future_to": f.future_to.isoformat()} for f in pools.futures),
        CLUSTERS_PARQUET: clusters_bytes(_clusters(papers, pools, 5, 0, spaces)),
    }
    every_pool = pools if full is config else build_pools(every_row, [t.topic_id for t in topics], full, full.cutoffs, full.cutoffs)
    files.update(_models(every_paper, topics, every_pool, full, spaces, set(config.cutoffs)))
    files["SHA256SUMS"] = format_sums({p: sha256_bytes(b) for p, b in files.items() if p.startswith("archive/")})
    hist = [e.n_history for e in every_pool.episodes]
    fut = [f.n_future for f in every_pool.futures]
    report = SampleReport(len(every_paper), len({a.arxiv_id for a in every_row}), len(every_row), len(every_pool.episodes),
                          (min(hist), max(hist)), (min(fut), max(fut)),
                          {p: len(b) for p, b in files.items()})
    return files, report


def _models(papers: Mapping[str, Paper], topics: list[Topic], pools: Pools, config: Config, spaces: dict[str, Space],
            base: set[date] | None = None) -> dict[str, bytes]:
    """Both reference models over every episode of ``pools``, evaluated by both judges. The units of the
    ``base`` cutoffs (default: all) are the folder's own files; each later cutoff t's are under
    ``origins/<t>/`` (predictions, raw lines, features and evaluator folders alike)."""
    names = {t.topic_id: t.name for t in topics}
    episodes = {e.episode_id: e for e in pools.episodes}
    recent, rising, raws = [], [], []
    for e in pools.episodes:
        history = [papers[p] for p in pools.history[e.episode_id]]
        recent.extend(ref.recent_titles(e.episode_id, history))
        lines, raw = ref.rising_terms(e.episode_id, names[e.topic_id], history, e.cutoff, config.start)
        rising.extend(lines)
        raws.extend(raw)
    cutoff = {eid: e.cutoff for eid, e in episodes.items()}
    base = set(cutoff.values()) if base is None else base

    def group(eid: str) -> str:
        t = cutoff[eid]
        return "" if t in base else f"origins/{t.isoformat()}/"

    out: dict[str, bytes] = {}
    for model_id, display, notes, lines in (
        ("recent-titles", "Recent titles", "The five newest history titles, restated as ideas.", recent),
        ("rising-terms", "Rising terms", "The five fastest-growing title bigrams of the last history month, via adapter v1.", rising),
    ):
        folder = f"archive/models/{model_id}"
        data = jsonl_bytes(lines)
        out[f"{folder}/model.json"] = json_bytes(ref.model_json(model_id, display, notes))
        groups = sorted({group(line["episode_id"]) for line in lines})
        for g in groups:
            out[f"{folder}/{g}predictions.jsonl"] = jsonl_bytes(line for line in lines if group(line["episode_id"]) == g)
            if model_id == "rising-terms":
                out[f"{folder}/{g}raw.jsonl"] = jsonl_bytes(r for r in raws if group(r["episode_id"]) == g)
        predictions, findings = parse_predictions(f"{folder}/predictions.jsonl", data, episodes, config.top_k)
        assert not findings, findings[:3]
        retrieval = retrieve(papers, pools, predictions, TfidfEmbedder(), 10, spaces)
        runs = [(judge.judge_id, judge_candidates(retrieval.candidates, predictions, papers, judge).judgments) for judge in ref.JUDGES]
        for g in groups:
            mine = Retrieval([c for c in retrieval.candidates if group(c.episode_id) == g],
                             {k: d for k, d in retrieval.nn_distance.items() if group(k[0]) == g})
            out.update({f"{folder}/{g}{k}": v for k, v in features_file(mine).items()})
            for judge_id, judgments in runs:
                files = eval_files(judge_id, mine.candidates, [j for j in judgments if group(j.episode_id) == g])
                out.update({f"{folder}/{g}{k}": v for k, v in files.items()})
    return out


def build_sample(root: str | Path, out: str | Path, *, force: bool = False) -> SampleReport:
    """Write the sample into ``out`` (replaced whole, atomically) from the papers under ``root``.
    A folder that holds anything is refused, unless ``force`` and it holds an earlier Ideas archive."""
    check_sample_folder(Path(out), force)
    files, report = sample_files(root)
    write_archive_folder(out, files)
    return report


def check_sample_folder(out: Path, force: bool) -> None:
    """``out`` may be missing or empty; with ``force`` it may hold an Ideas archive (and nothing else: a sample
    or a synthetic one); never
    inside another archive's archive/ or one of the project's folders (the shared output rule)."""
    guard_output_dir(out, ARCHIVE_OUTPUT)
    if out.exists() and not out.is_dir():
        raise UsageProblem(f"{out}: exists and is not a folder")
    held = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if not held:
        return
    if not force:
        raise UsageProblem(f"{out}: the folder is not empty (it holds {', '.join(held[:3])}{' …' if len(held) > 3 else ''}); "
                           "--force replaces an earlier Ideas archive")
    info = out / "archive" / "ARCHIVE.json"
    try:
        ours = json.loads(info.read_text("utf-8")).get("format") == FORMAT and set(held) <= {"archive", "SHA256SUMS"}
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise UsageProblem(f"{out}: --force replaces only an Ideas archive (archive/ with an {FORMAT} ARCHIVE.json, and SHA256SUMS)")


def sample(out: str | Path, *, source: str | Path = ".", force: bool = False) -> dict:
    """The kind's ``sample`` step (``rapgen sample build --kind ideas``): build, then a summary."""
    r = build_sample(source, out, force=force)
    return {"out": str(out), "papers": r.n_papers, "assigned": r.n_assigned, "memberships": r.n_memberships,
            "episodes": r.n_episodes, "history": list(r.history), "future": list(r.future), "bytes": r.size, "files": len(r.files),
            "text": f"{r.n_papers:,} papers ({r.n_assigned:,} assigned, {r.n_memberships:,} memberships), {r.n_episodes} episodes "
                    f"(|H| {r.history[0]}–{r.history[1]}, |F| {r.future[0]}–{r.future[1]}), {len(r.files)} files, {r.size / 1e6:.1f} MB."}


def write_archive_folder(out: str | Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (path -> bytes) as the whole content of ``out``: staged, then swapped in."""
    with staged_dir(out) as tmp:
        for path, data in sorted(files.items()):
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
