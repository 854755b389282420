"""The models' JSONL files parsed in a forked child process, beside the parent's own checks.

Parsing the model files is pure Python, so a thread cannot run it beside the rest (the GIL
lets one run at a time), and on a full archive it is the largest part of verify's CPU.
:class:`ParseAhead` forks a child as soon as the bytes have verified. The child reads the
benchmark documents and the release history the way the checks will, works out which parser
and which arguments each model file will be read with, parses the files in the order the
checks read them and sends each file's ``(records, findings)`` back, pickled, as soon as it
has them. A check takes a file's result only when the child used the very parser and
arguments the check would (:func:`rapgen.archive.parse_ahead.parse_model_file`); otherwise, or when there is no child
(no ``fork``, or the child failed), it parses the file itself. The parsers are pure functions
of the bytes and those arguments, so either way the check gets the same records and the same
findings, in the same place. The child makes no finding and decides nothing.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import signal
import struct
import sys
import threading
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from rapgen.archive import parse
from rapgen.archive.history.check import first_release
from rapgen.archive.history.load import load_history
from rapgen.archive.layout import (
    FIELDS_JSONL, LEDGER_JSON, MODEL_JSON, MODELS_DIR, ORACLE_JSONL, ORACLE_TRACES_JSONL, ORIGIN_FILE_PATTERN, ORIGINS_JSON,
    PREDICTIONS_JSONL, REPLAYS_JSONL, TRACES_JSONL, model_file,
)
from rapgen.archive.parse_ahead import PARSERS

_ORIGIN_FILE = re.compile(ORIGIN_FILE_PATTERN)
_HEADER = struct.Struct("<QQ")  # the lengths of a message's two pickles: (path, parser, arguments), then the result
ENABLED = True  # False: every check parses its own files (a test counting the parsers' calls in this process)


class ParseAhead:
    """The forked child and the thread that reads what it sends (see the module's note)."""

    def __init__(self, root: str | Path, documents: Mapping[str, bytes], verified: set[str], sums: Mapping[str, str]):
        self._pid = 0
        self._plan: dict[str, tuple] = {}
        self._got: dict[str, tuple[tuple, bytes]] = {}
        self._planned = False
        self._ended = False
        self._ready = threading.Condition()
        self._reader: threading.Thread | None = None
        if not ENABLED or not sys.platform.startswith("linux") or not hasattr(os, "fork") or FIELDS_JSONL not in documents:
            return
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(r)
                gc.disable()  # a short life of acyclic records
                _child(w, Path(root), documents, verified, sums)
                code = 0
            except BaseException:  # noqa: BLE001 - the parent parses whatever did not arrive
                pass
            finally:
                os._exit(code)
        os.close(w)
        self._pid = pid
        self._reader = threading.Thread(target=self._read, args=(os.fdopen(r, "rb"),), daemon=True)
        self._reader.start()

    def _read(self, pipe) -> None:
        try:
            with pipe:
                first = True
                while True:
                    header = pipe.read(_HEADER.size)
                    if len(header) < _HEADER.size:
                        break
                    n_key, n_value = _HEADER.unpack(header)
                    key, value = pipe.read(n_key), pipe.read(n_value)
                    if len(key) < n_key or len(value) < n_value:
                        break
                    with self._ready:
                        if first:  # the plan: path -> (parser, arguments) of every file to come
                            self._plan = pickle.loads(value)
                            self._planned = True
                            first = False
                        else:
                            path, name, args = pickle.loads(key)
                            self._got[path] = ((name, args), value)
                        self._ready.notify_all()
        except Exception:  # noqa: BLE001 - a broken pipe ends the results; the checks parse the rest
            pass
        finally:
            with self._ready:
                self._ended = True
                self._ready.notify_all()

    def take(self, path: str, name: str, args: tuple) -> tuple | None:
        """The child's ``(records, findings)`` of ``path`` when it parsed it with ``name`` and ``args``,
        waiting for it if it is on its way; None when it did not or will not."""
        if self._reader is None:
            return None
        with self._ready:
            while not self._planned and not self._ended:
                self._ready.wait()
            if self._plan.get(path) != (name, args):
                return None
            while path not in self._got and not self._ended:
                self._ready.wait()
            found = self._got.pop(path, None)
        if found is None or found[0] != (name, args):
            return None
        return pickle.loads(found[1])

    def close(self) -> None:
        """Stop the child if it is still at work, and reap it."""
        if self._pid:
            with self._ready:
                ended = self._ended
            if not ended:
                try:
                    os.kill(self._pid, signal.SIGKILL)
                except OSError:
                    pass
            if self._reader is not None:
                self._reader.join()
            try:
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            self._pid = 0
        self._got.clear()


def _child(fd: int, root: Path, documents: Mapping[str, bytes], verified: set[str], sums: Mapping[str, str]) -> None:
    with os.fdopen(fd, "wb") as pipe:
        def send(key: bytes, value: bytes) -> None:
            pipe.write(_HEADER.pack(len(key), len(value)))
            pipe.write(key)
            pipe.write(value)
            pipe.flush()

        jobs = plan(root, documents, verified, sums)
        send(b"", pickle.dumps({path: (name, args) for path, name, args in jobs}, protocol=pickle.HIGHEST_PROTOCOL))
        for path, name, args in jobs:
            result = PARSERS[name](path, documents[path], *args)
            send(pickle.dumps((path, name, args), protocol=pickle.HIGHEST_PROTOCOL),
                 pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


def plan(root: Path, documents: Mapping[str, bytes], verified: set[str], sums: Mapping[str, str]) -> list[tuple[str, str, tuple]]:
    """``(path, parser, arguments)`` of every verified model file, in the order the checks read them,
    each with the arguments the checks will pass when the documents they come from are sound."""
    fields, problems = parse.parse_fields(FIELDS_JSONL, documents[FIELDS_JSONL])
    origins, _ = parse.parse_origins(ORIGINS_JSON, documents[ORIGINS_JSON]) if ORIGINS_JSON in documents else (None, [])
    ledger, _ = parse.parse_ledger(LEDGER_JSON, documents[LEDGER_JSON]) if LEDGER_JSON in documents else (None, [])
    if problems or origins is None or ledger is None:
        return []
    field_ids = tuple(f.field_id for f in fields)
    max_calls = int(ledger["search"]["max_calls"])
    base = tuple(origins.origins)
    jobs: list[tuple[str, str, tuple]] = []

    def add(path: str, name: str, *args: Any) -> None:
        if path in documents and path in verified:
            jobs.append((path, name, args))

    def coverage(model_id: str) -> bool:
        return not parse.names_panel(documents.get(model_file(model_id, MODEL_JSON)))

    prefix = MODELS_DIR + "/"
    models = sorted({p[len(prefix):].split("/", 1)[0] for p in sums if p.startswith(prefix) and "/" in p[len(prefix):]})
    for model_id in models:
        add(model_file(model_id, PREDICTIONS_JSONL), "predictions", field_ids, base, coverage(model_id))
        add(model_file(model_id, TRACES_JSONL), "traces", field_ids, base, max_calls)
    for path in sorted(p for p in sums if _ORIGIN_FILE.match(p)):
        model_id, origin, kind = _ORIGIN_FILE.match(path).groups()
        if kind == "traces":
            add(path, "traces", field_ids, (date.fromisoformat(origin),), max_calls)
        else:
            add(path, "predictions", field_ids, (date.fromisoformat(origin),), coverage(model_id))
    history = load_history(root, verified, with_ledger=False, sums=sums, documents=documents, origins=origins,
                           field_ids=list(field_ids))
    # The origins an intervention file is judged against (format2.intervention_facts): those of the
    # release that first listed it, else the latest release's resolved origins, else origins.json's.
    latest = history.latest
    scored = base if latest is None else tuple(sorted(latest.resolved_origins))
    for model_id in models:
        for name in (REPLAYS_JSONL, ORACLE_JSONL, ORACLE_TRACES_JSONL):
            path = model_file(model_id, name)
            k = first_release(history.input, path)
            judged = tuple(sorted(history.input.records[k].resolved_origins)) if k in history.input.records else scored
            add(path, name, field_ids, judged, *((max_calls,) if name == ORACLE_TRACES_JSONL else ()))
    return jobs
