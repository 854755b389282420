"""The Live track's side of the check (RELEASES.md): deadlines, commitments and reveals.

A pull request for the open origin T is a Live submission, *open* (the files
themselves under ``models/<id>/origins/T/``) or *sealed* (a commitment,
``commitments/T/<id>.json``, with the digests of files kept back until T is
resolved). Both count only if received on or before T's ``closes`` date; the
check judges by ``now`` (``--now DATE``: CI passes the pull request's opening
time; without it, today's date in UTC). After T is resolved, files added under
``origins/T/`` for a model that committed to T are a *reveal*, and must have
exactly the committed digests. A sealed entry never revealed is listed in the
report as unrevealed, never dropped.
"""

from __future__ import annotations

import os
import re
from datetime import date, datetime, timezone
from pathlib import Path

from rapgen.archive import (
    sha256_bytes, LiveStatus, judge_deadline, live_entries, LoadedHistory, Commitment, commitment_path,
    parse_commitment, digest_copies,
)
from rapgen.errors import UsageProblem
from rapgen.submit.review.files import ORIGINS_DIR, MiB, Submission, Unreadable, check_bidi, read_limited
from rapgen.submit.review.origins import origin_of
from rapgen.submit.review.result import CheckResult

STAGE = "live"
COMMITMENT_LIMIT = 1 * MiB
_NOW = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_ORIGIN_DIR = re.compile(r"^\d{4}-\d{2}-01$")


def today_utc() -> date:
    return datetime.now(timezone.utc).date()


def parse_now(text: str) -> date:
    """``--now``: a date (YYYY-MM-DD) or an ISO 8601 time (GitHub's ``created_at``), as its date in UTC."""
    value = text.strip()
    if not _NOW.match(value):
        raise UsageProblem(f"--now {value[:40]!r}: expected a date YYYY-MM-DD or an ISO 8601 time such as 2025-07-10T12:00:00Z")
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageProblem(f"--now {value!r}: not a calendar date or time") from None
    return (moment.astimezone(timezone.utc) if moment.tzinfo else moment).date()


def commitments_on_disk(root: Path, model_id: str) -> list[str]:
    """Archive paths of every ``commitments/<origin>/<model_id>.json`` present (listed or not)."""
    folder = root / "archive" / "commitments"
    if not folder.is_dir():
        return []
    out = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if _ORIGIN_DIR.match(entry.name) and os.path.lexists(Path(entry.path) / f"{model_id}.json"):
            out.append(f"archive/commitments/{entry.name}/{model_id}.json")
    return out


def _deadline_problem(result: CheckResult, history: LoadedHistory, path: str, origin: date, now: date, what: str) -> bool:
    """A LATE (or ORIGIN) problem if a Live submission for ``origin`` made on ``now`` cannot count; True if on time."""
    why = judge_deadline(history.input, origin, now)
    if why is None:
        return True
    latest = history.latest
    late = latest is not None and latest.open_origin is not None and latest.open_origin.origin == origin
    result.add(STAGE, "LATE" if late else "ORIGIN", path, None, f"{what}: {why}")
    return False


def check_commitments(result: CheckResult, root: Path, history: LoadedHistory, new: list[str], now: date) -> dict[str, str]:
    """Every commitment this pull request adds: parsed strictly and judged by the deadline. Returns path -> digest."""
    digests: dict[str, str] = {}
    for path in new:
        try:
            raw = read_limited(root / path, COMMITMENT_LIMIT)
        except Unreadable as exc:
            result.add("submission", exc.keyword, path, None, f"the commitment {exc}")
            continue
        digests[path] = sha256_bytes(raw)
        check_bidi(result, path, raw, lines=False)
        commitment, findings = parse_commitment(path, raw)
        for f in findings:
            result.add("submission", "COMMITMENT", f.path, f.line, f.detail)
        if commitment is None:
            continue
        if commitment.model_id != result.model_id:
            result.add("submission", "COMMITMENT", path, None, f"the commitment is for {commitment.model_id!r}, not {result.model_id!r}")
        others = {p: c for p, c in history.input.commitments.items() if p != path}
        for copy in digest_copies(commitment, others, history.input.root):
            result.add(STAGE, "COPY", path, None, f"the commitment copies another model: {copy.describe()}")
        on_time = _deadline_problem(result, history, path, commitment.origin, now, "sealed submission")
        result.live.append(_pending_row(path, digests[path], True, commitment.origin, history, now, on_time))
    return digests


def _listed_commitment(root: Path, history: LoadedHistory, model_id: str, origin: date) -> Commitment | None:
    path = commitment_path(origin, model_id)
    if path not in history.input.root:
        return None
    found = history.input.commitments.get(path)
    if found is not None:
        return found
    try:
        commitment, _ = parse_commitment(path, read_limited(root / path, COMMITMENT_LIMIT))
    except Unreadable:
        return None
    return commitment


def check_origins(result: CheckResult, root: Path, history: LoadedHistory, sub: Submission, display: str, now: date,
                  sealing: set[date]) -> None:
    """Every later origin this pull request adds: a known origin; Live (open) on time; a reveal equal to its commitment."""
    added = sorted({o for n in sub.data if n not in sub.listed and (o := origin_of(n))})
    latest = history.latest
    for origin_text in added:
        origin = date.fromisoformat(origin_text)
        rel = f"{display}{ORIGINS_DIR}/{origin_text}/"
        if latest is None:
            result.add(STAGE, "ORIGIN", rel, None, "later origins need a format-2 archive with releases (`rapgen release start`)")
            continue
        if origin in history.input.origins:
            result.add(STAGE, "ORIGIN", rel, None, f"{origin_text} is one of origins.json's origins: its units belong in predictions.jsonl")
            continue
        is_open = latest.open_origin is not None and latest.open_origin.origin == origin
        if is_open:
            if origin in sealing or _listed_commitment(root, history, result.model_id, origin) is not None:
                result.add(STAGE, "REVEAL", rel, None, f"the model committed to {origin_text}, which is still open: "
                           "reveal the files only after the origin is resolved")
                continue
            on_time = _deadline_problem(result, history, rel + "predictions.jsonl", origin, now, "open Live submission")
            name = f"{ORIGINS_DIR}/{origin_text}/predictions.jsonl"
            if name in sub.data:
                result.live.append(_pending_row(rel + "predictions.jsonl", sha256_bytes(sub.data[name]), False, origin, history, now, on_time))
        elif origin in latest.resolved_origins:
            commitment = _listed_commitment(root, history, result.model_id, origin)
            if commitment is not None:
                _check_reveal(result, sub, rel, origin_text, commitment)
            else:
                result.notes.append(f"origin {origin_text} is resolved: its files are a later origin, not a Live entry")
        else:
            opened = f"; open: {latest.open_origin.origin}" if latest.open_origin else ""
            result.add(STAGE, "ORIGIN", rel, None, f"{origin_text} is not an origin of this history (resolved: "
                       f"{', '.join(o.isoformat() for o in latest.resolved_origins)}{opened})")


def _check_reveal(result: CheckResult, sub: Submission, rel: str, origin_text: str, commitment: Commitment) -> None:
    for file in ("predictions.jsonl", "traces.jsonl"):
        name = f"{ORIGINS_DIR}/{origin_text}/{file}"
        actual = sha256_bytes(sub.data[name]) if name in sub.data else None
        committed = commitment.digest_of(file)
        if name in sub.present and name not in sub.data:
            continue  # unreadable: reported in the submission section
        if actual != committed:
            why = "is missing" if actual is None else "was not committed" if committed is None else "differs from the commitment"
            result.add(STAGE, "REVEAL", rel + file, None, f"the revealed {file} {why} "
                       f"(committed {committed or 'null'}, revealed {actual or 'none'})")
    result.notes.append(f"origin {origin_text}: a reveal of the commitment {commitment_path(commitment.origin, commitment.model_id)}")


def _pending_row(path: str, digest: str, sealed: bool, origin: date, history: LoadedHistory, now: date, on_time: bool) -> dict:
    opener = history.latest.open_origin if history.latest is not None else None
    closes = opener.closes.isoformat() if opener is not None and opener.origin == origin else None
    return {"origin": origin.isoformat(), "kind": "sealed" if sealed else "open", "path": path, "sha256": digest,
            "closes": closes, "receipt": None, "receipt_date": None, "on_time": on_time, "status": "this pull request",
            "judged_on": now.isoformat()}


def live_rows(result: CheckResult, history: LoadedHistory) -> None:
    """The model's Live entries already in the archive, and every unrevealed entry of the archive."""
    mine = {row["path"] for row in result.live}
    for entry in live_entries(history.input):
        row = {"origin": entry.origin.isoformat(), "kind": "sealed" if entry.sealed else "open", "path": entry.path,
               "sha256": entry.digest, "closes": entry.closes.isoformat(), "receipt": entry.receipt,
               "receipt_date": entry.receipt_date.isoformat() if entry.receipt_date else None,
               "on_time": entry.on_time if entry.receipt is not None else None, "status": entry.status.value}
        if entry.model_id == result.model_id and entry.path not in mine and entry.status is not LiveStatus.PENDING:
            result.live.append(row)
        if entry.status is LiveStatus.UNREVEALED:
            result.unrevealed.append({"model_id": entry.model_id, **row})
    result.live.sort(key=lambda r: (r["origin"], r["kind"], r["path"]))
