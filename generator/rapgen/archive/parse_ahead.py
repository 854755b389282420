"""The parsers of the models' JSONL files, by name, and :func:`parse_model_file`, which takes a file's
result from a child process that parsed it ahead (:mod:`rapgen.archive.parse_child`) when the child
used the very parser and arguments the check would pass, and parses the file here otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rapgen.archive import interventions, parse
from rapgen.archive.layout import ORACLE_JSONL, ORACLE_TRACES_JSONL, REPLAYS_JSONL

# Parser name -> the parser, called as parser(path, data, *arguments) and looked up when called.
PARSERS: dict[str, Callable[..., tuple]] = {
    "predictions": lambda path, data, field_ids, origins, coverage: parse.parse_predictions(path, data, field_ids, origins,
                                                                                            coverage=coverage),
    "traces": lambda *args: parse.parse_traces(*args),
    REPLAYS_JSONL: lambda *args: interventions.parse_replays(*args),
    ORACLE_JSONL: lambda *args: interventions.parse_oracle(*args),
    ORACLE_TRACES_JSONL: lambda *args: interventions.parse_oracle_traces(*args),
}


def parse_model_file(ahead: Any, path: str, data: bytes, name: str, *args: Any) -> tuple:
    """``PARSERS[name](path, data, *args)``: the child's result when it parsed ``path`` with these
    arguments, else parsed here."""
    args = tuple(tuple(a) if isinstance(a, (list, tuple)) else a for a in args)
    found = ahead.take(path, name, args) if ahead is not None else None
    return found if found is not None else PARSERS[name](path, data, *args)
