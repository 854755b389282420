"""Calendar-month arithmetic for forecast windows (ARCHIVE.md, origins.json).

All window edges are first-of-month dates; windows are half-open [start, end).
"""

from __future__ import annotations

from datetime import date


def add_months(d: date, months: int) -> date:
    """``d`` shifted by whole calendar months; ``d`` must be the first of a month."""
    if d.day != 1:
        raise ValueError(f"{d.isoformat()} is not the first of a month")
    index = d.year * 12 + (d.month - 1) + months
    return date(index // 12, index % 12 + 1, 1)


def target_window(origin: date, window_months: int) -> tuple[date, date]:
    """[T, T + window) — the window a forecast is about."""
    return origin, add_months(origin, window_months)


def recent_window(origin: date, window_months: int) -> tuple[date, date]:
    """[T - window, T) — the window a State answer describes."""
    return add_months(origin, -window_months), origin


def history_windows(origin: date, window_months: int, n: int) -> list[tuple[date, date]]:
    """The ``n`` consecutive windows ending at T, oldest first (the last is the recent window)."""
    return [
        (add_months(origin, -(n - i) * window_months), add_months(origin, -(n - i - 1) * window_months))
        for i in range(n)
    ]


def parse_date(value: object) -> date:
    """Strict ``YYYY-MM-DD``; raises ValueError otherwise."""
    if not isinstance(value, str) or len(value) != 10:
        raise ValueError(f"expected a YYYY-MM-DD date, found {value!r}")
    return date.fromisoformat(value)
