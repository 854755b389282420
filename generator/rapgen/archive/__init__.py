"""Stage 1 — read and verify the frozen archive.

Public surface: :func:`open_verified` / :func:`verify_archive` (with
:class:`VerifyReport`) and the :class:`VerifiedArchive` they return; the plain
:class:`Archive` reader for archives in progress; :func:`seal_archive`; the
archive's layout (every path, :func:`model_file`, the model-file names and the
model-id pattern); SHA256SUMS (:func:`read_sums`, :func:`parse_sums`,
:func:`sums_lines`, :func:`format_sums`, :func:`sha256_file`); the shard rule
(:func:`in_shard`, :func:`shard_ids_sha256` …); the record types and the
calendar helpers. Later stages import only from here.
"""

from rapgen.archive.calendar import add_months, history_windows, recent_window, target_window
from rapgen.archive.layout import (
    ARCHIVE_DIR,
    ARCHIVE_JSON,
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    LEDGER_JSON,
    MANIFEST_JSONL,
    MODEL_FILES,
    MODEL_ID_PATTERN,
    MODEL_JSON,
    MODELS_DIR,
    MODELS_PREFIX,
    ORIGIN_FILES,
    ORIGINS_JSON,
    ORIGINS_SUBDIR,
    PAPERS_PARQUET,
    PREDICTIONS_JSONL,
    REQUIRED_FILES,
    REQUIRED_MODEL_FILES,
    SUMS_NAME,
    TRACES_JSONL,
    WINDOW_FILE_PATTERN,
    commitment_file,
    model_dir,
    model_file,
    origin_file,
    split_model_path,
)
from rapgen.archive.history.records import Commitment, OpenOrigin, format_commitment, parse_commitment
from rapgen.archive.parse import (
    MODEL_KEYS,
    MODEL_OPTIONAL_KEYS,
    TRACE_KEYS,
    TRACE_OPTIONAL_KEYS,
    as_float,
    loads_strict,
    parse_model_json,
    parse_predictions,
    parse_traces,
    renormalise,
)
from rapgen.archive.reader import Archive
from rapgen.archive.records import (
    BENCHMARK_LEDGER,
    CONDITION_REGIME,
    CONDITIONS,
    FIELD_ID_PATTERN,
    FORECAST_CONDITIONS,
    SEARCH_CONDITIONS,
    SLOTS,
    STATE_CONDITIONS,
    Block,
    Category,
    Direction,
    Field,
    Finding,
    ModelInfo,
    Origins,
    ProblemKind,
    ShardManifest,
    TraceCall,
    Unit,
)
from rapgen.archive.shards import condition_shard_start, in_shard, shard_ids_sha256, shard_members, shard_start
from rapgen.archive.writer import ASSIGNMENTS_SCHEMA, PAPERS_SCHEMA, write_assignments, write_papers
from rapgen.archive.sums import SumsEntry, SumsLine, SumsUnreadable, format_sums, parse_sums, read_sums, sha256_bytes, sha256_file, sums_lines

__all__ = [
    "Archive", "VerifiedArchive", "open_verified", "verify_archive", "is_valid", "VerifyReport", "format_finding", "seal_archive", "SealResult",
    "add_months", "history_windows", "recent_window", "target_window",
    "ARCHIVE_DIR", "ARCHIVE_JSON", "ASSIGNMENTS_PARQUET", "BLOCKS_JSONL", "CODEBOOKS_JSONL", "FIELDS_JSONL", "LEDGER_JSON",
    "MANIFEST_JSONL", "WINDOW_FILE_PATTERN", "MODEL_FILES", "MODEL_ID_PATTERN", "MODEL_JSON", "MODELS_DIR", "MODELS_PREFIX", "ORIGINS_JSON",
    "PAPERS_PARQUET", "PREDICTIONS_JSONL", "REQUIRED_FILES", "REQUIRED_MODEL_FILES", "SUMS_NAME", "TRACES_JSONL",
    "ORIGIN_FILES", "ORIGINS_SUBDIR", "commitment_file", "model_dir", "model_file", "origin_file", "split_model_path",
    "Commitment", "OpenOrigin", "format_commitment", "parse_commitment",
    "MODEL_KEYS", "MODEL_OPTIONAL_KEYS", "TRACE_KEYS", "TRACE_OPTIONAL_KEYS",
    "as_float", "loads_strict", "parse_model_json", "parse_predictions", "parse_traces", "renormalise",
    "BENCHMARK_LEDGER", "CONDITION_REGIME", "CONDITIONS", "FIELD_ID_PATTERN", "FORECAST_CONDITIONS", "SEARCH_CONDITIONS", "SLOTS", "STATE_CONDITIONS",
    "Block", "Category", "Direction", "Field", "Finding", "ModelInfo", "Origins", "ProblemKind", "ShardManifest", "TraceCall", "Unit",
    "condition_shard_start", "in_shard", "shard_ids_sha256", "shard_members", "shard_start",
    "ASSIGNMENTS_SCHEMA", "PAPERS_SCHEMA", "write_assignments", "write_papers",
    "SumsEntry", "SumsLine", "SumsUnreadable", "format_sums", "parse_sums", "read_sums", "sha256_bytes", "sha256_file", "sums_lines",
]

_VERIFY = ("verify_archive", "open_verified", "is_valid", "VerifyReport", "format_finding")
_SEAL = ("seal_archive", "SealResult")


def __getattr__(name: str):  # lazy: verify/seal pull in DuckDB and the hashing machinery only when used
    if name in _VERIFY:
        from rapgen.archive import verify as module
    elif name == "VerifiedArchive":
        from rapgen.archive import verified as module
    elif name in _SEAL:
        from rapgen.archive import seal as module
    else:
        raise AttributeError(name)
    return getattr(module, name)
