"""Jinja filters: the ONLY place in rapgen where numbers become text.

Every page shows numbers through these functions, so a change of precision or of
the missing-value mark happens here once. Missing values (None, NaN) render as
an em dash; sort keys put them last whichever way a column is sorted.
"""

from __future__ import annotations

import html

import math
import re
from datetime import date
from typing import Any

from rapgen.site.escape import code_text, html_text, md_text, title_text
from rapgen.site.i18n import t

yaml_str = title_text  # the front-matter title filter's former name

MISSING = "—"
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SCORE_DIGITS = 3
CHART_DIGITS = 4


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return False


def fmt_score(value: Any, digits: int = SCORE_DIGITS) -> str:
    """0.8123 -> '0.812'; missing -> '—'. A value that rounds to zero prints unsigned."""
    if is_missing(value):
        return MISSING
    text = f"{float(value):.{digits}f}"
    if float(text) == 0:
        text = f"{0.0:.{digits}f}"
    return text


def fmt_delta(value: Any, digits: int = SCORE_DIGITS) -> str:
    """A signed difference: '+0.012', '-0.030', '0.000'."""
    if is_missing(value):
        return MISSING
    text = fmt_score(value, digits)
    return text if text.startswith("-") or float(text) == 0 else "+" + text


def fmt_ci(low: Any, high: Any, digits: int = SCORE_DIGITS) -> str:
    """'[0.790, 0.834]'; empty when either end is missing."""
    if is_missing(low) or is_missing(high):
        return ""
    return f"[{fmt_score(low, digits)}, {fmt_score(high, digits)}]"


def fmt_pct(value: Any, digits: int = 1) -> str:
    if is_missing(value):
        return MISSING
    return f"{100 * float(value):.{digits}f}%"


def fmt_count(value: Any) -> str:
    if is_missing(value):
        return MISSING
    return f"{int(value):,}"


def fmt_bytes(value: Any) -> str:
    """Sizes in powers of 1024 with one decimal: '4.6 MiB'; bytes below 1 KiB exact."""
    if is_missing(value):
        return MISSING
    n = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def fmt_date(value: Any) -> str:
    if is_missing(value) or value == "":
        return MISSING
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    return text if _ISO_DATE.match(text) else md_text(text)


def fmt_number(value: Any) -> str:
    """Any value from a JSON document: ints with separators, floats to 3 places, rest as text."""
    if is_missing(value):
        return MISSING
    if isinstance(value, bool):
        return t("common.yes") if value else t("common.no")
    if isinstance(value, int):
        return fmt_count(value)
    if isinstance(value, float):
        return fmt_score(value) if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt_number(v) for v in value)
    return str(value)


def fmt_rank(rank: Any, tied: bool) -> str:
    """Average ranks from ranks.csv: '1', '2.5'; a tie is marked '=' ('=1.5')."""
    if is_missing(rank):
        return MISSING
    r = float(rank)
    text = str(int(r)) if r.is_integer() else f"{r:.1f}"
    return ("=" if tied else "") + text


def rank_title(cell: Any) -> str:
    """The tooltip of a ranked cell: 'rank' or 'tied rank', with P(first) for a model
    or the column a baseline's rank comes from."""
    kind = t("common.tied_rank") if cell.tied else t("common.rank")
    if cell.rank_among:
        return t("common.rank_among", kind=kind, among=cell.rank_among)
    return t("common.p_first", kind=kind, p=fmt_score(cell.p_first, 2)) if not is_missing(cell.p_first) else kind


def sort_key(value: Any, digits: int = 6) -> str:
    """A ``data-sort`` attribute for tablesort.number; missing sorts below everything.
    Trailing zeros are dropped (``67``, ``0.5``): the diagnostics page has thousands."""
    if is_missing(value):
        return "-1e9"
    text = f"{float(value):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def chart_value(value: Any, digits: int = CHART_DIGITS) -> float | None:
    """A number for figure JSON: rounded so charts stay small and byte-stable."""
    if is_missing(value):
        return None
    v = round(float(value), digits)
    return 0.0 if v == 0 else v


def data_attr(spec: str) -> str:
    """A JSON document for a single-quoted ``data-`` attribute: its strings were cleaned
    by the page builder; here ``&``, ``<``, ``>`` and ``'`` become entities (the
    attribute keeps JSON's double quotes unescaped, as plots.embed does)."""
    return html.escape(spec, quote=False).replace("'", "&#x27;")


FILTERS = {
    "data_attr": data_attr,
    "score": fmt_score,
    "delta": fmt_delta,
    "ci": fmt_ci,
    "pct": fmt_pct,
    "count": fmt_count,
    "bytes": fmt_bytes,
    "date": fmt_date,
    "number": fmt_number,
    "rank": fmt_rank,
    "rank_title": rank_title,
    "sortkey": sort_key,
    "md": md_text,
    "h": html_text,
    "yq": title_text,
    "code": code_text,
}
