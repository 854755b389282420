"""``rapgen seal``: write the canonical SHA256SUMS, or append lines for a new model.

Rules (ARCHIVE.md, frozen and append-only parts): with no SHA256SUMS, every
regular file under archive/ is listed. With one, every listed file must still
match its line, and the only new files allowed are those of model folders that
have no listed file yet, and the files a pull request may add to a model folder
that is already sealed: a later origin's ``origins/<origin>/predictions.jsonl``
and ``traces.jsonl`` (RELEASES.md), the intervention files ``replays.jsonl``,
``oracle.jsonl``, ``oracle_traces.jsonl`` and ``training.json``
(INTERVENTIONS.md), and Live commitments ``commitments/<origin>/<model_id>.json``.
Lines already listed never change. Nothing is written unless every rule holds.
(Release files, windows and opened origins are written by ``rapgen release``.)

Those are RAP's folder rules. Another kind declares its own
(:class:`~rapgen.archive.kind.ModelFolder`, ``ArchiveKind.folder``): the caller passes
the kinds it knows (``kinds``, format -> ArchiveKind), and the archive's ``ARCHIVE.json``
``format`` picks the rules; this stage never imports a kind.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rapgen.archive.layout import (
    ARCHIVE_DIR,
    ARCHIVE_JSON,
    CROISSANT_JSON,
    COMMITMENT_PATTERN,
    INTERVENTION_MODEL_FILES,
    MODEL_FILES,
    MODEL_ID_PATTERN,
    MODEL_JSON,
    MODELS_DIR,
    MODELS_PREFIX,
    ORIGIN_FILE_PATTERN,
    ORIGINS_SUBDIR,
    PREDICTIONS_JSONL,
    RELEASES_DIR,
    REQUIRED_MODEL_FILES,
)
from rapgen.archive.kind import ArchiveKind, ModelFolder, archive_format
from rapgen.archive.parse import parse_model_json
from rapgen.archive.records import Category
from rapgen.archive.sums import SUMS, SumsEntry, check_paths, escape, format_sums, parse_sums, read_sums, sha256_bytes
from rapgen.archive.walk import hash_files, walk
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.io import atomic_write_bytes
from rapgen.text import has_bidi_override


@dataclass(frozen=True)
class SealResult:
    created: bool
    added: tuple[str, ...]
    total: int


def seal_archive(root: str | Path, *, jobs: int | None = None, croissant: bool = False,
                 kinds: Mapping[str, ArchiveKind] | None = None) -> SealResult:
    """Write or extend ``root/SHA256SUMS`` (see the module docstring); raise
    :class:`ArchiveError` naming the file and the rule if any rule fails.

    ``kinds`` (format -> ArchiveKind): the kind of ``ARCHIVE.json``'s ``format`` gives the
    model folder rules when it declares them (None, or a kind without: RAP's).

    With ``croissant``, a new format-1 archive first gets ``archive/croissant.json``
    describing every file (so SHA256SUMS lists it too); a sealed archive is refused."""
    root = str(root)
    if not os.path.isdir(root):
        raise UsageProblem(f"{escape(root)}: the root is not a directory")
    top = os.path.join(root, ARCHIVE_DIR)
    if not os.path.isdir(top) or os.path.islink(top):
        raise ArchiveError(f"{escape(root)}: no archive/ folder to seal")
    files = _regular_files(root)
    sums_path = os.path.join(root, SUMS)
    if croissant and os.path.lexists(sums_path):
        raise UsageProblem(f"{SUMS} exists: a sealed archive's files are frozen, so --croissant works only when sealing a "
                           "new archive (a history gets one Croissant file per release from 'rapgen release')")
    if not os.path.lexists(sums_path):
        safe, findings = check_paths([SumsEntry(0, p, "0" * 64) for p in files], strict=False)
        bad = [f for f in findings if f.category is not Category.WARNING]
        if bad:
            raise ArchiveError(f"cannot seal: {bad[0].path}: {bad[0].detail}")
        if croissant:
            files = [p for p in files if p != CROISSANT_JSON]
        digests = _hash(root, files, jobs)
        if croissant:
            digests[CROISSANT_JSON] = _write_croissant(root, digests)
        try:
            _write(sums_path, digests)
        except ArchiveError:
            if croissant:  # the Croissant file without its SHA256SUMS line would be an unlisted file
                os.unlink(os.path.join(root, CROISSANT_JSON))
            raise
        return SealResult(True, tuple(sorted(digests, key=lambda p: p.encode("utf-8"))), len(digests))
    listed = _listed(sums_path, set(files), root, jobs)
    rules = _folder_rules(root, kinds)
    new = _new_model_files(files, listed, rules)
    if not new:
        return SealResult(False, (), len(listed))
    sealed = _sealed_models(listed)
    committed = {m.group(2) for p in [*listed, *new] if (m := _COMMITMENT.match(p))}
    for model_id in sorted({p.split("/")[2] for p in new if p.startswith(MODELS_PREFIX)} - sealed):
        names = {p.split("/", 3)[3] for p in new if p.startswith(f"{MODELS_PREFIX}{model_id}/")}
        _check_new_model(root, model_id, names, model_id in committed, rules)
    merged = dict(listed)
    merged.update(_hash(root, new, jobs))
    _write(sums_path, merged)
    return SealResult(False, tuple(new), len(merged))


def _write_croissant(root: str, digests: dict[str, str]) -> str:
    """Write ``archive/croissant.json`` describing ``digests``' files; return its SHA-256."""
    from rapgen.archive.croissant import format1_croissant

    if any(p.startswith(RELEASES_DIR + "/") for p in digests):
        raise UsageProblem("the archive has release files: a history gets one Croissant file per release "
                           "from 'rapgen release', not a format-1 archive/croissant.json")
    try:
        info = json.loads(Path(root, ARCHIVE_JSON).read_bytes())
    except (OSError, ValueError) as exc:
        raise ArchiveError(f"{ARCHIVE_JSON}: cannot be read as JSON ({exc}); the Croissant file names the archive from it") from None
    if not isinstance(info, dict):
        raise ArchiveError(f"{ARCHIVE_JSON}: line 1: expected a JSON object")
    data = format1_croissant(digests, info)
    atomic_write_bytes(Path(root, CROISSANT_JSON), data)
    return sha256_bytes(data)


def _regular_files(root: str) -> list[str]:
    """Every file under archive/, refusing links, special files and names that
    could not be listed or shown faithfully (not UTF-8, bidirectional overrides)."""
    found = walk(root, ARCHIVE_DIR)
    problems = [
        f"{escape(p)} is a {e.kind if e.kind != 'other' else e.detail}"
        for p, e in sorted(found.items()) if e.kind in ("symlink", "other", "unreadable")
    ]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ArchiveError(f"cannot seal: {problems[0]}{more}; only regular files may be archived")
    files = sorted((p for p, e in found.items() if e.kind == "file"), key=lambda p: p.encode("utf-8", "surrogateescape"))
    for p in files:
        try:
            p.encode("utf-8")
        except UnicodeEncodeError:
            raise ArchiveError(f"cannot seal: the name {escape(p)} is not valid UTF-8; rename the file") from None
        if has_bidi_override(p):
            raise ArchiveError(f"cannot seal: the name {escape(p)} holds a bidirectional override character; rename the file")
    return files


def _hash(root: str, paths: list[str], jobs: int | None) -> dict[str, str]:
    digests = {}
    for p, result in hash_files(root, paths, jobs=jobs).items():
        if result.digest is None:
            what = f"is a {result.error}" if result.not_regular else f"cannot be read ({result.error})"
            raise ArchiveError(f"cannot seal: {escape(p)} {what}")
        digests[p] = result.digest
    return digests


def _listed(sums_path: str, files: set[str], root: str, jobs: int | None) -> dict[str, str]:
    """The existing lines (path → digest), each still matching its file byte for byte."""
    entries, findings = parse_sums(read_sums(sums_path), strict=True)
    if findings:
        f = findings[0]
        raise ArchiveError(f"{SUMS}:{f.line or ''}: {f.detail}; fix SHA256SUMS (rapgen verify --strict lists every problem) before sealing")
    listed = {e.path: e.digest for e in entries}
    missing = [p for p in listed if p not in files]
    if missing:
        raise ArchiveError(f"cannot seal: {escape(missing[0])} is listed in SHA256SUMS but missing; an archived file may never be removed")
    current = _hash(root, sorted(listed), jobs)
    changed = sorted(p for p, d in listed.items() if current[p] != d)
    if changed:
        raise ArchiveError(
            f"refusing to change the existing SHA256SUMS line{'s' * (len(changed) > 1)} for {', '.join(escape(p) for p in changed)}"
            ": archived files are frozen or append-only; restore the original bytes"
        )
    return listed


_ORIGIN_FILE = re.compile(ORIGIN_FILE_PATTERN)
_COMMITMENT = re.compile(COMMITMENT_PATTERN)


def _model_of(path: str) -> tuple[str, str] | None:
    """``(model_id, name below its folder)`` for a path under archive/models/<id>/; None otherwise."""
    if not path.startswith(MODELS_PREFIX):
        return None
    parts = path[len(MODELS_PREFIX):].split("/", 1)
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None


def _sealed_models(listed) -> set[str]:
    return {split[0] for split in map(_model_of, listed) if split}


def _folder_rules(root: str, kinds: Mapping[str, ArchiveKind] | None) -> ModelFolder | None:
    """The model folder rules of the archive's kind, if it declares them (None: RAP's)."""
    if not kinds:
        return None
    try:
        data = Path(root, ARCHIVE_JSON).read_bytes()
    except OSError:
        return None
    kind = kinds.get(archive_format(data) or "")
    return kind.folder if kind is not None else None


def _new_model_files(files: list[str], listed: dict[str, str], rules: ModelFolder | None = None) -> list[str]:
    """Files not yet listed: a new model folder, a commitment, or what a sealed folder may gain."""
    new = [p for p in files if p not in listed]
    sealed = _sealed_models(listed)
    for p in new:
        if _COMMITMENT.match(p):
            continue
        split = _model_of(p)
        if split is None:
            raise ArchiveError(f"refusing to add {escape(p)}: only model folders archive/models/<model_id>/ and commitments "
                               "archive/commitments/<origin>/<model_id>.json may be added to a sealed archive")
        model_id, name = split
        if model_id in sealed and rules is not None:
            if not rules.may_gain(name):
                raise ArchiveError(f"refusing to add {escape(p)}: model {escape(model_id)!r} is already sealed; it may gain only "
                                   f"{', '.join(rules.later)}")
            continue
        if model_id in sealed and not (_ORIGIN_FILE.match(p) or name in INTERVENTION_MODEL_FILES):
            raise ArchiveError(f"refusing to add {escape(p)}: model {escape(model_id)!r} is already sealed; it may gain only "
                               "origins/<origin>/predictions.jsonl and traces.jsonl, and "
                               f"{', '.join(INTERVENTION_MODEL_FILES)}")
    return new


def _write(sums_path: str, digests: dict[str, str]) -> None:
    try:
        atomic_write_bytes(sums_path, format_sums(digests))
    except OSError as exc:
        raise ArchiveError(f"{SUMS}: cannot be written ({exc.strerror or exc}); nothing was changed") from None


def _check_new_model(root: str, model_id: str, names: set[str], committed: bool = False, rules: ModelFolder | None = None) -> None:
    """A new model folder must be well-formed before its lines are appended."""
    folder = escape(f"{MODELS_DIR}/{model_id}")
    if not re.match(MODEL_ID_PATTERN, model_id):
        raise ArchiveError(f"refusing to add {folder}: model id {model_id!r} does not match {MODEL_ID_PATTERN}")
    if rules is not None:
        later = {n for n in names if n.startswith(f"{ORIGINS_SUBDIR}/") and rules.allows(n)}
        extra = sorted(n for n in names if not rules.allows(n))
        if extra:
            raise ArchiveError(f"refusing to add {folder}/{escape(extra[0])}: a model folder of this archive holds only "
                               f"{', '.join(rules.files)}")
    else:
        later = {n for n in names if _ORIGIN_FILE.match(f"{MODELS_PREFIX}{model_id}/{n}")}
        extra = sorted(names - set(MODEL_FILES) - later)
        if extra:
            raise ArchiveError(f"refusing to add {folder}/{escape(extra[0])}: a model folder holds only {', '.join(MODEL_FILES)} "
                               "and origins/<origin>/predictions.jsonl and traces.jsonl")
    for required in (rules.required if rules is not None else REQUIRED_MODEL_FILES):
        # a model may enter a later origin with model.json and its origin files, or sealed with a commitment
        if required not in names and not (required == PREDICTIONS_JSONL and (later or committed)):
            raise ArchiveError(f"refusing to add {folder}: {required} is missing")
    rel = f"{MODELS_DIR}/{model_id}/{MODEL_JSON}"
    try:
        data = Path(root, rel).read_bytes()
    except OSError as exc:
        raise ArchiveError(f"refusing to add {folder}: {rel} cannot be read ({exc.strerror})") from None
    _, findings = parse_model_json(rel, data, folder=model_id)
    if findings:
        raise ArchiveError(f"refusing to add {folder}: {rel}: {escape(findings[0].detail)}; 'rapgen submit check' lists every problem")


