"""Fixtures of the Ideas kind's tests: the tiny archive's files, built once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ideas_factory import tiny_files  # noqa: E402


@pytest.fixture(scope="session")
def _tiny_ideas() -> dict[str, bytes]:
    return tiny_files()


@pytest.fixture
def ideas_files(_tiny_ideas) -> dict[str, bytes]:
    """A fresh copy of the tiny archive's files (path -> bytes) for one test to change."""
    return {p: b for p, b in _tiny_ideas.items() if p != "SHA256SUMS"}
