"""The Search executor of the submitter's kit (see session.Executor): one call on a unit's frozen shard."""

from __future__ import annotations

from pathlib import Path

from rapgen.search import Backend


def search_executor(archive, cache_dir: Path | None = None):
    """A function executing one Search call on the frozen shard of a unit (see session.Executor)."""
    backend = Backend(archive, cache_dir=cache_dir)

    def execute(field_id, origin, regime, query, sort, date_from, date_to):
        args = {"query": query, "sort": sort,
                "date_from": date_from.isoformat() if date_from else None,
                "date_to": date_to.isoformat() if date_to else None}
        result = backend.search(field_id, origin, regime, args)
        if result.error is not None:
            return 0, [], result.error
        papers = {p["arxiv_id"]: p for p in backend.papers(list(result.ids))}
        return result.total_hits, [papers[i] for i in result.ids], None

    return execute


__all__ = ["search_executor"]
