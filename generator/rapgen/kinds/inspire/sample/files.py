"""Writing a built Inspire archive: the benchmark files, a model's folder and SHA256SUMS.

Shared by the sample builder and the synthetic generator, which both build in a
staging folder and move ``archive/`` and ``SHA256SUMS`` into place only after
the result passed the kind's own checks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Protocol, Sequence

from rapgen.archive import format_sums, sha256_file, write_papers
from rapgen.errors import UsageProblem
from rapgen.io import atomic_write_bytes, dumps_line, swap_dir, write_json, write_jsonl

from rapgen.kinds.inspire.archive import Instance, build_manifest, layout
from rapgen.kinds.inspire.sample.tables import write_judgements, write_references, write_targets


class PaperLike(Protocol):
    arxiv_id: str
    title: str
    abstract: str
    first_submitted: object
    categories: str


def check_out_root(out_root: Path, force: bool) -> None:
    """A usage error when ``out_root`` already holds an archive and ``force`` is not given."""
    if (out_root / "SHA256SUMS").exists() or ((out_root / "archive").is_dir() and any((out_root / "archive").iterdir())):
        if not force:
            raise UsageProblem(f"{out_root}: already holds archive/ or SHA256SUMS; choose an empty folder or pass --force")


def instance_line(i: Instance) -> dict:
    """One instances.jsonl object."""
    return {"instance_id": i.instance_id, "split": i.split, "cutoff": i.cutoff.isoformat(), "brief": i.brief,
            "brief_terse": i.brief_terse, "brief_sha256": i.brief_sha256}


def write_benchmark(staging: Path, info: dict, construction: dict, instances: Sequence[Instance], targets: list[dict],
                    judgements: list[dict], references: list[dict], corpus: Mapping[str, PaperLike]) -> None:
    """Every file of ``archive/`` but the models: ARCHIVE.json, the benchmark tables, the
    corpus, the manifest rebuilt from it and the ledger."""
    write_json(staging / layout.ARCHIVE_JSON, info)
    write_jsonl(staging / layout.INSTANCES_JSONL, [instance_line(i) for i in instances])
    write_targets(staging / layout.TARGETS_PARQUET, targets)
    write_judgements(staging / layout.JUDGEMENTS_PARQUET, judgements)
    write_references(staging / layout.REFERENCES_PARQUET, references)
    ids = sorted(corpus)
    write_papers(staging / layout.CORPUS_PARQUET, {
        "arxiv_id": ids, "title": [corpus[i].title for i in ids], "abstract": [corpus[i].abstract for i in ids],
        "first_submitted": [corpus[i].first_submitted for i in ids], "categories": [corpus[i].categories for i in ids]})
    write_jsonl(staging / layout.MANIFEST_JSONL, build_manifest(instances, corpus))
    write_json(staging / layout.LEDGER_JSON, layout.LEDGER)
    write_json(staging / layout.CONSTRUCTION_JSON, construction)


def jsonl_bytes(rows: Sequence[object]) -> bytes:
    """JSON lines exactly as :func:`rapgen.io.write_jsonl` writes them."""
    return "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8")


def write_model(staging: Path, model_json: dict, predictions: bytes, traces: bytes) -> None:
    """``archive/models/<id>/``: model.json and the two JSON-lines files, given as bytes."""
    folder = staging / "archive" / "models" / model_json["model_id"]
    write_json(folder / layout.MODEL_JSON, model_json)
    atomic_write_bytes(folder / layout.PREDICTIONS_JSONL, predictions)
    atomic_write_bytes(folder / layout.TRACES_JSONL, traces)


def seal(staging: Path) -> tuple[int, int]:
    """Write ``SHA256SUMS`` over every file of ``archive/``; (files listed + 1, total bytes)."""
    files = sorted(p for p in (staging / "archive").rglob("*") if p.is_file())
    sums = {p.relative_to(staging).as_posix(): sha256_file(p) for p in files}
    (staging / "SHA256SUMS").write_bytes(format_sums(sums))
    return len(sums) + 1, sum(p.stat().st_size for p in files) + (staging / "SHA256SUMS").stat().st_size


def move_into_place(staging: Path, out_root: Path) -> None:
    swap_dir(staging / "archive", out_root / "archive")
    os.replace(staging / "SHA256SUMS", out_root / "SHA256SUMS")
