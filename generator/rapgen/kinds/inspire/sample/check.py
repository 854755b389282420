"""Read a freshly built Inspire archive back with the kind's own parsers and checks.

The builder calls :func:`check_built` before it moves anything into place, so a
sample it writes always parses clean, holds every invariant and replays.
"""

from __future__ import annotations

from pathlib import Path

from rapgen.archive import parse_model_json
from rapgen.errors import RapgenError

from rapgen.kinds.inspire.archive import (
    check_benchmark, check_manifest, check_traces, layout, parse_archive_json, parse_corpus, parse_instances, parse_judgements,
    parse_ledger, parse_manifest, parse_predictions, parse_references, parse_targets, parse_traces,
)
from rapgen.kinds.inspire.scores import score_units
from rapgen.kinds.inspire.search import SearchFn, replay_calls


def check_built(root: Path, search: SearchFn) -> dict:
    """Every finding of the archive under ``root`` (raised as one error), else counts."""
    def data(rel: str) -> bytes:
        return (root / rel).read_bytes()

    findings = []
    _, f = parse_archive_json(data(layout.ARCHIVE_JSON)); findings += f
    ledger, f = parse_ledger(data(layout.LEDGER_JSON)); findings += f
    instances, f = parse_instances(data(layout.INSTANCES_JSONL)); findings += f
    targets, f = parse_targets(data(layout.TARGETS_PARQUET)); findings += f
    judgements, f = parse_judgements(data(layout.JUDGEMENTS_PARQUET)); findings += f
    references, f = parse_references(data(layout.REFERENCES_PARQUET)); findings += f
    corpus, f = parse_corpus(data(layout.CORPUS_PARQUET)); findings += f
    manifest, f = parse_manifest(data(layout.MANIFEST_JSONL)); findings += f
    if ledger is None:
        raise RapgenError(f"the built sample fails its own checks: {findings[0].path}: {findings[0].detail}")
    findings += check_benchmark(instances, targets, judgements, references, corpus, ledger)
    findings += check_manifest(manifest, instances, corpus)
    counts: dict = {"calls": 0, "reproduced": 0, "models": {}}
    for folder in sorted((root / "archive" / "models").iterdir()):
        rel = f"archive/models/{folder.name}"
        _, f = parse_model_json(f"{rel}/{layout.MODEL_JSON}", (folder / layout.MODEL_JSON).read_bytes(), folder.name); findings += f
        preds, f = parse_predictions((folder / layout.PREDICTIONS_JSONL).read_bytes(), instances, f"{rel}/{layout.PREDICTIONS_JSONL}")
        findings += f
        calls, f = parse_traces((folder / layout.TRACES_JSONL).read_bytes(), instances, ledger.max_calls, f"{rel}/{layout.TRACES_JSONL}")
        findings += f + check_traces(calls, preds, instances, corpus, ledger.top_k, f"{rel}/{layout.TRACES_JSONL}")
        replay = replay_calls(calls, search, f"{rel}/{layout.TRACES_JSONL}")
        findings += replay.findings
        counts["calls"] += replay.n_calls
        counts["reproduced"] += replay.n_reproduced
        table = score_units(folder.name, "detailed", instances, judgements, preds, calls, corpus, K=ledger.K)
        counts["models"][folder.name] = table.totals()
    if findings:
        first = sorted(findings)[0]
        raise RapgenError(f"the built sample fails its own checks ({len(findings)} findings), first: {first.path}: {first.detail}")
    return counts
