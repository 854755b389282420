"""The union ledger built in a thread during verify: the findings are the same with it, without it,
and when the ledger checks refuse it (built from other inputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rapgen.archive.history.prefetch as prefetch
import rapgen.archive.rap_release as rap_release
from rapgen.archive import verify_archive
from rapgen.search import validate_call


def _findings(root: Path) -> list[tuple]:
    report = verify_archive(root, validate_call=validate_call)
    return [(f.path, f.line, f.category, f.detail) for f in report.errors + report.warnings]


def _tamper_window(root: Path) -> None:
    """A window's assignments file replaced by its papers file (wrong columns), SHA256SUMS left alone."""
    windows = sorted((root / "archive").rglob("windows/*/assignments.parquet"))
    if not windows:
        pytest.skip("the history has no window")
    papers = windows[0].with_name("papers.parquet")
    windows[0].write_bytes(papers.read_bytes())


@pytest.mark.parametrize("tamper", [False, True])
def test_prefetch_taken_refused_or_absent_gives_the_same_findings(history_copy: Path, monkeypatch, tamper: bool) -> None:
    if tamper:
        _tamper_window(history_copy)
    taken = _findings(history_copy)
    assert bool(taken) == tamper

    class Refused(prefetch.LedgerPrefetch):
        def take(self, root, sources, field_ids):  # built from other field ids: refused, then closed
            return super().take(root, sources, [*field_ids, "not-a-field"])

    monkeypatch.setattr(rap_release, "LedgerPrefetch", Refused)
    refused = _findings(history_copy)

    class Absent(prefetch.LedgerPrefetch):
        def __init__(self, *args) -> None:
            self._thread, self._ledger = None, None

    monkeypatch.setattr(rap_release, "LedgerPrefetch", Absent)
    assert taken == refused == _findings(history_copy)
