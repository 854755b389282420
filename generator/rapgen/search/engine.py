"""Executing one Search call on one shard, exactly as a per-shard Whoosh index would.

For a shard S (the members of a field dated in [date_from, date_to)) and a
query analysed into de-duplicated terms t1..tm, Whoosh 2.7.5 builds the flat
query ``Or([Term(f, t) for t in terms for f in ("title", "abstract")])`` and
scores each matching document with its ``BM25F`` weighting:

    idf(f, t)  = ln(N / (df_f(t) + 1)) + 1                 N, df_f: counted in S
    avgfl_f    = (sum of true lengths of f over S) / N     (or 1 if that is 0)
    bm25       = idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / avgfl_f)))

where ``fl`` is the *quantised* length Whoosh stores (see
:func:`rapgen.search.analysis.quantise_lengths`). The clause scores are added
in the order Whoosh's matcher adds them, so the floating-point sums are
bit-identical, and ties are therefore the same ties:

* ``N <= 5000`` and more than two clauses: ``PreloadedOr`` accumulates clause
  by clause, in clause order, into a zeroed array;
* otherwise ``DefaultOr`` builds a Huffman-like tree of ``UnionMatcher``s
  weighted by the clauses' document frequencies (``make_weighted_tree``:
  stable sort, pop the two lightest, insert the pair after every entry of
  equal weight) and each node adds its two children.

Ranking: score descending, then docnum ascending — and a shard's docnums are
its members in ascending arXiv-id order, i.e. positions in the field arrays.
Date order: ``first_submitted`` descending, then arXiv id ascending.
``total_hits`` counts every matching member inside the call's date bounds.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rapgen.archive import CONDITION_REGIME, ledger_rows
from rapgen.errors import SearchError
from rapgen.search.analysis import CALL_KEYS, FIELDS, SORTS, query_terms
from rapgen.search.cache import ensure_index, resolve_cache_dir
from rapgen.search.index import FieldIndex, day_date, day_number, sha256_ids
from rapgen.search.scoring import (  # noqa: F401
    PRELOADED_OR_MAX_DOCS, TOO_MANY_CLAUSES, _NONE_F, _NONE_I, _Matched, _top, gather_postings, union_scores,
)

SHARD_CACHE = 4096  # answers (and matched queries) a shard keeps; the oldest go first
# Strictly YYYY-MM-DD (date.fromisoformat alone also takes "20240101" and week dates).
STRICT_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_CALL_KEY_SET = frozenset(CALL_KEYS)
# Condition -> regime is the archive's rule; this name stays for existing importers.
REGIME_OF_CONDITION = CONDITION_REGIME


class CallProblem(ValueError):
    """A malformed Search call: becomes an error result, never an exception for the caller.

    ``recordable`` says whether a trace line can still hold the call as given
    (known keys only, ``query`` and ``sort`` strings, each date a string or null).
    """

    def __init__(self, message: str, *, recordable: bool = True) -> None:
        super().__init__(message)
        self.recordable = recordable


def parse_strict_date(value: object) -> date:
    """A ``YYYY-MM-DD`` calendar date, or ValueError (the one strict-date rule)."""
    if not isinstance(value, str) or STRICT_DATE.fullmatch(value) is None:
        raise ValueError(f"expected an ISO date YYYY-MM-DD, found {value!r}")
    return date.fromisoformat(value)


@dataclass(frozen=True)
class SearchResult:
    """The answer to one Search call. ``error`` is set for a malformed call
    (then ``total_hits`` is 0 and nothing is returned)."""

    total_hits: int
    ids: tuple[str, ...] = ()
    dates: tuple[date, ...] = ()
    scores: tuple[float, ...] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class CallArgs:
    query: str
    sort: str
    date_from: date | None
    date_to: date | None
    terms: tuple[str, ...] = field(default=())


def _parse_bound(args: Mapping[str, Any], key: str) -> date | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or STRICT_DATE.fullmatch(value) is None:
        raise CallProblem(f"{key} must be an ISO date YYYY-MM-DD or null, found {value!r}", recordable=isinstance(value, str))
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CallProblem(f"{key} {value!r} is not a calendar date") from None


def validate_call(args: object) -> CallArgs:
    """:func:`check_call`, its verdict on arguments of text or null values remembered: verify,
    replay and the counterfactual judge the same recorded calls (a forked replay worker inherits
    the verdicts). Raises the same :class:`CallProblem` (message and ``recordable``)."""
    key = _call_key(args)
    if key is None:
        return check_call(args)
    found = _verdict(key[0])
    if type(found) is tuple:
        raise CallProblem(found[0], recordable=found[1])
    return found


@functools.lru_cache(maxsize=1 << 17)
def _verdict(items: tuple) -> CallArgs | tuple[str, bool]:
    try:
        return check_call(dict(items))
    except CallProblem as exc:
        return str(exc), exc.recordable  # not the exception: it would keep its frames alive


def check_call(args: object) -> CallArgs:
    """Check a call's arguments against the tool schema (SEARCH.md, A Search call):
    the one validator of Search calls. Returns the parsed call, or raises
    :class:`CallProblem` (a one-line reason; ``recordable`` as documented there).

    Malformed: not an object, an unknown key, a missing ``query`` or ``sort``,
    a non-string query, a sort outside :data:`SORTS`, a date that is not a
    strict ``YYYY-MM-DD`` calendar date or null, ``date_from >= date_to``, and a
    query that is empty or only whitespace.
    """
    if type(args) is not dict and not isinstance(args, Mapping):
        raise CallProblem(f"the arguments must be an object, found {type(args).__name__}", recordable=False)
    if not _CALL_KEY_SET.issuperset(args):
        unknown = sorted(str(k) for k in args if k not in CALL_KEYS)
        raise CallProblem(f"unknown argument {unknown[0]!r}; allowed: {', '.join(CALL_KEYS)}", recordable=False)
    for key in ("query", "sort"):
        if key not in args:
            raise CallProblem(f"missing required argument {key!r}", recordable=False)
    query, sort = args["query"], args["sort"]
    if not isinstance(query, str):
        raise CallProblem(f"query must be a string, found {type(query).__name__}", recordable=False)
    if sort not in SORTS:
        raise CallProblem(f"sort must be 'relevance' or 'date', found {sort!r}", recordable=_shapes_ok(args))
    try:
        date_from, date_to = _parse_bound(args, "date_from"), _parse_bound(args, "date_to")
    except CallProblem as exc:
        raise CallProblem(str(exc), recordable=_shapes_ok(args)) from None
    if date_from is not None and date_to is not None and date_from >= date_to:
        raise CallProblem(f"date_from {date_from} must be before date_to {date_to}")
    if not query.strip():
        raise CallProblem("the query is empty")
    surrogate = _LONE_SURROGATE.search(query)
    if surrogate is not None:
        # Not text: it cannot be written to a trace (UTF-8) or echoed; a malformed call, not a crash.
        raise CallProblem(f"the query is not valid Unicode text (a lone surrogate at position {surrogate.start()})", recordable=False)
    # A query of stopwords or one-letter tokens only is valid (SEARCH.md lists the
    # malformed calls and it is not one of them): no terms, so 0 hits, as in Whoosh.
    return CallArgs(query, sort, date_from, date_to, _terms_of(query))


def _shapes_ok(args: Mapping[str, Any]) -> bool:
    """Whether a trace line can hold the call's values as given (``recordable``, see CallProblem)."""
    return isinstance(args["query"], str) and isinstance(args["sort"], str) and all(
        args.get(k) is None or isinstance(args.get(k), str) for k in ("date_from", "date_to"))


@functools.lru_cache(maxsize=1 << 16)
def _terms_of(query: str) -> tuple[str, ...]:
    """A query's terms (replays ask the same query of many shards, and again in the counterfactual)."""
    return tuple(query_terms(query))


def call_is_malformed(call: Any) -> bool:
    """Whether a recorded call (a :class:`~rapgen.archive.TraceCall`) has malformed
    arguments, by :func:`validate_call`: the predicate the scorer and verify are handed."""
    try:
        validate_call({"query": call.query, "sort": call.sort, "date_from": call.date_from, "date_to": call.date_to})
    except CallProblem:
        return True
    return False



class Shard:
    """One (field, origin, regime) shard: a date range over a field's members."""

    def __init__(self, index: FieldIndex, date_from: date | None, date_to: date, *, lookup: Callable[[str], int | None]):
        self.index = index
        self.date_from = date_from
        self.date_to = date_to
        self.lo = day_number(date_from) if date_from is not None else None
        self.hi = day_number(date_to)
        member = index.days < self.hi
        if self.lo is not None:
            member &= index.days >= self.lo
        self.member = member
        self.n = int(member.sum())
        self.field_length = {f: int(index.true_len[f][member].sum()) for f in FIELDS}
        # Searcher.avg_field_length = field_length / (doc_count or 1); BM25FScorer uses `avgfl or 1`.
        self.avgfl = {f: (self.field_length[f] / (self.n or 1)) or 1 for f in FIELDS}
        self._lookup = lookup
        # A query's match and a call's answer depend on the shard and the call only: repeats are looked up.
        self._matched: dict[tuple[str, ...], _Matched] = {}
        # A term's clauses (its postings on the shard) and their BM25 leaves depend on the shard and
        # the term only: queries sharing a term compute them once.
        self._term_clauses: dict[str, tuple[tuple[str, np.ndarray, np.ndarray], ...]] = {}
        self._leaves: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._answers: dict[tuple, SearchResult] = {}
        self._effective: dict[tuple, SearchResult] = {}
        self._replayed: dict[tuple, tuple[int, list[str]]] = {}

    @property
    def ids(self) -> list[str]:
        return list(self.index.ids[self.member])

    def search(self, args: object, *, top_k: int, k1: float, b: float) -> SearchResult:
        try:
            call = validate_call(args)
        except CallProblem as exc:
            return SearchResult(0, error=str(exc))
        return self.execute(call, top_k=top_k, k1=k1, b=b)

    def search_variants(self, variants: Sequence[object], *, top_k: int, k1: float, b: float) -> list[SearchResult]:
        """Several calls on this shard, each answered exactly as :meth:`search` would.

        Calls with the same query terms share the postings, the hit set and the BM25
        scores, which depend on the terms and the shard only; the options (sort, date
        bounds) only filter and order them. The Search-option counterfactual re-runs
        each recorded query with the common options, so this halves its work. A call
        asked again (same arguments) gets the answer it got before."""
        out: list[SearchResult] = []
        for args in variants:
            key = _call_key(args, top_k, k1, b)
            found = self._answers.get(key) if key is not None else None
            if found is None:
                try:
                    call = validate_call(args)
                except CallProblem as exc:
                    found = SearchResult(0, error=str(exc))
                else:
                    found = self._effective_answer(call, top_k, k1, b)
                if key is not None:
                    _remember(self._answers, key, found)
            out.append(found)
        return out

    def _effective_answer(self, call: CallArgs, top_k: int, k1: float, b: float) -> SearchResult:
        """The answer to a valid call, shared with every call that differs only by bounds at or
        beyond the shard's own (they filter nothing: every member is dated inside the shard)."""
        key = self._effective_key(call, top_k, k1, b)
        found = self._effective.get(key)
        if found is None:
            found = self._answer(call, self._matched_terms(call.terms), top_k=top_k, k1=k1, b=b)
            _remember(self._effective, key, found)
        return found

    def _effective_key(self, call: CallArgs, top_k: int, k1: float, b: float) -> tuple:
        """A valid call's identity on this shard: its bounds at or beyond the shard's own dropped."""
        lo = day_number(call.date_from) if call.date_from is not None else None
        hi = day_number(call.date_to) if call.date_to is not None else None
        return (call.terms, call.sort, lo if lo is not None and (self.lo is None or lo > self.lo) else None,
                hi if hi is not None and hi < self.hi else None, top_k, k1, b)

    def _matched_terms(self, terms: tuple[str, ...]) -> _Matched:
        matched = self._matched.get(terms)
        if matched is None:
            matched = self._match(terms)
            _remember(self._matched, terms, matched)
        return matched

    # -------------------------------------------------------------- core
    def _clauses(self, terms: tuple[str, ...]) -> list[tuple[str, np.ndarray, np.ndarray]]:
        out: list[tuple[str, np.ndarray, np.ndarray]] = []
        for term in terms:
            found = self._term_clauses.get(term)
            if found is None:
                found = self._term_postings(term)
                _remember(self._term_clauses, term, found)
            out.extend(found)
        return out

    def _term_postings(self, term: str) -> tuple[tuple[str, np.ndarray, np.ndarray], ...]:
        """The term's clause per scored field: its postings among the shard's members."""
        tid = self._lookup(term)
        if tid is None:
            return tuple((fname, _NONE_I, _NONE_F) for fname in FIELDS)
        member = None if self.n == self.index.n else self.member  # a shard of every member filters nothing
        out = []
        for fname in FIELDS:
            docs, tfs = self.index.postings(fname, tid)
            if member is not None and len(docs):
                keep = member[docs]
                docs, tfs = docs[keep], tfs[keep]
            out.append((fname, docs, tfs))
        return tuple(out)

    def prime(self, terms: Sequence[str], k1: float, b: float) -> None:
        """Look up many terms at once (every term of the calls a replay is about to ask of this
        shard): their clauses and BM25 leaves, the same arrays :meth:`_term_postings` and
        :meth:`_leaf` give one term at a time, made by one gather per scored field instead of one
        per term. Terms already known are left as they are."""
        terms = [t for t in dict.fromkeys(terms) if t not in self._term_clauses]
        if not terms:
            return
        tids = [self._lookup(t) for t in terms]
        known = [i for i, tid in enumerate(tids) if tid is not None]
        per_term: list[list[tuple[str, np.ndarray, np.ndarray]]] = [[] for _ in terms]
        for i, tid in enumerate(tids):
            if tid is None:
                per_term[i] = [(fname, _NONE_I, _NONE_F) for fname in FIELDS]
        if known:
            member = None if self.n == self.index.n else self.member
            wanted = np.array([tids[i] for i in known], dtype=np.int64)
            for fname in FIELDS:
                docs, tfs, bounds = gather_postings(self.index, fname, wanted, member)
                leaves = self._leaves_of(fname, docs, tfs, bounds, k1, b)
                for at, i in enumerate(known):
                    lo, hi = bounds[at], bounds[at + 1]
                    if lo == hi:
                        # an empty clause: what _term_postings gives (the index's empty arrays, or
                        # the postings' own empty selection)
                        clause = (fname, _NONE_I, _NONE_F) if member is None else (fname, docs[lo:hi], tfs[lo:hi])
                    else:
                        clause = (fname, docs[lo:hi], tfs[lo:hi])
                        _remember(self._leaves, (id(clause[1]), fname, k1, b), (clause[1], leaves[lo:hi]))
                    per_term[i].append(clause)
        for term, clauses in zip(terms, per_term):
            _remember(self._term_clauses, term, tuple(clauses))

    def _leaves_of(self, fname: str, docs: np.ndarray, tfs: np.ndarray, bounds: list[int], k1: float, b: float) -> np.ndarray:
        """The BM25 leaves of consecutive clauses (``docs[bounds[j]:bounds[j+1]]``), each element the
        double :meth:`_leaf` gives: the same operations, element by element."""
        if not len(docs):
            return _NONE_F
        dfs = np.diff(np.asarray(bounds, dtype=np.int64))
        idfs = [math.log(self.n / (df + 1)) + 1 if df else 0.0 for df in dfs.tolist()]  # WeightingModel.idf
        fl = self.index.quant_len[fname][docs]
        avgfl = self.avgfl[fname]
        return np.repeat(np.array(idfs), dfs) * ((tfs * (k1 + 1)) / (tfs + k1 * ((1 - b) + b * fl / avgfl)))

    def _leaf(self, fname: str, docs: np.ndarray, tfs: np.ndarray, k1: float, b: float) -> np.ndarray | None:
        """One clause's BM25 scores of its documents (None for an empty clause); a clause is one
        cached postings pair, so its identity keys the cache (the arrays live as long as the shard's
        term cache holds them, and an entry is dropped with them)."""
        df = len(docs)
        if df == 0:
            return None
        key = (id(docs), fname, k1, b)
        found = self._leaves.get(key)
        if found is not None and found[0] is docs:
            return found[1]
        idf = math.log(self.n / (df + 1)) + 1  # WeightingModel.idf, in Python floats
        fl = self.index.quant_len[fname][docs]
        avgfl = self.avgfl[fname]
        # scoring.bm25, same operation order, element-wise IEEE doubles
        leaf = idf * ((tfs * (k1 + 1)) / (tfs + k1 * ((1 - b) + b * fl / avgfl)))
        _remember(self._leaves, key, (docs, leaf))
        return leaf

    def _scores(self, clauses: list[tuple[str, np.ndarray, np.ndarray]], union: np.ndarray, k1: float, b: float) -> np.ndarray:
        """The BM25 score of each document of ``union`` (the matching members, ascending).

        Whoosh sums over every document of the shard, a missing clause adding 0.0; here the
        same additions run over the matching documents only (x + 0.0 == x), so every sum is
        the same floating-point value."""
        where = self._scratch("where", np.int64)  # only the union's entries are written and read
        where[union] = np.arange(len(union))
        leaves = [self._leaf(fname, docs, tfs, k1, b) for fname, docs, tfs in clauses]
        spots = [None if leaf is None else where[docs] for (_, docs, _), leaf in zip(clauses, leaves)]
        return union_scores(self.n, spots, leaves, len(union))

    def _scratch(self, name: str, dtype) -> np.ndarray:
        """A per-shard work array of one entry per index member (made once, not per call)."""
        found = self.__dict__.get("_" + name)
        if found is None:
            found = self.__dict__["_" + name] = np.zeros(self.index.n, dtype=dtype)
        return found

    def execute(self, call: CallArgs, *, top_k: int, k1: float, b: float) -> SearchResult:
        return self._answer(call, self._match(call.terms), top_k=top_k, k1=k1, b=b)

    def _match(self, terms: tuple[str, ...]) -> _Matched:
        clauses = self._clauses(terms)
        if not clauses:
            return _Matched(clauses, _NONE_I, _NONE_I)
        hit = self._scratch("hit", bool)  # all False between calls
        for _, docs, _ in clauses:
            hit[docs] = True
        union = np.flatnonzero(hit)
        hit[union] = False
        return _Matched(clauses, union, self.index.days[union])

    def _answer(self, call: CallArgs, matched: _Matched, *, top_k: int, k1: float, b: float) -> SearchResult:
        total, chosen, chosen_scores = self._chosen(call, matched, top_k, k1, b)
        if not total:
            return SearchResult(0, (), (), () if call.sort == "relevance" else None)
        return SearchResult(total, tuple(map(str, self.index.ids[chosen].tolist())), self.index.dates_of(chosen),
                            None if chosen_scores is None else tuple(chosen_scores.tolist()))

    def replay_answer(self, call: CallArgs, *, top_k: int, k1: float, b: float) -> tuple[int, list[str]]:
        """``total_hits`` and the returned ids of a valid call, as :meth:`execute` gives them (the
        ids a list; no dates, no scores): what a replay compares with the recorded call. Calls
        that differ only by bounds at or beyond the shard's own share one answer."""
        key = self._effective_key(call, top_k, k1, b)
        found = self._replayed.get(key)
        if found is None:
            total, chosen, _ = self._chosen(call, self._matched_terms(call.terms), top_k, k1, b)
            found = (total, list(map(str, self.index.ids[chosen].tolist())) if total else [])
            _remember(self._replayed, key, found)
        return found

    def _chosen(self, call: CallArgs, matched: _Matched, top_k: int, k1: float, b: float) -> tuple[int, np.ndarray, np.ndarray | None]:
        """(total_hits, the returned members' positions, their scores (None for a date call))."""
        # the call's bounds, clipped to the shard (shard membership is already in the match)
        keep = None
        if call.date_from is not None:
            keep = matched.days >= day_number(call.date_from)
        if call.date_to is not None:
            below = matched.days < day_number(call.date_to)
            keep = below if keep is None else keep & below
        candidates = matched.union if keep is None else matched.union[keep]
        total = int(len(candidates))
        if total == 0:
            return 0, _NONE_I, None
        if call.sort == "relevance":
            if matched.scores is None or matched.scored_with != (k1, b):
                matched.scores, matched.scored_with = self._scores(matched.clauses, matched.union, k1, b), (k1, b)
            scores = matched.scores if keep is None else matched.scores[keep]
            order = _top(candidates, -scores, top_k)
            chosen_scores = scores[order]
        else:
            days = matched.days if keep is None else matched.days[keep]
            order = _top(candidates, -days, top_k)
            chosen_scores = None
        return total, candidates[order], chosen_scores


def _call_key(args: object, *options: float) -> tuple | None:
    """A hashable identity of a call's arguments (with the engine options): for a dict of
    text or null values only (``1`` and ``True`` are equal keys but different calls)."""
    if type(args) is not dict:
        return None
    items = tuple(args.items())
    for name, value in items:
        if type(name) is not str or (value is not None and type(value) is not str):
            return None
    return (items, *options)


def _remember(cache: dict, key, value) -> None:
    if len(cache) >= SHARD_CACHE:
        del cache[next(iter(cache))]
    cache[key] = value


class Backend:
    """The Search backend of one archive: shards built on demand from the cache.

    ``archive`` is a :class:`rapgen.archive.Archive` (normally from
    ``open_verified``). Constants come from the ledger: ``bm25.k1``,
    ``bm25.b``, ``search.top_k``, ``search.max_calls``.
    """

    def __init__(
        self,
        archive,
        *,
        cache_dir: str | Path | None = None,
        jobs: int = 1,
        log: Callable[[str], None] | None = None,
        index_folder: Path | None = None,
    ):
        self.archive = archive
        ledger = archive.ledger
        self.k1 = float(ledger["bm25"]["k1"])
        self.b = float(ledger["bm25"]["b"])
        self.top_k = int(ledger["search"]["top_k"])
        self.max_calls = int(ledger["search"]["max_calls"])
        self.cache_dir = resolve_cache_dir(archive.root, cache_dir)
        # index_folder: an index already resolved by a parent process (replay workers)
        self.folder = Path(index_folder) if index_folder else ensure_index(archive, self.cache_dir, jobs=jobs, log=log)
        self._vocab: dict[str, int] | None = None
        self._texts: dict[str, tuple[str, str]] | None = None
        self._fields: dict[str, FieldIndex] = {}
        self._shards: dict[tuple[str, date, str], Shard] = {}
        self._manifest = {
            (m.field_id, m.origin, m.regime): m for regime in ("fixed", "expanding") for m in archive.manifest(regime)
        }

    def detached(self) -> Backend:
        """This backend without its archive: the constants, the index folder and the manifests, cheap
        to hand to a worker process (which then reads nothing of the archive again)."""
        copy = object.__new__(Backend)
        copy.__dict__.update(self.__dict__, archive=None, _vocab=None, _texts=None, _fields={}, _shards={})
        return copy

    # -------------------------------------------------------------- lookups
    def _term_id(self, term: str) -> int | None:
        if self._vocab is None:
            text = (self.folder / "vocab.txt").read_text(encoding="utf-8")
            self._vocab = {t: i for i, t in enumerate(text.split("\n")[:-1])}
        return self._vocab.get(term)

    def field_index(self, field_id: str) -> FieldIndex:
        if field_id not in self._fields:
            path = self.folder / "fields" / f"{field_id}.npz"
            if not path.is_file():
                raise SearchError(f"field {field_id!r} has no members in the ledger; no shard can be searched")
            self._fields[field_id] = FieldIndex.load(path, field_id)
        return self._fields[field_id]

    def release(self, field_id: str) -> None:
        """Forget a field's arrays and shards (replay workers go field by field)."""
        self._fields.pop(field_id, None)
        for key in [k for k in self._shards if k[0] == field_id]:
            del self._shards[key]

    def shard(self, field_id: str, origin: date | str, regime: str) -> Shard:
        if isinstance(origin, str):
            try:
                origin = date.fromisoformat(origin)
            except ValueError:
                raise SearchError(f"origin {origin!r} is not a YYYY-MM-DD date") from None
        key = (field_id, origin, regime)
        if key in self._shards:
            return self._shards[key]
        manifest = self._manifest.get(key)
        if manifest is None:
            if regime not in ("fixed", "expanding"):
                raise SearchError(f"regime must be 'fixed' or 'expanding', found {regime!r}")
            if self.archive is not None and field_id not in self.archive.field_map:
                raise SearchError(f"field {field_id!r} is not a field of this archive")
            raise SearchError(f"no {regime} shard for field {field_id!r} at origin {origin} in the manifest")
        if manifest.n_papers == 0 and not (self.folder / "fields" / f"{field_id}.npz").is_file():
            index = FieldIndex.empty(field_id)
        else:
            index = self.field_index(field_id)
        shard = Shard(index, manifest.date_from, manifest.date_to, lookup=self._term_id)
        if shard.n != manifest.n_papers or sha256_ids(shard.ids) != manifest.ids_sha256:
            raise SearchError(
                f"shard {field_id} {origin} {regime}: its {shard.n} members do not match the manifest "
                f"({manifest.n_papers} papers, ids_sha256 {manifest.ids_sha256[:12]}…); the cache at {self.folder} is stale "
                "or the archive is inconsistent — run 'rapgen verify'"
            )
        self._shards[key] = shard
        return shard

    def search(self, field_id: str, origin: date | str, regime: str, args: object) -> SearchResult:
        """Run one call on one shard; a malformed call gives an error result."""
        return self.shard(field_id, origin, regime).search(args, top_k=self.top_k, k1=self.k1, b=self.b)

    def search_variants(self, field_id: str, origin: date | str, regime: str, variants: Sequence[object]) -> list[SearchResult]:
        """Run several calls on one shard (see :meth:`Shard.search_variants`); each result is the one
        :meth:`search` gives for that call."""
        return self.shard(field_id, origin, regime).search_variants(variants, top_k=self.top_k, k1=self.k1, b=self.b)

    def paper_texts(self, ids) -> list[tuple[str, str]]:
        """(title, abstract) of each id, from one in-memory copy of papers.parquet (loaded on first use)."""
        if self._texts is None:
            rows = ledger_rows(self.archive, "SELECT arxiv_id, title, abstract FROM papers")
            self._texts = {r[0]: (r[1] or "", r[2] or "") for r in rows}
        return [self._texts.get(i, ("", "")) for i in ids]

    def papers(self, ids: list[str]) -> list[dict]:
        """Title and abstract of the given papers, in the given order."""
        if not ids:
            return []
        rows = ledger_rows(self.archive, "SELECT arxiv_id, first_submitted, title, abstract FROM papers WHERE list_contains(?, arxiv_id)",
                           [list(ids)])
        found = {r[0]: r for r in rows}
        return [
            {"arxiv_id": i, "first_submitted": found[i][1].isoformat(), "title": found[i][2], "abstract": found[i][3]}
            for i in ids
            if i in found
        ]
