"""Inspire's calendar rule: the same day m months away, clamped to the month's end."""

from __future__ import annotations

import calendar
from datetime import date


def shift_months(d: date, months: int) -> date:
    """``shift(d, m)`` of INSPIRE.md: the same day ``months`` calendar months away,
    clamped to the last day of that month (2025-05-31, -3 -> 2025-02-28)."""
    index = d.year * 12 + (d.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def cutoff_of(first_submitted: date, cutoff_months: int = 3) -> date:
    """An instance's cutoff D = shift(t_P, -cutoff_months)."""
    return shift_months(first_submitted, -cutoff_months)


def recency_floor(first_submitted: date, recency_months: int = 48) -> date:
    """The oldest date a graded antecedent may have: shift(t_P, -recency_months)."""
    return shift_months(first_submitted, -recency_months)
