"""The archive checks that query DuckDB, on a thread of their own beside the Python checks.

``rapgen.archive.invariants`` hands :class:`LedgerWorker` the checks that spend their time in
DuckDB (which releases the interpreter while it works); the findings each job makes are put back
where the job was submitted, so the report reads as if every check had run in turn.
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Callable
from typing import Any

from rapgen.archive.records import Finding


class Job:
    """One job of the ledger thread: where its findings go among the main thread's, then its value and findings."""

    def __init__(self, position: int):
        self.position = position
        self.value: Any = None
        self.findings: list[Finding] = []


class LedgerWorker:
    """The checks that query DuckDB (the papers and membership rules, the manifests rebuilt from the
    ledger, each model's returned papers) on a thread of their own, one after another in the order the
    checks reach them, on a checker of their own (its own connection and findings) sharing the parsed
    documents; DuckDB leaves the interpreter free while it works, so the model files' checks go on
    beside it. A job's findings are put back where the job was submitted among the main thread's
    findings (:meth:`finish`), so the findings and their order are those of running each check in turn;
    an error in a job is raised by :meth:`finish`, and the jobs after it do not run."""

    def __init__(self, checker: Any, *, threaded: bool = True):
        self._main = checker
        self._sub = copy.copy(checker)
        self._sub.findings, self._sub._con = [], None
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._submitted: list[Job] = []
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._work, name="rapgen-ledger-checks", daemon=True)
            self._thread.start()

    def submit(self, job: Callable[[Any], Any]) -> Job:
        """Run ``job(checker)`` on the thread; its findings take the place of the main thread's next one."""
        slot = Job(len(self._main.findings))
        if self._thread is None:  # in turn, on the main checker
            slot.value = job(self._main)
            slot.findings = self._main.findings[slot.position:]
            return slot
        self._submitted.append(slot)
        self._jobs.put((slot, job))
        return slot

    def _work(self) -> None:
        while (item := self._jobs.get()) is not None:
            slot, job = item
            if self._error is not None:
                continue
            start = len(self._sub.findings)
            try:
                slot.value = job(self._sub)
            except BaseException as exc:  # noqa: BLE001 - raised again by finish, on the main thread
                self._error = exc
            slot.findings = self._sub.findings[start:]

    def finish(self) -> None:
        """Wait for every job, close the thread's connection, and put the jobs' findings in their places,
        or raise a job's error (the one running the checks in turn would have met first)."""
        if self._thread is None:
            return
        self._jobs.put(None)
        self._thread.join()
        if self._sub._con is not None:
            self._sub._con.close()
            self._sub._con = None
        if self._error is not None:
            raise self._error
        for slot in reversed(self._submitted):  # later places first, so the earlier ones do not move
            self._main.findings[slot.position:slot.position] = slot.findings
