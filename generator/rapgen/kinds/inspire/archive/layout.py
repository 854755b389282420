"""Inspire's file names, closed vocabularies and default ledger (INSPIRE.md §1–§2)."""

from __future__ import annotations

import copy
import re

FORMAT = "inspire-archive"
FORMAT_VERSIONS: tuple[int, ...] = (1, 2)

ARCHIVE_JSON = "archive/ARCHIVE.json"
INSTANCES_JSONL = "archive/benchmark/instances.jsonl"
TARGETS_PARQUET = "archive/benchmark/targets.parquet"
JUDGEMENTS_PARQUET = "archive/benchmark/judgements.parquet"
REFERENCES_PARQUET = "archive/benchmark/references.parquet"
CORPUS_PARQUET = "archive/corpus/papers.parquet"
MANIFEST_JSONL = "archive/search/manifest.jsonl"
LEDGER_JSON = "archive/provenance/LEDGER.json"
CONSTRUCTION_JSON = "archive/provenance/construction.json"
REQUIRED_FILES: tuple[str, ...] = (
    ARCHIVE_JSON, INSTANCES_JSONL, TARGETS_PARQUET, JUDGEMENTS_PARQUET, REFERENCES_PARQUET,
    CORPUS_PARQUET, MANIFEST_JSONL, LEDGER_JSON, CONSTRUCTION_JSON,
)
MODEL_JSON = "model.json"
PREDICTIONS_JSONL = "predictions.jsonl"
TRACES_JSONL = "traces.jsonl"
MODEL_FILES: tuple[str, ...] = (MODEL_JSON, PREDICTIONS_JSONL, TRACES_JSONL)  # all three required


def model_path(model_id: str, name: str) -> str:
    """``archive/models/<model_id>/<name>``."""
    return f"archive/models/{model_id}/{name}"


INSTANCE_ID_PATTERN = r"^insp-[0-9]{4,6}$"
INSTANCE_ID_RE = re.compile(r"insp-[0-9]{4,6}")  # use with fullmatch
SPLITS: tuple[str, ...] = ("train", "dev", "eval")
CONDITIONS: tuple[str, ...] = ("detailed", "terse")  # detailed required, terse optional
PRIMARY_SPLIT, PRIMARY_CONDITION = "eval", "detailed"
STATUSES: tuple[str, ...] = ("submitted", "failed")
VIEWS: tuple[str, ...] = ("clean", "all", "flagged")  # clean is primary
TARGET_VIEWS: tuple[str, ...] = ("clean", "flagged")  # the column's values; `all` is both
TIERS: tuple[str, ...] = ("T1", "T2", "T3")  # graded tiers
REFERENCE_TIERS: tuple[str, ...] = ("T0", "T1", "T2", "T3")
ROLES: tuple[str, ...] = ("conceptual", "infrastructural")
REFERENCE_STATUSES: tuple[str, ...] = ("graded", "t0", "concurrent", "older", "overflow")
GAIN_MAPS: tuple[str, ...] = ("declared", "binary", "t2t3")  # declared is primary
CLUSTERS: tuple[str, ...] = ("target", "topic")  # target is primary
SEARCH_GROUP = "corpus"  # KINDS.md §7: Inspire's one search group
SEARCH_TOOL = "search_papers"  # INSPIRE.md §7: the one tool (no full text)

# INSPIRE.md §1, LEDGER.json: the values new archives are written with. Scoring reads
# an archive's own ledger, never this copy.
LEDGER: dict = {
    "K": 10,
    "cutoff_months": 3,
    "recency_months": 48,
    "min_graded": 2,
    "max_graded": 10,
    "flag_confidence": 0.5,
    "gains": {"conceptual": {"T1": 1, "T2": 3, "T3": 7}, "infrastructural": {"T1": 0.5, "T2": 2, "T3": 4}},
    "gain_maps": ["declared", "binary", "t2t3"],
    "bm25": {"k1": 1.5, "b": 0.75},
    "search": {"top_k": 10, "max_calls": 50},
    "bootstrap": {"resamples": 10000, "seed": 0, "level": 0.95},
    "progress_steps": 10,
    "exposure_prefix": 50,
}


def default_ledger() -> dict:
    """A fresh copy of :data:`LEDGER` (callers may change it)."""
    return copy.deepcopy(LEDGER)
