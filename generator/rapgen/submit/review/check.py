"""The pull-request check (SUBMISSION.md, "The pull-request check"): :func:`check_submission`.

Sections, cheap to expensive:

1. integrity — the frozen archive verifies; with ``base`` (a git ref), nothing
   outside the new folder changed and the folder is new;
2. submission — model.json, predictions.jsonl, traces.jsonl, coverage,
   validity accounting, bidirectional controls, Search calls per condition;
3. checksums — the folder's SHA256SUMS lines are present, correct, canonical,
   and the only lines that changed;
4. scores, replay and a dry-run site render, on a temporary overlay of the
   archive plus the submission — run only when 1–3 found nothing, so the
   command stops at the first class of failure.

Nothing is ever written under the repository root.
"""

from __future__ import annotations

import os
from pathlib import Path

from rapgen.archive import MODELS_PREFIX, Archive, sha256_bytes, sha256_file
from rapgen.errors import ArchiveError, RapgenError, UsageProblem
from rapgen.submit.review import checks, files, overlay, traces
from rapgen.submit.review.checks import visible
from rapgen.submit.review.result import CheckResult, StageStatus

def _open_folder(root: Path, model_dir: Path) -> tuple[str, bool]:
    """(model id, whether the folder is root/archive/models/<id>); UsageProblem for a bad root or folder."""
    if not root.is_dir():
        raise UsageProblem(f"{visible(root)}: the repository root is not a directory")
    if not (root / "archive").is_dir():
        raise UsageProblem(f"{visible(root)}: no archive/ folder here; pass the repository root with --root")
    if not model_dir.is_dir():
        hint = ""
        if checks.is_git_commit(root, str(model_dir)):
            hint = f"; {visible(model_dir)} is a git ref: check it out and run '.ci/submit-check pr --base <main>' to check the folders it adds"
        raise UsageProblem(f"{visible(model_dir)}: the model folder does not exist or is not a directory{hint}")
    absolute = Path(os.path.abspath(model_dir))
    # The parent is resolved, the folder itself is not: a symlinked model folder stays in the archive (and is a problem).
    in_archive = absolute.parent.resolve() == (root / "archive" / "models").resolve()
    return (absolute.name if in_archive else model_dir.resolve().name), in_archive


def _digests(model_dir: Path, data: dict[str, bytes]) -> dict[str, str]:
    """SHA-256 of every regular model file: of the bytes read, or streamed for a file too large to read."""
    out = {name: sha256_bytes(raw) for name, raw in data.items()}
    for name in files.MODEL_FILES:
        if name not in out and (model_dir / name).exists():
            try:
                out[name] = sha256_file(model_dir / name)
            except ArchiveError:
                pass  # not a regular file: reported as unexpected
    return out


def check_submission(
    root: str | Path,
    model_dir: str | Path,
    *,
    base: str | None = None,
    run_scores: bool = True,
    run_replay: bool = True,
    run_site: bool = True,
    resamples: int | None = None,
) -> CheckResult:
    """Check the model folder ``model_dir`` against the archive at ``root``.

    ``model_dir`` may be ``root/archive/models/<id>`` (the pull-request case) or
    any other folder (checked as if it were added under that name). ``base`` is a
    git ref of the repository's main line: with it, the check also proves that
    nothing outside the folder changed and that the folder is new.
    ``resamples`` overrides the ledger's bootstrap resamples (previews and tests
    only; CI uses the ledger). Raises :class:`UsageProblem` for a bad root,
    folder or ref.
    """
    root, model_dir = Path(root), Path(model_dir)
    model_id, in_archive = _open_folder(root, model_dir)
    result = CheckResult(root=root, model_dir=model_dir, model_id=model_id, in_archive=in_archive, base=base)
    prefix = f"{MODELS_PREFIX}{model_id}/"
    display = prefix if in_archive else (str(model_dir).rstrip("/") + "/")
    base_sums = checks.check_git(result, root, base, prefix) if base is not None else None

    # The folder is read first, within its limits: a file refused there is never parsed by verify either.
    sub = files.read_submission(result, Archive(root), model_dir, display)
    archive = checks.check_integrity(result, root, prefix, invariants=not (in_archive and sub.refused))
    try:
        result.manifest_sha256 = archive.manifest_sha256
    except RapgenError:
        pass
    if not files.MODEL_ID.match(model_id):
        result.add("submission", "FOLDER", display.rstrip("/"), None, f"folder name {model_id!r} is not a valid model id")
    if in_archive and model_dir.is_symlink():
        result.add("submission", "FOLDER", display.rstrip("/"), None, "the model folder is a symbolic link; add a real folder")
    files.check_contents(result, archive, sub, display)
    if sub.calls:
        traces.check_trace_semantics(result, archive, display + "traces.jsonl", sub.calls, sub.units)
    digests = _digests(model_dir, sub.data)
    if in_archive:
        checks.check_sums(result, root, prefix, digests, base_sums)
    else:
        result.sums_lines = checks.canonical_lines(prefix, digests)
        result.stages["checksums"] = StageStatus("skipped", "the folder is outside archive/models/; `rapgen seal` writes these lines once it is copied in")
    for section in ("integrity", "submission", "checksums"):
        if section not in result.stages:
            result.stages[section] = StageStatus("failed" if result.stage_problems(section) else "passed")

    later = [s for s, wanted in (("scores", run_scores), ("replay", run_replay), ("site", run_site)) if wanted]
    if result.problems:
        for section in later:
            result.stages[section] = StageStatus("skipped", "earlier checks found problems")
    elif later:
        overlay.run_overlay_sections(result, sub.data, digests, set(later), has_traces=bool(sub.calls), resamples=resamples)
    return result
