"""Cells of the report's leaderboard-in-context tables, shared by RAP's report and a kind's."""

from __future__ import annotations

from rapgen.text import escape_markdown as md_text

CONTEXT_NEIGHBOURS = 2  # rows shown above and below each of the submission's rows


def fmt_cell(value: str | float | None, digits: int = 3) -> str:
    """A number to ``digits`` places, an empty cell as a dash, anything else as escaped text."""
    if value in (None, ""):
        return "—"
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return md_text(str(value))


def context_rows(ranked: list[dict], model_id: str) -> list[int]:
    """The indices of ``ranked`` to show: each of the model's rows and its neighbours, in order."""
    mine = [i for i, r in enumerate(ranked) if r["entry"] == model_id]
    return sorted({j for i in mine for j in range(max(0, i - CONTEXT_NEIGHBOURS), min(len(ranked), i + CONTEXT_NEIGHBOURS + 1))})
