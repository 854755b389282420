"""Where shard indexes live and when they are rebuilt.

Indexes are derived assets: built on demand into ``<cache>/search/<key>/``,
never under ``archive/``. ``<cache>`` is ``--cache-dir``, else the
``RAPGEN_CACHE`` environment variable, else ``<root>/.rapgen-cache``. The key
is a digest of the engine version and the SHA-256 of ``papers.parquet`` and
``assignments.parquet`` — the digests a verified archive recorded while
verifying (``Release.files``), never hashed again here: any change to
the papers or the membership ledger gives a new folder, and appending models
to the archive does not. When a
shard is first opened, its member ids are hashed again and compared with
the manifest's ``ids_sha256`` (see :class:`rapgen.search.engine.Backend`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Callable

import numpy as np

from rapgen.archive import ASSIGNMENTS_PARQUET, PAPERS_PARQUET, WINDOW_FILE_PATTERN, sha256_file
from rapgen.errors import ArchiveError, SearchError
from rapgen.io import cache_root
from rapgen.search.analysis import ENGINE_VERSION, FIELDS, MIN_TOKEN_SIZE, STOPWORDS, TOKEN_RE, WHOOSH_VERSION
from rapgen.search.index import build_field_arrays, day_number, paper_term_counts, tokenize_corpus, write_index_dir

PAPERS = PAPERS_PARQUET
ASSIGNMENTS = ASSIGNMENTS_PARQUET


def resolve_cache_dir(root: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The search cache folder: ``<cache>/search``."""
    return cache_root(root, cache_dir) / "search"  # never the archive or the repository root


def _recorded_digests(archive) -> dict[str, str]:
    """The digests the archive lists: a release's ``files`` (as verify checked them), or for the
    kit's unverified reader (``--no-verify``) SHA256SUMS as it stands."""
    return dict(archive.files)


def input_sha256(archive) -> dict[str, str]:
    """The SHA-256 of both parquet files, from the recorded digests; a file that
    SHA256SUMS does not list is hashed."""
    recorded = _recorded_digests(archive)
    return {rel: _digest(archive, recorded, rel) for rel in (PAPERS, ASSIGNMENTS)}


def _digest(archive, recorded: dict[str, str], rel: str) -> str:
    """``rel``'s recorded digest, or its SHA-256 when SHA256SUMS does not list it."""
    digest = recorded.get(rel)
    if digest is None:
        try:
            digest = sha256_file(Path(archive.root) / rel)
        except ArchiveError as exc:
            raise SearchError(str(exc)) from None
    return digest


def input_digest(archive) -> dict:
    """What an index is built from: the engine rules and both parquet files' digests."""
    sha = input_sha256(archive)
    return {
        "engine": ENGINE_VERSION,
        "whoosh": WHOOSH_VERSION,
        "analyzer": {"pattern": TOKEN_RE.pattern, "minsize": MIN_TOKEN_SIZE, "stopwords": sorted(STOPWORDS)},
        "papers_sha256": sha[PAPERS],
        "assignments_sha256": sha[ASSIGNMENTS],
        **_window_digests(archive),
    }


def _window_digests(archive) -> dict:
    """Format 2: the papers and ledger of every window rolled in since release 1 are
    index inputs too — exactly the windows the index is built from (``archive.ledger_files()``:
    a verified archive's listed ones, an unverified reader's complete windows on disk), each by
    its recorded digest, or hashed when SHA256SUMS does not list it yet. Absent for an archive
    without windows, so its key is unchanged."""
    recorded = _recorded_digests(archive)
    papers, rows = archive.ledger_files()
    windows = {rel: _digest(archive, recorded, rel)
               for rel in sorted(p for p in (*papers, *rows) if re.match(WINDOW_FILE_PATTERN, p))}
    return {"windows_sha256": windows} if windows else {}


def cache_key(digest: dict) -> str:
    return hashlib.sha256(json.dumps(digest, sort_keys=True).encode()).hexdigest()[:24]


def _read_inputs(archive) -> tuple[np.ndarray, list, list, list[tuple[str, np.ndarray, np.ndarray]]]:
    """Papers that belong to at least one field (ascending arxiv_id, byte order)
    and each field's members as (field_id, paper indexes, day numbers)."""
    con = archive.connect()
    try:
        papers = con.execute(
            "SELECT arxiv_id, title, abstract FROM papers WHERE arxiv_id IN (SELECT arxiv_id FROM assignments)"
        ).fetchall()
        rows = con.execute("SELECT field_id, arxiv_id, first_submitted FROM assignments").fetchall()
    finally:
        con.close()
    papers.sort(key=lambda r: r[0].encode("utf-8"))
    ids = np.array([r[0] for r in papers], dtype=object)
    position = {pid: i for i, pid in enumerate(ids)}
    by_field: dict[str, list[tuple[int, int]]] = {}
    for fid, pid, first in rows:
        if pid not in position:
            raise SearchError(f"{ASSIGNMENTS}: paper {pid} of field {fid} is missing from {PAPERS}")
        by_field.setdefault(fid, []).append((position[pid], day_number(first)))
    fields = []
    for fid in sorted(by_field):
        members = sorted(by_field[fid])
        fields.append((fid, np.array([m for m, _ in members], dtype=np.int64), np.array([d for _, d in members], dtype=np.int64)))
    titles = [r[1] for r in papers]
    abstracts = [r[2] for r in papers]
    return ids, titles, abstracts, fields


def build_index(archive, target: Path, *, jobs: int = 1, log: Callable[[str], None] | None = None, digest: dict | None = None) -> dict:
    """Tokenise every member paper once and write one npz per field into ``target``."""
    say = log or (lambda _m: None)
    started = time.perf_counter()
    ids, titles, abstracts, fields = _read_inputs(archive)
    say(f"indexing {len(ids):,} papers in {len(fields)} fields")
    vocab, ptrs, flats = tokenize_corpus(list(zip(titles, abstracts)), jobs=jobs)
    t_tok = time.perf_counter() - started
    per_field = [paper_term_counts(ptrs[k], flats[k], len(vocab)) for k in range(len(FIELDS))]
    lengths = [np.diff(ptrs[k]) for k in range(len(FIELDS))]

    def write(folder: Path) -> None:
        (folder / "fields").mkdir()
        (folder / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
        for fid, members, days in fields:
            arrays = build_field_arrays(members, days, ids, per_field, lengths)
            np.savez(folder / "fields" / f"{fid}.npz", **arrays)
        stats = {
            "papers": int(len(ids)),
            "fields": len(fields),
            "memberships": int(sum(len(m) for _, m, _ in fields)),
            "vocabulary": len(vocab),
            "tokenize_seconds": round(t_tok, 3),
            "build_seconds": round(time.perf_counter() - started, 3),
        }
        if digest is not None:
            (folder / "inputs.json").write_text(json.dumps(digest, indent=1, sort_keys=True), encoding="utf-8")
        (folder / "meta.json").write_text(json.dumps({"stats": stats, "fields": [f for f, _, _ in fields]}, indent=1), encoding="utf-8")

    write_index_dir(target, write)
    return json.loads((target / "meta.json").read_text(encoding="utf-8"))


def ensure_index(archive, cache_dir: Path, *, jobs: int = 1, log: Callable[[str], None] | None = None) -> Path:
    """The index folder for ``archive``'s current inputs, building it if absent."""
    digest = input_digest(archive)
    folder = cache_dir / cache_key(digest)
    if not (folder / "meta.json").is_file():
        build_index(archive, folder, jobs=jobs, log=log, digest=digest)
    return folder
