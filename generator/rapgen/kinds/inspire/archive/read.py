"""Every file of an Inspire archive folder parsed once, with every finding of its checks.

:func:`read_files` reads ``archive/`` under a root (it does not hash: verifying
``SHA256SUMS`` is the engine's stage), runs each parser and the cross-file
checks (benchmark invariants, the rebuilt manifest, traces whole and from the
shard) and returns the records with all findings. The sample builder, the
synthetic generator, tests and ``bench/`` read archives this way until the
release view parses them for the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rapgen.archive import Category, Finding, ModelInfo, parse_model_json

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.benchmark import parse_corpus, parse_instances, parse_judgements, parse_references, parse_targets
from rapgen.kinds.inspire.archive.documents import Ledger, parse_archive_json, parse_ledger
from rapgen.kinds.inspire.archive.invariants import check_benchmark
from rapgen.kinds.inspire.archive.manifest import check_manifest, parse_manifest
from rapgen.kinds.inspire.archive.models import check_traces, parse_predictions, parse_traces
from rapgen.kinds.inspire.archive.records import Call, CorpusPaper, Instance, Judgement, ManifestRow, Prediction, Reference, Target


@dataclass(frozen=True)
class ModelFiles:
    model_id: str
    info: ModelInfo | None
    predictions: list[Prediction]
    calls: list[Call]

    @property
    def traces_path(self) -> str:
        return layout.model_path(self.model_id, layout.TRACES_JSONL)

    @property
    def is_reference(self) -> bool:
        """A committed reference agent (``reference_agent: true`` in model.json)."""
        return bool(self.info is not None and self.info.extra.get("reference_agent") is True)


@dataclass(frozen=True)
class InspireFiles:
    info: dict | None
    ledger: Ledger | None
    instances: list[Instance]
    targets: list[Target]
    judgements: list[Judgement]
    references: list[Reference]
    corpus: dict[str, CorpusPaper]
    manifest: list[ManifestRow]
    models: dict[str, ModelFiles]
    findings: list[Finding] = field(default_factory=list)


def read_files(root: str | Path, *, check: bool = True) -> InspireFiles:
    """Parse every file under ``root/archive``; with ``check``, add the cross-file findings.
    Without a readable ledger the models are not read (their call cap is unknown)."""
    root = Path(root)
    findings: list[Finding] = []

    def data(rel: str) -> bytes:
        try:
            return (root / rel).read_bytes()
        except OSError as exc:
            findings.append(Finding(rel, None, Category.MISSING, f"cannot be read ({exc.strerror or exc})"))
            return b""

    folder = root / "archive" / "models"
    model_ids = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return read_sources(data, model_ids, check=check, findings=findings)


def read_sources(data: Callable[[str], bytes | None], model_ids: Sequence[str], *, check: bool = True,
                 findings: list[Finding] | None = None) -> InspireFiles:
    """Every file through ``data(path)`` (bytes, or None for a file whose absence was reported
    already: its parser and the checks that need it are skipped, never run on nothing)."""
    findings = [] if findings is None else findings
    missing: set[str] = set()

    def parsed(rel: str, parse, empty):
        raw = data(rel)
        if raw is None:
            missing.add(rel)
            return empty
        value, f = parse(raw)
        findings.extend(f)
        return value

    info = parsed(layout.ARCHIVE_JSON, parse_archive_json, None)
    ledger = parsed(layout.LEDGER_JSON, parse_ledger, None)
    instances = parsed(layout.INSTANCES_JSONL, parse_instances, [])
    targets = parsed(layout.TARGETS_PARQUET, parse_targets, [])
    judgements = parsed(layout.JUDGEMENTS_PARQUET, parse_judgements, [])
    references = parsed(layout.REFERENCES_PARQUET, parse_references, [])
    corpus = parsed(layout.CORPUS_PARQUET, parse_corpus, {})
    manifest = parsed(layout.MANIFEST_JSONL, parse_manifest, [])
    models: dict[str, ModelFiles] = {}
    complete = not missing & set(BENCHMARK_FILES)
    if ledger is not None and complete:
        if check:
            findings += check_benchmark(instances, targets, judgements, references, corpus, ledger)
            findings += check_manifest(manifest, instances, corpus)
        for model_id in model_ids:
            where = lambda name: layout.model_path(model_id, name)  # noqa: E731
            mi = parsed(where(layout.MODEL_JSON), lambda raw: parse_model_json(where(layout.MODEL_JSON), raw, model_id), None)
            preds = parsed(where(layout.PREDICTIONS_JSONL),
                           lambda raw: parse_predictions(raw, instances, where(layout.PREDICTIONS_JSONL)), None)
            calls = parsed(where(layout.TRACES_JSONL),
                           lambda raw: parse_traces(raw, instances, ledger.max_calls, where(layout.TRACES_JSONL)), None)
            if preds is None or calls is None:
                continue  # a model file that did not verify: the model is not read
            if check:
                findings += check_traces(calls, preds, instances, corpus, ledger.top_k, where(layout.TRACES_JSONL))
            models[model_id] = ModelFiles(model_id, mi, preds, calls)
    return InspireFiles(info, ledger, instances, targets, judgements, references, corpus, manifest, models, findings)


# What the cross-file checks and the models need (ARCHIVE.json and construction.json are not read by them).
BENCHMARK_FILES: tuple[str, ...] = (
    layout.INSTANCES_JSONL, layout.TARGETS_PARQUET, layout.JUDGEMENTS_PARQUET, layout.REFERENCES_PARQUET,
    layout.CORPUS_PARQUET, layout.MANIFEST_JSONL, layout.LEDGER_JSON,
)
