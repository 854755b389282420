"""The report's middle for a kind checked through its ``ReviewSpec``: the leaderboard in context and
the kind's tables (coverage, accounting, preview).

The leaderboard rows are leaderboard.csv's (KINDS.md §4 columns), the headline cell the kind's
``primary``; every text, a table's cells included, is escaped as in :mod:`.report`.
"""

from __future__ import annotations

from rapgen.submit.review.cells import fmt_cell as _fmt, ranked_table
from rapgen.submit.review.result import CheckResult
from rapgen.text import escape_markdown as md_text


def kind_sections(result: CheckResult) -> list[str]:
    out = _leaderboard(result)
    for table in result.tables:
        out += _table(table)
    return out


def _cell_text(cell: dict) -> str:
    return ", ".join(f"{md_text(str(v))}" for k, v in cell.items() if k not in ("metric", "free")) + f", {md_text(str(cell.get('metric', '')))}"


def _leaderboard(result: CheckResult) -> list[str]:
    if not result.headline:
        return []
    rows = result.leaderboard
    title = f"### Leaderboard in context ({_cell_text(result.headline)})"
    if not any(r.get("entry") == result.model_id for r in rows):
        return [title, "", f"No headline rows for {md_text(result.model_id)} were produced.", ""]
    out = [title, ""]
    free = result.headline.get("free", [])  # the kind's axes the headline leaves open (e.g. the judge): one table per value
    groups = sorted({(r.get("split", ""), *(r.get(a, "") for a in free)) for r in rows})
    for group in groups:
        label = ", ".join(f"{a} {md_text(v)}" for a, v in zip(free, group[1:]))
        chosen = [r for r in rows if (r.get("split", ""), *(r.get(a, "") for a in free)) == group]
        out += _split(result, chosen, group[0], label)
    return out


def _split(result: CheckResult, rows: list[dict], split: str, label: str = "") -> list[str]:
    title = f"**{md_text(split)}** split" + (f", {label}" if label else "")
    out, _ = ranked_table(rows, result.model_id, title, ("CI rank", "P(first)", "valid / items"), lambda r: (
        _fmt(r.get("rank"), 0), _fmt(r.get("p_first")), f"{_fmt(r.get('n_valid'), 0)} / {_fmt(r.get('n_items'), 0)}"))
    undefined = [r for r in rows if r["entry"] == result.model_id and r.get("estimate") in (None, "")]
    if undefined:
        out += [f"Undefined on the **{md_text(split)}** split for {', '.join(sorted(md_text(r.get('condition') or '—') for r in undefined))}.", ""]
    return out


def _table(table) -> list[str]:
    if not table.rows:
        return []
    out = [f"### {md_text(table.title)}", "", "| " + " | ".join(md_text(c) for c in table.columns) + " |",
           "| " + " | ".join("---:" if _numeric(table, k) else "---" for k in range(len(table.columns))) + " |"]
    for row in table.rows:
        out.append("| " + " | ".join(_value(v) for v in row) + " |")
    out.append("")
    if table.note:
        out += [md_text(table.note), ""]
    return out


def _numeric(table, k: int) -> bool:
    return all(isinstance(row[k], (int, float)) and not isinstance(row[k], bool) for row in table.rows)


def _value(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return _fmt(v)
    return md_text(str(v))
