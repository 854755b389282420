"""Scores, replay and a dry-run site render of the archive plus the submission, on a temporary overlay.

:func:`build_overlay` makes a repository root in a temporary folder: hard links
to the frozen files, copies of the submission, and SHA256SUMS holding the base
lines plus the folder's canonical lines. The later sections call the stages'
public faces on it (``rapgen.scores``, ``rapgen.search``, ``rapgen.site``);
nothing is written under the real repository root.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from rapgen.archive import (
    MODELS_PREFIX, SUMS_NAME, RapRelease, VerifiedRoot, format_sums, model_file, open_verified, read_sums, sums_lines,
)
from rapgen.kinds import registry
from rapgen.errors import RapgenError
from rapgen.io import cache_root
from rapgen.scores import SCORE_FILES, DrawStore, ScoreResult, compute_scores, write_scores
from rapgen.search import call_is_malformed, replay_archive, validate_call
from rapgen.site import render_docs
from rapgen.submit.review.result import CheckResult, StageStatus

def cache_dir_for(real_root: Path) -> Path:
    """The Search cache of the real repository, reused for the overlay (same parquet bytes, same index key)."""
    return cache_root(real_root)


def build_overlay(root: Path, files: dict[str, bytes], digests: dict[str, str], model_id: str, target: Path) -> Path:
    """A repository root under ``target`` holding the archive plus the submission's ``files`` (name -> bytes)."""
    prefix = f"{MODELS_PREFIX}{model_id}/"
    for dirpath, dirnames, filenames in os.walk(root / "archive"):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        if (rel_dir + "/").startswith(prefix):
            dirnames[:] = []
            continue
        dirnames.sort()
        (target / rel_dir).mkdir(parents=True, exist_ok=True)
        for name in sorted(filenames):
            src = Path(dirpath) / name
            if src.is_symlink() or not src.is_file():
                continue
            try:
                os.link(src, target / rel_dir / name)
            except OSError:
                shutil.copy2(src, target / rel_dir / name)
    out_dir = target / prefix
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = {s.path: s.digest for s in sums_lines(read_sums(root / SUMS_NAME)) if s.path and s.digest and not s.path.startswith(prefix)}
    for name, data in files.items():
        (out_dir / name).parent.mkdir(parents=True, exist_ok=True)  # a later origin's files: origins/<origin>/
        (out_dir / name).write_bytes(data)  # the bytes the check read, never the folder again
        lines[prefix + name] = digests[name]
    (target / SUMS_NAME).write_bytes(format_sums(lines))
    return target


def same_bytes(verified: VerifiedRoot | None, overlay: Path, files: dict[str, bytes], digests: dict[str, str]) -> bool:
    """Whether ``verified`` (the repository root as the integrity section verified it, with the Search-call
    validator) holds exactly the overlay's bytes: the same SHA256SUMS, byte for byte, and every file of the
    folder among those written. Every other overlay file is a link to (or a copy of) the root's own file,
    and the folder's files are the bytes whose digests those SHA256SUMS lines carry; the root's files
    matched the same lines when they were hashed, so verifying the overlay again would find what was found."""
    if verified is None or verified.validate_call is not validate_call or set(files) != set(digests):
        return False
    try:
        sums = read_sums(overlay / SUMS_NAME)
    except (OSError, RapgenError):
        return False
    return hashlib.sha256(sums).hexdigest() == verified.manifest_sha256


def run_overlay_sections(result: CheckResult, files: dict[str, bytes], digests: dict[str, str], wanted: set[str], *,
                         has_traces: bool, resamples: int | None, verified: VerifiedRoot | None = None,
                         diagnostics: bool = False) -> None:
    """The sections that need the submission in the archive: scores, replay, site (each when wanted).

    ``verified``: the repository root as the integrity section verified it; when the overlay holds the
    same bytes (:func:`same_bytes`, the pull-request case), the overlay is not verified again.
    ``diagnostics``: score as ``rapgen score`` does, the §6 diagnostics and the interventions' files
    included, and render the site from those; else (the default) only the score files the report and
    the page list read (``compute_scores(diagnostics=False)``: every score file but diagnostics.json's
    sections, the interventions' files and units.parquet's alignment columns), and the site from them."""
    with tempfile.TemporaryDirectory(prefix="rapgen-submit-") as tmp:
        overlay = build_overlay(result.root, files, digests, result.model_id, Path(tmp) / "repo")
        holder: dict[str, RapRelease] = {}
        reuse = same_bytes(verified, overlay, files, digests)

        def opened() -> RapRelease:
            if "archive" not in holder:  # as rapgen score opens it: the archive as it stands
                root = verified if reuse else open_verified(overlay, validate_call=validate_call, kinds=registry().formats)
                holder["archive"] = root.release()
            return holder["archive"]

        scores_dir = Path(tmp) / "scores"
        scored = False
        replaying = _replay_beside(result, opened) if {"scores", "replay"} <= wanted and has_traces else None
        if "scores" in wanted:
            scored = _section(result, "scores", lambda: _score(result, opened(), scores_dir, resamples, diagnostics))
        if "replay" in wanted:
            if not has_traces:
                result.stages["replay"] = StageStatus("skipped", "the submission has no traces")
            else:
                _section(result, "replay", lambda: _replay(result, opened(), replaying))
        if "site" in wanted:
            if "scores" in wanted and not scored:
                result.stages["site"] = StageStatus("skipped", "no scores to render")
            else:
                _section(result, "site", lambda: _render(result, opened(), scores_dir, Path(tmp) / "docs"))


def _section(result: CheckResult, name: str, run: Callable[[], str]) -> bool:
    keyword = name.upper()
    try:
        note = run()
    except RapgenError as exc:
        result.add(name, keyword, result.model_id, None, str(exc))
        result.stages[name] = StageStatus("failed", str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - one stage's crash is a problem of that section, never a crash of the check
        result.add(name, keyword, result.model_id, None, f"internal error in the {name} stage: {type(exc).__name__}: {exc}")
        result.stages[name] = StageStatus("failed", type(exc).__name__)
        return False
    failed = bool(result.stage_problems(name))
    result.stages[name] = StageStatus("failed" if failed else "passed", note or "")
    return not failed


def leaderboard_rows(scores: ScoreResult) -> list[dict]:
    """The rows of leaderboard.csv as the scorer holds them, by the columns the scores schema declares (NaN as None)."""
    table = scores.tables["leaderboard.csv"]
    columns = SCORE_FILES["leaderboard.csv"]
    return [{c: (None if isinstance(v, float) and math.isnan(v) else v) for c, v in zip(columns, row)}
            for row in zip(*(table.column(c) for c in columns))]


def _score(result: CheckResult, archive: RapRelease, out: Path, resamples: int | None, diagnostics: bool = False) -> str:
    if diagnostics:
        # With the Search-call validator, as rapgen score: the interventions' files and rows are in the preview too.
        # The §6 draws a build of the repository kept are read (the same counts give the same key), never written.
        kept = DrawStore(cache_dir_for(result.root) / "scores", keep=False)
        scores = compute_scores(archive, resamples=resamples, malformed=call_is_malformed, draws_cache=kept)
    else:
        # leaderboard.csv, scores.json's release and every page's path are what the report shows; none of them
        # reads the §6 diagnostics or the interventions, which come after every score table (docs/submitting.md).
        scores = compute_scores(archive, resamples=resamples, diagnostics=False)
    write_scores(scores, out)  # for the site render
    if not diagnostics:
        # The site reads a score folder without diagnostics.json as one whose §6 sections were not computed.
        (out / "diagnostics.json").unlink(missing_ok=True)
    rows = leaderboard_rows(scores)
    result.leaderboard = rows
    mine = [r for r in rows if r.get("entry") == result.model_id]
    if not mine:
        # A format-2 model that covers only some resolved origins is listed as partial,
        # unranked, and a sealed or open Live entry waits for its origin to resolve:
        # neither has All-Origin rows yet, and neither is a problem (RELEASES.md).
        waiting = _waiting_for_origins(scores, result.model_id)
        if waiting:
            return waiting
        result.add("scores", "SCORES", result.model_id, None, "the scoring stage produced no leaderboard rows for this model")
    return f"{len(mine)} leaderboard rows for {result.model_id}"


def _waiting_for_origins(scores: ScoreResult, model_id: str) -> str | None:
    release = scores.meta.get("release") or {}
    partial = release.get("partial", {}).get(model_id)
    if partial:
        covered = min(v["origins"] for v in partial.values())
        return f"no All-Origin rows yet for {model_id}: partial ({covered} of {next(iter(partial.values()))['of']} resolved origins), listed unranked"
    if model_id in release.get("live", {}) or any(f"/{model_id}." in p or f"/models/{model_id}/" in p for p in release.get("unreleased", [])):
        return f"no All-Origin rows yet for {model_id}: its entries wait for their origins to resolve"
    return None


def _replay_beside(result: CheckResult, opened: Callable[[], RapRelease]) -> Callable[[], dict] | None:
    """The replay of the submission's traces started in a forked child, so that it runs on the other core
    while the scores are computed; the returned call waits for its summary. The replay reads only the
    archive and the Search index, so the child finds what the replay section would find after the scores.
    None (the section replays in this process, as before) when the archive does not open here."""
    try:
        archive = opened()
    except Exception:  # noqa: BLE001 - the scores section opens it again and reports why it does not open
        return None
    return in_child(lambda: _replay_of(result, archive))


def _replay_of(result: CheckResult, archive: RapRelease) -> dict:
    report = replay_archive(archive, cache_dir=cache_dir_for(result.root), jobs=1, models=[result.model_id])
    return replay_summary(report.data, result.model_id)


def in_child(work: Callable[[], object]) -> Callable[[], object]:
    """Run ``work()`` in a forked child while the caller goes on; the returned call waits and gives its
    result, or raises an exception of the same class name and the same text (a :class:`RapgenError` as a
    RapgenError), which is all the sections report of one. Without ``os.fork``, or when the child ends
    without an outcome, ``work()`` runs in the caller when asked."""
    fork = getattr(os, "fork", None)
    if fork is None:
        return work
    pipe_out, pipe_in = os.pipe()
    child = fork()
    if not child:
        os.close(pipe_out)
        _send_outcome(work, pipe_in)  # never returns
    os.close(pipe_in)

    def wait() -> object:
        with os.fdopen(pipe_out, "rb") as pipe:
            data = pipe.read()
        os.waitpid(child, 0)
        try:
            kind, name, value = pickle.loads(data)
        except Exception:  # noqa: BLE001 - no outcome, or a partial one (the child was killed): done here
            return work()
        if kind == "ok":
            return value
        raise (RapgenError if kind == "rapgen" else type(name, (Exception,), {}))(value)

    return wait


def _send_outcome(work: Callable[[], object], fd: int) -> None:
    """In the child: ``work()``'s result, or its exception's kind, class name and text, pickled into ``fd``; then exit."""
    try:
        try:
            outcome = ("ok", "", work())
        except RapgenError as exc:
            outcome = ("rapgen", type(exc).__name__, str(exc))
        except Exception as exc:  # noqa: BLE001 - raised again in the parent under its name
            outcome = ("error", type(exc).__name__, str(exc))
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)


def _replay(result: CheckResult, archive: RapRelease, replaying: Callable[[], dict] | None = None) -> str:
    summary = replaying() if replaying is not None else _replay_of(result, archive)
    result.replay = summary
    for diff in summary["differences"]:
        result.add("replay", "REPLAY", diff["path"], diff["line"], diff["detail"])
    return f"{summary['reproduced']} of {summary['calls']} calls reproduce exactly"


def replay_summary(data: dict, model_id: str) -> dict:
    """``{"calls", "reproduced", "differences": [{path, line, detail}]}`` for one model of a replay report."""
    model = next((m for m in data.get("models", []) if m.get("model_id") == model_id), {"calls": 0, "reproduced": 0, "conditions": []})
    path = model_file(model_id, "traces.jsonl")
    differences = []
    for cond in model.get("conditions", []):
        for diff in cond.get("first_differences", []):
            rec, rep = diff.get("recorded", {}), diff.get("replayed", {})
            detail = (f"{cond['condition']} {diff.get('field_id')} {diff.get('origin')} call {diff.get('call_index')} does not reproduce: "
                      f"recorded total_hits {rec.get('total_hits')} and {len(rec.get('returned_ids') or [])} ids, "
                      f"replayed total_hits {rep.get('total_hits')} and {len(rep.get('returned_ids') or [])} ids")
            if rep.get("error"):
                detail += f" ({rep['error']})"
            differences.append({"path": path, "line": diff.get("line"), "detail": detail})
        missing = cond.get("failed", 0) - len(cond.get("first_differences", []))
        if missing > 0:
            differences.append({"path": path, "line": None, "detail": f"{cond['condition']}: {missing} more calls do not reproduce"})
    return {"calls": model.get("calls", 0), "reproduced": model.get("reproduced", 0), "differences": differences}


def _render(result: CheckResult, archive: RapRelease, scores_dir: Path, out: Path) -> str:
    pages = sorted(str(p) for p in render_docs(archive, scores_dir, out).pages)
    result.site_pages = pages
    if not any(result.model_id in p for p in pages):
        result.add("site", "SITE", result.model_id, None, "the rendered site has no page for this model")
    return f"{len(pages)} pages rendered"
