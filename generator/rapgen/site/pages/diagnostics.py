"""The diagnostics page, rendered from the layout scores declares for diagnostics.json
(:data:`rapgen.scores.DIAGNOSTIC_SECTIONS`, read with :func:`rapgen.scores.diagnostic_tables`),
plus two sections that re-select rows of the score files (State versus Forecast, the
baseline family). The site infers no table from the file's shape."""

from __future__ import annotations

import csv
import io
import re
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import TEST_SPLIT
from rapgen.scores import BASELINE_CONDITION, PRIMARY, SPEARMAN, STATE_CONTRASTS, TV, ColumnSpec, Interval, Section, Table, diagnostic_tables
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
        rows = [r for r in rows if r[keys.index("split")] in (None, TEST_SPLIT)]
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
    return DiagnosticSection(section.key.replace("_", "-"), term(section.spec.title), term(section.spec.intro), tables, section.present)


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


def _clustered(out: ScoreOutputs, base: pd.DataFrame) -> pd.DataFrame:
    """Leaderboard rows with their field-clustered bounds as ``fc_low``/``fc_high`` (field_clustered.csv)."""
    fc = out.field_clustered
    keys = ["track", "split", "policy", "entry", "condition", "metric"]
    if fc is None or not len(base):
        return base.assign(fc_low=None, fc_high=None)
    bounds = fc[fc["table"] == "leaderboard"][keys + ["ci_low", "ci_high"]].rename(columns={"ci_low": "fc_low", "ci_high": "fc_high"})
    return base.merge(bounds, on=keys, how="left")


def _family_table(title: str, frame: pd.DataFrame) -> SimpleTable:
    """Table 15: each baseline with its field-clustered interval (the paper's), the block bounds beside it."""
    rows = sorted(records(frame), key=lambda r: (split_order(r["split"]), r["entry"]))
    out = SimpleTable(title, [term(c) for c in ("split", "entry", "estimate", "block low", "block high", "n_fields")],
                      [[r["split"], r["entry"], _cell(Interval(r["estimate"], r["fc_low"], r["fc_high"])), num(r["ci_low"]),
                        num(r["ci_high"]), count(r["n_fields"])] for r in rows])
    out.chart = _forest(out, (ColumnSpec("split", "split"), ColumnSpec("entry", "entry"),
                              ColumnSpec("estimate", "estimate", "fc_low", "fc_high")))
    return out


def _against_ewma(out: ScoreOutputs) -> SimpleTable | None:
    """Each baseline's paired Spearman difference from EWMA (pairs.csv, block draws), as baseline − EWMA."""
    pairs = out.pairs
    if pairs is None:
        return None
    sel = pairs[(pairs["policy"] == PRIMARY.policy) & (pairs["track"] == PRIMARY.track) & (pairs["condition"] == BASELINE_CONDITION)
                & (pairs["metric"] == PRIMARY.metric) & ((pairs["entry_a"] == "ewma") | (pairs["entry_b"] == "ewma"))]
    rows = []
    for r in records(sel):
        flip = r["entry_a"] == "ewma"  # stored as ewma − other: negate, swapping the interval's ends
        est, low, high = (num(r[k]) for k in ("estimate", "ci_low", "ci_high"))
        if flip:
            est, low, high = (None if v is None else -v for v in (est, high, low))
        rows.append([r["split"], r["entry_b"] if flip else r["entry_a"], _cell(Interval(est, low, high)), count(r["n_fields"])])
    rows.sort(key=lambda r: (split_order(r[0]), r[1]))
    return SimpleTable(t("dg.baseline_pairs"), [term(c) for c in ("split", "entry", "estimate", "n_fields")], rows) if rows else None


def _baseline_family(out: ScoreOutputs) -> DiagnosticSection:
    lb = out.leaderboard
    base = _clustered(out, lb[(lb["policy"] == PRIMARY.policy) & (lb["track"] == PRIMARY.track) & (lb["kind"] == "baseline")])
    tables = [_family_table(t("dg.baseline_table", metric=METRIC_LABEL[metric]), base[base["metric"] == metric])
              for metric in (SPEARMAN, TV) if (base["metric"] == metric).any()]
    paired = _against_ewma(out)
    tables += [paired] if paired is not None else []
    return DiagnosticSection("baseline-family", t("dg.baseline_title"), t("dg.baseline_intro"), tables, bool(tables))


SCORE_SECTIONS: dict[str, Callable[[ScoreOutputs], DiagnosticSection]] = {
    "state_vs_forecast": _state_vs_forecast, "baseline_family": _baseline_family,
}


# Declared tables shown on the Paper page instead (the paper's residual cuts and Table 14): the Diagnostics
# page keeps within its size budget, and these sit beside the paper's other tables.
PAPER_PAGE_TABLES: tuple[str, ...] = (
    "Residual cosine on the change-rich subset (corrected)", "Residual cosine at the latest origin (corrected)",
    "Retrieval contrasts on the partial-residual endpoint",
)


def _without(section: Section, titles: tuple[str, ...]) -> Section:
    return Section(section.spec, tuple(x for x in section.tables if x.title not in titles), section.present)


def paper_page_tables(out: ScoreOutputs) -> list[SimpleTable]:
    """The declared tables of :data:`PAPER_PAGE_TABLES`, as the Diagnostics page would show them."""
    return [_declared_table(x) for section in diagnostic_tables(out.diagnostics or {}) for x in section.tables
            if x.title in PAPER_PAGE_TABLES]


def build_diagnostics(out: ScoreOutputs) -> list[DiagnosticSection]:
    """Every section in page order; a section without data says it was not computed."""
    sections = []
    for section in diagnostic_tables(out.diagnostics or {}):
        sections.append(_declared(_without(section, PAPER_PAGE_TABLES)))
        extra = SCORE_SECTIONS_AFTER.get(section.key)
        if extra:
            sections.append(SCORE_SECTIONS[extra](out))
    return sections


def diagnostics_meta(out: ScoreOutputs) -> dict:
    """Whether diagnostics.json is present, and the policy and track it was computed under."""
    if out.diagnostics is None:
        return {"present": False}
    return {"present": True, **{k: str(out.diagnostics[k]) for k in ("policy", "track") if isinstance(out.diagnostics.get(k), str)}}


