"""Cells of the report's leaderboard-in-context tables, shared by RAP's report and a kind's."""

from __future__ import annotations

from typing import Callable, Sequence

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


def ranked_table(rows: list[dict], model_id: str, title: str, extra: Sequence[str],
                 cells: Callable[[dict], Sequence[str]]) -> tuple[list[str], bool]:
    """The rows with an estimate, best first, around the model's own (in bold): ``title``, then the table of
    rank, entry, condition, estimate and interval and the ``extra`` columns ``cells`` fills; elided runs
    show as one ``…`` row. Returns the lines (none when no row of the model is ranked) and whether any is."""
    ranked = [r for r in rows if r.get("estimate") not in (None, "")]
    ranked.sort(key=lambda r: (-float(r["estimate"]), r["entry"], r.get("condition", "")))
    keep = context_rows(ranked, model_id)
    if not keep:
        return [], False
    width = 5 + len(extra)
    out = [title, "", "| rank | entry | condition | estimate | 95% interval | " + " | ".join(extra) + " |",
           "| ---: | --- | --- | ---: | --- |" + " ---: |" * len(extra)]
    previous = -1
    for j in keep:
        if j != previous + 1:
            out.append("| … " + "| " * (width - 1) + "|")
        r = ranked[j]
        bold = "**" if r["entry"] == model_id else ""
        interval = f"[{fmt_cell(r.get('ci_low'))}, {fmt_cell(r.get('ci_high'))}]" if r.get("ci_low") not in (None, "") else "—"
        out.append(f"| {j + 1} | {bold}{md_text(r['entry'])}{bold} | {md_text(r.get('condition') or '—')} | {bold}{fmt_cell(r['estimate'])}{bold} "
                   f"| {interval} | " + " | ".join(cells(r)) + " |")
        previous = j
    out.append("")
    return out, True
