"""``rapgen sample build``: the committed sample archive from real cs.CL arXiv papers.

Real: the papers (id, title, abstract, v1 date, categories) from
``../shared/data/arxiv-sample/papers.jsonl.gz``. Produced here: the fields and
codebooks (hand-written, :mod:`rapgen.sample.codebooks`), membership and
direction labels (the TF-IDF instrument, :mod:`rapgen.sample.instrument`),
exemplars, blocks, split, manifests. No model outputs are written.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Sequence

import numpy as np

from rapgen.archive import (
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    DEV_SPLIT,
    FIELDS_JSONL,
    PAPERS_PARQUET,
    SLOTS,
    add_months,
    write_assignments,
    write_papers,
)
from rapgen.errors import RapgenError, UsageProblem
from rapgen.io import write_jsonl
from rapgen.sample import blocks as blocks_mod
from rapgen.sample.codebooks import FieldText, load_fields
from rapgen.sample.common import (
    CREATED, HISTORY_WINDOWS, WINDOW_MONTHS, manifest_rows, origins_doc, papers_span, seal, staged, write_common, write_manifests,
)
from rapgen.sample.instrument import DIRECTION_QUANTILE, THRESHOLDS, TYPES, TfidfSpace, assign_many, calibrate, cosine_scores, tokenize

ORIGINS = (date(2023, 1, 1), date(2023, 7, 1), date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1))
STRICT_ORIGIN = date(2025, 1, 1)
CATEGORY = "cs.CL"
PAPERS_FROM, PAPERS_TO = papers_span(ORIGINS)  # 2021-07-01, 2025-07-01 (exclusive)
N_EXEMPLARS = 3
# eligible_pre2024: at least this many counted rows (primary != other) in every
# six-month window that an episode with an origin before 2024 reads.
ELIGIBLE_MIN = 200
SPLIT_SALT = "rap-sample-v1"

DEFAULT_DATA = Path("..") / "shared" / "data" / "arxiv-sample" / "papers.jsonl.gz"


def default_data_path() -> Path:
    """``../shared/data/arxiv-sample/papers.jsonl.gz`` relative to the repository
    holding this package (an editable install), else to the working directory."""
    repo = Path(__file__).resolve().parents[3]
    if (repo / "pyproject.toml").is_file():
        return repo / DEFAULT_DATA
    return Path.cwd() / DEFAULT_DATA

ARCHIVE_INFO = {
    "format": "rap-archive",
    "format_version": 1,
    "name": "RAP sample archive (real cs.CL arXiv papers, synthetic labels) — not the RAP release",
    "description": (
        "A small, self-contained sample in the RAP archive format for trying rapgen. Real: the papers "
        "(arXiv id, title, abstract, first-submission date, categories) of cs.CL arXiv papers first submitted "
        "2021-07-01 to 2025-06-30 that belong to at least one field. Produced for this sample, not by the RAP "
        "benchmark: the 17 fields and their codebooks (hand-written), the field memberships and direction "
        "labels (a TF-IDF similarity instrument, see docs/sample-archive.md), the exemplars, dependency "
        "blocks, split and search manifests, and any model outputs under archive/models/ (deterministic reference "
        "agents). When the sample is a release history, its release dates are replayed after the fact: every release "
        "record says simulated: true. Its scores say nothing about the RAP benchmark's results."
    ),
    "created": CREATED,
    "synthetic": True,
    "source": (
        "Paper metadata courtesy of arXiv.org (arXiv API), sample collected by "
        "github.com/penguinwang96825/arxiver (snapshot 5734f2d6a5e4c3c40bc3721f5133d349af6c0a55 and "
        "its git history); fields, codebooks, labels and models produced by rapgen sample build."
    ),
    "license": (
        "Paper metadata: CC0 1.0 (arXiv descriptive metadata, per arXiv's API Terms of Use); full texts are "
        "not included and remain under each paper's own license. Fields, codebooks and labels: MIT, as rapgen."
    ),
}


# ---------------------------------------------------------------- loading
def load_papers(data_path: str | Path) -> list[dict]:
    """cs.CL papers first submitted in [PAPERS_FROM, PAPERS_TO), sorted by (date, id)."""
    path = Path(data_path)
    if not path.is_file():
        raise UsageProblem(
            f"{path}: paper data not found; pass --data with the path of papers.jsonl.gz "
            f"(default {DEFAULT_DATA}, relative to the repository)"
        )
    lo, hi = PAPERS_FROM.isoformat(), PAPERS_TO.isoformat()
    papers = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    rec = json.loads(line)
                    cats = rec["categories"]
                    day = rec["first_submitted"]
                    if CATEGORY in cats and lo <= day < hi:
                        papers.append(
                            {
                                "arxiv_id": str(rec["arxiv_id"]),
                                "title": str(rec["title"]),
                                "abstract": str(rec["abstract"]),
                                "first_submitted": date.fromisoformat(day),
                                "categories": " ".join(cats),
                            }
                        )
                except (ValueError, KeyError, TypeError) as exc:
                    raise RapgenError(f"{path}:{number}: not a paper record ({type(exc).__name__}: {exc})") from None
    except (OSError, EOFError) as exc:
        raise RapgenError(f"{path}: cannot read as gzip JSON Lines ({exc})") from None
    papers.sort(key=lambda p: (p["first_submitted"], p["arxiv_id"]))
    ids = [p["arxiv_id"] for p in papers]
    if len(set(ids)) != len(ids):
        raise RapgenError(f"{path}: duplicate arxiv_id values")
    return papers


# ---------------------------------------------------------------- instrument
def direction_text(d) -> str:
    """What the instrument compares a paper with for one direction (terms count twice)."""
    return " . ".join([d.name, d.definition, d.include, d.terms, d.terms])


def field_text(f: FieldText) -> str:
    return " . ".join([f.name, f.definition, f.terms, f.terms] + [direction_text(d) for d in f.directions])


def paper_text(p: dict) -> str:
    """Title counted twice, then the abstract."""
    return f"{p['title']} . {p['title']} . {p['abstract']}"


def score_papers(papers: Sequence[dict], fields: Sequence[FieldText] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibrated field scores (n, F), direction scores (n, 8F) and the calibration mask."""
    fields = load_fields() if fields is None else fields
    tokens = [tokenize(paper_text(p)) for p in papers]
    space = TfidfSpace.fit(tokens)
    docs = space.transform(tokens)
    fq = space.transform([tokenize(field_text(f)) for f in fields])
    dq = space.transform([tokenize(direction_text(d)) for f in fields for d in f.directions])
    raw_f = cosine_scores(docs, fq)
    raw_d = cosine_scores(docs, dq)
    cal = np.array([p["first_submitted"] < ORIGINS[0] for p in papers], dtype=bool)
    if not cal.any():
        raise RapgenError(f"no {CATEGORY} papers before the first origin {ORIGINS[0]}: the instrument has nothing to calibrate on")
    fs = calibrate(raw_f, cal, [1.0 - f.breadth for f in fields])
    fs[raw_f <= 0] = 0.0
    ds = calibrate(raw_d, cal, DIRECTION_QUANTILE)
    return fs, ds, cal


def _windows() -> list[tuple[date, date]]:
    out = []
    start = PAPERS_FROM
    while start < PAPERS_TO:
        out.append((start, add_months(start, WINDOW_MONTHS)))
        start = add_months(start, WINDOW_MONTHS)
    return out


# ---------------------------------------------------------------- build
@dataclass(frozen=True)
class _Labels:
    """The instrument's output: membership rows and exemplars, per field."""

    rows: list[tuple[int, int, int, int, int]]  # (field index, paper index, primary, secondary, type)
    exemplars: dict[tuple[int, int], list[str]]
    members_pre: dict[str, set[str]]  # field id -> ids of its members before the first origin


@dataclass(frozen=True)
class _Structure:
    """Blocks, split, the per-field report and eligibility."""

    links: list
    comps: list[list[str]]
    split: dict[str, str]
    block_of: dict[str, str]
    report: dict
    eligible: dict[str, bool]


def build_sample(data_path: str | Path, out_root: str | Path, *, force: bool = False) -> dict:
    """Build the sample archive under ``out_root`` (``archive/`` + ``SHA256SUMS``); return a summary."""
    papers = load_papers(data_path)
    if not papers:
        raise RapgenError(f"{data_path}: no {CATEGORY} papers first submitted in [{PAPERS_FROM}, {PAPERS_TO})")
    fields = load_fields()
    labels = label_papers(papers, fields)
    structure = _structure(papers, fields, labels)
    # Only papers that belong to some field are published.
    used = sorted({pi for _, pi, *_ in labels.rows}, key=lambda i: papers[i]["arxiv_id"].encode())
    with staged(out_root, force) as staging:
        write_common(staging, ARCHIVE_INFO, origins_doc(ORIGINS, WINDOW_MONTHS, HISTORY_WINDOWS, STRICT_ORIGIN))
        _write_texts(staging, fields, labels, structure)
        _write_tables(staging, papers, fields, labels.rows, used)
        seal(staging, croissant=True)
    return {
        "out": str(out_root),
        "papers_read": len(papers),
        "papers": len(used),
        "memberships": len(labels.rows),
        "fields": len(fields),
        "blocks": len(structure.comps),
        "dev_fields": sum(1 for f in fields if structure.split[structure.block_of[f.field_id]] == DEV_SPLIT),
        "links": [{"a": a, "b": b, "shared": s, "overlap": round(o, 3)} for a, b, s, o in structure.links],
        "eligible_pre2024": sum(structure.eligible.values()),
        "fields_report": structure.report,
    }


def label_papers(papers: Sequence[dict], fields: Sequence[FieldText]) -> _Labels:
    """Membership and direction labels per field, by the TF-IDF instrument."""
    fs, ds, cal = score_papers(papers, fields)
    rows: list[tuple[int, int, int, int, int]] = []
    exemplars: dict[tuple[int, int], list[str]] = {}
    members_pre: dict[str, set[str]] = {}
    for fi, f in enumerate(fields):
        member = np.nonzero(fs[:, fi] >= 1.0)[0]
        block = ds[member][:, fi * 8:(fi + 1) * 8]
        primary, secondary, kind = assign_many(block, THRESHOLDS) if len(member) else (np.zeros(0, int),) * 3
        for k, pi in enumerate(member):
            rows.append((fi, int(pi), int(primary[k]), int(secondary[k]), int(kind[k])))
        members_pre[f.field_id] = {papers[pi]["arxiv_id"] for pi in member if cal[pi]}
        for d in range(8):
            exemplars[(fi, d)] = _exemplars(papers, member, block[:, d] if len(member) else np.zeros(0), primary, d, cal)
    return _Labels(rows, exemplars, members_pre)


def _structure(papers: Sequence[dict], fields: Sequence[FieldText], labels: _Labels) -> _Structure:
    links = blocks_mod.overlap_links(labels.members_pre)
    comps = blocks_mod.connected_blocks([f.field_id for f in fields], links)
    split = blocks_mod.split_blocks(comps, SPLIT_SALT)
    block_of = {fid: blocks_mod.block_id_for(c) for c in comps for fid in c}
    windows = _windows()
    report = _report(fields, labels.rows, papers, windows)
    pre2024 = [w for w in windows if w[1] <= date(2024, 1, 1)]
    eligible = {
        f.field_id: all(report[f.field_id]["counted_per_window"][w[0].isoformat()] >= ELIGIBLE_MIN for w in pre2024)
        for f in fields
    }
    return _Structure(links, comps, split, block_of, report, eligible)


def _write_texts(staging: Path, fields: Sequence[FieldText], labels: _Labels, st: _Structure) -> None:
    """fields.jsonl, codebooks.jsonl and blocks.jsonl."""
    ordered = sorted(fields, key=lambda f: f.field_id)
    write_jsonl(staging / FIELDS_JSONL, [
        {
            "field_id": f.field_id,
            "name": f.name,
            "definition": f.definition,
            "split": st.split[st.block_of[f.field_id]],
            "block_id": st.block_of[f.field_id],
            "eligible_pre2024": st.eligible[f.field_id],
        }
        for f in ordered
    ])
    write_jsonl(staging / CODEBOOKS_JSONL, [
        {
            "field_id": f.field_id,
            "directions": [
                {
                    "slot": SLOTS[d],
                    "name": dt.name,
                    "definition": dt.definition,
                    "include": dt.include,
                    "exclude": dt.exclude,
                    "exemplars": labels.exemplars[(fields.index(f), d)],
                }
                for d, dt in enumerate(f.directions)
            ],
        }
        for f in ordered
    ])
    write_jsonl(staging / BLOCKS_JSONL, [
        {"block_id": blocks_mod.block_id_for(c), "split": st.split[blocks_mod.block_id_for(c)], "fields": c} for c in st.comps
    ])


def _write_tables(staging: Path, papers: Sequence[dict], fields: Sequence[FieldText], rows: list, used: list[int]) -> None:
    """papers.parquet, assignments.parquet and both search manifests."""
    write_papers(staging / PAPERS_PARQUET, {
        "arxiv_id": [papers[i]["arxiv_id"] for i in used],
        "title": [papers[i]["title"] for i in used],
        "abstract": [papers[i]["abstract"] for i in used],
        "first_submitted": [papers[i]["first_submitted"] for i in used],
        "categories": [papers[i]["categories"] for i in used],
    })
    rows = sorted(rows, key=lambda r: (fields[r[0]].field_id.encode(), papers[r[1]]["arxiv_id"].encode()))
    write_assignments(staging / ASSIGNMENTS_PARQUET, {
        "arxiv_id": [papers[r[1]]["arxiv_id"] for r in rows],
        "field_id": [fields[r[0]].field_id for r in rows],
        "first_submitted": [papers[r[1]]["first_submitted"] for r in rows],
        "primary": [SLOTS[r[2]] if r[2] >= 0 else "other" for r in rows],
        "secondary": [SLOTS[r[3]] if r[3] >= 0 else None for r in rows],
        "assignment_type": [TYPES[r[4]] for r in rows],
    })
    days = np.array([p["first_submitted"].toordinal() - date(1970, 1, 1).toordinal() for p in papers], dtype=np.int64)
    row_field = np.array([r[0] for r in rows], dtype=np.int64)
    manifests = manifest_rows(
        [f.field_id for f in fields], row_field, days[[r[1] for r in rows]] if rows else np.zeros(0, np.int64),
        [papers[r[1]]["arxiv_id"] for r in rows], ORIGINS, WINDOW_MONTHS,
    )
    write_manifests(staging, manifests)


def _exemplars(papers, member, scores, primary, d, cal) -> list[str]:
    """The top-scoring pre-origin papers of direction d: first those labelled d,
    then (only if fewer than N_EXEMPLARS) other pre-origin members by their d score."""
    if len(member) == 0:
        return []
    pre = cal[member]
    ids = np.array([papers[i]["arxiv_id"] for i in member], dtype=object)
    chosen: list[str] = []
    for mask in (pre & (primary == d), pre & (primary != d)):
        idx = np.nonzero(mask)[0]
        order = sorted(idx, key=lambda k: (-scores[k], ids[k]))
        for k in order:
            if len(chosen) == N_EXEMPLARS:
                return chosen
            chosen.append(str(ids[k]))
    return chosen


def _report(fields, rows, papers, windows) -> dict:
    """Membership per window, share of ``other`` and boundary rate per field."""
    arr = np.array([(r[0], papers[r[1]]["first_submitted"].toordinal(), r[2], r[4]) for r in rows], dtype=np.int64).reshape(-1, 4)
    out = {}
    for fi, f in enumerate(fields):
        mine = arr[arr[:, 0] == fi]
        per_window = {}
        counted = {}
        for lo, hi in windows:
            in_w = mine[(mine[:, 1] >= lo.toordinal()) & (mine[:, 1] < hi.toordinal())]
            per_window[lo.isoformat()] = int(len(in_w))
            counted[lo.isoformat()] = int((in_w[:, 2] >= 0).sum())
        n = int(len(mine))
        types = {t: int((mine[:, 3] == k).sum()) for k, t in enumerate(TYPES)}
        out[f.field_id] = {
            "members": n,
            "members_per_window": per_window,
            "counted_per_window": counted,
            "types": types,
            "other_share": round(float((mine[:, 2] < 0).sum()) / n, 4) if n else None,
            "boundary_rate": round(types["boundary"] / n, 4) if n else None,
            "bridge_rate": round(types["bridge"] / n, 4) if n else None,
        }
    return out


def report_markdown(summary: dict) -> str:
    """The per-field table for docs/sample-archive.md."""
    rep = summary["fields_report"]
    first = next(iter(rep.values()))
    wins = list(first["members_per_window"])
    head = "| field | members | " + " | ".join(w[:7] for w in wins) + " | other | low ev. | boundary | bridge |"
    sep = "| --- | ---: | " + " | ".join("---:" for _ in wins) + " | ---: | ---: | ---: | ---: |"
    lines = [head, sep]
    for fid in sorted(rep):
        r = rep[fid]
        n = r["members"] or 1
        lines.append(
            f"| `{fid}` | {r['members']:,} | "
            + " | ".join(f"{r['members_per_window'][w]:,}" for w in wins)
            + f" | {r['other_share']:.1%} | {r['types']['low_evidence'] / n:.1%} | {r['boundary_rate']:.1%} | {r['bridge_rate']:.1%} |"
        )
    return "\n".join(lines) + "\n"
