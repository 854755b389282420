"""The diagnostics page, rendered from the layout scores declares for diagnostics.json
(:data:`rapgen.scores.DIAGNOSTIC_SECTIONS`, read with :func:`rapgen.scores.diagnostic_tables`),
plus two sections that re-select rows of the score files (State versus Forecast, the
baseline family). The site infers no table from the file's shape."""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Callable

import pandas as pd

from rapgen.scores import PRIMARY, STATE_CONTRASTS, ColumnSpec, Interval, Section, Table, diagnostic_tables
from rapgen.site import plots
from rapgen.site.cells import METRIC_LABEL, Cell, DiagnosticSection, SimpleTable, count, num, records, split_order
from rapgen.site.i18n import t, term, term_title
from rapgen.site.inputs import ScoreOutputs

MAX_TABLE_ROWS = 200  # a longer declared table is cut here (its rows stay in diagnostics.json)
EPISODE_DOWNLOADS = "diagnostics"  # per-episode lists: downloads/diagnostics/<title>.csv, a histogram on the page
MAX_CHART_ROWS = 60
# Where the score-file sections sit among the declared ones (after this key).
SCORE_SECTIONS_AFTER = {"change_rich": "state_vs_forecast", "revision_alignment": "baseline_family"}


def _cell(value: Any) -> Any:
    if isinstance(value, Interval):
        est = num(value.estimate)
        return Cell(est, num(value.ci_low), num(value.ci_high), "" if est is not None else t("common.undefined"))
    return value


def _forest(table: SimpleTable, columns: tuple[ColumnSpec, ...]) -> str:
    """A forest plot of a table's interval columns: rows labelled by entry and condition
    (test split only) or, without those, by the first column."""
    keys = [c.key for c in columns]
    intervals = [i for i, c in enumerate(columns) if c.interval]
    labels = [keys.index(k) for k in ("entry", "condition") if k in keys] or [0]
    rows = table.rows
    if "split" in keys and keys.index("split") not in labels:
        rows = [r for r in rows if r[keys.index("split")] in (None, "test")]
    if not intervals or not 0 < len(rows) <= MAX_CHART_ROWS:
        return ""
    forest = [{"label": " · ".join(str(r[i]) for i in labels), "series": term(columns[i].label), "estimate": r[i].value,
               "ci_low": r[i].ci_low, "ci_high": r[i].ci_high} for i in intervals for r in rows]
    if not any(f["estimate"] is not None for f in forest):
        return ""
    fig, height = plots.forest(forest, x_title=t("dg.estimate_test" if len(rows) < len(table.rows) else "dg.estimate"))
    return plots.embed(fig, height, table.title)


def _histogram(table: SimpleTable) -> str:
    values = [r[-1] for r in table.rows if isinstance(r[-1], (int, float)) and not isinstance(r[-1], bool)]
    values = [v for v in (num(x) for x in values) if v is not None]
    if not values:
        return ""
    return plots.embed(plots.histogram(values, x_title=table.columns[-1]), 280, table.title)


def _csv_value(value: Any) -> str:
    if isinstance(value, Interval):
        value = value.estimate
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _episode_csv(table: Table) -> str:
    """A per-episode list as CSV: the declared columns' keys, the JSON values as written
    (shortest round-trip floats, empty for null, true/false), one line per episode."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.key for c in table.columns])
    writer.writerows([_csv_value(v) for v in row] for row in table.rows)
    return buffer.getvalue()


def _declared_table(table: Table) -> SimpleTable:
    # A column per counting policy (``estimates.<policy>``) is headed by the policy's name, as the files write it.
    labels = [c.label if c.key.startswith("estimates.") else term(c.label) for c in table.columns]
    out = SimpleTable(term_title(table.title), labels, [[_cell(v) for v in row] for row in table.rows])
    out.chart = _histogram(out) if table.per_episode else _forest(out, table.columns)
    if table.per_episode:  # per-episode detail is a download (1,390 rows at full scale), the page shows its histogram
        out.download = f"{EPISODE_DOWNLOADS}/{re.sub(r'[^a-z0-9]+', '-', table.title.lower()).strip('-')}.csv"
        out.download_rows, out.download_csv, out.rows = len(out.rows), _episode_csv(table), []
        return out
    if len(out.rows) > MAX_TABLE_ROWS:
        out.truncated = len(out.rows) - MAX_TABLE_ROWS
        out.rows = out.rows[:MAX_TABLE_ROWS]
    return out


def _declared(section: Section) -> DiagnosticSection:
    tables = [_declared_table(t) for t in section.tables]
    return DiagnosticSection(section.key.replace("_", "-"), term(section.title), term(section.intro), tables, section.present)


_SCORE_COLUMNS = (ColumnSpec("split", "split"), ColumnSpec("entry", "entry"), ColumnSpec("condition", "condition"),
                  ColumnSpec("estimate", "estimate", "ci_low", "ci_high"), ColumnSpec("n_fields", "n_fields"))


def _score_table(title: str, frame: pd.DataFrame, condition: str) -> SimpleTable:
    """Score-file rows (sorted by split, entry, ``condition``) as a declared-style table."""
    rows = sorted(records(frame), key=lambda r: (split_order(r["split"]), r["entry"], r[condition]))
    out = SimpleTable(title, [term(c.label if c.key != "condition" else condition) for c in _SCORE_COLUMNS],
                      [[r["split"], r["entry"], r[condition], _cell(Interval(r["estimate"], r["ci_low"], r["ci_high"])),
                        count(r["n_fields"])] for r in rows])
    columns = tuple(ColumnSpec(condition, condition) if c.key == "condition" else c for c in _SCORE_COLUMNS)
    out.chart = _forest(out, columns)
    return out


def _state_vs_forecast(out: ScoreOutputs) -> DiagnosticSection:
    c = out.contrasts
    sel = c[(c["policy"] == PRIMARY.policy) & (c["track"] == PRIMARY.track) & (c["contrast"].isin(STATE_CONTRASTS))
            & (c["metric"] == PRIMARY.metric)]
    tables = [_score_table(t("dg.state_table"), sel, "contrast")] if len(sel) else []
    return DiagnosticSection("state-vs-forecast", t("dg.state_title"), t("dg.state_intro"), tables, bool(tables))


def _baseline_family(out: ScoreOutputs) -> DiagnosticSection:
    lb = out.leaderboard
    base = lb[(lb["policy"] == PRIMARY.policy) & (lb["track"] == PRIMARY.track) & (lb["kind"] == "baseline")]
    tables = [_score_table(t("dg.baseline_table", metric=METRIC_LABEL[metric]), base[base["metric"] == metric], "condition")
              for metric in ("spearman", "tv") if (base["metric"] == metric).any()]
    return DiagnosticSection("baseline-family", t("dg.baseline_title"), t("dg.baseline_intro"), tables, bool(tables))


SCORE_SECTIONS: dict[str, Callable[[ScoreOutputs], DiagnosticSection]] = {
    "state_vs_forecast": _state_vs_forecast, "baseline_family": _baseline_family,
}


def build_diagnostics(out: ScoreOutputs) -> list[DiagnosticSection]:
    """Every section in page order; a section without data says it was not computed."""
    sections = []
    for section in diagnostic_tables(out.diagnostics or {}):
        sections.append(_declared(section))
        extra = SCORE_SECTIONS_AFTER.get(section.key)
        if extra:
            sections.append(SCORE_SECTIONS[extra](out))
    return sections


def diagnostics_meta(out: ScoreOutputs) -> dict:
    """Whether diagnostics.json is present, and the policy and track it was computed under."""
    if out.diagnostics is None:
        return {"present": False}
    return {"present": True, **{k: str(out.diagnostics[k]) for k in ("policy", "track") if isinstance(out.diagnostics.get(k), str)}}


