"""``rapgen submit commit``: seal a Live submission for the open origin (RELEASES.md, the Live track).

A sealed entry is a commitment, ``archive/commitments/<origin>/<model_id>.json``,
holding the SHA-256 of the files a submitter keeps private until the origin is
resolved: ``origins/<origin>/predictions.jsonl`` (and ``traces.jsonl`` if there
is one) of the submission folder, exactly as ``rapgen agent run --origins
<origin>`` wrote them and exactly as they will be revealed under
``archive/models/<model_id>/origins/<origin>/``.

Before anything is written the files are parsed against that origin alone with
the per-origin coverage rule (every field of each claimed condition; A0, A1 and
A3), so a submitter never seals files that could not be revealed; the bytes
written are parsed again with the archive's commitment parser. The write is
atomic; an existing commitment is never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rapgen import __version__
from rapgen.archive import (
    FORECAST_CONDITIONS, ORIGIN_FILES, ORIGINS_SUBDIR, Archive, Commitment, OpenOrigin, commitment_file,
    format_commitment, parse_commitment, parse_predictions, parse_traces, sha256_bytes, names_panel,
)
from rapgen.errors import SubmissionError, UsageProblem
from rapgen.io import COMMITMENT_OUTPUT, atomic_write_bytes, guard_output_dir
from rapgen.kit import check_model_id

KIT = f"rapgen {__version__}"


@dataclass(frozen=True)
class CommitResult:
    """The commitment made: its archive path, bytes, where it went (None: printed) and the open origin."""

    commitment: Commitment
    path: str  # archive/commitments/<origin>/<model_id>.json
    data: bytes
    written: Path | None
    unchanged: bool  # the same commitment was already there
    open_origin: OpenOrigin


def _origin(archive: Archive, text: str | None) -> OpenOrigin:
    opened = archive.open_origin
    value = None
    if text is not None:
        try:
            value = date.fromisoformat(text) if len(text) == 10 else None
        except ValueError:
            value = None
        if value is None:
            raise UsageProblem(f"--origin {text!r} is not a YYYY-MM-DD date")
    if opened is None:
        raise SubmissionError("no origin of this archive is open for Live submissions (the latest release opens none)")
    if value is not None and value != opened.origin:
        why = "is resolved" if value in archive.resolved_origins else "is not an origin of this archive"
        raise SubmissionError(f"origin {value} {why}; only the open origin {opened.origin} (closes {opened.closes}) takes Live submissions")
    return opened


def _read(model_dir: Path, origin: date) -> dict[str, bytes]:
    """The folder's files of ``origin`` (predictions required), by name."""
    folder = model_dir / ORIGINS_SUBDIR / origin.isoformat()
    out = {}
    for name in ORIGIN_FILES:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            try:
                out[name] = path.read_bytes()
            except OSError as exc:
                raise SubmissionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if ORIGIN_FILES[0] not in out:
        raise UsageProblem(f"{folder / ORIGIN_FILES[0]}: missing; write it first with "
                           f"'rapgen agent run --origins {origin} --out {model_dir}'")
    return out


def _check(archive: Archive, model_dir: Path, origin: date, files: dict[str, bytes]) -> None:
    """The first problem of the files, as one line, or nothing."""
    model_json = model_dir / "model.json"
    panel = model_json.is_file() and names_panel(model_json.read_bytes())
    folder = model_dir / ORIGINS_SUBDIR / origin.isoformat()
    rel = str(folder / ORIGIN_FILES[0])
    units, findings = parse_predictions(rel, files[ORIGIN_FILES[0]], archive.field_map, [origin], coverage=not panel)
    claimed = {u.condition for u in units}
    if not units and not findings:
        raise SubmissionError(f"{rel}: holds no units")
    if ORIGIN_FILES[1] in files:
        _, more = parse_traces(str(folder / ORIGIN_FILES[1]), files[ORIGIN_FILES[1]], archive.field_map, [origin],
                               int(archive.ledger["search"]["max_calls"]))
        findings += more
    if findings:
        first = findings[0]
        where = first.path + (f":{first.line}" if first.line else "")
        more = f" ({len(findings) - 1} more; run 'rapgen submit check {model_dir}')" if len(findings) > 1 else ""
        raise SubmissionError(f"{where}: {first.detail}{more}; nothing was sealed")
    missing = [c for c in FORECAST_CONDITIONS if c not in claimed]
    if missing and not panel:
        raise SubmissionError(f"{rel}: origin {origin} lacks condition {missing[0]}: every origin a model claims covers A0, A1 "
                              "and A3; nothing was sealed")


def make_commitment(root: str | Path, model_dir: str | Path, origin: str | None = None, *, out: str | Path | None = None,
                    to_stdout: bool = False) -> CommitResult:
    """Seal ``model_dir``'s files of the open origin into a commitment.

    Written to ``out``, else ``root/archive/commitments/<origin>/<model_id>.json``
    (the file a sealed pull request adds); ``to_stdout`` writes nothing. Raises
    :class:`UsageProblem` (exit 2) for a bad folder, origin text or missing file,
    :class:`SubmissionError` (exit 1) for an origin that is not open, files that
    do not parse, or a different commitment already at the target.
    """
    root, model_dir = Path(root), Path(model_dir)
    model_id = check_model_id(model_dir, "MODEL_DIR")
    if not model_dir.is_dir():
        raise UsageProblem(f"{model_dir}: the submission folder does not exist or is not a directory")
    archive = Archive(root)
    opened = _origin(archive, origin)
    files = _read(model_dir, opened.origin)
    _check(archive, model_dir, opened.origin, files)
    commitment = Commitment(model_id, opened.origin, sha256_bytes(files[ORIGIN_FILES[0]]),
                            sha256_bytes(files[ORIGIN_FILES[1]]) if ORIGIN_FILES[1] in files else None, KIT)
    path = commitment_file(opened.origin.isoformat(), model_id)
    data = format_commitment(commitment)
    parsed, findings = parse_commitment(path, data)
    if findings or parsed != commitment:  # the archive's own parser must read back exactly this commitment
        raise SubmissionError(f"{path}: the commitment does not parse back ({findings[0].detail if findings else 'it differs'})")
    if to_stdout:
        return CommitResult(commitment, path, data, None, False, opened)
    target = Path(out) if out is not None else root / path
    guard_output_dir(target.parent, COMMITMENT_OUTPUT)  # in archive/, only under archive/commitments/
    if target.exists() or target.is_symlink():
        if target.is_file() and not target.is_symlink() and target.read_bytes() == data:
            return CommitResult(commitment, path, data, target, True, opened)
        raise SubmissionError(f"{target}: already exists and differs; a commitment is never replaced")
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise UsageProblem(f"{target}: cannot write the commitment ({exc.strerror or exc})") from None
    return CommitResult(commitment, path, data, target, False, opened)
