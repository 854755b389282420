"""A replayed release history from a format-1 sample archive (RELEASES.md, "the committed sample").

From an archive with six-month origins O1 < O2 < … (the committed sample:
2023-01-01 … 2025-01-01; a synthetic archive: 2024-01-01 … 2026-01-01) it builds:

1. release 1 (``initial``): O1 and O2 resolved, the ledger up to O3, O3 open;
2. for each later origin T (for the sample 2024-01-01, 2024-07-01, 2025-01-01): a ``models``
   release on T's deadline holding the Live entries for T — one agent submits
   openly, the others send sealed commitments — and the reveals of the
   previous origin; then a ``roll`` on the day T's target window ends, which
   ingests that window, resolves T and opens the next origin;
3. a last ``models`` release revealing the entries for the last origin, with
   the origin after it left open (for the sample, 2025-07-01);
4. optionally (``extra``) one more ``models`` release adding files a pull request
   would add to listed model folders, or new model folders (the intervention
   records and the tuned panel model), and (``errata``) an ``errata`` release
   replacing released files, each with its reason.

The papers, labels and model outputs are the source archive's, split by date
and origin; only the dates of the releases are invented, so every record says
``simulated: true``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from rapgen.archive import (
    add_months, verify_archive, Replacement, ReleaseResult, cut_release, roll_release, start_history, Commitment,
    commitment_path, format_commitment, reveal_path, ASSIGNMENTS_PARQUET, MANIFEST_JSONL, ORIGINS_JSON,
    PAPERS_PARQUET, format_sums,
)
from rapgen.errors import ArchiveError, UsageProblem
from rapgen.io import ARCHIVE_OUTPUT, atomic_write_bytes, guard_output_dir, write_json
from rapgen.sample.common import WINDOW_MONTHS

N_INITIAL = 2  # origins resolved in release 1; every later one is rolled in
CLOSES_DAYS = 14
OPEN_SUBMITTER = "ref-closed-book"  # the agent that submits openly; the others seal their entries
COPIED = ("archive/ARCHIVE.json", "archive/benchmark/fields.jsonl", "archive/benchmark/codebooks.jsonl",
          "archive/benchmark/blocks.jsonl", "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json")


@dataclass(frozen=True)
class HistoryBuild:
    root: Path
    releases: tuple[ReleaseResult, ...]
    seconds: tuple[float, ...]  # wall time of each release operation (verification before and after included)


class _Timed(list):
    def run(self, results: list, op, *args, **kwargs) -> None:
        start = time.perf_counter()
        results.append(op(*args, **kwargs))
        self.append(time.perf_counter() - start)


@dataclass(frozen=True)
class Erratum:
    """An errata entry of the replayed history: the released path, its new bytes and why."""

    path: str
    data: bytes
    reason: str


def build_sample_history(
    source: str | Path, out: str | Path, *, kit: str = "rapgen", open_submitter: str = OPEN_SUBMITTER,
    extra: dict[str, bytes] | None = None, extra_notes: str = "files added to model folders",
    errata: tuple[Erratum, ...] = (),
) -> HistoryBuild:
    """Write the replayed history of ``source`` (a verified format-1 archive) into the empty folder ``out``.

    ``extra`` (archive path -> bytes, under ``archive/models/``) is merged after
    the last reveal and released in one more ``models`` release; ``errata`` then
    replace released files in one ``errata`` release, a day later."""
    source, out = Path(source), Path(out)
    origins = _check_source(source)
    all_origins = tuple(date.fromisoformat(o) for o in origins["origins"])
    initial, live = all_origins[:N_INITIAL], all_origins[N_INITIAL:]
    guard_output_dir(out, ARCHIVE_OUTPUT)
    if out.exists() and any(out.iterdir()):
        raise UsageProblem(f"{out}: not empty; the history is built into a new folder")
    out.mkdir(parents=True, exist_ok=True)
    try:
        models = _write_initial(source, out, origins, initial, live[0])
        results: list[ReleaseResult] = []
        timed = _Timed()
        timed.run(results, start_history, out, release_date=live[0], closes=_closes(live[0]), simulated=True,
                  notes=f"origins {', '.join(o.isoformat() for o in initial)} resolved; a replayed history")
        windows = out.parent / f".{out.name}-windows"
        _split_windows(source, windows, live)
        pending: dict[str, bytes] = {}  # reveals of the previous origin
        for origin in live:
            entries, sealed = _live_entries(source, models, origin, kit, open_submitter)
            _add_files(out, {**pending, **entries})
            timed.run(results, cut_release, out, "models", release_date=_closes(origin), notes=f"Live entries for {origin} sealed")
            end = add_months(origin, WINDOW_MONTHS)
            timed.run(results, roll_release, out, windows / origin.isoformat(), release_date=end, closes=_closes(end))
            pending = sealed
        _add_files(out, pending)
        last = _closes(add_months(live[-1], WINDOW_MONTHS))
        timed.run(results, cut_release, out, "models", release_date=last, notes=f"entries for {live[-1]} revealed")
        _extra_releases(out, out.parent / f".{out.name}-windows", timed, results, last, extra, extra_notes, errata)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(out.parent / f".{out.name}-windows", ignore_errors=True)
    report = verify_archive(out)
    if not report.ok:
        raise ArchiveError(f"{out}: the built history does not verify ({len(report.errors)} findings)")
    return HistoryBuild(out, tuple(results), tuple(timed))


def _extra_releases(out: Path, scratch: Path, timed: _Timed, results: list, last: date, extra: dict[str, bytes] | None,
                    notes: str, errata: tuple[Erratum, ...]) -> None:
    if extra:
        stray = sorted(p for p in extra if not p.startswith("archive/models/"))
        if stray:
            raise UsageProblem(f"{stray[0]}: only files under archive/models/ can be added to a history")
        _add_files(out, extra)
        timed.run(results, cut_release, out, "models", release_date=last, notes=notes)
    if errata:
        scratch.mkdir(parents=True, exist_ok=True)
        replaced = []
        for i, e in enumerate(errata):
            atomic_write_bytes(scratch / f"erratum-{i}", e.data)
            replaced.append(Replacement(e.path, e.reason, scratch / f"erratum-{i}"))
        timed.run(results, cut_release, out, "errata", replaced=replaced, release_date=last + timedelta(days=1),
                  notes=f"{len(errata)} file{'s' if len(errata) > 1 else ''} corrected; old bytes kept")


def _closes(origin: date) -> date:
    return origin + timedelta(days=CLOSES_DAYS)


def _check_source(source: Path) -> dict:
    report = verify_archive(source)
    if not report.ok:
        raise ArchiveError(f"{source}: the source archive does not verify; run 'rapgen verify --root {source}'")
    origins = json.loads((source / ORIGINS_JSON).read_text(encoding="utf-8"))
    dates = [date.fromisoformat(o) for o in origins["origins"]]
    steps_ok = all(add_months(a, WINDOW_MONTHS) == b for a, b in zip(dates, dates[1:]))
    if origins["window_months"] != WINDOW_MONTHS or not steps_ok or len(dates) <= N_INITIAL:
        raise UsageProblem(f"{source}: a replayed history needs at least {N_INITIAL + 1} origins six months apart")
    return origins


def _lines_by_origin(data: bytes) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for raw in data.splitlines(keepends=True):
        out.setdefault(json.loads(raw)["origin"], []).append(raw)
    return out


def _write_initial(source: Path, out: Path, origins: dict, initial: tuple[date, ...], first_open: date) -> list[str]:
    """The format-1 archive of release 1: the ledger before the first open origin and the initial origins' files."""
    keep = {o.isoformat() for o in initial}
    for rel in COPIED:
        atomic_write_bytes(out / rel, (source / rel).read_bytes())
    write_json(out / ORIGINS_JSON, {**origins, "origins": sorted(keep), "strict_origin": initial[-1].isoformat()})
    for rel in (PAPERS_PARQUET, ASSIGNMENTS_PARQUET):
        _filter_parquet(source / rel, out / rel, None, first_open)
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
    from rapgen.archive import seal_archive

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


def _split_windows(source: Path, folder: Path, starts: tuple[date, ...]) -> None:
    for start in starts:
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
    from rapgen.archive import read_root_sums

    sums = read_root_sums(root)
    for path, data in sorted(files.items()):
        if path in sums:
            raise ArchiveError(f"{path}: already in the archive")
        atomic_write_bytes(root / path, data)
        sums[path] = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(root / "SHA256SUMS", format_sums(sums))
