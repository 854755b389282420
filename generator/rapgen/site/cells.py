"""The presentation contract: the records page builders hand to templates.

Nothing here is formatted: a :class:`Cell` carries an estimate, its interval and
its rank as numbers, and the Jinja filters (:mod:`rapgen.site.filters`) turn them
into text. The vocabulary of the score files (tracks, policies, metrics and their
labels and directions, the headline choice) is :mod:`rapgen.scores.schema`'s; the
labels below are the site's own words for splits, tracks and conditions.
"""

from __future__ import annotations

import math
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, SPLITS as ARCHIVE_SPLITS, TEST_SPLIT
from rapgen.scores import BASELINE_CONDITION, CONTRASTS, HISTORY_TRACKS, METRICS
from rapgen.site.i18n import Labels, t

SPLITS = tuple(sorted(ARCHIVE_SPLITS, key=lambda s: s != TEST_SPLIT))  # Test is the default tab
# The site's words for splits, tracks, conditions and metrics, in the language being
# rendered (catalogue keys split.*, track.*, condition.*, metric.*; English outside a build).
SPLIT_LABEL = Labels("split", SPLITS)
TRACK_LABEL = Labels("track", HISTORY_TRACKS)
LEADER_CONDITIONS = FORECAST_CONDITIONS  # the leaderboard's columns: the forecasts
CONDITION_LABEL = Labels("condition", (*CONDITIONS, BASELINE_CONDITION))
METRIC_LABEL = Labels("metric", tuple(m.name for m in METRICS))
HIGHER = {m.name: m.higher_is_better for m in METRICS}  # True / False / None (descriptive)
CONTRAST_ORDER = CONTRASTS


# ------------------------------------------------------------------ records
@dataclass
class Cell:
    """One table cell: an estimate with its interval, or None plus a note saying why.
    ``rank``/``tied``/``p_first`` come from ranks.csv; ``rank_among`` names the
    column a baseline's rank was taken from (empty for models)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    bold: bool = False
    rank: float | None = None
    tied: bool = False
    p_first: float | None = None
    rank_among: str = ""


@dataclass
class LeaderRow:
    entry: str
    name: str
    url: str | None
    kind: str
    proprietary: bool | None
    cutoff: str
    cells: dict[str, Cell]
    n_valid: int
    n_expected: int
    validity_title: str
    reference_agent: bool = False  # one of rapgen's own reference agents (model.json "reference_agent": true)
    movement: str = ""  # ▲ / ▼ since the previous release (format 2), else empty
    movement_title: str = ""
    partial_label: str = ""  # All-Origin partial model: "partial (k of n origins)"; its row is the last complete one


@dataclass
class LeaderPanel:
    split: str
    track: str
    table_id: str
    rows: list[LeaderRow]
    baselines: list[LeaderRow]
    chart: str
    empty_note: str = ""
    partial: list[LeaderRow] = field(default_factory=list)  # unranked partial models (format 2)
    live: Any = None  # the Live panel's extras (pages.live.LiveExtras)


@dataclass
class Link:
    label: str
    url: str


@dataclass
class SimpleTable:
    """A generic table: header strings and rows of values (formatted by filters in templates)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    chart: str = ""
    truncated: int = 0  # rows left out of the page (still in the source file)
    download: str = ""  # a per-episode list: its rows are this file under downloads/, not on the page
    download_rows: int = 0
    download_csv: str = ""


@dataclass
class FieldPage:
    field_id: str
    path: str
    name: str
    definition: str
    split: str
    block_id: str
    eligible_pre2024: bool
    directions: list[dict]
    neighbours: list[Link]
    area_chart: str
    ewma_chart: str
    ewma_note: str
    score_rows: list[dict]
    n_windows: int
    forecasts: str = ""  # JSON for field.js: every entry's forecast shares against the realised ones


@dataclass
class ModelPage:
    model_id: str
    path: str
    info: dict
    matrices: dict[str, list[dict]]  # split -> [{track, label, rows:[{condition, cells{metric: Cell}}], metrics}]
    origin_charts: dict[str, str]
    contrasts: dict[str, list[dict]]
    validity: dict[str, list[dict]]
    invalid_reasons: list[dict]
    search: dict | None
    interventions: dict | None = None  # pages.interventions.model_interventions (replay, oracle, panel, inference)
    provenance: SimpleTable | None = None  # pages.paper_tables.provenance_table (INTERVENTIONS.md §7, shown, never scored)


@dataclass
class DiagnosticSection:
    key: str
    title: str
    intro: str
    tables: list[SimpleTable]
    computed: bool


@dataclass
class SiteModel:
    info: dict
    synthetic: bool
    manifest_sha256: str
    scores_meta: dict
    counts: dict
    panels: dict[str, list[LeaderPanel]]
    field_pages: list[FieldPage]
    field_index: list[dict]
    model_pages: list[ModelPage]
    model_index: list[dict]
    diagnostics: list[DiagnosticSection]
    artifacts: list[dict]
    ledger_rows: list[tuple[str, str]]
    ledger_json: str
    strict_origin: str
    origins: list[str]
    ledger_level: float
    diagnostics_meta: dict = field(default_factory=dict)
    releases: Any = None  # pages.releases.ReleasesPage for a format-2 archive, else None
    figure3: Any = None  # pages.interventions.Figure3 when the score folder has interventions/
    leader_switch: str = ""  # pages.switch: the leaderboard's metric/policy data (JSON)
    headline: dict = field(default_factory=dict)  # split -> pages.headline.Headline
    compare: Any = None  # pages.compare.ComparePage
    paper_map: list[dict] = field(default_factory=list)  # pages.paper_map: the "Paper ↔ site" rows
    paper_residual: list[SimpleTable] = field(default_factory=list)  # pages.diagnostics.paper_page_tables
    dataset: Any = None  # pages.dataset.DatasetCard: the Archive page's JSON-LD, Croissant file and snippets


# ------------------------------------------------------------------ helpers shared by the page builders
def page_url(from_page: str, to_page: str) -> str:
    """Relative URL between two Markdown pages as built with directory URLs."""

    def directory(page: str) -> str:
        stem = page[:-3] if page.endswith(".md") else page
        if stem == "index":
            return ""
        if stem.endswith("/index"):
            return stem[: -len("/index")]
        return stem

    src, dst = directory(from_page), directory(to_page)
    rel = posixpath.relpath(dst or ".", src or ".")
    return "./" if rel == "." else rel + "/"


def num(value: Any) -> float | None:
    """A float from a score file's value; None for missing, NaN or non-numeric."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def count(value: Any) -> int:
    v = num(value)
    return 0 if v is None else int(v)


def cell(row: Any, note_if_missing: str | None = None) -> Cell:
    """The Cell of one leaderboard/contrasts row (estimate, ci_low, ci_high)."""
    if row is None:
        return Cell(None, note=t("common.not_evaluated"))
    note_if_missing = t("common.no_field_score") if note_if_missing is None else note_if_missing
    est = num(row["estimate"])
    return Cell(est, num(row["ci_low"]), num(row["ci_high"]), "" if est is not None else note_if_missing)


def ranked_cell(row: Any, absent: str) -> Cell:
    """The Cell of one ranked score row (estimate, interval and rank); without a row, the note of
    catalogue key ``absent``."""
    if row is None:
        return Cell(None, note=t(absent))
    c = Cell(num(row["estimate"]), num(row["ci_low"]), num(row["ci_high"]))
    c.rank = num(row["rank"])
    return c


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain dicts of Python values (much faster than DataFrame.to_dict for wide frames)."""
    cols = list(frame.columns)
    data = [frame[c].tolist() for c in cols]
    return [dict(zip(cols, vals)) for vals in zip(*data)]


def group(rows: list[dict], key: str) -> dict[Any, list[dict]]:
    out: dict[Any, list[dict]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return out


def index(frame: pd.DataFrame | list[dict], keys: list[str]) -> dict[tuple, Any]:
    out: dict[tuple, Any] = {}
    for row in (frame if isinstance(frame, list) else records(frame)):
        out[tuple(row[k] for k in keys)] = row
    return out


def mark_best(cells: list[Cell], higher: bool | None) -> None:
    """Bold the best defined value (ties all bold); nothing for a descriptive metric."""
    if higher is None:
        return
    values = [c.value for c in cells if c.value is not None]
    if not values:
        return
    best = max(values) if higher else min(values)
    for c in cells:
        if c.value is not None and c.value == best:
            c.bold = True


def split_order(split: Any) -> int:
    return SPLITS.index(split) if split in SPLITS else 9
