"""The Search side of a benchmark kind (KINDS.md §7): :class:`SearchSpec`.

A kind with a Search tool names the corpus files the index is built from, how papers
group into shards, the manifest that lists each unit's shard, the unit key and the
tools a harness is offered. RAP's Search is the one the code has today (groups =
fields from ``assignments.parquet``; a unit's shard is its manifest row); making the
backend read this declaration is a later phase, so for now it documents the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SearchSpec:
    corpus_files: tuple[str, ...]
    groups_sql: str
    manifest: tuple[str, ...]
    unit_key: tuple[str, ...]
    shard_of: Callable[[Any], tuple[str, Any, Any]] = field(repr=False, compare=False)  # unit -> (group, date_from, date_to)
    tools: tuple[str, ...] = ()
