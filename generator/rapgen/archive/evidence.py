"""The bytes behind the intervention hashes (INTERVENTIONS.md §0–§2).

* :func:`canonical_hash` — ``H(obj)``: hex SHA-256 of the compact,
  non-ASCII-preserving JSON of ``obj`` (keys in the order built here).
* :func:`build_evidence` — the frozen evidence of one source unit (§1), the
  list a readout prompt embeds and ``evidence_sha256`` hashes.
* :func:`build_oracle_block` — the exact-history block of an O unit (§2),
  hashed by ``input_sha256``.

All are pure: the caller supplies the trace calls, the paper text and the
canonical direction counts. Whether a recorded call is malformed is decided
by the one Search-call validator (``rapgen.search.validate_call``), which the
archive stage may not import; callers pass it in as ``malformed``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any, NamedTuple

import numpy as np

from rapgen.archive.calendar import history_windows
from rapgen.archive.records import SLOTS, TraceCall

MALFORMED_CALL = "malformed call"  # fixed text: traces keep no error message
ORACLE_WINDOWS: dict[str, int] = {"O1": 1, "O2": 3, "O3": 3}  # history windows shown, newest last


class PaperText(NamedTuple):
    first_submitted: str  # ISO date
    title: str
    abstract: str


# What json.dumps(obj, ensure_ascii=False, separators=(",", ":")) builds on every call, built once.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_TEXT = json.encoder.encode_basestring  # how that encoder writes a string (ensure_ascii=False), quotes included


def canonical_json(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``:
    only ``"``, ``\\`` and U+0000–U+001F are escaped."""
    return _CANONICAL.encode(obj).encode("utf-8")


def flat_json(obj: Mapping[str, Any]) -> bytes:
    """:func:`canonical_json` of a flat object, written member by member when every value is text,
    null or an integer (as the encoder writes them: the same escaping, ``null``, the integer's
    ``repr``), which skips building an encoder per object; any other value goes the encoder's way."""
    parts = []
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            text = _TEXT(value)
        elif value is None:
            text = "null"
        elif kind is int:
            text = int.__repr__(value)
        else:
            return canonical_json(obj)
        parts.append(_TEXT(key) + ":" + text)
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def paper_json(pid: str, text: PaperText) -> bytes:
    """:func:`canonical_json` of a paper's evidence object (arxiv_id, first_submitted, title, abstract),
    written directly when all four are text (one per paper of every kept call: the evidence's bulk)."""
    first, title, abstract = text.first_submitted, text.title, text.abstract
    if type(pid) is str and type(first) is str and type(title) is str and type(abstract) is str:
        return ('{"arxiv_id":' + _TEXT(pid) + ',"first_submitted":' + _TEXT(first) + ',"title":' + _TEXT(title)
                + ',"abstract":' + _TEXT(abstract) + "}").encode("utf-8")
    return canonical_json({"arxiv_id": pid, "first_submitted": first, "title": title, "abstract": abstract})


def canonical_hash(obj: Any) -> str:
    """``H(obj)`` of INTERVENTIONS.md §0."""
    return hashlib.sha256(canonical_json(obj)).hexdigest()


def kept_calls(calls: Iterable[TraceCall], budget: int | None = None) -> list[TraceCall]:
    """A unit's calls in ``call_index`` order, truncated to the ``budget`` smallest indices."""
    ordered = sorted(calls, key=lambda c: c.call_index)
    return ordered if budget is None else ordered[:budget]


def call_arguments(call: TraceCall) -> dict:
    """The recorded arguments of a call, as the Search tool received them."""
    return {"query": call.query, "sort": call.sort, "date_from": call.date_from, "date_to": call.date_to}


def build_evidence(
    calls: Iterable[TraceCall],
    papers: Mapping[str, PaperText],
    malformed: Callable[[TraceCall], bool],
    budget: int | None = None,
) -> list[dict]:
    """The evidence list of one source unit: one object per kept call.

    ``papers`` maps every returned arXiv id to its text (a missing id raises
    KeyError: the archive's returned-papers invariant has failed). A call
    whose recorded arguments are malformed carries ``"error": "malformed call"``
    in place of ``total_hits`` and ``papers``.
    """
    out = []
    for call in kept_calls(calls, budget):
        item: dict[str, Any] = {"call_index": call.call_index, **call_arguments(call)}
        if malformed(call):
            item["error"] = MALFORMED_CALL
        else:
            item["total_hits"] = call.total_hits
            item["papers"] = [
                {"arxiv_id": pid, "first_submitted": papers[pid].first_submitted, "title": papers[pid].title,
                 "abstract": papers[pid].abstract}
                for pid in call.returned_ids
            ]
        out.append(item)
    return out


def evidence_sha256(calls: Iterable[TraceCall], papers: Mapping[str, PaperText], malformed: Callable[[TraceCall], bool],
                    budget: int | None = None) -> str:
    return canonical_hash(build_evidence(calls, papers, malformed, budget))


def _head_json(call: TraceCall) -> bytes:
    """:func:`flat_json` of a well-formed call's evidence head (call_index, the arguments, total_hits),
    written member by member when the values have the types the parser gives them (the same text
    flat_json writes for each), else by flat_json itself."""
    index, query, sort, start, end, hits = call.call_index, call.query, call.sort, call.date_from, call.date_to, call.total_hits
    if (type(index) is int and type(query) is str and type(sort) is str and type(hits) is int
            and (start is None or type(start) is str) and (end is None or type(end) is str)):
        return ('{"call_index":' + int.__repr__(index) + ',"query":' + _TEXT(query) + ',"sort":' + _TEXT(sort)
                + ',"date_from":' + ("null" if start is None else _TEXT(start)) + ',"date_to":'
                + ("null" if end is None else _TEXT(end)) + ',"total_hits":' + int.__repr__(hits) + "}").encode("utf-8")
    return flat_json({"call_index": index, **call_arguments(call), "total_hits": hits})


def _paper_json_cache(papers: Mapping[str, PaperText]) -> dict[str, bytes]:
    """Where the papers' canonical JSON is kept: a ``papers`` mapping with an ``evidence_json`` dict
    (the archive's one lazy paper table) shares it with every hasher over it, since the models of
    one archive return the same papers and a paper's JSON never changes; any other, this hasher's own."""
    cache = getattr(papers, "evidence_json", None)
    return cache if isinstance(cache, dict) else {}


class EvidenceHasher:
    """``evidence_sha256`` of many units' kept calls, each call's JSON made once.

    The canonical JSON of a list is ``[`` + its items' canonical JSON joined by ``,`` + ``]``,
    and of an object its members in order, so the digest of any prefix of a unit's calls is
    the hash of cached pieces: the same bytes :func:`build_evidence` gives to
    :func:`canonical_hash`. A missing paper raises KeyError, as there.
    """

    def __init__(self, papers: Mapping[str, PaperText], malformed: Callable[[TraceCall], bool]):
        self.papers, self.malformed = papers, malformed
        self._paper: dict[str, bytes] = _paper_json_cache(papers)
        self._call: dict[int, bytes] = {}  # id(call) -> its evidence item's JSON
        self._held: list[TraceCall] = []  # keeps those ids alive
        self._digest: dict[tuple[int, ...], str] = {}  # ids of the kept calls (each in _held) -> their digest

    def _paper_json(self, pid: str) -> bytes:
        out = self._paper.get(pid)
        if out is None:
            out = self._paper[pid] = paper_json(pid, self.papers[pid])
        return out

    def item(self, call: TraceCall) -> bytes:
        """The canonical JSON of ``call``'s evidence object."""
        out = self._call.get(id(call))
        if out is not None:
            return out
        if self.malformed(call):
            out = flat_json({"call_index": call.call_index, **call_arguments(call), "error": MALFORMED_CALL})
        else:
            papers = b",".join([self._paper_json(pid) for pid in call.returned_ids])
            out = _head_json(call)[:-1] + b',"papers":[' + papers + b"]}"
        self._call[id(call)] = out
        self._held.append(call)
        return out

    def digest(self, calls: Sequence[TraceCall], budget: int | None = None) -> str:
        """``evidence_sha256`` of calls already in ``call_index`` order (as :func:`kept_calls` leaves them).

        The readouts of one source unit often keep the same calls (every cell of a budget), so
        a digest is kept per sequence of kept calls (by their ids, held alive like the items')."""
        kept = calls if budget is None else calls[:budget]
        key = tuple(map(id, kept))
        out = self._digest.get(key)
        if out is None:
            out = self._digest[key] = hashlib.sha256(b"[" + b",".join(self.item(c) for c in kept) + b"]").hexdigest()
        return out


def canonical_counts(rows: Iterable[tuple[date, str]], date_from: date, date_to: date) -> list[int]:
    """SCORING.md §1 canonical n[f, w, ·] of one field's ledger rows ``(first_submitted, primary)``
    in [date_from, date_to): one per row to its primary; ``other`` never counts."""
    counts = [0] * len(SLOTS)
    index = {slot: i for i, slot in enumerate(SLOTS)}
    for day, primary in rows:
        if date_from <= day < date_to and primary in index:
            counts[index[primary]] += 1
    return counts


_EPOCH = date(1970, 1, 1).toordinal()


def epoch_day(day: date) -> int:
    """Days since 1970-01-01 (the integer of a parquet ``date32``)."""
    return day.toordinal() - _EPOCH


class WindowCounts:
    """:func:`canonical_counts` of one ledger for any field and window, each in O(log n).

    Built once from the ledger's columns: ``field_ids``, ``days`` (:func:`epoch_day` of
    ``first_submitted``) and ``slots`` (the primary's index in SLOTS, -1 for ``other``
    or none). The rows are sorted by (field, day) with running per-slot counts, so a
    window's counts are a difference of two rows found by binary search: the same
    integers as counting the rows one by one.
    """

    def __init__(self, field_ids: Sequence[str], days: Sequence[int], slots: Sequence[int]):
        fields = np.asarray(field_ids, dtype=object)
        days = np.asarray(days, dtype=np.int64)
        slots = np.asarray(slots, dtype=np.int64)
        names, codes = np.unique(fields, return_inverse=True) if len(fields) else (np.array([], dtype=object), np.zeros(0, np.int64))
        order = np.lexsort((days, codes))
        self._tabulate(names, np.searchsorted(codes[order], np.arange(len(names) + 1)), days[order], slots[order])

    def _tabulate(self, names: Sequence, starts: np.ndarray, days: np.ndarray, slots: np.ndarray) -> None:
        """The running counts of rows sorted by (field, day); field ``names[i]`` holds rows
        ``starts[i]:starts[i + 1]``."""
        self._days = days
        counted = slots >= 0
        onehot = np.zeros((len(slots) + 1, len(SLOTS)), dtype=np.int64)
        onehot[np.flatnonzero(counted) + 1, slots[counted]] = 1
        self._running = np.cumsum(onehot, axis=0)  # row i: counts of the first i sorted rows
        self._span = {str(name): (int(starts[i]), int(starts[i + 1])) for i, name in enumerate(names)}

    @classmethod
    def from_sorted(cls, field_ids: np.ndarray, days: Sequence[int], slots: Sequence[int]) -> "WindowCounts":
        """From columns already grouped by field (no field id missing) and sorted by day within each
        field, as DuckDB returns them: the same counts as the constructor, without its sort of strings."""
        fields = np.asarray(field_ids, dtype=object)
        firsts = np.flatnonzero(fields[1:] != fields[:-1]) + 1 if len(fields) else np.zeros(0, np.int64)
        starts = np.concatenate(([0], firsts, [len(fields)])).astype(np.int64) if len(fields) else np.zeros(1, np.int64)
        out = cls.__new__(cls)
        out._tabulate(fields[starts[:-1]], starts, np.asarray(days, dtype=np.int64), np.asarray(slots, dtype=np.int64))
        return out

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, date, str | None]]) -> "WindowCounts":
        """From ``(field_id, first_submitted, primary)`` rows."""
        index = {slot: i for i, slot in enumerate(SLOTS)}
        fields, days, slots = [], [], []
        for field_id, day, primary in rows:
            fields.append(field_id)
            days.append(epoch_day(day))
            slots.append(index.get(primary, -1) if isinstance(primary, str) else -1)
        return cls(fields, days, slots)

    def __call__(self, field_id: str, date_from: date, date_to: date) -> list[int]:
        start, end = self._span.get(field_id, (0, 0))
        if date_to <= date_from or start == end:
            return [0] * len(SLOTS)
        days = self._days[start:end]
        lo, hi = np.searchsorted(days, (epoch_day(date_from), epoch_day(date_to)), side="left")
        return (self._running[start + hi] - self._running[start + lo]).tolist()


def oracle_windows(condition: str, origin: date, window_months: int) -> list[tuple[date, date]]:
    """The windows an O condition shows, oldest first: h3 for O1; h1, h2, h3 for O2 and O3."""
    return history_windows(origin, window_months, ORACLE_WINDOWS[condition])


def build_oracle_block(windows: Sequence[tuple[date, date]], counts: Sequence[Sequence[int]]) -> dict:
    """``{"windows": [{"date_from", "date_to", "counts": {"D0"…"D7"}}, …]}``, oldest first.

    ``counts[i]`` are window i's eight canonical counts (zeros for an empty window).
    """
    if len(windows) != len(counts):
        raise ValueError("one row of counts per window")
    out = []
    for (start, end), row in zip(windows, counts):
        if len(row) != len(SLOTS):
            raise ValueError("eight counts per window")
        out.append({"date_from": start.isoformat(), "date_to": end.isoformat(),
                    "counts": {slot: int(n) for slot, n in zip(SLOTS, row)}})
    return {"windows": out}
