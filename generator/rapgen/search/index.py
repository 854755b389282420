"""Per-field postings with shard-local statistics: the storage behind every shard.

Layout (one cache folder per input digest, see :mod:`rapgen.search.cache`):

``vocab.txt``
    every index token of the archive, one per line; a token's line number is
    its global term id.
``fields/<field_id>.npz``
    the field's members (all of its ledger rows, any date) in ascending
    ``arxiv_id`` order — the order a per-shard Whoosh writer would add them —
    with their ``first_submitted`` day numbers, true title/abstract lengths,
    and for each scored field a CSR postings table: sorted term ids,
    ``indptr``, member positions and term frequencies.

A shard (field, origin, regime) is the subset of members dated in
[date_from, date_to). Because members are stored in arXiv-id order, a shard's
Whoosh docnums are the ranks of its members in that order, so positions in
the field array break ties exactly as docnums do. Everything that depends on
the shard — document count, document frequencies, total field lengths — is
computed from the subset (see :mod:`rapgen.search.engine`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from rapgen.search.analysis import FIELDS, quantise_lengths, tokenize

EPOCH = date(1970, 1, 1)
_CHUNK = 4000


def _start_methods() -> list[str]:
    import multiprocessing as mp

    return mp.get_all_start_methods()


def day_number(d: date) -> int:
    return (d - EPOCH).days


_EPOCH_ORDINAL = EPOCH.toordinal()


def day_date(n: int) -> date:
    return date.fromordinal(_EPOCH_ORDINAL + int(n))


@dataclass
class FieldIndex:
    """The members and postings of one field (read-only after load)."""

    field_id: str
    ids: np.ndarray  # object array of arxiv_id strings, ascending
    days: np.ndarray  # int32 first_submitted as days since 1970-01-01
    true_len: dict[str, np.ndarray]  # per scored field: analysed token count (int64)
    quant_len: dict[str, np.ndarray]  # per scored field: Whoosh's stored (quantised) length, float64
    terms: dict[str, np.ndarray]  # per scored field: sorted global term ids with postings
    indptr: dict[str, np.ndarray]
    docs: dict[str, np.ndarray]  # member positions (int32), ascending within a term
    tfs: dict[str, np.ndarray]  # term frequencies as float64 (Whoosh posting weights)

    @property
    def n(self) -> int:
        return len(self.ids)

    def dates_of(self, positions: np.ndarray) -> tuple[date, ...]:
        """The ``first_submitted`` dates of the members at ``positions`` (each date object made once)."""
        dates = self.__dict__.get("_dates")
        if dates is None:
            dates = self.__dict__["_dates"] = np.array([day_date(d) for d in self.days.tolist()] or [], dtype=object)
        return tuple(dates[positions].tolist())

    def postings(self, fieldname: str, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        terms = self.terms[fieldname]
        at = int(np.searchsorted(terms, term_id))
        if at >= len(terms) or terms[at] != term_id:
            return _EMPTY_I, _EMPTY_F
        lo, hi = self.indptr[fieldname][at], self.indptr[fieldname][at + 1]
        return self.docs[fieldname][lo:hi], self.tfs[fieldname][lo:hi]

    @classmethod
    def empty(cls, field_id: str) -> "FieldIndex":
        """A field without members (its shards are all empty)."""
        i64, f64 = np.zeros(0, np.int64), np.zeros(0, np.float64)
        return cls(
            field_id, np.zeros(0, dtype=object), i64,
            {f: i64 for f in FIELDS}, {f: f64 for f in FIELDS}, {f: np.zeros(0, np.int32) for f in FIELDS},
            {f: np.zeros(1, np.int64) for f in FIELDS}, {f: np.zeros(0, np.int32) for f in FIELDS}, {f: f64 for f in FIELDS},
        )

    @classmethod
    def from_arrays(cls, field_id: str, z) -> "FieldIndex":
        true_len = {f: np.asarray(z[f"{f}_len"]).astype(np.int64) for f in FIELDS}
        return cls(
            field_id,
            np.asarray(z["ids"]).astype(object),
            np.asarray(z["days"]).astype(np.int64),
            true_len,
            {f: quantise_lengths(true_len[f]).astype(np.float64) for f in FIELDS},
            {f: np.asarray(z[f"{f}_terms"]) for f in FIELDS},
            {f: np.asarray(z[f"{f}_indptr"]) for f in FIELDS},
            {f: np.asarray(z[f"{f}_docs"]) for f in FIELDS},
            {f: np.asarray(z[f"{f}_tfs"]).astype(np.float64) for f in FIELDS},
        )

    @classmethod
    def load(cls, path: Path, field_id: str) -> "FieldIndex":
        with np.load(path, allow_pickle=False) as z:
            return cls.from_arrays(field_id, z)


_EMPTY_I = np.zeros(0, dtype=np.int32)
_EMPTY_F = np.zeros(0, dtype=np.float64)


# ---------------------------------------------------------------- building
def _tokenize_chunk(texts: Sequence[tuple[str | None, str | None]]) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """Tokenise (title, abstract) pairs with a chunk-local vocabulary.

    Returns the local vocabulary and, per scored field, a pointer array and the
    flat local term ids (CSR over the chunk's papers).
    """
    import pandas as pd

    per_field = [[tokenize(pair[k]) for pair in texts] for k in range(2)]
    flat = [t for docs in per_field for toks in docs for t in toks]
    codes, uniques = pd.factorize(np.array(flat, dtype=object)) if flat else (np.zeros(0, np.int64), [])
    ptrs, ids, at = [], [], 0
    for docs in per_field:
        lens = np.fromiter((len(t) for t in docs), dtype=np.int64, count=len(docs))
        ptrs.append(np.concatenate(([0], np.cumsum(lens))))
        n = int(lens.sum())
        ids.append(np.asarray(codes[at : at + n], dtype=np.int32))
        at += n
    return [str(u) for u in uniques], ptrs, ids


_SHARED_TEXTS: Sequence = ()


def _tokenize_range(bounds: tuple[int, int]):
    return _tokenize_chunk(_SHARED_TEXTS[bounds[0] : bounds[1]])


def tokenize_corpus(
    texts: Sequence[tuple[str | None, str | None]],
    jobs: int = 1,
    tick: Callable[[int], None] | None = None,
) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """Tokenise every paper once; return the global vocabulary (sorted) and,
    per scored field, CSR arrays (pointer per paper, global term ids)."""
    global _SHARED_TEXTS
    ranges = [(i, min(i + _CHUNK, len(texts))) for i in range(0, len(texts), _CHUNK)]
    parts = []
    if jobs > 1 and len(ranges) > 1 and "fork" in _start_methods():
        import multiprocessing as mp

        _SHARED_TEXTS = texts  # inherited by the forked workers: no pickling of the texts
        try:
            with mp.get_context("fork").Pool(jobs) as pool:
                for part, (lo, hi) in zip(pool.imap(_tokenize_range, ranges), ranges):
                    parts.append(part)
                    if tick:
                        tick(hi - lo)
        finally:
            _SHARED_TEXTS = ()
    else:
        for lo, hi in ranges:
            parts.append(_tokenize_chunk(texts[lo:hi]))
            if tick:
                tick(hi - lo)
    vocab = sorted({t for local, _, _ in parts for t in local})
    gid = {t: i for i, t in enumerate(vocab)}
    out_ptr: list[list[np.ndarray]] = [[np.zeros(1, dtype=np.int64)], [np.zeros(1, dtype=np.int64)]]
    out_ids: list[list[np.ndarray]] = [[], []]
    offsets = [0, 0]
    for local, ptrs, flats in parts:
        remap = np.fromiter((gid[t] for t in local), dtype=np.int32, count=len(local))
        for k in range(2):
            out_ids[k].append(remap[flats[k]] if len(flats[k]) else flats[k])
            out_ptr[k].append(ptrs[k][1:] + offsets[k])
            offsets[k] += len(flats[k])
    return (
        vocab,
        [np.concatenate(p) for p in out_ptr],
        [np.concatenate(i) if i else np.zeros(0, np.int32) for i in out_ids],
    )


def paper_term_counts(ptr: np.ndarray, ids: np.ndarray, n_vocab: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per paper: unique term ids and their counts, as CSR (pointer, terms, tfs)."""
    n_papers = len(ptr) - 1
    paper = np.repeat(np.arange(n_papers, dtype=np.int64), np.diff(ptr))
    key = paper * np.int64(max(n_vocab, 1)) + ids.astype(np.int64)
    uniq, counts = np.unique(key, return_counts=True)
    upaper = uniq // max(n_vocab, 1)
    uterm = (uniq % max(n_vocab, 1)).astype(np.int32)
    uptr = np.zeros(n_papers + 1, dtype=np.int64)
    np.add.at(uptr, upaper + 1, 1)
    return np.cumsum(uptr), uterm, counts.astype(np.int32)


def build_field_arrays(
    members: np.ndarray,
    days: np.ndarray,
    paper_ids: np.ndarray,
    per_field: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    lengths: list[np.ndarray],
) -> dict[str, np.ndarray]:
    """Arrays of one field's npz. ``members``: paper indexes in ascending arxiv_id order."""
    out: dict[str, np.ndarray] = {"ids": paper_ids[members].astype(str), "days": days.astype(np.int32)}
    for k, fname in enumerate(FIELDS):
        uptr, uterm, ucount = per_field[k]
        starts, ends = uptr[members], uptr[members + 1]
        sizes = ends - starts
        total = int(sizes.sum())
        # gather each member's (term, tf) run
        local_doc = np.repeat(np.arange(len(members), dtype=np.int32), sizes)
        run_offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) if total else np.zeros(0, np.int64)
        src = np.arange(total, dtype=np.int64) + run_offsets
        terms = uterm[src]
        tfs = ucount[src]
        order = np.lexsort((local_doc, terms))
        terms, local_doc, tfs = terms[order], local_doc[order], tfs[order]
        uterms, first = np.unique(terms, return_index=True)
        indptr = np.append(first, total).astype(np.int64)
        out[f"{fname}_terms"] = uterms.astype(np.int32)
        out[f"{fname}_indptr"] = indptr
        out[f"{fname}_docs"] = local_doc
        out[f"{fname}_tfs"] = tfs
        out[f"{fname}_len"] = lengths[k][members].astype(np.int32)
    return out


def sha256_ids(ids: Iterable[str]) -> str:
    """ARCHIVE.md ``ids_sha256``: ids sorted in byte order, joined by newlines. (UTF-8 keeps the
    order of code points, which is how Python compares strings: the plain sort is byte order.)"""
    data = "\n".join(sorted(ids)).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def write_index_dir(target: Path, build: Callable[[Path], None]) -> None:
    """Build into a temporary sibling folder and rename it into place (atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        build(tmp)
        try:
            os.replace(tmp, target)
        except OSError:
            if target.is_dir():  # another process finished the same build first
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
