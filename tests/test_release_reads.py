"""Each archive file is read once: verify hashes it and keeps the bytes; every later stage reads the
release view built from them (never the file again, never a copy).

Opens are counted by patching ``os.open``, ``io.open`` and ``builtins.open`` (``Path.read_bytes``
and ``Path.open`` go through ``io.open``) for the whole of ``rapgen build`` on a copy of the
committed sample, and of ``rapgen score`` on ``rapgen synth --scale small``, whose last release
is an errata release (so release 9's rows of releases.csv are scored from the bytes the errata
replaced). A file is known by its path from ``archive/`` on, wherever it lies, so a copy of the
archive in a temporary folder would be counted too.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parent.parent


def _archive_path(name) -> str | None:
    """``archive/…`` for a path inside an archive folder (any root), else None."""
    if isinstance(name, int):
        return None
    text = os.fsdecode(name)
    at = text.rfind("/archive/")
    return text[at + 1:] if at >= 0 else None


@pytest.fixture
def count_opens(monkeypatch):
    opened: Counter = Counter()

    def counting(original):
        def wrapper(file, *args, **kwargs):
            path = _archive_path(file)
            if path is not None:
                opened[path] += 1
            return original(file, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(os, "open", counting(os.open))
    monkeypatch.setattr(io, "open", counting(io.open))
    monkeypatch.setattr(builtins, "open", counting(builtins.open))
    return opened


def _documents(opened: Counter) -> Counter:
    return Counter({p: n for p, n in opened.items() if p.endswith((".json", ".jsonl", ".SHA256SUMS"))})


def test_a_build_of_the_sample_opens_each_file_once(tmp_path, count_opens):
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(REPO / "archive", root / "archive")
    shutil.copy2(REPO / "SHA256SUMS", root / "SHA256SUMS")
    count_opens.clear()
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(tmp_path / "site"),
                                      "--work-dir", str(tmp_path / "work"), "--resamples", "20"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    listed = [line.split("  ", 1)[1] for line in (root / "SHA256SUMS").read_text().splitlines()]
    documents = _documents(count_opens)
    assert {p for p in listed if p.endswith((".json", ".jsonl", ".SHA256SUMS"))} <= set(documents)  # every one was hashed
    assert {p: n for p, n in documents.items() if n != 1} == {}
    # the tables too: hashed once, then opened by DuckDB only (never read whole to see that they exist)
    assert {p: n for p, n in count_opens.items() if p.endswith(".parquet") and n != 1} == {}


def test_scoring_past_an_errata_release_opens_each_file_once(tmp_path, count_opens):
    root = tmp_path / "synth"
    made = CliRunner().invoke(cli, ["synth", "--scale", "small", "--seed", "1", "--out", str(root)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    last = max(int(p.name[:4]) for p in (root / "archive/releases").glob("*.json"))
    assert (root / f"archive/releases/{last:04d}").is_dir()  # the errata release's kept old bytes
    count_opens.clear()
    result = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(tmp_path / "scores"), "--resamples", "20"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    documents = _documents(count_opens)
    assert any("/superseded/" in p for p in documents)  # the old bytes were hashed with the rest …
    assert {p: n for p, n in documents.items() if n != 1} == {}  # … and nothing was opened again, here or in a copy
    assert {p: n for p, n in count_opens.items() if p.endswith(".parquet") and n != 1} == {}
