"""The Inspire pages' two figures, as plotly JSON for the engine's ``embed`` (drawn by the
local plotly.js through ``charts.js``; no CDN):

* :func:`funnel_figure` — the funnel's three stages (exposed gain ≥ selected gain ≥
  nDCG@10) as grouped bars with their intervals, one series per entry and condition;
* :func:`progress_figure` — the exposure curve G(p): the exposed gain after the first
  0 %, 10 %, … 100 % of each unit's calls, one line per entry and condition.

A series is ``{"name", "values": [row | None per stage or step]}`` with score-folder rows
(``estimate``, ``ci_low``, ``ci_high``); labels arrive in the page's language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rapgen.site import PALETTE, chart_text, chart_value, embed

_FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}


def _layout(x_title: str, y_title: str, **extra: Any) -> dict:
    return {"font": _FONT, "margin": {"l": 60, "r": 20, "t": 30, "b": 60}, "paper_bgcolor": "rgba(0,0,0,0)",
            "plot_bgcolor": "rgba(0,0,0,0)", "legend": {"orientation": "h", "y": -0.25}, "hovermode": "closest",
            "xaxis": {"title": {"text": chart_text(x_title)}, "type": "category"},
            "yaxis": {"title": {"text": chart_text(y_title)}, "range": [0, 1], "gridcolor": "#eee", "zeroline": True,
                      "zerolinecolor": "#bbb"}, **extra}


def _estimate(row: dict | None) -> float | None:
    return None if row is None else chart_value(row["estimate"])


def _errors(rows: Sequence[dict | None]) -> dict:
    """Asymmetric error bars from each row's interval (none where a row has no interval)."""
    plus, minus = [], []
    for r in rows:
        est = _estimate(r)
        if r is None or est is None or r["ci_low"] is None or r["ci_high"] is None:
            plus.append(None)
            minus.append(None)
            continue
        plus.append(chart_value(r["ci_high"] - r["estimate"]))
        minus.append(chart_value(r["estimate"] - r["ci_low"]))
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "thickness": 1.5, "width": 4,
            "color": "#333"}


def _hover(name: str, value_format: str) -> str:
    return chart_text(name).replace("%", "&#37;") + "<br>%{x}: %{y:" + value_format + "}<extra></extra>"


def funnel_figure(stages: Sequence[str], series: Sequence[dict], *, y_title: str, title: str) -> str:
    """Grouped bars: x = the three stages, one bar per series with its interval."""
    labels = [chart_text(s) for s in stages]
    data = [{"type": "bar", "name": chart_text(s["name"]), "x": labels, "y": [_estimate(r) for r in s["values"]],
             "error_y": _errors(s["values"]), "marker": {"color": PALETTE[i % len(PALETTE)]},
             "hovertemplate": _hover(s["name"], ".3f")}
            for i, s in enumerate(series)]
    figure = {"data": data, "layout": _layout("", y_title, barmode="group", bargap=0.25)}
    return embed(figure, height=340, title=title)


def progress_figure(steps: Sequence[str], series: Sequence[dict], *, x_title: str, y_title: str, title: str) -> str:
    """One line per series over the share of calls made."""
    data = [{"type": "scatter", "mode": "lines+markers", "name": chart_text(s["name"]), "x": list(steps),
             "y": [_estimate(r) for r in s["values"]], "line": {"color": PALETTE[i % len(PALETTE)]},
             "hovertemplate": _hover(s["name"], ".3f")}
            for i, s in enumerate(series)]
    return embed({"data": data, "layout": _layout(x_title, y_title)}, height=320, title=title)
