"""The Releases page and the release-derived pieces of the leaderboard (RELEASES.md, "Outputs and site").

Every number comes from ``releases.csv`` (one block of headline rows per release,
each computed by the scorer from the files that release listed) and ``scores.json``'s
``release`` object; the records themselves (date, kind, origins, the manifest's
digest) are the release shown's (``Release.releases``, records 1..N, and the
digest ``verify`` checked for ``releases/NNNN.SHA256SUMS``). A format-1 archive has
one implicit release: no Releases page, no movement markers, no Live tab.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.archive import ReleaseCitation, bibtex, manifest_path
from rapgen.scores import PRIMARY
from rapgen.site import plots
from rapgen.site.cells import (
    CONDITION_LABEL, LEADER_CONDITIONS, SPLIT_LABEL, SPLITS, Cell, SimpleTable, num, ranked_cell, records,
)
from rapgen.site.escape import html_text
from rapgen.site.i18n import t, term
from rapgen.site.inputs import ScoreOutputs

RANK_CONDITION = PRIMARY.condition  # the rank plot and the movement markers follow the headline column (the row order)
MAX_CHANGES = 200  # errata rows shown; the rest are in releases.csv
KEY = ("track", "split", "policy", "entry", "condition", "metric")
UP, DOWN = "▲", "▼"


@dataclass
class ReleaseEntry:
    number: int
    date: str
    kind: str
    resolved: list[str]
    strict_origin: str
    open_origin: str
    closes: str
    manifest_sha256: str
    simulated: bool
    notes: str
    replaced: list[tuple[str, str]]
    headline: dict[str, SimpleTable]  # split -> models x conditions
    changes: SimpleTable | None = None  # errata only
    bibtex: str = ""  # how to cite the release: a BibTeX entry and a plain-text line
    cite_text: str = ""

    @property
    def bibtex_html(self) -> str:
        """The entry inside ``<pre>``: each line escaped, its indent and line breaks kept."""
        return "\n".join(" " * (len(line) - len(line.lstrip())) + html_text(line) for line in self.bibtex.splitlines())


@dataclass
class ReleasesPage:
    current: int
    releases: list[ReleaseEntry]  # newest first
    rank_charts: dict[str, str]  # split -> chart HTML
    simulated: bool
    open_origin: str = ""
    closes: str = ""
    commitments: int = 0  # sealed entries received for the open origin
    notes: list[str] = field(default_factory=list)


def _manifest_digest(archive: Any, number: int) -> str:
    """Release ``number``'s manifest digest, as the release shown lists it (it does not list its own)."""
    return str(archive.files.get(manifest_path(number), ""))


def _citation(archive: Any, e: ReleaseEntry) -> tuple[str, str]:
    """The release's BibTeX entry and its plain-text citation (in the page's language)."""
    name = str(archive.info.get("name", ""))
    manifest = manifest_path(e.number)
    cite = ReleaseCitation(name, e.number, date.fromisoformat(e.date), e.kind, manifest, e.manifest_sha256 or None)
    return bibtex(cite), t("rel.cite_text", name=name, n=e.number, kind=e.kind, date=e.date, manifest=manifest,
                           digest=e.manifest_sha256 or "—")


def headline_rows(releases: pd.DataFrame | None, track: str = PRIMARY.track) -> pd.DataFrame:
    """releases.csv rows of the headline metric and policy on ``track``."""
    import pandas as pd
    if releases is None or not len(releases):
        return pd.DataFrame(columns=list(releases.columns) if releases is not None else [])
    r = releases
    return r[(r["track"] == track) & (r["policy"] == PRIMARY.policy) & (r["metric"] == PRIMARY.metric)]


def _cell(row: dict | None) -> Cell:
    return ranked_cell(row, "rel.not_scored")


def _headline(rows: list[dict], split: str) -> SimpleTable:
    by = {(r["entry"], r["condition"]): r for r in rows if r["split"] == split}
    def order(e: str) -> tuple:
        v = num(by[(e, RANK_CONDITION)]["estimate"]) if (e, RANK_CONDITION) in by else None
        return (v is None, -(v or 0.0), e)  # best Expanding estimate first, undefined last

    entries = sorted({e for e, c in by if c in LEADER_CONDITIONS}, key=order)
    table_rows = [[e, *[_cell(by.get((e, c))) for c in LEADER_CONDITIONS]] for e in entries]
    return SimpleTable(t("lb.headline", split=SPLIT_LABEL[split]), [term("entry"), *[CONDITION_LABEL[c] for c in LEADER_CONDITIONS]],
                       table_rows)


def _changes(releases: pd.DataFrame, number: int) -> SimpleTable:
    """Every releases.csv row of ``number`` whose estimate, interval or rank differs from release ``number-1``."""
    now = {tuple(r[k] for k in KEY): r for r in records(releases[releases["release"] == number])}
    before = {tuple(r[k] for k in KEY): r for r in records(releases[releases["release"] == number - 1])}
    rows = []
    for key in sorted(set(now) | set(before)):
        a, b = before.get(key), now.get(key)
        va = [num(a[c]) for c in ("estimate", "ci_low", "ci_high", "rank")] if a else [None] * 4
        vb = [num(b[c]) for c in ("estimate", "ci_low", "ci_high", "rank")] if b else [None] * 4
        if va != vb:
            rows.append([*key, va[0], vb[0], va[3], vb[3]])
    table = SimpleTable(t("rel.changes_title"), [*(term(k) for k in KEY), t("rel.estimate_before"), t("rel.estimate_after"),
                                                t("rel.rank_before"), t("rel.rank_after")], rows)
    if len(rows) > MAX_CHANGES:
        table.truncated, table.rows = len(rows) - MAX_CHANGES, rows[:MAX_CHANGES]
    return table


def _rank_chart(rows: pd.DataFrame, numbers: list[int], dates: dict[int, str], split: str) -> str:
    sel = rows[(rows["split"] == split) & (rows["condition"] == RANK_CONDITION)]
    if not len(sel):
        return ""
    x = [f"{n} ({dates[n]})" for n in numbers]
    series: dict[str, list[float | None]] = {}
    at = {(r["entry"], int(r["release"])): num(r["rank"]) for r in records(sel)}
    for entry in sorted(set(sel["entry"])):
        series[entry] = [at.get((entry, n)) for n in numbers]
    fig = plots.lines(x, series, y_title=t("rel.rank_axis"))
    fig["layout"].setdefault("yaxis", {})["autorange"] = "reversed"
    fig["layout"]["xaxis"] = {**fig["layout"].get("xaxis", {}), "title": {"text": t("rel.release_axis")}, "type": "category"}
    return plots.embed(fig, 360, t("rel.rank_title", split=SPLIT_LABEL[split], condition=CONDITION_LABEL[RANK_CONDITION]))


def build_releases(archive: Any, out: ScoreOutputs) -> ReleasesPage | None:
    """The Releases page of a format-2 archive, up to the scored release; None for format 1."""
    if not archive.is_history or out.releases is None:
        return None
    meta = out.scores_json.get("release") or {}
    current = int(meta.get("number") or archive.number)
    records_by_number = {n: r for n, r in archive.releases.items() if n <= current}
    head = headline_rows(out.releases)
    entries = []
    for n in sorted(records_by_number, reverse=True):
        rec = records_by_number[n]
        rows = records(head[head["release"] == n])
        entry = ReleaseEntry(
            n, rec.date.isoformat(), rec.kind.value, [o.isoformat() for o in rec.resolved_origins], rec.strict_origin.isoformat(),
            rec.open_origin.origin.isoformat() if rec.open_origin else "", rec.open_origin.closes.isoformat() if rec.open_origin else "",
            _manifest_digest(archive, n), bool(rec.simulated), rec.notes, [(x.path, x.reason) for x in rec.replaced],
            {s: _headline(rows, s) for s in SPLITS})
        entry.bibtex, entry.cite_text = _citation(archive, entry)
        if rec.kind.value == "errata" and n > 1:
            entry.changes = _changes(out.releases, n)
        entries.append(entry)
    numbers = sorted(records_by_number)
    dates = {n: records_by_number[n].date.isoformat() for n in numbers}
    charts = {s: _rank_chart(head, numbers, dates, s) for s in SPLITS}
    last = records_by_number[current]
    sealed = sum(1 for e in archive.live_entries(as_of=current)
                 if e.sealed and last.open_origin is not None and e.origin == last.open_origin.origin)
    return ReleasesPage(current, entries, charts, any(e.simulated for e in entries),
                        last.open_origin.origin.isoformat() if last.open_origin else "",
                        last.open_origin.closes.isoformat() if last.open_origin else "", sealed)


def movements(releases: pd.DataFrame | None, current: int, track: str, split: str) -> dict[str, tuple[str, str]]:
    """entry -> (▲ or ▼, tooltip) when its Expanding rank differs from the previous release's."""
    if releases is None or current < 2:
        return {}
    head = headline_rows(releases, track)
    head = head[(head["split"] == split) & (head["condition"] == RANK_CONDITION)]
    now = {r["entry"]: num(r["rank"]) for r in records(head[head["release"] == current])}
    before = {r["entry"]: num(r["rank"]) for r in records(head[head["release"] == current - 1])}
    out = {}
    for entry, rank in now.items():
        prev = before.get(entry)
        if rank is None or prev is None or rank == prev:
            continue
        arrow = UP if rank < prev else DOWN
        out[entry] = (arrow, t("lb.movement", before=f"{prev:g}", previous=current - 1, after=f"{rank:g}", current=current))
    return out
