"""The pull-request check (SUBMISSION.md, "The pull-request check"): :func:`check_submission`.

Sections, cheap to expensive:

1. integrity — the frozen archive verifies; with ``base`` (a git ref), nothing
   outside the folder and the model's new commitments changed, and the folder
   is new — or, for an existing model, its listed files are unchanged (a pull
   request may add ``origins/<origin>/…`` and intervention records to it);
2. submission — model.json, predictions.jsonl, traces.jsonl, later origins
   (coverage per origin), commitments, validity accounting, bidirectional
   controls, Search calls per condition; intervention records by verify's rules;
3. checksums — the folder's (and commitments') SHA256SUMS lines are present,
   correct, canonical, and the only lines that changed;
4. live — a commitment or an open submission for the open origin is on time
   (judged by ``now``), a later origin is one of the history, a reveal has
   the committed digests (:mod:`.live`);
5. scores, replay and a dry-run site render, on a temporary overlay of the
   archive plus the submission — run only when 1–4 found nothing, so the
   command stops at the first class of failure.

Nothing is ever written under the repository root.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from rapgen.archive import MODELS_PREFIX, Archive, sha256_bytes, sha256_file, sums_lines, load_history
from rapgen.errors import ArchiveError, RapgenError, UsageProblem
from rapgen.submit.review import checks, files, kind_check, live, origins, overlay, traces
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


def _digests(present: dict[str, Path], data: dict[str, bytes]) -> dict[str, str]:
    """SHA-256 of every regular model file: of the bytes read, or streamed for a file too large to read."""
    out = {name: sha256_bytes(raw) for name, raw in data.items()}
    for name, path in present.items():
        if name not in out:
            try:
                out[name] = sha256_file(path)
            except ArchiveError:
                pass  # not a regular file: reported as unexpected
    return out


def _listed(result: CheckResult, root: Path, prefix: str, base_sums: bytes | None, history) -> tuple[dict[str, str], str]:
    """The folder's files already listed (an existing model), and where: base's SHA256SUMS, else the latest release."""
    if base_sums is not None:
        return checks.listed_files(base_sums, prefix), str(result.base)
    latest = history.latest if history is not None else None
    if latest is None or not result.in_archive:
        return {}, ""  # format 1 without --base: the folder is checked as a new model
    manifest = history.input.manifests.get(latest.release, {})
    return {p[len(prefix):]: d for p, d in manifest.items() if p.startswith(prefix)}, f"release {latest.release}"


def _new_commitments(root: Path, model_id: str, base_sums: bytes | None, history) -> list[str]:
    """This model's commitments the pull request adds: not on base (with --base), else listed by no release."""
    found = live.commitments_on_disk(root, model_id)
    if base_sums is not None:
        known = {line.path for line in sums_lines(base_sums) if line.path}
    else:
        known = {p for m in (history.input.manifests.values() if history is not None else ()) for p in m}
    return [p for p in found if p not in known]


def _history(root: Path):
    try:
        return load_history(root, with_ledger=False)
    except (RapgenError, OSError, ValueError):
        return None  # the integrity section reports what is wrong


def check_submission(
    root: str | Path,
    model_dir: str | Path,
    *,
    base: str | None = None,
    run_scores: bool = True,
    run_replay: bool = True,
    run_site: bool = True,
    resamples: int | None = None,
    now: date | None = None,
    diagnostics: bool = False,
) -> CheckResult:
    """Check the model folder ``model_dir`` against the archive at ``root``.

    ``model_dir`` may be ``root/archive/models/<id>`` (the pull-request case) or
    any other folder (checked as if it were added under that name). ``base`` is a
    git ref of the repository's main line: with it, the check also proves that
    nothing outside the folder (and the model's new commitments) changed and that
    the folder is new, or, for an existing model, that its listed files did not
    change. ``now`` is the date a Live submission is judged by (default: today
    in UTC). ``resamples`` overrides the ledger's bootstrap resamples (previews
    and tests only; CI uses the ledger). ``diagnostics``: the scores section also
    computes the §6 diagnostics and the interventions' files, and the site is
    rendered from them, as ``rapgen build`` does (default: the score files the
    report shows, which none of those change). Raises :class:`UsageProblem` for a bad
    root, folder or ref.
    """
    root, model_dir = Path(root), Path(model_dir)
    model_id, in_archive = _open_folder(root, model_dir)
    kind = kind_check.kind_of_root(root)
    if kind is not None:  # another kind: its ReviewSpec drives the same sections
        return kind_check.check_kind_submission(kind, root, model_dir, model_id, in_archive, base=base, run_scores=run_scores,
                                                run_replay=run_replay, run_site=run_site, resamples=resamples)
    result = CheckResult(root=root, model_dir=model_dir, model_id=model_id, in_archive=in_archive, base=base)
    result.now, result.now_source = (now or live.today_utc()).isoformat(), "--now" if now else "today (UTC)"
    prefix = f"{MODELS_PREFIX}{model_id}/"
    display = prefix if in_archive else (str(model_dir).rstrip("/") + "/")
    base_sums = checks.check_git(result, root, base, prefix)[0] if base is not None else None
    history = _history(root)
    listed, where = _listed(result, root, prefix, base_sums, history)
    sealing = _new_commitments(root, model_id, base_sums, history) if in_archive else []

    # The folder is read first, within its limits: a file refused there is never parsed by verify either.
    sub = files.read_submission(result, Archive(root), model_dir, display, listed=listed, sealed=bool(sealing))
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
    _check_origins(result, archive, sub, display)
    digests = _digests(sub.present, sub.data)
    if sub.existing:
        checks.check_listed_unchanged(result, prefix, listed, digests, where)
    commitment_digests = _check_live(result, root, history, sub, display, sealing)
    if in_archive:
        checks.check_sums(result, root, prefix, digests, base_sums, commitment_digests)
    else:
        result.sums_lines = checks.canonical_lines(prefix, digests)
        result.stages["checksums"] = StageStatus("skipped", "the folder is outside archive/models/; `rapgen seal` writes these lines once it is copied in")
    for section in ("integrity", "submission", "checksums", "live"):
        if section not in result.stages:
            result.stages[section] = StageStatus("failed" if result.stage_problems(section) else "passed")
    _later_sections(result, sub, digests, run_scores, run_replay, run_site, resamples, getattr(archive, "verified", None), diagnostics)
    return result


def _check_origins(result: CheckResult, archive: Archive, sub: files.Submission, display: str) -> None:
    try:
        origins.check_origin_files(result, archive, sub, display)
        result.origins = origins.coverage_rows(sub, len(archive.field_map))
    except RapgenError as exc:
        result.notes.append(f"later origins were not checked, because the archive cannot be read: {exc}")


def _check_live(result: CheckResult, root: Path, history, sub: files.Submission, display: str, sealing: list[str]) -> dict[str, str]:
    """The Live section: new commitments and later origins against the history; returns the commitments' digests."""
    when = date.fromisoformat(result.now)
    has_origins = any(origins.origin_of(n) and n not in sub.listed for n in sub.data)
    if history is None:
        if sealing or has_origins:
            result.add("live", "ORIGIN", display, None, "the archive's release history cannot be read, so Live submissions cannot be judged")
        return {}
    digests = live.check_commitments(result, root, history, sealing, when)
    sealed_origins = {c.origin for p, c in _parsed(root, sealing)}
    live.check_origins(result, root, history, sub, display, when, sealed_origins)
    live.live_rows(result, history)
    if not (sealing or has_origins or result.live):
        result.stages["live"] = StageStatus("skipped", "no Live submission, commitment or later origin")
    return digests


def _parsed(root: Path, paths: list[str]):
    from rapgen.archive import parse_commitment

    for path in paths:
        try:
            commitment, _ = parse_commitment(path, (root / path).read_bytes())
        except OSError:
            continue
        if commitment is not None:
            yield path, commitment


def _later_sections(result: CheckResult, sub: files.Submission, digests: dict[str, str], run_scores: bool, run_replay: bool,
                    run_site: bool, resamples: int | None, verified=None, diagnostics: bool = False) -> None:
    later = [s for s, wanted in (("scores", run_scores), ("replay", run_replay), ("site", run_site)) if wanted]
    if result.problems:
        for section in later:
            result.stages[section] = StageStatus("skipped", "earlier checks found problems")
    elif later and "predictions.jsonl" not in sub.data:
        for section in later:
            result.stages[section] = StageStatus("skipped", "the model has no predictions.jsonl yet (a sealed or later-origin submission)")
    elif later:
        # An existing model's listed traces were replayed when they were added: replay only when new calls came.
        new_traces = [n for n in sub.data if n.endswith("traces.jsonl") and n not in sub.listed]
        has_traces = bool(new_traces) and (bool(sub.calls) or any(sub.origin_calls.values()))
        wanted = set(later)
        if sub.existing and not new_traces and "replay" in wanted:
            wanted.discard("replay")
            result.stages["replay"] = StageStatus("skipped", "no new traces: the listed ones were replayed when they were added")
        overlay.run_overlay_sections(result, sub.data, digests, wanted, has_traces=has_traces, resamples=resamples,
                                     verified=verified if result.in_archive else None, diagnostics=diagnostics)
