"""Field ids and origins given by a user, checked against the archive before any search."""

from __future__ import annotations

from datetime import date

from rapgen.errors import UsageProblem
from rapgen.search.engine import parse_strict_date


def _listing(values: list[str], limit: int = 20) -> str:
    if len(values) <= limit:
        return ", ".join(values)
    return f"{', '.join(values[:limit])}, … ({len(values)} in all; see archive/benchmark/fields.jsonl)"


def resolve_unit(archive, field_id: str, origin: str | date) -> date:
    """Check a field id and origin given by a user (e.g. on the command line).

    Returns the origin as a date; raises :class:`UsageProblem` (exit 2) naming
    the value and the valid choices when either is not in ``archive``."""
    fields = sorted(archive.field_map)
    if field_id not in archive.field_map:
        raise UsageProblem(f"field {field_id!r} is not a field of this archive; choose from {_listing(fields)}")
    value = origin
    if isinstance(origin, str):
        try:
            value = parse_strict_date(origin)
        except ValueError:
            value = None
    if value not in archive.known_origins:
        raise UsageProblem(f"origin {str(origin)!r} is not an origin of this archive; choose from {archive.origin_listing()}")
    return value
