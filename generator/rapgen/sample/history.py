"""A replayed release history from a format-1 sample archive (RELEASES.md, "the committed sample").

From an archive whose origins are 2023-01-01 … 2025-01-01 (the committed
sample, or a tiny test archive with the same origins) it builds:

1. release 1 (``initial``): origins 2023-01-01 and 2023-07-01 resolved, the
   ledger up to 2024-01-01, origin 2024-01-01 open;
2. for each later origin T (2024-01-01, 2024-07-01, 2025-01-01): a ``models``
   release on T's deadline holding the Live entries for T — one agent submits
   openly, the others send sealed commitments — and the reveals of the
   previous origin; then a ``roll`` on the day T's target window ends, which
   ingests that window, resolves T and opens the next origin;
3. a last ``models`` release revealing the entries for 2025-01-01, with
   2025-07-01 left open.

The papers, labels and model outputs are the source archive's, split by date
and origin; only the dates of the releases are invented, so every record says
``simulated: true``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from rapgen.archive import add_months
from rapgen.archive.history.ops import ReleaseResult, cut_release, roll_release, start_history
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.archive.history.verify import verify_history
from rapgen.archive.layout import ASSIGNMENTS_PARQUET, MANIFEST_JSONL, ORIGINS_JSON, PAPERS_PARQUET
from rapgen.archive.sums import format_sums
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.io import atomic_write_bytes, write_json

INITIAL_ORIGINS = (date(2023, 1, 1), date(2023, 7, 1))
LIVE_ORIGINS = (date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1))
WINDOW_MONTHS = 6
CLOSES_DAYS = 14
OPEN_SUBMITTER = "ref-closed-book"  # the agent that submits openly; the others seal their entries
COPIED = ("archive/ARCHIVE.json", "archive/benchmark/fields.jsonl", "archive/benchmark/codebooks.jsonl",
          "archive/benchmark/blocks.jsonl", "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json")


@dataclass(frozen=True)
class HistoryBuild:
    root: Path
    releases: tuple[ReleaseResult, ...]


def build_sample_history(source: str | Path, out: str | Path, *, kit: str = "rapgen", open_submitter: str = OPEN_SUBMITTER) -> HistoryBuild:
    """Write the replayed history of ``source`` (a verified format-1 archive) into the empty folder ``out``."""
    source, out = Path(source), Path(out)
    origins = _check_source(source)
    if out.exists() and any(out.iterdir()):
        raise UsageProblem(f"{out}: not empty; the history is built into a new folder")
    out.mkdir(parents=True, exist_ok=True)
    try:
        models = _write_initial(source, out, origins)
        results = [start_history(out, release_date=LIVE_ORIGINS[0], closes=_closes(LIVE_ORIGINS[0]), simulated=True,
                                 notes="origins 2023-01-01 and 2023-07-01 resolved; replayed history of the sample")]
        windows = out.parent / f".{out.name}-windows"
        _split_windows(source, windows)
        pending: dict[str, bytes] = {}  # reveals of the previous origin
        for origin in LIVE_ORIGINS:
            entries, sealed = _live_entries(source, models, origin, kit, open_submitter)
            _add_files(out, {**pending, **entries})
            results.append(cut_release(out, "models", release_date=_closes(origin), notes=f"Live entries for {origin} sealed"))
            end = add_months(origin, WINDOW_MONTHS)
            results.append(roll_release(out, windows / origin.isoformat(), release_date=end, closes=_closes(end)))
            pending = sealed
        _add_files(out, pending)
        results.append(cut_release(out, "models", release_date=_closes(add_months(LIVE_ORIGINS[-1], WINDOW_MONTHS)),
                                   notes=f"entries for {LIVE_ORIGINS[-1]} revealed"))
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(out.parent / f".{out.name}-windows", ignore_errors=True)
    report = verify_history(out)
    if not report.ok:
        raise ArchiveError(f"{out}: the built history does not verify ({len(report.errors)} findings)")
    return HistoryBuild(out, tuple(results))


def _closes(origin: date) -> date:
    return origin + timedelta(days=CLOSES_DAYS)


def _check_source(source: Path) -> dict:
    from rapgen.archive.verify import verify_archive

    report = verify_archive(source)
    if not report.ok:
        raise ArchiveError(f"{source}: the source archive does not verify; run 'rapgen verify --root {source}'")
    origins = json.loads((source / ORIGINS_JSON).read_text(encoding="utf-8"))
    expected = [o.isoformat() for o in INITIAL_ORIGINS + LIVE_ORIGINS]
    if origins["origins"] != expected or origins["window_months"] != WINDOW_MONTHS:
        raise UsageProblem(f"{source}: the replayed history needs origins {', '.join(expected)} and 6-month windows")
    return origins


def _lines_by_origin(data: bytes) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for raw in data.splitlines(keepends=True):
        out.setdefault(json.loads(raw)["origin"], []).append(raw)
    return out


def _write_initial(source: Path, out: Path, origins: dict) -> list[str]:
    """The format-1 archive of release 1: the ledger before 2024-01-01 and the first two origins' files."""
    keep = {o.isoformat() for o in INITIAL_ORIGINS}
    for rel in COPIED:
        atomic_write_bytes(out / rel, (source / rel).read_bytes())
    write_json(out / ORIGINS_JSON, {**origins, "origins": sorted(keep), "strict_origin": INITIAL_ORIGINS[-1].isoformat()})
    for rel in (PAPERS_PARQUET, ASSIGNMENTS_PARQUET):
        _filter_parquet(source / rel, out / rel, None, LIVE_ORIGINS[0])
    for rel in MANIFEST_JSONL.values():
        lines = _lines_by_origin((source / rel).read_bytes())
        atomic_write_bytes(out / rel, b"".join(line for o in sorted(keep) for line in lines.get(o, [])))
    models = sorted(p.name for p in (source / "archive/models").iterdir() if p.is_dir())
    for model_id in models:
        folder = f"archive/models/{model_id}"
        atomic_write_bytes(out / folder / "model.json", (source / folder / "model.json").read_bytes())
        for name in ("predictions.jsonl", "traces.jsonl"):
            if (source / folder / name).is_file():
                lines = _lines_by_origin((source / folder / name).read_bytes())
                atomic_write_bytes(out / folder / name, b"".join(line for o in sorted(keep) for line in lines.get(o, [])))
    from rapgen.archive.seal import seal_archive

    seal_archive(out)
    return models


def _filter_parquet(src: Path, dest: Path, lo: date | None, hi: date) -> None:
    """Rows of ``src`` with ``first_submitted`` in [lo, hi), in their original order and schema."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(src)
    mask = pc.less(table["first_submitted"], hi)
    if lo is not None:
        mask = pc.and_(mask, pc.greater_equal(table["first_submitted"], lo))
    dest.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.filter(mask), dest, compression="zstd")


def _split_windows(source: Path, folder: Path) -> None:
    for start in LIVE_ORIGINS:
        for rel, name in ((PAPERS_PARQUET, "papers.parquet"), (ASSIGNMENTS_PARQUET, "assignments.parquet")):
            _filter_parquet(source / rel, folder / start.isoformat() / name, start, add_months(start, WINDOW_MONTHS))


def _live_entries(source: Path, models: list[str], origin: date, kit: str, open_submitter: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(files to add before the deadline, files to reveal after the roll) for one origin."""
    now: dict[str, bytes] = {}
    later: dict[str, bytes] = {}
    for model_id in models:
        files = {}
        for name in ("predictions.jsonl", "traces.jsonl"):
            path = source / "archive/models" / model_id / name
            if path.is_file():
                lines = _lines_by_origin(path.read_bytes()).get(origin.isoformat(), [])
                if lines:
                    files[name] = b"".join(lines)
        if "predictions.jsonl" not in files:
            continue
        paths = {reveal_path(model_id, origin, name): data for name, data in files.items()}
        if model_id == open_submitter:
            now.update(paths)
            continue
        digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
        commitment = Commitment(model_id, origin, digests["predictions.jsonl"], digests.get("traces.jsonl"), kit)
        now[commitment_path(origin, model_id)] = format_commitment(commitment)
        later.update(paths)
    return now, later


def _add_files(root: Path, files: dict[str, bytes]) -> None:
    """Merge files as a pull request would: write them and append their SHA256SUMS lines."""
    from rapgen.archive.history.load import read_root_sums

    sums = read_root_sums(root)
    for path, data in sorted(files.items()):
        if path in sums:
            raise ArchiveError(f"{path}: already in the archive")
        atomic_write_bytes(root / path, data)
        sums[path] = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(root / "SHA256SUMS", format_sums(sums))
