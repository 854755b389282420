"""Where everything lives in an archive: the one home of its paths.

Every path is relative to the repository root (the folder holding
``SHA256SUMS``) and written with ``/``, exactly as SHA256SUMS lists it.
Code elsewhere builds paths from these names, never from string literals.
"""

from __future__ import annotations

import re

SUMS_NAME = "SHA256SUMS"
ARCHIVE_DIR = "archive"
ARCHIVE_PREFIX = ARCHIVE_DIR + "/"

ARCHIVE_JSON = "archive/ARCHIVE.json"
BENCHMARK_DIR = "archive/benchmark"
ORIGINS_JSON = "archive/benchmark/origins.json"
FIELDS_JSONL = "archive/benchmark/fields.jsonl"
CODEBOOKS_JSONL = "archive/benchmark/codebooks.jsonl"
BLOCKS_JSONL = "archive/benchmark/blocks.jsonl"
PAPERS_PARQUET = "archive/benchmark/papers.parquet"
ASSIGNMENTS_PARQUET = "archive/benchmark/assignments.parquet"
PROVENANCE_DIR = "archive/provenance"
LEDGER_JSON = "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json"
SEARCH_DIR = "archive/search"
REGIMES: tuple[str, ...] = ("fixed", "expanding")
MANIFEST_JSONL: dict[str, str] = {regime: f"{SEARCH_DIR}/manifest_{regime}.jsonl" for regime in REGIMES}
MODELS_DIR = "archive/models"
MODELS_PREFIX = MODELS_DIR + "/"

# The frozen benchmark files every archive holds (ARCHIVE.md, layout).
REQUIRED_FILES: tuple[str, ...] = (
    ARCHIVE_JSON, ORIGINS_JSON, FIELDS_JSONL, CODEBOOKS_JSONL, BLOCKS_JSONL,
    PAPERS_PARQUET, ASSIGNMENTS_PARQUET, LEDGER_JSON, *MANIFEST_JSONL.values(),
)

MODEL_JSON = "model.json"
PREDICTIONS_JSONL = "predictions.jsonl"
TRACES_JSONL = "traces.jsonl"
REPLAYS_JSONL = "replays.jsonl"
ORACLE_JSONL = "oracle.jsonl"
ORACLE_TRACES_JSONL = "oracle_traces.jsonl"
TRAINING_JSON = "training.json"
# INTERVENTIONS.md: optional files of a model folder, beside the three of ARCHIVE.md.
INTERVENTION_MODEL_FILES: tuple[str, ...] = (REPLAYS_JSONL, ORACLE_JSONL, ORACLE_TRACES_JSONL, TRAINING_JSON)
MODEL_FILES: tuple[str, ...] = (MODEL_JSON, PREDICTIONS_JSONL, TRACES_JSONL, *INTERVENTION_MODEL_FILES)
REQUIRED_MODEL_FILES: tuple[str, ...] = (MODEL_JSON, PREDICTIONS_JSONL)
MODEL_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"

# Format 2 (RELEASES.md): release files, windows, later origins and Live commitments.
RELEASES_DIR = "archive/releases"
WINDOWS_DIR = "archive/benchmark/windows"
COMMITMENTS_DIR = "archive/commitments"
ORIGINS_SUBDIR = "origins"
ORIGIN_FILES: tuple[str, ...] = (PREDICTIONS_JSONL, TRACES_JSONL)  # what models/<id>/origins/<origin>/ may hold
WINDOW_FILES: tuple[str, ...] = ("papers.parquet", "assignments.parquet")
_ORIGIN_TEXT = r"\d{4}-\d{2}-01"
ORIGIN_FILE_PATTERN = rf"^archive/models/([^/]+)/origins/({_ORIGIN_TEXT})/(predictions|traces)\.jsonl$"
WINDOW_FILE_PATTERN = rf"^archive/benchmark/windows/({_ORIGIN_TEXT})/(papers|assignments)\.parquet$"
SEARCH_ORIGIN_PATTERN = rf"^archive/search/({_ORIGIN_TEXT})/manifest_(fixed|expanding)\.jsonl$"
COMMITMENT_PATTERN = rf"^archive/commitments/({_ORIGIN_TEXT})/([^/]+)\.json$"
# Croissant metadata (MLCommons): one file per release, or one for a format-1 archive.
CROISSANT_JSON = "archive/croissant.json"
CROISSANT_SUFFIX = ".croissant.json"


def origin_file(model_id: str, origin: str, name: str) -> str:
    """``archive/models/<id>/origins/<origin>/<name>`` (``name`` one of ORIGIN_FILES; origin ISO)."""
    return f"{MODELS_PREFIX}{model_id}/{ORIGINS_SUBDIR}/{origin}/{name}"


def window_file(start: str, name: str) -> str:
    """``archive/benchmark/windows/<start>/<name>`` (``name`` one of WINDOW_FILES; start ISO)."""
    return f"{WINDOWS_DIR}/{start}/{name}"


def commitment_file(origin: str, model_id: str) -> str:
    """``archive/commitments/<origin>/<model_id>.json`` (origin ISO)."""
    return f"{COMMITMENTS_DIR}/{origin}/{model_id}.json"


# Files parsed as documents (JSON / JSON Lines); the rest (parquet) are read by DuckDB.
DOCUMENT_SUFFIXES: tuple[str, ...] = (".json", ".jsonl")


def model_dir(model_id: str) -> str:
    """Archive-relative folder of one model."""
    return f"{MODELS_PREFIX}{model_id}"


def model_file(model_id: str, name: str) -> str:
    """Archive-relative path of one of a model's files (``name`` one of MODEL_FILES)."""
    return f"{MODELS_PREFIX}{model_id}/{name}"


def split_model_path(path: str) -> tuple[str, str] | None:
    """``(model_id, file name)`` for ``archive/models/<id>/<name>``; None for any other path."""
    if not path.startswith(MODELS_PREFIX):
        return None
    parts = path[len(MODELS_PREFIX):].split("/")
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0], parts[1]


_RELEASE_MANIFEST = re.compile(r"^archive/releases/\d{4}\.SHA256SUMS$")


def is_document(path: str) -> bool:
    """True for the files verify keeps and parses from the bytes it hashed: the JSON and JSONL
    files and the release manifests (``releases/NNNN.SHA256SUMS``)."""
    return path.endswith(DOCUMENT_SUFFIXES) or bool(_RELEASE_MANIFEST.match(path))


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations", "re")]
