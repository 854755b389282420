"""Build the Inspire sample archive from the committed cs.CL papers (INSPIRE.md §6).

:func:`build_inspire_sample` reads the RAP root's committed papers (no
download), labels targets with ``lineage-v1``, writes ``redact-v1`` briefs and
the lexical audit, keeps every referenced paper plus one in three others as the
corpus, runs the reference agents on every instance and condition through the
exact in-memory search shards, checks the result with the kind's own parsers
and writes ``archive/`` and ``SHA256SUMS`` into the target folder (staged, so
nothing is half-written). Every step is deterministic: the same inputs give the
same bytes.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Sequence

from rapgen.archive import sha256_file
from rapgen.errors import RapgenError
from rapgen.io import staging_dir

from rapgen.kinds.inspire.archive import Instance, Reference, brief_digest, cutoff_of, expected_statuses, layout, ledger_from
from rapgen.kinds.inspire.sample import lineage as lin
from rapgen.kinds.inspire.sample.check import check_built
from rapgen.kinds.inspire.sample.files import check_out_root, jsonl_bytes, move_into_place, seal, write_benchmark, write_model
from rapgen.kinds.inspire.sample.papers import SourcePaper, first_fields, read_papers, source_files
from rapgen.kinds.inspire.sample.redact import GENERATOR, NAMED_AT, briefs, title_overlap
from rapgen.kinds.inspire.search import MemoryBackend, reference_model_json, run_agent

CREATED = "2026-11-29"  # fixed, so rebuilds are byte-identical
SPLITS = (("eval", 2025, 1, 60), ("dev", 2024, 2, 30))  # split, year, half, targets
CORPUS_SHARE = 0x55  # keep an unlabelled paper iff the first byte of SHA-256(id) is below this (one in three)
AGENTS = ("bm25-brief", "keyword-loop")
CONDITIONS = ("detailed", "terse")
MAX_BYTES = 12 * 1024 * 1024

ARCHIVE_INFO = {
    "format": layout.FORMAT,
    "format_version": 1,
    "name": "Inspire sample archive (real cs.CL arXiv papers, instrument labels) — not the Inspire release",
    "description": (
        "A small, self-contained sample in the Inspire archive format for trying rapgen. Real: the papers (arXiv id, "
        "title, abstract, first-submission date, categories) of the cs.CL papers committed with the RAP sample. Produced "
        "for this sample, not by the Inspire benchmark: the targets, their antecedent labels (the lineage-v1 instrument: "
        "coined names in the target's abstract and TF-IDF neighbours), the briefs (redact-v1: the abstract with names "
        "redacted), the lexical audit and the reference agents' runs. Its scores say nothing about the benchmark's results."
    ),
    "created": CREATED,
    "synthetic": True,
    "source": "arXiv metadata of cs.CL papers first submitted 2021-07-01 to 2025-06-30 (the RAP sample's committed papers)",
    "license": "arXiv metadata: CC0 1.0; instrument labels and briefs: MIT, as rapgen",
}


def _digest(arxiv_id: str) -> str:
    return hashlib.sha256(arxiv_id.encode("utf-8")).hexdigest()


def select_targets(papers: Sequence[SourcePaper], names: dict, matrix, days, *, max_graded: int, min_graded: int) -> list[tuple[str, int, list]]:
    """(split, paper index, candidates) of the chosen targets: per split, targets of its
    half-year in SHA-256 order of their id, kept when a named antecedent is judged and at
    least ``min_graded`` references would be graded."""
    from rapgen.kinds.inspire.sample.tfidf import cosines

    chosen = []
    for split, year, half, n in SPLITS:
        pool = sorted((k for k, p in enumerate(papers) if lin.in_half(p.first_submitted, year, half)), key=lambda k: _digest(papers[k].arxiv_id))
        taken = 0
        for k in pool:
            if taken == n:
                break
            if not any(papers[j].first_submitted >= lin.recency_floor(papers[k].first_submitted)
                       and papers[j].first_submitted < cutoff_of(papers[k].first_submitted)
                       for _, j in lin.named_antecedents(k, papers, names)):
                continue
            cands = lin.lineage(k, papers, names, cosines(matrix, k), max_graded=max_graded, days=days)
            if sum(1 for c in cands if c.tier in ("T1", "T2", "T3")) >= min_graded:
                chosen.append((split, k, cands))
                taken += 1
    return chosen


def _corpus_ids(papers: Sequence[SourcePaper], referenced: set[int]) -> list[int]:
    return [k for k, p in enumerate(papers) if k in referenced or hashlib.sha256(p.arxiv_id.encode("utf-8")).digest()[0] < CORPUS_SHARE]


def build_inspire_sample(source_root: str | Path, out_root: str | Path, *, force: bool = False) -> dict:
    """Write the sample's ``archive/`` and ``SHA256SUMS`` into ``out_root``; return a summary
    (counts, bytes, seconds). ``source_root``: a RAP root holding the committed papers."""
    from rapgen.kinds.inspire.sample.tfidf import tfidf_matrix

    out_root = Path(out_root)
    check_out_root(out_root, force)
    start = time.perf_counter()
    seconds: dict[str, float] = {}
    ledger = ledger_from(layout.LEDGER)
    paper_files, assignment_files = source_files(source_root)
    papers = read_papers(paper_files)
    topics = first_fields(assignment_files)
    names = lin.unique_names(papers)
    days = lin.days_of(papers)
    matrix = tfidf_matrix([f"{p.title} {p.abstract}" for p in papers])
    seconds["read"] = time.perf_counter() - start
    chosen = select_targets(papers, names, matrix, days, max_graded=ledger.max_graded, min_graded=ledger.min_graded)
    seconds["label"] = time.perf_counter() - start - seconds["read"]
    chosen.sort(key=lambda c: papers[c[1]].arxiv_id)

    instances, targets, judgements, references = [], [], [], []
    referenced: set[int] = set()
    for n, (split, k, cands) in enumerate(chosen, start=1):
        iid = f"insp-{n:04d}"
        p = papers[k]
        own = lin.coined_name(p.title)
        brief, terse = briefs(p.abstract, lin.names_of(cands) + ([own] if own else []))
        instances.append(Instance(iid, split, cutoff_of(p.first_submitted), brief, terse, brief_digest(brief), n))
        overlap = title_overlap(p.title, brief)
        named = overlap >= NAMED_AT
        targets.append({"instance_id": iid, "arxiv_id": p.arxiv_id, "title": p.title, "abstract": p.abstract,
                        "first_submitted": p.first_submitted, "topic": topics.get(p.arxiv_id, "none"), "audit_named": named,
                        "audit_confidence": overlap, "title_overlap": overlap,
                        "view": "flagged" if named and overlap >= ledger.flag_confidence else "clean"})
        refs = [Reference(iid, papers[c.index].arxiv_id, papers[c.index].first_submitted, "", c.tier, c.role) for c in cands]
        status, problems = expected_statuses(refs, p.first_submitted, ledger)
        if problems:
            raise RapgenError(f"lineage-v1 produced an undecidable reference for {iid}: {problems[0]}")
        why = {papers[c.index].arxiv_id: c.rationale for c in cands}
        for r in sorted(refs, key=lambda r: r.arxiv_id):
            references.append({**r.__dict__, "status": status[r.arxiv_id]})
            if status[r.arxiv_id] == "graded":
                judgements.append({"instance_id": iid, "arxiv_id": r.arxiv_id, "tier": r.tier, "role": r.role,
                                   "gain": ledger.gain(r.role, r.tier), "n_votes": 0, "agreement": 0, "rationale": why[r.arxiv_id]})
        referenced.update(c.index for c in cands)
    corpus_idx = _corpus_ids(papers, referenced)
    corpus = {papers[k].arxiv_id: papers[k] for k in corpus_idx}

    with staging_dir(out_root, prefix=".inspire-sample-") as staging:
        _write(staging, instances, targets, judgements, references, corpus, paper_files, assignment_files)
        seconds["write"] = time.perf_counter() - start - seconds["read"] - seconds["label"]
        backend = MemoryBackend({i: _as_corpus_paper(p) for i, p in corpus.items()}, instances, top_k=ledger.top_k, k1=ledger.k1, b=ledger.b)
        for agent in AGENTS:
            preds, traces = run_agent(agent, instances, CONDITIONS, backend, K=ledger.K)
            write_model(staging, reference_model_json(agent, CREATED), jsonl_bytes(preds), jsonl_bytes(traces))
        seconds["agents"] = time.perf_counter() - start - sum(seconds.values())
        n_files, size = seal(staging)
        report = check_built(staging, backend)
        if size > MAX_BYTES:
            raise RapgenError(f"the Inspire sample is {size} bytes, over the {MAX_BYTES}-byte limit")
        move_into_place(staging, out_root)
    seconds["total"] = time.perf_counter() - start
    by_split = {s: sum(1 for i in instances if i.split == s) for s, *_ in SPLITS}
    return {
        "out": str(out_root), "instances": len(instances), "by_split": by_split,
        "flagged": sum(1 for t in targets if t.get("view") == "flagged"),
        "judgements": len(judgements), "references": len(references),
        "statuses": {s: sum(1 for r in references if r["status"] == s) for s in layout.REFERENCE_STATUSES},
        "tiers": {t: sum(1 for j in judgements if j["tier"] == t) for t in layout.TIERS},
        "corpus": len(corpus), "source_papers": len(papers), "bytes": size, "files": n_files,
        "checked": report, "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }


def _as_corpus_paper(p: SourcePaper):
    from rapgen.kinds.inspire.archive import CorpusPaper

    return CorpusPaper(p.arxiv_id, p.title, p.abstract, p.first_submitted, p.categories)


def _write(staging: Path, instances: list[Instance], targets: list[dict], judgements: list[dict], references: list[dict],
           corpus: dict[str, SourcePaper], paper_files: list[Path], assignment_files: list[Path]) -> None:
    write_benchmark(staging, ARCHIVE_INFO, {
        "instrument": lin.INSTRUMENT,
        "instrument_settings": {"bibliography": lin.BIBLIOGRAPHY, "min_cosine": lin.MIN_COSINE, "t2_ranks": lin.N_T2,
                                "corpus_share": f"first byte of SHA-256(id) < 0x{CORPUS_SHARE:02x}",
                                "splits": [{"split": s, "half": f"{y}-H{h}", "targets": n} for s, y, h, n in SPLITS]},
        "generator": GENERATOR,
        "auditor": f"lexical: audit_confidence = title_overlap, named iff >= {NAMED_AT}",
        "judges": [],
        "prompt_sha256": {},
        "inputs": {p.as_posix().split("archive/", 1)[-1]: sha256_file(p) for p in [*paper_files, *assignment_files]},
        "created": CREATED,
    }, instances, targets, judgements, references, corpus)


def default_source_root() -> Path:
    """The repository holding this package (an editable install), else the working directory."""
    repo = Path(__file__).resolve().parents[5]
    return repo if (repo / "pyproject.toml").is_file() else Path.cwd()
