"""Pieces shared by the sample build and the synthetic generator: the ledger,
origins, search manifests, ARCHIVE.json, staging and sealing."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from rapgen.archive import (
    ARCHIVE_DIR,
    ARCHIVE_JSON,
    BENCHMARK_LEDGER,
    LEDGER_JSON,
    MANIFEST_JSONL,
    MODELS_DIR,
    ORIGINS_JSON,
    SUMS_NAME,
    add_months,
    shard_ids_sha256,
    shard_start,
)
from rapgen.errors import UsageProblem
from rapgen.io import ARCHIVE_OUTPUT, guard_output_dir, staging_dir, swap_dir, write_json, write_jsonl

# ARCHIVE.md, provenance/FINAL_PARAMETER_LEDGER_V1.json: the benchmark's values, verbatim.
LEDGER: dict = BENCHMARK_LEDGER
# The samples' calendar: six-month windows, and three of them read before each origin.
WINDOW_MONTHS = 6
HISTORY_WINDOWS = 3
CREATED = "2026-11-29"  # fixed, so that rebuilds are byte-identical


def papers_span(origins: Sequence[date]) -> tuple[date, date]:
    """[first, end) of the papers a sample with these origins holds: the first origin's history
    windows to the end of the last origin's target window (exclusive)."""
    return add_months(origins[0], -WINDOW_MONTHS * HISTORY_WINDOWS), add_months(origins[-1], WINDOW_MONTHS)


def origins_doc(origins: Sequence[date], window_months: int, history_windows: int, strict_origin: date) -> dict:
    return {
        "origins": [o.isoformat() for o in origins],
        "window_months": window_months,
        "history_windows": history_windows,
        "strict_origin": strict_origin.isoformat(),
    }


def write_common(staging: Path, info: dict, origins: dict) -> None:
    """ARCHIVE.json, origins.json and the parameter ledger."""
    write_json(staging / ARCHIVE_JSON, info)
    write_json(staging / ORIGINS_JSON, origins)
    write_json(staging / LEDGER_JSON, LEDGER)


def manifest_rows(
    field_ids: Sequence[str],
    row_field: np.ndarray,
    row_day: np.ndarray,
    row_id: Sequence[str],
    origins: Sequence[date],
    window_months: int,
) -> dict[str, list[dict]]:
    """Search manifests of both regimes (ARCHIVE.md, search/manifest_*.jsonl).

    ``row_field`` holds a field index per ledger row, ``row_day`` its
    ``first_submitted`` as days since 1970-01-01 and ``row_id`` its arXiv id.
    A fixed shard is [T - window, T); an expanding shard is everything of the
    field before T. ``ids_sha256`` is :func:`rapgen.archive.shard_ids_sha256` (ids
    sorted by bytes, joined by ``\\n``). Lines are ordered by field id, then origin.
    """
    epoch = date(1970, 1, 1)
    order = np.argsort(row_field, kind="stable")
    bounds = np.searchsorted(row_field[order], np.arange(len(field_ids) + 1))
    out: dict[str, list[dict]] = {"fixed": [], "expanding": []}
    for fi in np.argsort(np.array(field_ids, dtype=object), kind="stable"):
        rows = order[bounds[fi]:bounds[fi + 1]]
        days = row_day[rows]
        ids = [row_id[i] for i in rows]
        for origin in origins:
            to = (origin - epoch).days
            for regime in ("fixed", "expanding"):
                start = shard_start(origin, regime, window_months)
                lo = (start - epoch).days if start else -(10**9)
                sel = np.nonzero((days >= lo) & (days < to))[0]  # the shard rule, vectorised
                digest = shard_ids_sha256(ids[i] for i in sel)
                d = days[sel]
                out[regime].append(
                    {
                        "field_id": field_ids[fi],
                        "origin": origin.isoformat(),
                        "regime": regime,
                        "date_from": start.isoformat() if start else None,
                        "date_to": origin.isoformat(),
                        "n_papers": int(len(sel)),
                        "min_date": _day_iso(int(d.min())) if len(d) else None,
                        "max_date": _day_iso(int(d.max())) if len(d) else None,
                        "ids_sha256": digest,
                    }
                )
    return out


def _day_iso(day: int) -> str:
    return date.fromordinal(date(1970, 1, 1).toordinal() + day).isoformat()


def write_manifests(staging: Path, manifests: dict[str, list[dict]]) -> None:
    for regime in ("fixed", "expanding"):
        write_jsonl(staging / MANIFEST_JSONL[regime], manifests[regime])


def seal(root: Path, *, croissant: bool = False) -> None:
    """Write ``root/SHA256SUMS`` for the freshly built archive (``rapgen seal``; with
    ``croissant``, ``rapgen seal --croissant``: a format-1 archive's Croissant file first)."""
    from rapgen.archive import seal_archive

    seal_archive(root, croissant=croissant)


def _is_own_output(archive: Path, own: OwnOutput | None) -> bool:
    """True when ``archive`` was written by the generator described by ``own``:
    ARCHIVE.json has ``synthetic: true`` and ``own``'s name, and every model
    folder is one of ``own``'s model ids (so no submission can be lost)."""
    if own is None:
        return False
    try:
        info = json.loads((archive.parent / ARCHIVE_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(info, dict) or info.get("synthetic") is not True or info.get("name") != own.name:
        return False
    models = archive.parent / MODELS_DIR
    names = {p.name for p in models.iterdir()} if models.is_dir() else set()
    return names <= set(own.model_ids)


class OwnOutput:
    """What a generator's own earlier output looks like (for ``--force``)."""

    def __init__(self, name: str, model_ids: Sequence[str]) -> None:
        self.name = name
        self.model_ids = tuple(model_ids)


def _check_target(out_root: Path, force: bool, own: OwnOutput | None = None) -> None:
    if out_root.exists() and not out_root.is_dir():
        raise UsageProblem(f"{out_root}: exists and is not a directory")
    archive = out_root / ARCHIVE_DIR
    sums = out_root / SUMS_NAME
    occupied = (archive.exists() and any(archive.iterdir())) or sums.exists()
    if occupied and not force:
        raise UsageProblem(f"{out_root}: already holds archive/ or SHA256SUMS; choose an empty --out folder or pass --force")
    models = out_root / MODELS_DIR
    if force and models.is_dir() and any(models.iterdir()) and not _is_own_output(archive, own):
        raise UsageProblem(f"{models}: holds model folders; --force would delete submissions, so build into another folder")


@contextmanager
def staged(out_root: str | Path, force: bool = False, own: OwnOutput | None = None) -> Iterator[Path]:
    """Build in a hidden staging folder next to the target, then move
    ``archive/`` and ``SHA256SUMS`` into ``out_root``: nothing half-written.

    With ``force``, an existing archive is replaced unless it holds model
    folders; those are replaced only when the archive is ``own``'s earlier
    output (e.g. a previous ``rapgen synth``), never real submissions."""
    out_root = Path(out_root)
    guard_output_dir(out_root, ARCHIVE_OUTPUT)  # never inside another archive's archive/ or the project's folders
    _check_target(out_root, force, own)
    with staging_dir(out_root, prefix=".rapgen-build-") as staging:
        yield staging
        swap_dir(staging / ARCHIVE_DIR, out_root / ARCHIVE_DIR)
        os.replace(staging / SUMS_NAME, out_root / SUMS_NAME)
