"""Stage 5 for an Ideas archive: parse every file once and check every invariant (IDEAS.md §1–§4).

:func:`check_archive` takes the verified bytes by path (``archive/…``) and
returns the parsed archive with every finding. Dependent checks run only on
inputs that parsed: a file whose inputs are broken gets one ``NOT-EVALUATED``
finding instead of a cascade. The resolved cutoffs (those with futures and
evaluator files) default to ``config.cutoffs`` (format 1); a release view
passes its own.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from rapgen.archive import MODEL_ID_PATTERN, Category, Finding, ModelInfo, parse_model_json
from rapgen.kinds.ideas.archive.adapter import ADAPTER, RawIdea, check_raw, parse_raw
from rapgen.kinds.ideas.archive.assignment import RULE, Assignment, check_assignments, parse_assignments
from rapgen.kinds.ideas.archive.config import Config, Ledger, parse_config, parse_ledger
from rapgen.kinds.ideas.archive.codes import EvalIndex, IdeaIndex
from rapgen.kinds.ideas.archive.episodes import Pools, build_pools, check_episodes, check_futures, parse_episodes, parse_futures
from rapgen.kinds.ideas.archive.eval_tables import (
    CandidateTable,
    JudgmentTable,
    check_candidate_table,
    check_judgment_table,
    parse_candidate_table,
    parse_cluster_table,
    parse_judgment_table,
)
from rapgen.kinds.ideas.archive.evaluation import parse_features
from rapgen.kinds.ideas.archive.lines import invariant
from rapgen.kinds.ideas.archive.papers import Paper, merge_papers, parse_papers
from rapgen.kinds.ideas.archive.predictions import Predictions, parse_predictions
from rapgen.kinds.ideas.archive.topics import Judge, Topic, parse_judges, parse_topics

FORMAT = "ideas-archive"
BENCHMARK = "archive/benchmark"
CONFIG_JSON = f"{BENCHMARK}/config.json"
PAPERS_PARQUET = f"{BENCHMARK}/papers.parquet"
TOPICS_JSONL = f"{BENCHMARK}/topics.jsonl"
ASSIGNMENTS_PARQUET = f"{BENCHMARK}/assignments.parquet"
EPISODES_JSONL = f"{BENCHMARK}/episodes.jsonl"
FUTURES_JSONL = f"{BENCHMARK}/futures.jsonl"
CLUSTERS_PARQUET = f"{BENCHMARK}/future_clusters.parquet"
LEDGER_JSON = "archive/provenance/LEDGER.json"
JUDGES_JSONL = "archive/provenance/judges.jsonl"
REQUIRED_FILES = ("archive/ARCHIVE.json", CONFIG_JSON, PAPERS_PARQUET, TOPICS_JSONL, ASSIGNMENTS_PARQUET, EPISODES_JSONL,
                  FUTURES_JSONL, LEDGER_JSON, JUDGES_JSONL)
MODEL_FILES = ("model.json", "predictions.jsonl", "raw.jsonl", "features.parquet")
EVAL_FILES = ("candidates.parquet", "judgments.parquet")
WINDOW_FILE = re.compile(r"^archive/benchmark/windows/(\d{4}-\d{2}-01)/(papers|assignments)\.parquet$")
CUTOFF_FILE = re.compile(r"^archive/benchmark/cutoffs/(\d{4}-\d{2}-01)/(episodes|futures)\.jsonl$")
MODEL_FILE = re.compile(r"^archive/models/([^/]+)/(.+)$")
EVAL_FILE = re.compile(r"^eval/([^/]+)/(candidates|judgments)\.parquet$")
ORIGIN_FILE = re.compile(r"^origins/(\d{4}-\d{2}-01)/(.+)$")
MODEL_ID = re.compile(MODEL_ID_PATTERN)


@dataclass
class ModelFiles:
    model_id: str
    info: ModelInfo | None = None
    predictions: Predictions | None = None
    raw: dict[tuple[str, str, int], RawIdea] | None = None
    features: dict[tuple[str, str, int], float] | None = None
    evals: dict[str, tuple[CandidateTable, JudgmentTable]] = field(default_factory=dict)  # judge_id -> files, as columns
    parts: dict[str, "ModelFiles"] = field(default_factory=dict)  # unit group folder -> its files (a release view re-merges them)
    # judge_id -> the unit groups its evaluator folders cover: None for the cutoffs of predictions.jsonl, t for origins/<t>/
    judged: dict[str, frozenset[date | None]] = field(default_factory=dict)

    def judged_cutoffs(self, judge_id: str, base: Collection[date]) -> frozenset[date]:
        """The cutoffs whose evaluator folder of ``judge_id`` this model has (``base``: config.cutoffs)."""
        groups = self.judged.get(judge_id, frozenset())
        return frozenset(c for c in groups if c is not None) | (frozenset(base) if None in groups else frozenset())


@dataclass
class IdeasArchive:
    """Everything an Ideas release holds, parsed once (None where a file did not parse)."""

    config: Config | None = None
    ledger: Ledger | None = None
    topics: list[Topic] = field(default_factory=list)
    papers: dict[str, Paper] = field(default_factory=dict)
    assignments: list[Assignment] = field(default_factory=list)
    pools: Pools | None = None
    judges: dict[str, Judge] = field(default_factory=dict)
    clusters: dict[str, dict[str, int]] | None = None  # episode -> paper -> cluster
    models: dict[str, ModelFiles] = field(default_factory=dict)
    resolved: tuple[date, ...] = ()
    episode_files: frozenset[str] = frozenset()  # the cutoffs/<t>/episodes.jsonl files read (a release lists some)


def _not_evaluated(path: str, what: str, inputs: Sequence[str]) -> Finding:
    return Finding(path, None, Category.NOT_EVALUATED, f"{what} not checked: {', '.join(inputs)} did not parse")


class _Run:
    def __init__(self, files: Mapping[str, bytes], unverified: Collection[str] = ()):
        self.files = files
        self.unverified = frozenset(unverified)  # listed files whose bytes did not verify (verify reported them)
        self.findings: list[Finding] = []
        self.broken: set[str] = set()
        self.index: EvalIndex | None = None  # the evaluator checks' codes, built once when first needed

    def parse(self, path: str, parser, *args):
        if path in self.unverified:
            self.broken.add(path)
            return None
        if path not in self.files:
            self.findings.append(Finding(path, None, Category.MISSING, "required file of an Ideas archive"))
            self.broken.add(path)
            return None
        value, found = parser(path, self.files[path], *args)
        self.findings.extend(found)
        if found:
            self.broken.add(path)
        return value

    def eval_index(self, out: IdeasArchive) -> EvalIndex:
        if self.index is None:
            assert out.pools is not None
            self.index = EvalIndex(out.papers, out.pools)
        return self.index

    def ready(self, path: str, what: str, *inputs: str) -> bool:
        bad = [p for p in inputs if p in self.broken]
        if bad:
            self.findings.append(_not_evaluated(path, what, bad))
            self.broken.add(path)
        return not bad


def check_archive(files: Mapping[str, bytes], *, resolved: Sequence[date] | None = None,
                  unverified: Collection[str] = ()) -> tuple[IdeasArchive, list[Finding]]:
    """Parse and check every Ideas file in ``files`` (path -> verified bytes). ``unverified``: listed
    files whose bytes failed verification; they count as broken, without a second finding."""
    run = _Run(files, unverified)
    out = IdeasArchive()
    out.config = run.parse(CONFIG_JSON, parse_config)
    out.ledger = run.parse(LEDGER_JSON, parse_ledger)
    if out.ledger is not None:
        if out.ledger.assignment != RULE:
            run.findings.append(invariant(LEDGER_JSON, None, f"assignment {out.ledger.assignment!r}: this rapgen implements {RULE} only"))
        if out.ledger.adapter != ADAPTER:
            run.findings.append(invariant(LEDGER_JSON, None, f"adapter {out.ledger.adapter!r}: this rapgen implements adapter {ADAPTER} only"))
    out.topics = run.parse(TOPICS_JSONL, parse_topics) or []
    judges = run.parse(JUDGES_JSONL, parse_judges) or []
    out.judges = {j.judge_id: j for j in judges}
    _papers(run, out)
    _benchmark(run, out, resolved)
    for model_id in sorted({m.group(1) for p in files if (m := MODEL_FILE.match(p))}):
        out.models[model_id] = _model(run, out, model_id)
    return out, sorted(run.findings, key=Finding.sort_key)


def _papers(run: _Run, out: IdeasArchive) -> None:
    parts = [(PAPERS_PARQUET, run.parse(PAPERS_PARQUET, parse_papers) or {})]
    windows = sorted({m.group(1) for p in run.files if (m := WINDOW_FILE.match(p))})
    for w in windows:
        parts.append((f"{BENCHMARK}/windows/{w}/papers.parquet", run.parse(f"{BENCHMARK}/windows/{w}/papers.parquet", parse_papers) or {}))
    out.papers, found = merge_papers(parts)
    run.findings.extend(found)
    paths = [ASSIGNMENTS_PARQUET] + [f"{BENCHMARK}/windows/{w}/assignments.parquet" for w in windows]
    rows = []
    for path in paths:
        rows.extend((n, a) for n, a in run.parse(path, parse_assignments) or [])
    if run.ready(ASSIGNMENTS_PARQUET, f"the {RULE} assignment", TOPICS_JSONL, *(p for p, _ in parts), *paths):
        run.findings.extend(check_assignments(ASSIGNMENTS_PARQUET, rows, out.papers, out.topics))
    out.assignments = [a for _, a in rows]


def _benchmark(run: _Run, out: IdeasArchive, resolved: Sequence[date] | None) -> None:
    episodes = run.parse(EPISODES_JSONL, parse_episodes) or []
    futures = run.parse(FUTURES_JSONL, parse_futures) or []
    out.episode_files = frozenset(p for p in run.files if (m := CUTOFF_FILE.match(p)) and m.group(2) == "episodes")
    for m in sorted({m.groups() for p in run.files if (m := CUTOFF_FILE.match(p))}):
        parser = parse_episodes if m[1] == "episodes" else parse_futures
        (episodes if m[1] == "episodes" else futures).extend(run.parse(f"{BENCHMARK}/cutoffs/{m[0]}/{m[1]}.jsonl", parser) or [])
    config = out.config
    if config is None or not run.ready(EPISODES_JSONL, "episodes and futures", CONFIG_JSON, ASSIGNMENTS_PARQUET):
        return
    cutoffs = sorted(set(config.cutoffs) | {e.cutoff for _, e in episodes})
    out.resolved = tuple(sorted(resolved if resolved is not None else config.cutoffs))
    out.pools = build_pools(out.assignments, [t.topic_id for t in out.topics], config, cutoffs, out.resolved)
    run.findings.extend(check_episodes(EPISODES_JSONL, episodes, out.pools))
    run.findings.extend(check_futures(FUTURES_JSONL, futures, out.pools))
    if CLUSTERS_PARQUET in run.files and out.ledger is not None:
        out.clusters = run.parse(CLUSTERS_PARQUET, parse_cluster_table, run.eval_index(out), out.ledger.kmeans_k) or {}


def _model(run: _Run, out: IdeasArchive, model_id: str) -> ModelFiles:
    """model.json, then the unit files of ``config.cutoffs`` (the folder itself) and of each later
    cutoff t (``origins/<t>/``), each group checked against its own cutoffs' episodes, then merged."""
    folder = f"archive/models/{model_id}"
    mf = ModelFiles(model_id)
    if not MODEL_ID.match(model_id):
        run.findings.append(invariant(folder, None, f"model id {model_id!r} does not match {MODEL_ID_PATTERN}"))
        return mf
    names = {p[len(folder) + 1:] for p in run.files if p.startswith(folder + "/")}
    groups: dict[str, set[str]] = {"": set()}
    for name in sorted(names):
        m = ORIGIN_FILE.match(name)
        prefix, rest = (f"origins/{m.group(1)}/", m.group(2)) if m else ("", name)
        if name == "model.json":
            continue
        if rest not in MODEL_FILES[1:] and not EVAL_FILE.match(rest):
            run.findings.append(invariant(f"{folder}/{name}", None, "not a file of an Ideas model folder"))
            continue
        groups.setdefault(prefix, set()).add(rest)
    mf.info = run.parse(f"{folder}/model.json", parse_model_json, model_id)
    if out.pools is None or out.config is None:
        run.findings.extend(_not_evaluated(f"{folder}/{p}{n}", "this file", [EPISODES_JSONL]) for p, ns in groups.items() for n in sorted(ns))
        return mf
    known = {e.cutoff for e in out.pools.episodes}
    parts: list[ModelFiles | None] = []
    for prefix in sorted(groups):
        cutoffs = set(out.config.cutoffs)
        if prefix:
            t = date.fromisoformat(prefix.split("/")[1])
            if t in cutoffs or t not in known:
                why = "its units belong in predictions.jsonl" if t in cutoffs else "no episode has this cutoff"
                run.findings.append(invariant(f"{folder}/{prefix.rstrip('/')}", None, f"cutoff {t.isoformat()}: {why}"))
                continue
            cutoffs = {t}
        parts.append(_unit_group(run, out, f"{folder}/{prefix}".rstrip("/"), groups[prefix], cutoffs))
    if any(part is None for part in parts):
        return mf  # no predictions: a model with a broken group is not scored
    mf.parts = {part.model_id: part for part in parts}  # type: ignore[union-attr]
    return _merged(mf, parts)  # type: ignore[arg-type]


def merge_parts(mf: ModelFiles, parts: list[ModelFiles], listed: Collection[str]) -> ModelFiles:
    """``mf`` as a release lists it: the unit groups ``parts`` and, of their evaluator folders, those in ``listed``."""
    kept = []
    for part in parts:
        evals = {j: t for j, t in part.evals.items() if f"{part.model_id}/eval/{j}/judgments.parquet" in listed}
        kept.append(ModelFiles(part.model_id, part.info, part.predictions, part.raw, part.features, evals))
    out = _merged(ModelFiles(mf.model_id, mf.info), kept)
    out.parts = dict(mf.parts)
    return out


def _unit_group(run: _Run, out: IdeasArchive, base: str, names: set[str], cutoffs: set[date]) -> ModelFiles | None:
    """predictions.jsonl (required), raw.jsonl, features.parquet and eval/<judge>/ of one group; None if its
    predictions do not parse (its other files are then not evaluated)."""
    assert out.pools is not None and out.config is not None
    pred_path = f"{base}/predictions.jsonl"
    part = ModelFiles(base)
    episodes = {e.episode_id: e for e in out.pools.episodes if e.cutoff in cutoffs}
    part.predictions = run.parse(pred_path, parse_predictions, episodes, out.config.top_k)
    if part.predictions is None or pred_path in run.broken:
        run.findings.extend(_not_evaluated(f"{base}/{n}", "this file", [pred_path]) for n in sorted(names - {"predictions.jsonl"}))
        return None
    raw_path = f"{base}/raw.jsonl"
    if "raw.jsonl" in names:
        part.raw = run.parse(raw_path, parse_raw)
    run.findings.extend(check_raw(pred_path, part.predictions, raw_path, part.raw if "raw.jsonl" in names else None))
    if "features.parquet" in names:
        part.features = run.parse(f"{base}/features.parquet", parse_features)
        missing = [i.key for i in part.predictions.all_ideas() if part.features is not None and i.key not in part.features]
        if missing:
            run.findings.append(invariant(f"{base}/features.parquet", None, f"{' '.join(map(str, missing[0]))} has no nn_distance "
                                                                             f"(and {len(missing) - 1} more ideas)"))
            part.features = None
    depth = out.ledger.retrieval_depth if out.ledger else 10
    judges = sorted({m.group(1) for n in names if (m := EVAL_FILE.match(n))})
    ideas = IdeaIndex(run.eval_index(out), part.predictions) if judges else None
    for judge_id in judges:
        part.evals[judge_id] = _eval(run, out, ideas, base, judge_id, depth)
    return part


def _merged(mf: ModelFiles, parts: list[ModelFiles]) -> ModelFiles:
    """One model's groups as one: predictions, raw lines, features and each judge's rows united."""
    p = Predictions()
    for part in parts:
        assert part.predictions is not None
        p.ideas.update(part.predictions.ideas)
        p.empty.update(part.predictions.empty)
        p.conditions = tuple(dict.fromkeys((*p.conditions, *part.predictions.conditions)))
        p.duplicate_titles.extend(part.predictions.duplicate_titles)
        p.repeats.extend(part.predictions.repeats)
        if part.raw is not None:
            mf.raw = {**(mf.raw or {}), **part.raw}
    for judge_id in dict.fromkeys(j for part in parts for j in part.evals):
        tables = [part.evals[judge_id] for part in parts if judge_id in part.evals]
        mf.evals[judge_id] = (CandidateTable.concat([c for c, _ in tables]), JudgmentTable.concat([j for _, j in tables]))
        mf.judged[judge_id] = frozenset(_group_cutoff(part.model_id) for part in parts if judge_id in part.evals)
    features = [part.features for part in parts]
    mf.features = None if any(f is None for f in features) else {k: v for f in features for k, v in f.items()}  # type: ignore[union-attr]
    mf.predictions = p
    return mf


def _group_cutoff(folder: str) -> date | None:
    """t for a group folder ``…/origins/<t>``; None for the model folder itself (the cutoffs of config.json)."""
    head, _, tail = folder.rpartition("/origins/")
    return date.fromisoformat(tail) if head and "/" not in tail else None


def _eval(run: _Run, out: IdeasArchive, ideas: IdeaIndex, folder: str, judge_id: str, depth: int) -> tuple[CandidateTable, JudgmentTable]:
    base = f"{folder}/eval/{judge_id}"
    cand_path, judg_path = f"{base}/candidates.parquet", f"{base}/judgments.parquet"
    candidates = run.parse(cand_path, parse_candidate_table)
    judgments = run.parse(judg_path, parse_judgment_table)
    candidates = candidates if candidates is not None else CandidateTable.empty()
    judgments = judgments if judgments is not None else JudgmentTable.empty()
    if judge_id not in out.judges:
        run.findings.append(invariant(base, None, f"judge {judge_id!r} is not in {JUDGES_JSONL}"))
        return candidates, judgments
    if cand_path not in run.broken and run.ready(cand_path, "candidates", PAPERS_PARQUET):
        run.findings.extend(check_candidate_table(cand_path, candidates, ideas, depth))
    if judg_path not in run.broken and run.ready(judg_path, "judgments", cand_path, PAPERS_PARQUET, JUDGES_JSONL):
        run.findings.extend(check_judgment_table(judg_path, judgments, candidates, ideas, judge_id, out.judges[judge_id].line))
    return candidates, judgments
