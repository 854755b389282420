"""The archive stage's side of a benchmark kind (KINDS.md §3): :class:`ArchiveKind`.

``verify_archive`` hashes every listed file, reads ``format`` from the verified
``ARCHIVE.json`` and hands the verified bytes to the kind whose ``format`` it is
(:attr:`ArchiveKind.check`); the kind parses and checks its documents and returns
its findings, its release history and whatever it parsed (``state``). The
:class:`~rapgen.archive.verified.VerifiedRoot` keeps that state, and
``root.release(n)`` asks the kind for a view of release n (:attr:`ArchiveKind.open`).

This stage never imports ``rapgen.kinds``: the caller passes the kinds it knows,
as a mapping ``format -> ArchiveKind`` (``rapgen.kinds.registry().formats``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapgen.archive.history.load import LoadedHistory
from rapgen.archive.history.spec import HistorySpec
from rapgen.archive.history.view import ReleaseView
from rapgen.archive.records import Finding

CallValidator = Callable[[dict], object]  # raises on a malformed Search call (rapgen.search.validate_call)


@dataclass(frozen=True)
class CheckInput:
    """What verify hands a kind's check: only files whose bytes verified are readable."""

    root: Path
    documents: Mapping[str, bytes]  # path -> the bytes hashed (JSON, JSONL and release manifests)
    verified: frozenset[str]  # every listed path whose digest matched
    listed: Mapping[str, str]  # SHA256SUMS: path -> digest
    present: frozenset[str]  # regular files found on disk under archive/
    history: HistorySpec | None
    validate_call: CallValidator | None = None


@dataclass
class KindCheck:
    """A kind's verdict: its findings, the history it read (None: format 1, one implicit
    release), ARCHIVE.json as parsed, and ``state`` (what :attr:`ArchiveKind.open` reads)."""

    findings: list[Finding] = field(default_factory=list)
    history: LoadedHistory | None = None
    info: Mapping[str, Any] | None = None
    state: Any = None


@dataclass(frozen=True)
class ModelFolder:
    """What ``rapgen seal`` lets a kind's model folder hold, as names below ``archive/models/<id>/``.

    A name is a template: ``{key}`` matches a time key (``YYYY-MM-01``), any other ``{…}``
    one path segment (a judge id, say). ``files``: what a new folder may hold; ``required``:
    what it must hold (``predictions.jsonl`` may instead come as a later key's files or a Live
    commitment); ``later``: what an already sealed folder may gain (its listed files never change)."""

    files: tuple[str, ...]
    required: tuple[str, ...]
    later: tuple[str, ...]

    def allows(self, name: str) -> bool:
        """``name`` may be in a new folder."""
        return bool(_template_pattern(self.files).match(name))

    def may_gain(self, name: str) -> bool:
        """A sealed folder may gain ``name``."""
        return bool(_template_pattern(self.later).match(name))


def _template_pattern(names: tuple[str, ...]) -> re.Pattern:
    parts = []
    for name in names:
        regex = re.escape(name).replace(re.escape("{key}"), r"\d{4}-\d{2}-01")
        parts.append(re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", regex))
    return re.compile("^(?:" + "|".join(parts) + ")$")


@dataclass(frozen=True)
class ArchiveKind:
    """A kind's archive: its ``format`` (ARCHIVE.json's key), the versions it reads, its files,
    ``check`` (verify's structural stage) and ``open`` (one release as a view)."""

    format: str
    format_versions: tuple[int, ...]
    required_files: tuple[str, ...]
    model_files: tuple[str, ...]
    check: Callable[[CheckInput], KindCheck] = field(repr=False)
    # open(root, view) -> the kind's Release (a rapgen.archive.release.Release) for a VerifiedRoot
    open: Callable[[Any, ReleaseView], Any] = field(repr=False)
    history: HistorySpec | None = None
    folder: ModelFolder | None = None  # what seal lets a model folder hold; None: RAP's folder (ARCHIVE.md, RELEASES.md)


def archive_format(data: bytes | None) -> str | None:
    """ARCHIVE.json's ``format``, or None when the bytes are not a JSON object with a string ``format``
    (the kind's own check then reports why)."""
    try:
        obj = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return None
    value = obj.get("format") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None
