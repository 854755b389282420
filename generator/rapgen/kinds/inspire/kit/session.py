"""The ``search_papers`` tool as a harness sees it: one authority on a unit's calls.

An :class:`InspireSession` counts each unit's calls against the ledger's
``max_calls``, runs valid calls on the instance's shard and records every
counted call as a ``traces.jsonl`` line (``instance_id`` for the unit), so what
it records is what replay re-executes. The rules are RAP's (docs/submitting.md),
and the recorded values come from the kit's own rule (:func:`rapgen.kit.recorded_call`):

- a malformed call is an error result, counts and is recorded with
  ``total_hits`` 0 and no ids — as given when a trace line can hold its
  arguments (only the four keys, string ``query`` and ``sort``, string-or-null
  dates, UTF-8 text), else with ``query`` "" (which replays to the same empty
  answer), ``sort`` as given if a string, each date as given if a string;
- a call past the cap is refused: not run, not counted, not recorded, so a
  unit's trace is gapless (0 … n−1) and never longer than the cap;
- ``on_record(line)`` runs, under the session's lock, before a call is
  counted; if it raises, the call is not counted.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from rapgen.errors import SearchError
from rapgen.kit import CallLog, SearchOutcome, ToolError, recorded_call

from rapgen.kinds.inspire.archive import CorpusPaper, Instance, Ledger, layout
from rapgen.kinds.inspire.search import SearchFn, trace_line


def recorded_arguments(arguments: Any) -> tuple[dict, bool]:
    """The four values a trace line records for ``arguments``, and whether they are the call as given
    (the kit's rule, :func:`rapgen.kit.recorded_call`)."""
    return recorded_call(arguments)


class InspireSession(CallLog):
    """Call counting, execution and trace recording for the units of one Inspire release.

    ``search``: the instances' shards (an ``InspireBackend`` or any :data:`SearchFn`);
    ``corpus`` gives the papers' text the tool returns; counting and recording as :class:`~rapgen.kit.CallLog`."""

    def __init__(self, search: SearchFn, instances: Sequence[Instance], corpus: Mapping[str, CorpusPaper], ledger: Ledger,
                 on_record: Callable[[dict], None] | None = None, *, keep_records: bool = True) -> None:
        self.search = search
        self.instances = {i.instance_id: i for i in instances}
        self.corpus = corpus
        self.max_calls, self.top_k = ledger.max_calls, ledger.top_k
        super().__init__(on_record, keep_records)

    @classmethod
    def of_release(cls, release, backend=None, **kwargs) -> InspireSession:
        """A session over an ``InspireRelease`` (its backend from the search cache unless given)."""
        if backend is None:
            from rapgen.kinds.inspire.search import release_backend

            backend = release_backend(release)
        return cls(backend, release.instances, release.corpus, release.ledger, **kwargs)

    def unit(self, instance_id: Any, condition: Any) -> tuple[str, str]:
        """The unit key, or :class:`ToolError` naming what is wrong."""
        if not isinstance(instance_id, str) or instance_id not in self.instances:
            raise ToolError(f"instance_id {str(instance_id)[:60]!r} is not an instance of this archive")
        if condition not in layout.CONDITIONS:
            raise ToolError(f"condition {str(condition)[:60]!r} is not an Inspire condition ({', '.join(layout.CONDITIONS)})")
        return instance_id, condition

    def calls_made(self, instance_id: str, condition: str) -> int:
        return self.counts[(instance_id, condition)]

    def call(self, instance_id: Any, condition: Any, arguments: Any) -> SearchOutcome:
        """One ``search_papers`` call of a unit; raises ToolError only for an unknown unit."""
        key = self.unit(instance_id, condition)
        with self._lock:
            made = self.counts[key]
            if made >= self.max_calls:
                return SearchOutcome(None, 0, (), f"the call cap of {self.max_calls} search_papers calls is reached; "
                                                  "call submit_ranking now", 0)
            left = self.max_calls - made - 1
            args, faithful = recorded_arguments(arguments)
            result = self.search(key[0], args)  # an error result for a malformed call, never an exception
            if not faithful or result.error is not None:
                reason = result.error if faithful else "the arguments must be an object with query, sort, date_from, date_to"
                index = self._record(key, args, None)
                return SearchOutcome(index, 0, (), f"malformed call: {reason}", left)
            papers = tuple(self._paper(i, key[0]) for i in result.ids[: self.top_k])
            index = self._record(key, args, result)
            return SearchOutcome(index, int(result.total_hits), papers, None, left)

    def _paper(self, arxiv_id: str, instance_id: str) -> dict:
        paper, cutoff = self.corpus.get(arxiv_id), self.instances[instance_id].cutoff
        if paper is None or paper.first_submitted >= cutoff:
            raise SearchError(f"the backend returned {arxiv_id}, which is not a corpus paper before {cutoff}; refusing to record it")
        return {"arxiv_id": arxiv_id, "first_submitted": paper.first_submitted.isoformat(), "title": paper.title,
                "abstract": paper.abstract}

    def _record(self, key: tuple[str, str], args: dict, result) -> int:
        """Count the call and record its line (a malformed call: 0 hits, no ids)."""
        return self._count(key, lambda index: trace_line(key[0], key[1], index, args, result if result is not None else _EMPTY))


class _Empty:
    total_hits = 0
    ids: tuple[str, ...] = ()
    error = None


_EMPTY = _Empty()
