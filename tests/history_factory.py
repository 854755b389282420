"""Build format-2 histories in code for the release tests (no binary fixtures).

``make_window(folder, start)`` writes one window's papers and assignments in
ARCHIVE.md columns; ``make_history(tmp_path)`` turns a tiny archive into a
history of three releases: initial (origin 2025-07-01 open), a roll of the
2025-07-01 window (2026-01-01 open) and a models release with a sealed
commitment, whose reveal is merged but not yet cut.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from factory import FIELDS, make_archive
from rapgen.archive.calendar import add_months
from rapgen.archive.history.load import read_root_sums
from rapgen.archive.history.ops import cut_release, roll_release, start_history
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.archive.records import SLOTS
from rapgen.archive.sums import format_sums
from rapgen.archive.writer import write_assignments, write_papers
from rapgen.io import atomic_write_bytes, write_jsonl

FIRST_OPEN = date(2025, 7, 1)
SECOND_OPEN = date(2026, 1, 1)


def make_window(folder: str | Path, start: date, *, n: int = 12, seed: int = 3, id_prefix: str = "w", shift_days: int = 0, first_id: str | None = None) -> Path:
    """Papers first submitted in [start, start + 6 months) and their ledger rows.

    ``shift_days`` moves the first row by that many days; ``first_id`` gives it that arXiv id.
    """
    folder = Path(folder)
    rng = random.Random(seed)
    span = (add_months(start, 6) - start).days
    papers, rows = [], []
    for i in range(n):
        when = start + timedelta(days=rng.randrange(span))
        if i == 0:
            when += timedelta(days=shift_days)
        arxiv_id = first_id if (i == 0 and first_id) else f"{id_prefix}{start:%y%m}.{i:05d}"
        papers.append((arxiv_id, f"title {i}", f"abstract {i}", when, "cs.CL"))
        rows.append((arxiv_id, FIELDS[i % len(FIELDS)][0], when, SLOTS[i % 8], None, "single"))
    papers.sort()
    rows.sort(key=lambda r: (r[1], r[0]))
    write_papers(folder / "papers.parquet", {k: [p[i] for p in papers] for i, k in enumerate(("arxiv_id", "title", "abstract", "first_submitted", "categories"))})
    write_assignments(folder / "assignments.parquet", {
        k: [r[i] for r in rows] for i, k in enumerate(("arxiv_id", "field_id", "first_submitted", "primary", "secondary", "assignment_type"))
    })
    return folder


def prediction_lines(origin: date, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    out = []
    for condition in ("A0", "A1", "A3"):
        for fid, *_ in FIELDS:
            out.append({"field_id": fid, "origin": origin.isoformat(), "condition": condition, "weights": {s: rng.randint(1, 9) for s in SLOTS}})
    from rapgen.io import dumps_line

    return "".join(dumps_line(o) + "\n" for o in out).encode("utf-8")


def add_lines(root: Path, files: dict[str, bytes]) -> None:
    """Write files and append their lines to SHA256SUMS (a merged pull request, before a release is cut)."""
    sums = read_root_sums(root)
    for path, data in files.items():
        atomic_write_bytes(root / path, data)
        sums[path] = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(root / "SHA256SUMS", format_sums(sums))


@dataclass(frozen=True)
class History:
    root: Path
    predictions: bytes  # the committed, then revealed, predictions of model-a for FIRST_OPEN


def make_history(tmp_path: str | Path) -> History:
    root = Path(tmp_path) / "repo"
    make_archive(root)
    start_history(root, release_date=date(2025, 7, 1), simulated=True)
    predictions = prediction_lines(FIRST_OPEN)
    commitment = Commitment("model-a", FIRST_OPEN, hashlib.sha256(predictions).hexdigest(), None, "rapgen 0.1")
    add_lines(root, {commitment_path(FIRST_OPEN, "model-a"): format_commitment(commitment)})
    cut_release(root, "models", release_date=date(2025, 7, 15))
    roll_release(root, make_window(Path(tmp_path) / "window", FIRST_OPEN), release_date=date(2026, 1, 10))
    add_lines(root, {reveal_path("model-a", FIRST_OPEN, "predictions.jsonl"): predictions})
    return History(root, predictions)


def forge(root: str | Path, *, records: dict[int, dict] | None = None, listed_from: dict[str, int] | None = None) -> None:
    """Rewrite a history as a forger would, so that every hash of the chain holds again.

    ``records``: release number → keys to change in its record. ``listed_from``: archive
    path → the first release whose manifest lists it (and every later one). Then each
    manifest's digests are recomputed from the bytes on disk, each record's
    ``parent_sha256`` from its predecessor's manifest, and the root SHA256SUMS resealed:
    only the history's own rules can catch what was changed."""
    import json

    from factory import reseal
    from rapgen.archive.history.records import manifest_path, record_path
    from rapgen.archive.sums import parse_sums, sha256_file

    root = Path(root)
    numbers = sorted(int(p.name[:4]) for p in (root / "archive" / "releases").glob("[0-9][0-9][0-9][0-9].json"))
    parent = None
    for k in numbers:
        record_file, manifest_file = root / record_path(k), root / manifest_path(k)
        obj = json.loads(record_file.read_text())
        obj.update((records or {}).get(k, {}))
        if k > 1:
            obj["parent_sha256"] = parent
        record_file.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
        entries, _ = parse_sums(manifest_file.read_bytes())
        paths = {e.path for e in entries} | {p for p, first in (listed_from or {}).items() if first <= k}
        manifest_file.write_bytes(format_sums({p: sha256_file(root / p) for p in paths}))
        parent = sha256_file(manifest_file)
    reseal(root)
