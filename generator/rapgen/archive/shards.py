"""The one shard rule (ARCHIVE.md, search/manifest_*.jsonl; SEARCH.md).

An episode's shard is the set of papers a Search call for that field and
origin ``T`` may return: the field's members first submitted in ``[T − w, T)``
(the *fixed* regime, ``w`` = ``window_months``) or before ``T`` (the
*expanding* regime). A shard's identity, ``ids_sha256``, is the SHA-256 of its
arXiv ids sorted by their UTF-8 bytes and joined by ``"\\n"`` (no trailing
newline; the empty shard hashes the empty string).
"""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Iterable

from rapgen.archive.calendar import add_months
from rapgen.archive.records import CONDITION_REGIME


def shard_start(origin: date, regime: str, window_months: int) -> date | None:
    """First day of an episode's shard: ``origin − window_months`` for the fixed
    regime, None (no lower bound) for the expanding one."""
    if regime == "fixed":
        return add_months(origin, -window_months)
    if regime == "expanding":
        return None
    raise ValueError(f"unknown regime {regime!r}")


def condition_shard_start(condition: str, origin: date, window_months: int) -> date | None:
    """``shard_start`` for a Search condition's regime (A1/A2 fixed, A3/A4 expanding)."""
    return shard_start(origin, CONDITION_REGIME[condition], window_months)


def in_shard(first_submitted: date, origin: date, date_from: date | None) -> bool:
    """True if a member paper dated ``first_submitted`` lies in the shard
    ``[date_from, origin)`` (``date_from`` None: everything before ``origin``)."""
    return first_submitted < origin and (date_from is None or first_submitted >= date_from)


def shard_ids_sha256(ids: Iterable[str]) -> str:
    """The shard's identity: ids sorted by bytes, joined by ``\\n``, SHA-256 hex."""
    ordered = sorted(ids, key=lambda s: s.encode("utf-8"))
    return hashlib.sha256("\n".join(ordered).encode("utf-8")).hexdigest()


def shard_members(members: Iterable[tuple[str, date]], origin: date, date_from: date | None) -> list[str]:
    """Ids of the ``(arxiv_id, first_submitted)`` members that lie in the shard, sorted by bytes."""
    return sorted((i for i, d in members if in_shard(d, origin, date_from)), key=lambda s: s.encode("utf-8"))
