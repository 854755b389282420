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

    info, f = parse_archive_json(data(layout.ARCHIVE_JSON)); findings += f
    ledger, f = parse_ledger(data(layout.LEDGER_JSON)); findings += f
    instances, f = parse_instances(data(layout.INSTANCES_JSONL)); findings += f
    targets, f = parse_targets(data(layout.TARGETS_PARQUET)); findings += f
    judgements, f = parse_judgements(data(layout.JUDGEMENTS_PARQUET)); findings += f
    references, f = parse_references(data(layout.REFERENCES_PARQUET)); findings += f
    corpus, f = parse_corpus(data(layout.CORPUS_PARQUET)); findings += f
    manifest, f = parse_manifest(data(layout.MANIFEST_JSONL)); findings += f
    models: dict[str, ModelFiles] = {}
    if ledger is not None:
        if check:
            findings += check_benchmark(instances, targets, judgements, references, corpus, ledger)
            findings += check_manifest(manifest, instances, corpus)
        folder = root / "archive" / "models"
        for model_id in sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
            where = lambda name: layout.model_path(model_id, name)  # noqa: E731
            mi, f = parse_model_json(where(layout.MODEL_JSON), data(where(layout.MODEL_JSON)), model_id); findings += f
            preds, f = parse_predictions(data(where(layout.PREDICTIONS_JSONL)), instances, where(layout.PREDICTIONS_JSONL)); findings += f
            calls, f = parse_traces(data(where(layout.TRACES_JSONL)), instances, ledger.max_calls, where(layout.TRACES_JSONL)); findings += f
            if check:
                findings += check_traces(calls, preds, instances, corpus, ledger.top_k, where(layout.TRACES_JSONL))
            models[model_id] = ModelFiles(model_id, mi, preds, calls)
    return InspireFiles(info, ledger, instances, targets, judgements, references, corpus, manifest, models, findings)
