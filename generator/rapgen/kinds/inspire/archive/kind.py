"""Inspire's side of verify and its release view (KINDS.md §3, §5; INSPIRE.md §1–§2).

:func:`check_inspire` is verify's structural stage for an ``inspire-archive``: it
parses every verified file once (:func:`~.read.read_sources`), runs the cross-file
checks, refuses files that have no place in the layout, and reads the release
history of format 2 (``initial``, ``models`` and ``errata`` releases; a ``roll``
is a finding, since Inspire has no time key). What it parsed is kept on the
:class:`~rapgen.archive.VerifiedRoot` and served by :class:`InspireRelease`, the
view of one release that scoring, replay and the kit take.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

from rapgen.archive import (
    ArchiveKind, Category, CheckInput, Finding, HistorySpec, KindCheck, Release, ReleaseKind, load_history, record_path,
)
from rapgen.errors import ArchiveError

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.read import InspireFiles, read_sources

# Inspire has no time key: no windows, no opened or resolved files, no rolls (INSPIRE.md, KINDS.md §5).
INSPIRE_HISTORY = HistorySpec(window_months=0, target_months=None, window_files=(), opened_files=(), rolls=False)

_MODEL_FILE = re.compile(r"^archive/models/([^/]+)/([^/]+)$")
_RELEASE_FILE = re.compile(r"^archive/releases/")


def model_ids(paths) -> list[str]:
    """The model folders among listed ``paths``, sorted."""
    return sorted({m.group(1) for p in paths if (m := _MODEL_FILE.match(p))})


def _layout_findings(listed, present) -> list[Finding]:
    """Required files SHA256SUMS does not list, model folders without their three files, files with no place."""
    out = [Finding(p, None, Category.MISSING, "a required file of an Inspire archive is not listed in SHA256SUMS")
           for p in layout.REQUIRED_FILES if p not in listed and p not in present]
    known = set(layout.REQUIRED_FILES)
    for path in sorted(listed):
        m = _MODEL_FILE.match(path)
        if path in known or _RELEASE_FILE.match(path):
            continue
        if m is None:
            out.append(Finding(path, None, Category.INVARIANT, "not a file of an Inspire archive (see INSPIRE.md §1)"))
        elif m.group(2) not in layout.MODEL_FILES:
            out.append(Finding(path, None, Category.INVARIANT,
                               f"unexpected file in a model folder (allowed: {', '.join(layout.MODEL_FILES)})"))
    for model_id in model_ids(listed):
        for name in layout.MODEL_FILES:
            path = layout.model_path(model_id, name)
            if path not in listed:
                out.append(Finding(path, None, Category.MISSING, "every model folder holds model.json, predictions.jsonl "
                                                                 "and traces.jsonl"))
    return out


def check_inspire(inp: CheckInput) -> KindCheck:
    """VERIFY.md step 5 for an Inspire archive, on the bytes verify hashed (parquet tables are read
    from their verified paths): the layout, every parser, the cross-file checks, the history."""
    findings = _layout_findings(inp.listed, inp.present)

    def data(rel: str) -> bytes | None:
        if rel not in inp.verified:
            return None  # missing, unlisted or changed: verify reported it
        kept = inp.documents.get(rel)
        return kept if kept is not None else (inp.root / rel).read_bytes()

    files = read_sources(data, model_ids(inp.listed), findings=findings)
    history = load_history(inp.root, set(inp.verified), with_ledger=False, sums=inp.listed, documents=inp.documents,
                           spec=INSPIRE_HISTORY)
    findings += history.findings
    for k, record in sorted(history.input.records.items()):
        if record.kind is ReleaseKind.ROLL:
            findings.append(Finding(record_path(k), k, Category.INVARIANT,
                                    "Inspire has no rolls: its releases are initial, models and errata"))
    return KindCheck(findings, history if history.is_history else None, files.info, files)


def _document(name: str) -> property:
    """A release's document as its :attr:`InspireRelease.files_view` holds it."""
    return property(lambda self: getattr(self.files_view, name), doc=f"The release's {name}.")


class InspireRelease(Release):
    """One release of an Inspire root: its benchmark documents and the models it lists.

    Files whose listed bytes are the root's current ones are served from what verify parsed;
    a release whose files an errata replaced is parsed once from the bytes it listed."""

    @cached_property
    def files_view(self) -> InspireFiles:
        state: InspireFiles = self.verified.state
        listed = set(self.files)
        ids = model_ids(listed)
        own = all(self.is_own(p) for p in listed if p in layout.REQUIRED_FILES or _MODEL_FILE.match(p))
        if own:
            models = {m: f for m, f in state.models.items() if m in ids}
            return InspireFiles(state.info, state.ledger, state.instances, state.targets, state.judgements, state.references,
                                state.corpus, state.manifest, models, [])
        parsed = read_sources(self._listed_bytes, ids, check=False)
        if parsed.findings:
            first = parsed.findings[0]
            raise ArchiveError(f"release {self.number}: {first.path}: {first.detail} (the bytes it listed do not parse)")
        return parsed

    def _listed_bytes(self, rel: str) -> bytes | None:
        if rel not in self.files:
            return None
        kept = self.verified.documents.get(self.source(rel))
        return kept if kept is not None else self.disk_path(rel).read_bytes()

    # ------------------------------------------------------------ the documents
    ledger = _document("ledger")
    instances = _document("instances")
    targets = _document("targets")
    judgements = _document("judgements")
    references = _document("references")
    corpus = _document("corpus")
    manifest = _document("manifest")
    models = _document("models")  # model id -> ModelFiles

    @property
    def model_ids(self) -> list[str]:
        return sorted(self.models)


def open_inspire(root: Any, view) -> InspireRelease:
    return InspireRelease(root, view)


INSPIRE_ARCHIVE = ArchiveKind(
    format=layout.FORMAT,
    format_versions=layout.FORMAT_VERSIONS,
    required_files=layout.REQUIRED_FILES,
    model_files=layout.MODEL_FILES,
    check=check_inspire,
    open=open_inspire,
    history=INSPIRE_HISTORY,
)
