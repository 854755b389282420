"""The pull-request check of a model folder for any kind that declares a ``ReviewSpec`` (KINDS.md §6).

RAP's check is :mod:`.check` (its own files, Live deadlines and later origins); every other
kind goes through this module, which reads nothing of a kind but its
:class:`~rapgen.kinds.base.ReviewSpec` and its ``score``, ``write_scores``, ``replay`` and
``site``. The sections are RAP's, in the same order, and the command stops at the first
class of failure:

1. integrity — the base archive verifies (``rapgen verify``, the folder's own files and lines
   left to the sections below); with ``base`` (a git ref) nothing outside the folder changed
   and the model is new;
2. submission — only the files the kind allows, within their size and line limits, no
   bidirectional controls, ``model.json`` as the engine reads it, then every file through the
   kind's ``parse`` (verify's own checks of a model folder, against the verified base); when
   that finds nothing, the kind's coverage, accounting and preview tables (the coverage table
   alone when the only problem is a gap of the folder as a whole, e.g. a cutoff with no files);
3. checksums — the folder's SHA256SUMS lines (only for a folder inside ``archive/models/``);
4. scores, replay (a kind with Search: every recorded call re-executed, one that does not
   reproduce is a problem naming its line) and a dry-run render, on a temporary overlay of the
   archive plus the submission.

Nothing is written under the repository root.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import MODELS_PREFIX, SUMS_NAME, Category, ModelFolder, Release, open_verified, read_sums, sha256_bytes, sums_lines
from rapgen.errors import RapgenError
from rapgen.kinds import BenchmarkKind, registry
from rapgen.search import call_is_malformed, validate_call
from rapgen.site import render_release
from rapgen.submit.review import checks, files
from rapgen.submit.review.overlay import build_overlay, cache_dir_for
from rapgen.submit.review.result import FIXES, CheckResult, StageStatus

DEFAULT_LIMIT = 64 * files.MiB
PREVIEW_ROWS = 3
STAGE = "submission"

# Fix-it texts of the keywords whose RAP text names RAP's files; the others are FIXES' own.
KIND_FIXES: dict[str, str] = {
    **FIXES,
    "EXISTS": "Choose a new `model_id` (the folder's name and model.json's `model_id`): an existing model's files never change.",
    "MISSING-FILE": "Add the file: the benchmark's section of docs/submitting.md lists what a model folder holds.",
    "UNEXPECTED-FILE": "Delete it: a model folder holds only the files the benchmark's section of docs/submitting.md lists, as regular files.",
    "MALFORMED": "Fix the line so it has exactly the keys and value types of the benchmark's submission format (docs/submitting.md).",
    "DUPLICATE": "Keep one line per unit (per idea rank, per Search call); delete the later copy.",
    "COVERAGE": "Give every claimed condition a line for every episode or instance of the benchmark: a unit without an answer is recorded as such, never left out.",
    "TRACE": "Record every Search call exactly as the tool returned it, gapless from call 0 in every unit (`rapgen agent run` writes this format); never edit a result.",
    "INVARIANT": "The file disagrees with what the archive rebuilds from its own files; regenerate it with the benchmark's tools (e.g. `rapgen evaluate`) instead of editing it.",
}
_KEYWORD_OF_CATEGORY = {Category.INVARIANT: "INVARIANT", Category.MISSING: "MISSING-FILE", Category.DUPLICATE: "DUPLICATE"}


def kind_of_root(root: Path) -> BenchmarkKind | None:
    """The kind of the archive at ``root`` when it is not RAP and declares a review; None for RAP, an
    unreadable ARCHIVE.json or an unknown format (RAP's check reports those as it always did)."""
    try:
        fmt = json.loads((root / "archive" / "ARCHIVE.json").read_bytes()).get("format")
    except (OSError, ValueError, AttributeError):
        return None
    kind = next((k for k in registry().values() if k.format == fmt), None)
    if kind is None or kind.review is None:
        return None
    return kind


def keyword(finding) -> str:
    if finding.kind is not None:
        return files.keyword_of(finding)
    return _KEYWORD_OF_CATEGORY.get(finding.category, "MALFORMED")


def add(result: CheckResult, stage: str, key: str, path: str, line: int | None, detail: str) -> None:
    result.add(stage, key, path, line, detail, KIND_FIXES.get(key, ""))


# ---------------------------------------------------------------- the folder
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """A name test for ``patterns``: seal's model-folder templates (``{key}`` a time key, any other
    ``{…}`` one segment), with ``*`` as one more spelling of a segment."""
    rules = ModelFolder(tuple("/".join("{segment}" if seg == "*" else seg for seg in p.split("/")) for p in patterns), (), ())
    return rules.allows if patterns else (lambda rel: False)


def list_folder(result: CheckResult, spec, model_dir: Path, display: str) -> dict[str, Path]:
    """The folder's allowed regular files by name relative to it; every other entry is a problem."""
    is_file = _matcher(spec.files)
    is_dir = _matcher(tuple({"/".join(p.split("/")[:k]) for p in spec.files for k in range(1, p.count("/") + 1)}))
    present: dict[str, Path] = {}

    def walk(folder: Path, rel: str) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            name = f"{rel}{entry.name}"
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISREG(mode) and is_file(name):
                present[name] = Path(entry.path)
            elif stat.S_ISDIR(mode) and is_dir(name):
                walk(Path(entry.path), name + "/")
            elif name == "README.md" and not result.in_archive and stat.S_ISREG(mode):
                result.notes.append(f"{display}README.md is ignored: it is not part of the submission")
            else:
                add(result, STAGE, "UNEXPECTED-FILE", display + name, None,
                    f"unexpected {files._kind(mode)} in the model folder (allowed: {', '.join(spec.files)})")

    walk(model_dir, "")
    for name in spec.required:
        if name not in present:
            add(result, STAGE, "MISSING-FILE", display + name, None, f"{name} is missing")
    return present


def _limit(spec, name: str) -> int:
    for pattern, limit in spec.size_limits:
        if _matcher((pattern,))(name):
            return limit
    return DEFAULT_LIMIT


def read_folder(result: CheckResult, spec, present: dict[str, Path], display: str) -> dict[str, bytes]:
    data: dict[str, bytes] = {}
    for name, path in present.items():
        try:
            raw = files.read_limited(path, _limit(spec, name))
        except files.Unreadable as exc:
            add(result, STAGE, exc.keyword, display + name, None, f"{name} {exc}")
            continue
        if name.endswith(".jsonl") and files._long_lines(result, display + name, raw):
            continue
        if name.endswith((".json", ".jsonl")):
            files.check_bidi(result, display + name, raw, lines=name.endswith(".jsonl"))
        data[name] = raw
    return data


def _listed_models(root: Path) -> set[str]:
    try:
        lines = sums_lines(read_sums(root / SUMS_NAME))
    except RapgenError:
        return set()
    return {line.path[len(MODELS_PREFIX):].split("/", 1)[0] for line in lines if line.path and line.path.startswith(MODELS_PREFIX)}


# ---------------------------------------------------------------- the check
def check_kind_submission(kind: BenchmarkKind, root: Path, model_dir: Path, model_id: str, in_archive: bool, *, base: str | None,
                          run_scores: bool, run_replay: bool, run_site: bool, resamples: int | None) -> CheckResult:
    """``submit check`` of ``model_dir`` against the ``kind`` archive at ``root`` (see the module)."""
    spec = kind.review
    result = CheckResult(root=root, model_dir=model_dir, model_id=model_id, in_archive=in_archive, base=base)
    result.kind = kind.name
    prefix = f"{MODELS_PREFIX}{model_id}/"
    display = prefix if in_archive else (str(model_dir).rstrip("/") + "/")
    base_sums = checks.check_git(result, root, base, prefix)[0] if base is not None else None
    present = list_folder(result, spec, model_dir, display)
    data = read_folder(result, spec, present, display)
    refused = any(name not in data for name in present)
    release = checks.check_integrity(result, root, prefix, invariants=not (in_archive and refused))
    try:
        result.manifest_sha256 = release.manifest_sha256
    except (AttributeError, RapgenError):
        pass
    _check_identity(result, model_dir, model_id, in_archive, display, base_sums, root)
    if "model.json" in data:
        result.model = files.check_model_json(result, display + "model.json", data["model.json"])
    _check_files(result, kind, release, data, model_id, prefix, display)
    digests = {name: sha256_bytes(raw) for name, raw in data.items()}
    if in_archive:
        checks.check_sums(result, root, prefix, digests, base_sums)
    else:
        result.sums_lines = checks.canonical_lines(prefix, digests)
        result.stages["checksums"] = StageStatus("skipped", "the folder is outside archive/models/; `rapgen seal` writes these lines once it is copied in")
    for section in ("integrity", "submission", "checksums"):
        if section not in result.stages:
            result.stages[section] = StageStatus("failed" if result.stage_problems(section) else "passed")
    later = [s for s, wanted in (("scores", run_scores), ("replay", run_replay and kind.replay is not None), ("site", run_site)) if wanted]
    if result.problems:
        for section in later:
            result.stages[section] = StageStatus("skipped", "earlier checks found problems")
    elif later:
        _overlay_sections(result, kind, data, digests, set(later), resamples, display)
    return result


def _check_identity(result: CheckResult, model_dir: Path, model_id: str, in_archive: bool, display: str, base_sums: bytes | None,
                    root: Path) -> None:
    folder = display.rstrip("/")
    if not files.MODEL_ID.match(model_id):
        add(result, STAGE, "FOLDER", folder, None, f"folder name {model_id!r} is not a valid model id")
    if in_archive and model_dir.is_symlink():
        add(result, STAGE, "FOLDER", folder, None, "the model folder is a symbolic link; add a real folder")
    if base_sums is not None and checks.listed_files(base_sums, f"{MODELS_PREFIX}{model_id}/"):
        add(result, "integrity", "EXISTS", folder, None, f"model {model_id!r} already exists on {result.base}; a pull request adds a new model folder")
    elif not in_archive and model_id in _listed_models(root):
        add(result, STAGE, "EXISTS", folder, None, f"model {model_id!r} already exists in archive/models/{model_id}/")


def _shown(path: str, prefix: str, display: str) -> str:
    if path == prefix.rstrip("/"):
        return display.rstrip("/")  # the folder as a whole
    return display + path[len(prefix):] if path.startswith(prefix) else path


def _check_files(result: CheckResult, kind: BenchmarkKind, release: Any, data: dict[str, bytes], model_id: str, prefix: str,
                 display: str) -> None:
    """The kind's parse of the folder against the verified base, then its tables when nothing was found."""
    spec = kind.review
    if not isinstance(release, Release) or release.verified.state is None:
        result.notes.append("the submission's files were not checked against the archive, which did not verify")
        return
    own = {name: raw for name, raw in data.items() if name != "model.json"}
    if not own:
        return
    try:
        state, findings = spec.parse(release, own, model_id)
    except Exception as exc:  # noqa: BLE001 - a kind's crash is one problem of this section, never a crash of the check
        add(result, STAGE, "MALFORMED", display.rstrip("/"), None, f"the files could not be checked: {type(exc).__name__}: {exc}")
        return
    for f in findings:
        where = _shown(f.path, prefix, display)
        if f.category is Category.WARNING:
            result.warn(STAGE, "WARNING", where, f.line, f.detail)
        elif f.category is Category.NOT_EVALUATED:
            result.notes.append(f"{where}: {f.detail}")
        else:
            add(result, STAGE, keyword(f), where, f.line, f.detail)
    if result.stage_problems("integrity"):
        return
    if result.stage_problems(STAGE):
        if all(_folder_coverage(p, display) for p in result.stage_problems(STAGE)) and spec.coverage is not None:
            table = spec.coverage(release, state)  # the gap is the folder's (e.g. a cutoff with no files): the table shows it
            if table is not None:
                result.tables.append(table)
        return
    for step in (spec.coverage, spec.accounting):
        table = step(release, state) if step is not None else None
        if table is not None:
            result.tables.append(table)
    if spec.preview_row is not None:
        table = spec.preview_row(release, state, PREVIEW_ROWS)
        if table is not None:
            result.tables.append(table)


def _folder_coverage(problem, display: str) -> bool:
    """A coverage problem of the folder as a whole (no file or line): its files parsed, so its coverage table can be shown."""
    return problem.keyword == "COVERAGE" and problem.line is None and problem.path == display.rstrip("/")


# ---------------------------------------------------------------- scores, replay, site
def _overlay_sections(result: CheckResult, kind: BenchmarkKind, data: dict[str, bytes], digests: dict[str, str], wanted: set[str],
                      resamples: int | None, display: str) -> None:
    with tempfile.TemporaryDirectory(prefix="rapgen-submit-") as tmp:
        repo = build_overlay(result.root, data, digests, result.model_id, Path(tmp) / "repo")
        holder: dict[str, Release] = {}

        def opened() -> Release:
            if "release" not in holder:
                holder["release"] = open_verified(repo, validate_call=validate_call, kinds=registry().formats).release()
            return holder["release"]

        scores_dir = Path(tmp) / "scores"
        scored = "scores" in wanted and _section(result, "scores", lambda: _score(result, kind, opened(), scores_dir, resamples))
        if "replay" in wanted:
            _section(result, "replay", lambda: _replay(result, kind, opened(), display))
        if "site" in wanted:
            if "scores" in wanted and not scored:
                result.stages["site"] = StageStatus("skipped", "no scores to render")
            else:
                _section(result, "site", lambda: _render(result, kind, opened(), scores_dir, Path(tmp) / "docs"))


def _section(result: CheckResult, name: str, run: Callable[[], str]) -> bool:
    key = name.upper()
    try:
        note = run()
    except RapgenError as exc:
        add(result, name, key, result.model_id, None, str(exc))
        result.stages[name] = StageStatus("failed", str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - one stage's crash is a problem of that section, never a crash of the check
        add(result, name, key, result.model_id, None, f"internal error in the {name} stage: {type(exc).__name__}: {exc}")
        result.stages[name] = StageStatus("failed", type(exc).__name__)
        return False
    if note is None:
        return True  # the section set its own status
    failed = bool(result.stage_problems(name))
    result.stages[name] = StageStatus("failed" if failed else "passed", note)
    return not failed


def headline(kind: BenchmarkKind) -> dict:
    """The headline cell of ``kind`` as leaderboard.csv's columns name it."""
    cell = {"track": kind.primary.track, "metric": kind.primary.metric, **dict(kind.primary.axes)}
    if kind.primary.condition is not None:
        cell["condition"] = kind.primary.condition
    return cell


def _free_axes(kind: BenchmarkKind) -> list[str]:
    fixed = dict(kind.primary.axes)
    return [a.name for a in kind.axes if a.name not in fixed]


def _score(result: CheckResult, kind: BenchmarkKind, release: Release, out: Path, resamples: int | None) -> str:
    kind.write_scores(kind.score(release, resamples=resamples, malformed=call_is_malformed), out)
    with open(out / "leaderboard.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cell = headline(kind)
    result.headline = {**cell, "free": _free_axes(kind)}
    result.leaderboard = [r for r in rows if all(r.get(k) == v for k, v in cell.items())]
    mine = [r for r in rows if r.get("entry") == result.model_id]
    if not mine:
        add(result, "scores", "SCORES", result.model_id, None, "the scoring stage produced no leaderboard rows for this model")
    return f"{len(mine)} leaderboard rows for {result.model_id}"


def _replay(result: CheckResult, kind: BenchmarkKind, release: Release, display: str) -> str | None:
    outcome = kind.replay(release, None, models=[result.model_id], cache_dir=cache_dir_for(result.root), jobs=1)
    if not outcome:
        result.stages["replay"] = StageStatus("skipped", "the submission records no Search calls")
        return None
    record = outcome.record
    prefix = f"{MODELS_PREFIX}{result.model_id}/"
    differences = [{"path": _shown(d["path"], prefix, display), "line": d.get("line"), "detail": d["detail"]} for d in record["differences"]]
    result.replay = {"calls": record["n_calls"], "reproduced": record["n_reproduced"], "differences": differences}
    for d in differences:
        add(result, "replay", "REPLAY", d["path"], d["line"], d["detail"])
    return f"{record['n_reproduced']:,} of {record['n_calls']:,} calls reproduce exactly"


def _render(result: CheckResult, kind: BenchmarkKind, release: Release, scores_dir: Path, out: Path) -> str:
    if kind.site is None:
        result.stages["site"] = StageStatus("skipped", f"the {kind.name} kind has no site")
        return None  # type: ignore[return-value]
    rendered = render_release(kind.site, release, scores_dir, out)
    pages = sorted(str(p) for p in rendered.pages)
    result.site_pages = pages
    if not any(_mentions(Path(rendered.docs_dir) / p, result.model_id) for p in pages):
        add(result, "site", "SITE", result.model_id, None, "no rendered page names this model")
    return f"{len(pages)} pages rendered"


def _mentions(path: Path, model_id: str) -> bool:
    try:
        return model_id in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
