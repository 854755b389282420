"""``rapgen seal``: write the canonical SHA256SUMS, or append lines for a new model.

Rules (ARCHIVE.md, frozen and append-only parts): with no SHA256SUMS, every
regular file under archive/ is listed. With one, every listed file must still
match its line, and the only new files allowed are those of model folders that
have no listed file yet. Nothing is written unless every rule holds.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rapgen.archive.layout import MODEL_FILES, MODEL_ID_PATTERN, MODEL_JSON, MODELS_DIR, REQUIRED_MODEL_FILES
from rapgen.archive.parse import parse_model_json
from rapgen.archive.sums import SUMS, SumsEntry, check_paths, escape, format_sums, parse_sums, read_sums
from rapgen.archive.walk import hash_files, walk
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.io import atomic_write_bytes


@dataclass(frozen=True)
class SealResult:
    created: bool
    added: tuple[str, ...]
    total: int


def seal_archive(root: str | Path, *, jobs: int | None = None) -> SealResult:
    root = str(root)
    if not os.path.isdir(root):
        raise UsageProblem(f"{root}: the root is not a directory")
    if not os.path.isdir(os.path.join(root, "archive")) or os.path.islink(os.path.join(root, "archive")):
        raise ArchiveError(f"{root}: no archive/ folder to seal")
    found = walk(root, "archive")
    problems = [f"{escape(p)} is a {e.kind if e.kind != 'other' else e.detail}" for p, e in sorted(found.items()) if e.kind in ("symlink", "other", "unreadable")]
    if problems:
        raise ArchiveError(f"cannot seal: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "") + "; only regular files may be archived")
    files = sorted(p for p, e in found.items() if e.kind == "file")
    sums_path = os.path.join(root, SUMS)

    if not os.path.lexists(sums_path):
        digests = hash_files(root, files, jobs=jobs)
        safe, findings = check_paths([_entry(p, "0" * 64) for p in files], strict=False)
        bad = [f for f in findings if f.category.value != "WARNING"]
        if bad:
            raise ArchiveError(f"cannot seal: {bad[0].path}: {bad[0].detail}")
        atomic_write_bytes(sums_path, format_sums({p: digests[p].digest for p in files}))
        return SealResult(True, tuple(files), len(files))

    entries, findings = parse_sums(read_sums(sums_path), strict=True)
    if findings:
        f = findings[0]
        raise ArchiveError(f"{SUMS}:{f.line or ''}: {f.detail}; fix SHA256SUMS (rapgen verify --strict lists every problem) before sealing")
    listed = {e.path: e.digest for e in entries}
    missing = [p for p in listed if p not in found]
    if missing:
        raise ArchiveError(f"cannot seal: {missing[0]} is listed in SHA256SUMS but missing; an archived file may never be removed")
    current = hash_files(root, sorted(listed), jobs=jobs)
    changed = sorted(p for p, d in listed.items() if current[p].digest != d)
    if changed:
        raise ArchiveError(
            f"refusing to change the existing SHA256SUMS line{'s' * (len(changed) > 1)} for {', '.join(changed)}"
            ": archived files are frozen or append-only; restore the original bytes"
        )
    new = [p for p in files if p not in listed]
    listed_models = {p.split("/")[2] for p in listed if p.startswith(MODELS_DIR + "/") and p.count("/") >= 3}
    for p in new:
        parts = p.split("/")
        if not p.startswith(MODELS_DIR + "/") or len(parts) != 4:
            raise ArchiveError(f"refusing to add {escape(p)}: only new folders archive/models/<model_id>/ may be added to a sealed archive")
        if parts[2] in listed_models:
            raise ArchiveError(f"refusing to add {escape(p)}: model {parts[2]!r} is already sealed and its files never change")
    if not new:
        return SealResult(False, (), len(listed))
    for model_id in sorted({p.split("/")[2] for p in new}):
        _check_new_model(root, model_id, {p.split("/")[3] for p in new if p.split("/")[2] == model_id})
    digests = hash_files(root, new, jobs=jobs)
    merged = dict(listed)
    merged.update({p: digests[p].digest for p in new})
    atomic_write_bytes(sums_path, format_sums(merged))
    return SealResult(False, tuple(new), len(merged))


def _check_new_model(root: str, model_id: str, names: set[str]) -> None:
    """A new model folder must be well-formed before its lines are appended."""
    folder = f"{MODELS_DIR}/{model_id}"
    if not re.match(MODEL_ID_PATTERN, model_id):
        raise ArchiveError(f"refusing to add {folder}: model id {model_id!r} does not match {MODEL_ID_PATTERN}")
    extra = sorted(names - set(MODEL_FILES))
    if extra:
        raise ArchiveError(f"refusing to add {folder}/{escape(extra[0])}: a model folder holds only model.json, predictions.jsonl and traces.jsonl")
    for required in REQUIRED_MODEL_FILES:
        if required not in names:
            raise ArchiveError(f"refusing to add {folder}: {required} is missing")
    rel = f"{folder}/{MODEL_JSON}"
    _, findings = parse_model_json(rel, Path(root, rel).read_bytes(), folder=model_id)
    if findings:
        raise ArchiveError(f"refusing to add {folder}: {rel}: {findings[0].detail}; 'rapgen submit check' lists every problem")


def _entry(path: str, digest: str) -> SumsEntry:
    return SumsEntry(0, path, digest)
