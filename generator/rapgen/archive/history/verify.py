"""``verify_history``: kept for callers of the first round; ``verify_archive`` now runs every history check.

The history rules, later-origin files and commitments are checked inside
:func:`rapgen.archive.verify.verify_archive` (see :mod:`rapgen.archive.format2`);
this returns its report, whose ``history`` is the history it read.
"""

from __future__ import annotations

from pathlib import Path


def verify_history(root: str | Path, **options):
    """``verify_archive(root, **options)``; ``report.history`` holds the :class:`LoadedHistory`."""
    from rapgen.archive.verify import verify_archive

    return verify_archive(root, **options)


def history_of_report(root: str | Path, report):
    """The history ``verify_archive`` read (None when the invariants did not run)."""
    return report.history
