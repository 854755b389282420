"""Stage 1 — read and verify the frozen archive.

Public surface: :class:`Archive` (typed records, DuckDB views), :func:`open_verified`,
:func:`verify_archive` / :class:`VerifyReport`, :func:`seal_archive`, the record types,
and the calendar helpers. Later stages import only from here.
"""

from rapgen.archive.calendar import add_months, history_windows, recent_window, target_window
from rapgen.archive.reader import Archive, open_verified
from rapgen.archive.records import (
    BENCHMARK_LEDGER,
    CONDITION_REGIME,
    CONDITIONS,
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
    ShardManifest,
    TraceCall,
    Unit,
)

__all__ = [
    "Archive", "open_verified", "verify_archive", "VerifyReport", "seal_archive",
    "add_months", "history_windows", "recent_window", "target_window",
    "BENCHMARK_LEDGER", "CONDITION_REGIME", "CONDITIONS", "FORECAST_CONDITIONS", "SEARCH_CONDITIONS", "SLOTS", "STATE_CONDITIONS",
    "Block", "Category", "Direction", "Field", "Finding", "ModelInfo", "Origins", "ShardManifest", "TraceCall", "Unit",
]


def __getattr__(name: str):  # lazy: verify/seal pull in hashing machinery
    if name in ("verify_archive", "VerifyReport"):
        from rapgen.archive import verify

        return getattr(verify, name)
    if name == "seal_archive":
        from rapgen.archive.seal import seal_archive

        return seal_archive
    raise AttributeError(name)
