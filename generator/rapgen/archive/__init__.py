"""Stage 1 — read and verify the frozen archive.

Public surface: :func:`verify_archive` (with :class:`VerifyReport`), which builds the
:class:`VerifiedRoot` from the bytes it hashed, and :func:`open_verified` /
:func:`open_release`; ``root.release(n)`` gives the :class:`Release` view of release n
(for RAP a :class:`RapRelease`), the unit every later stage takes. A benchmark kind's
archive side is an :class:`ArchiveKind` (with :class:`CheckInput`, :class:`KindCheck`
and :class:`HistorySpec`); the caller passes the kinds it knows (``kinds=``), this
stage never imports them. Also: the plain :class:`Archive` reader the kit uses on an
archive in progress; :func:`seal_archive`; the archive's layout (every path,
:func:`model_file`, the model-file names and the model-id pattern); SHA256SUMS
(:func:`read_sums`, :func:`parse_sums`, :func:`sums_lines`, :func:`format_sums`,
:func:`sha256_file`); the shard rule (:func:`in_shard`, :func:`shard_ids_sha256` …);
the record types and the calendar helpers. Later stages import only from here.
"""

from rapgen.archive.calendar import add_months, history_windows, recent_window, target_window
from rapgen.archive import layout, records
from rapgen.archive.layout import *  # noqa: F403 - every path and name of the layout (layout.__all__)
from rapgen.archive.evidence import (
    PaperText, build_evidence, build_oracle_block, call_arguments, canonical_counts, canonical_hash, canonical_json, oracle_windows,
)
from rapgen.archive.history.check import HistoryInput, first_release
from rapgen.archive.history.digests import digest_copies
from rapgen.archive.history.live import LiveEntry, LiveStatus, judge_deadline, live_entries, opening_records
from rapgen.archive.history.load import LoadedHistory, load_history, read_root_sums
from rapgen.archive.history.memory import MemoryHistory, default_open
from rapgen.archive.history.ops import ReleaseResult, Replacement, cut_release, roll_release, start_history
from rapgen.archive.history.records import (
    Commitment, OpenOrigin, ReleaseKind, ReleaseRecord, commitment_path, format_commitment, manifest_path, parse_commitment,
    record_path, reveal_path, superseded_path,
)
from rapgen.archive.intervention_checks import calls_by_unit, replay_pairs
from rapgen.archive.intervention_folder import InterventionRecords
from rapgen.archive.interventions import (
    BUDGETS, READOUTS, ModelExtensions, OracleUnit, Panel, Readout, Training,
    model_extensions, readout_cell, parse_oracle, parse_oracle_traces, parse_replays,
)
from rapgen.archive.jsonparse import as_float, loads_strict
from rapgen.archive.jsonparse import SchemaProblem, check_keys, json_document, json_lines, parse_lines  # other kinds' parsers
from rapgen.archive.parse import (
    MODEL_KEYS,
    MODEL_OPTIONAL_KEYS,
    TRACE_KEYS,
    TRACE_OPTIONAL_KEYS,
    names_panel,
    parse_model_json,
    parse_predictions,
    parse_traces,
    renormalise,
)
from rapgen.archive.history.spec import RAP_HISTORY, HistoryHooks, HistorySpec, WindowFiles
from rapgen.archive.history.kinded import NO_ROLLS, cut as release_cut, roll as release_roll, start as release_start
from rapgen.archive.kind import ArchiveKind, CallValidator, CheckInput, KindCheck, ModelFolder
from rapgen.archive.rap_release import RAP_ARCHIVE, RapRelease
from rapgen.archive.ledger_tables import ledger_rows
from rapgen.archive.reader import Archive
from rapgen.archive.release import Release
from rapgen.archive.records import *  # noqa: F403 - the record types and RAP's words (records.__all__)
from rapgen.archive.shards import condition_shard_start, in_shard, shard_ids_sha256, shard_members, shard_start
from rapgen.archive.writer import ASSIGNMENTS_SCHEMA, PAPERS_SCHEMA, write_assignments, write_papers
from rapgen.archive.seal import SealResult, seal_archive
from rapgen.archive.sums import SumsEntry, SumsLine, SumsUnreadable, format_sums, parse_sums, read_sums, sha256_bytes, sha256_file, sums_lines
from rapgen.archive.verified import VerifiedRoot
from rapgen.archive.croissant import ReleaseCitation, bibtex, croissant_path
from rapgen.archive.croissant.tables import tables as croissant_tables
from rapgen.archive.verify import VerifyReport, format_finding, is_valid, open_release, open_verified, verify_archive

__all__ = [
    "Archive", "ledger_rows", "VerifiedRoot", "Release", "RapRelease", "open_verified", "open_release", "verify_archive", "is_valid",
    "VerifyReport", "format_finding", "seal_archive", "SealResult",
    "ArchiveKind", "CallValidator", "CheckInput", "KindCheck", "ModelFolder", "HistoryHooks", "HistorySpec", "NO_ROLLS", "WindowFiles",
    "release_cut", "release_roll", "release_start", "RAP_ARCHIVE", "RAP_HISTORY",
    "add_months", "history_windows", "recent_window", "target_window",
    "Commitment", "OpenOrigin", "ReleaseKind", "ReleaseRecord", "commitment_path", "format_commitment", "manifest_path",
    "parse_commitment", "record_path", "reveal_path", "superseded_path",
    "MemoryHistory", "default_open", "HistoryInput", "first_release", "digest_copies", "LiveEntry", "LiveStatus", "LoadedHistory", "ReleaseResult", "Replacement",
    "cut_release", "judge_deadline", "live_entries", "load_history", "opening_records", "read_root_sums", "roll_release", "start_history",
    "PaperText", "build_evidence", "build_oracle_block", "call_arguments", "canonical_counts", "canonical_hash", "canonical_json",
    "oracle_windows", "calls_by_unit", "replay_pairs", "InterventionRecords",
    "BUDGETS", "READOUTS", "ModelExtensions", "OracleUnit", "Panel", "Readout", "Training",
    "model_extensions", "parse_oracle", "parse_oracle_traces", "parse_replays", "names_panel", "readout_cell",
    "MODEL_KEYS", "MODEL_OPTIONAL_KEYS", "TRACE_KEYS", "TRACE_OPTIONAL_KEYS",
    "as_float", "loads_strict", "SchemaProblem", "check_keys", "json_document", "json_lines", "parse_lines", "parse_model_json", "parse_predictions", "parse_traces", "renormalise",
    "condition_shard_start", "in_shard", "shard_ids_sha256", "shard_members", "shard_start",
    "ASSIGNMENTS_SCHEMA", "PAPERS_SCHEMA", "write_assignments", "write_papers",
    "ReleaseCitation", "bibtex", "croissant_path", "croissant_tables",
    "SumsEntry", "SumsLine", "SumsUnreadable", "format_sums", "parse_sums", "read_sums", "sha256_bytes", "sha256_file", "sums_lines",
    *layout.__all__, *records.__all__,
]
