"""Plotly figures as plain JSON-able dicts (no graph_objects: building dicts is ~50×
faster and byte-stable), and the one way a figure is embedded in a page.

Axis titles and hover words are catalogue labels (:func:`rapgen.site.i18n.t`), so a
figure is written in the language being rendered.

A figure goes into a ``<div class="rap-chart" data-figure="…">``; ``charts.js``
renders every such div on Material's ``document$`` (first load and each instant
navigation) — the pattern measured to work in notes/site-stack.md, strategy (d).
"""

from __future__ import annotations

import html
import json
from typing import Any, Sequence

import numpy as np

from rapgen.archive import CLOSED_FORECAST, EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST, FIXED_STATE
from rapgen.scores import BASELINE_CONDITION, SPEARMAN
from rapgen.site.escape import chart_text, html_text
from rapgen.site.filters import chart_value
from rapgen.site.i18n import t

# Colour-blind-safe palette (Okabe–Ito), one colour per direction / condition.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
CONDITION_COLOURS = {
    CLOSED_FORECAST: "#0072B2", FIXED_FORECAST: "#E69F00", FIXED_STATE: "#F0E442", EXPANDING_FORECAST: "#009E73",
    EXPANDING_STATE: "#56B4E9", BASELINE_CONDITION: "#999999",
}
_FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}


def _layout(**extra: Any) -> dict:
    # No plotly template at all: the smallest JSON (notes/site-stack.md, "template cost").
    layout = {
        "font": _FONT,
        "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "legend": {"orientation": "h", "y": -0.2},
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def embed(figure: dict, height: int = 360, title: str = "") -> str:
    """The HTML of one chart: a div carrying the figure JSON in an attribute."""
    spec = json.dumps(figure, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    # role="figure", not "img": plotly's mode bar holds buttons, and an img has no
    # interactive children (axe: nested-interactive). The text alternative is the
    # data table each chart sits next to.
    label = f' role="figure" aria-label="{html_text(title)}"' if title else ""
    # Single-quoted attribute: JSON's many double quotes stay unescaped (about a third
    # smaller than quote-escaping them); only &, <, > and ' need entities.
    attr = html.escape(spec, quote=False).replace("'", "&#x27;")
    return f'<div class="rap-chart" style="height:{int(height)}px"{label} data-figure=\'{attr}\'></div>'


def forest(rows: Sequence[dict], *, x_title: str | None = None, height_per_row: int = 26) -> tuple[dict, int]:
    """A forest plot: one horizontal line per (label, series) with its interval.

    ``rows``: dicts with ``label`` (y category), ``series`` (legend group, e.g. a
    condition), ``estimate``, ``ci_low``, ``ci_high``. Rows keep their given order,
    top to bottom; series are offset vertically within a label.
    """
    labels: list[str] = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    series: list[str] = []
    for r in rows:
        if r["series"] not in series:
            series.append(r["series"])
    n = len(labels)
    step = 0.6 / max(len(series), 1)
    traces = []
    for si, s in enumerate(series):
        xs, ys, lo, hi, text = [], [], [], [], []
        for r in rows:
            if r["series"] != s or chart_value(r["estimate"]) is None:
                continue
            y = (n - 1 - labels.index(r["label"])) + (len(series) - 1) / 2 * step - si * step
            est = chart_value(r["estimate"])
            xs.append(est)
            ys.append(round(y, 3))
            low, high = chart_value(r.get("ci_low")), chart_value(r.get("ci_high"))
            lo.append(None if low is None else chart_value(est - low))
            hi.append(None if high is None else chart_value(high - est))
            text.append(chart_text(r["label"]))
        traces.append({
            "type": "scatter", "mode": "markers", "name": chart_text(s), "x": xs, "y": ys, "text": text,
            "marker": {"color": CONDITION_COLOURS.get(s.split(" ")[0], PALETTE[si % len(PALETTE)]), "size": 7},
            "error_x": {"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 1.5, "width": 3},
            "hovertemplate": "%{text}<br>" + chart_text(s).replace("%", "&#37;") + ": %{x:.3f}<extra></extra>",
        })
    height = max(160, 70 + height_per_row * n)
    layout = _layout(
        xaxis={"title": {"text": t(f"metric.{SPEARMAN}") if x_title is None else x_title}, "zeroline": True, "zerolinecolor": "#bbb", "gridcolor": "#eee"},
        yaxis={"tickvals": list(range(n)), "ticktext": [chart_text(label) for label in reversed(labels)], "automargin": True,
               "range": [-0.6, n - 0.4], "gridcolor": "#f4f4f4"},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        margin={"l": 10, "r": 20, "t": 30, "b": 40},
    )
    return {"data": traces, "layout": layout}, height


def stacked_shares(windows: Sequence[str], shares: dict[str, list[float | None]], names: dict[str, str]) -> dict:
    """Stacked area of realised direction shares over windows (x = window start)."""
    traces = []
    for i, slot in enumerate(sorted(shares)):
        traces.append({
            "type": "scatter", "mode": "lines", "stackgroup": "one", "name": chart_text(f"{slot} {names.get(slot, '')}".strip()),
            "x": list(windows), "y": [chart_value(v) for v in shares[slot]],
            "line": {"width": 0.5, "color": PALETTE[i % len(PALETTE)]},
            "hovertemplate": slot + ": %{y:.1%}<extra></extra>",
        })
    return {"data": traces, "layout": _layout(
        xaxis={"title": {"text": t("plot.window_start")}, "type": "category"},
        yaxis={"title": {"text": t("plot.share")}, "range": [0, 1], "tickformat": ".0%"},
        legend={"orientation": "v", "x": 1.02, "y": 1, "traceorder": "reversed", "font": {"size": 11}},
        margin={"l": 60, "r": 10, "t": 20, "b": 60},
        hovermode="x unified",
    )}


def ewma_vs_realised(points: Sequence[dict]) -> dict:
    """Scatter of EWMA forecast share (y) against realised share (x), one point per
    (origin, direction), coloured by direction, with the line y = x."""
    traces = [{"type": "scatter", "mode": "lines", "x": [0, 1], "y": [0, 1], "name": "y = x",
               "line": {"color": "#bbb", "dash": "dot", "width": 1}, "hoverinfo": "skip", "showlegend": False}]
    slots = sorted({p["slot"] for p in points})
    top = max([p["realised"] for p in points] + [p["ewma"] for p in points] + [0.05])
    top = chart_value(min(1.0, top * 1.1))
    traces[0]["x"] = traces[0]["y"] = [0, top]
    for i, slot in enumerate(slots):
        sel = [p for p in points if p["slot"] == slot]
        traces.append({
            "type": "scatter", "mode": "markers", "name": slot,
            "x": [chart_value(p["realised"]) for p in sel], "y": [chart_value(p["ewma"]) for p in sel],
            "text": [p["origin"] for p in sel], "marker": {"color": PALETTE[i % len(PALETTE)], "size": 7},
            "hovertemplate": t("plot.ewma_hover", direction=slot) + "<extra></extra>",
        })
    return {"data": traces, "layout": _layout(
        xaxis={"title": {"text": t("plot.realised_share")}, "range": [0, top], "tickformat": ".0%", "gridcolor": "#eee"},
        yaxis={"title": {"text": t("plot.ewma_share")}, "range": [0, top], "tickformat": ".0%", "gridcolor": "#eee"},
        legend={"orientation": "v", "x": 1.02, "y": 1},
        margin={"l": 60, "r": 10, "t": 20, "b": 50},
    )}


def lines(x: Sequence[str], series: dict[str, list[float | None]], *, y_title: str, dashed: Sequence[str] = ()) -> dict:
    """One line per series over categorical x (e.g. origins)."""
    traces = []
    for i, (name, ys) in enumerate(series.items()):
        colour = CONDITION_COLOURS.get(name.split(" ")[0], PALETTE[i % len(PALETTE)])
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": name, "x": list(x), "y": [chart_value(v) for v in ys],
            "line": {"color": colour, "dash": "dash" if name in dashed else "solid"},
            "hovertemplate": name + ": %{y:.3f}<extra></extra>",
        })
    return {"data": traces, "layout": _layout(
        xaxis={"type": "category"},
        yaxis={"title": {"text": y_title}, "gridcolor": "#eee", "zeroline": True, "zerolinecolor": "#bbb"},
        legend={"orientation": "h", "y": -0.15},
        hovermode="x unified",
    )}


def bars(labels: Sequence[str], values: Sequence[float | None], *, y_title: str) -> dict:
    return {"data": [{"type": "bar", "x": [chart_text(label) for label in labels], "y": [chart_value(v) for v in values],
                      "marker": {"color": PALETTE[0]}, "hovertemplate": "%{x}: %{y:.3f}<extra></extra>"}],
            "layout": _layout(xaxis={"type": "category", "automargin": True},
                              yaxis={"title": {"text": y_title}, "gridcolor": "#eee"}, showlegend=False)}


HISTOGRAM_BINS = 40


def histogram(values: Sequence[float], *, x_title: str, bins: int = HISTOGRAM_BINS) -> dict:
    """Distribution of per-episode values, binned here (equal-width bins over the values'
    range, as ``numpy.histogram``): the page carries ``bins`` counts, not every value."""
    counts, edges = np.histogram(np.asarray(values, dtype=np.float64), bins=bins)
    centres = [chart_value((a + b) / 2) for a, b in zip(edges[:-1], edges[1:])]
    width = chart_value(edges[1] - edges[0])
    return {"data": [{"type": "bar", "x": centres, "y": [int(c) for c in counts], "width": width, "marker": {"color": PALETTE[0]},
                      "hovertemplate": t("plot.bin_hover", half=chart_value(width / 2)) + "<extra></extra>"}],
            "layout": _layout(xaxis={"title": {"text": x_title}, "gridcolor": "#eee"},
                              yaxis={"title": {"text": t("plot.episodes")}, "gridcolor": "#eee"}, showlegend=False, bargap=0.05)}
