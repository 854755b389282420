"""Format 2 of the archive (RELEASES.md): release records, the history checks and release operations.

:mod:`records` holds the typed records and their strict parsers, :mod:`check`
the pure history checker, :mod:`ledger` the union ledger and shard rule,
:mod:`load` the reader and :mod:`verify` the verifier wrapper; :mod:`ops`
cuts and rolls releases.
"""

from rapgen.archive.history.check import HistoryInput, WindowSpan, check_history, first_release, release_numbers
from rapgen.archive.history.records import (
    Commitment,
    OpenOrigin,
    ReleaseKind,
    ReleaseRecord,
    Replaced,
    format_commitment,
    format_record,
    parse_commitment,
    parse_release_record,
)

__all__ = [
    "Commitment", "HistoryInput", "OpenOrigin", "ReleaseKind", "ReleaseRecord", "Replaced", "WindowSpan",
    "check_history", "first_release", "format_commitment", "format_record", "parse_commitment",
    "parse_release_record", "release_numbers",
]
