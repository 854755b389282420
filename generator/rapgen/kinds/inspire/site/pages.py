"""What each Inspire page shows (INSPIRE.md §4): one context per page, from the release and its
score folder.

Every number comes from the score folder (:mod:`~rapgen.kinds.inspire.site.scores`); the
archive gives only descriptions (briefs, cutoffs, tiers, model cards, file digests).
Builders run inside the page's language, so every label they return is already in it.
The per-target pages and the model pages are in :mod:`~rapgen.kinds.inspire.site.entities`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from rapgen.site import plotly_js_path, t

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.kind import InspireRelease
from rapgen.kinds.inspire.site.charts import funnel_figure, progress_figure
from rapgen.kinds.inspire.site.scores import REPLAY_JSON, ScoreFolder, read_folder

# The leaderboard's columns: the four ranked headline metrics with rank and P(first), then the funnel.
RANKED = ("ndcg@10", "recall@10", "mrr@10", "anyhit@10")
FUNNEL_COLUMNS = ("hits3", "hits5", "exposed_gain", "zero_exposure", "selected_gain", "gain_kept", "rank_quality", "total_calls")
STAGES = ("exposed_gain", "selected_gain", "ndcg@10")
LOSSES = ("exposure_loss", "selection_loss", "ranking_loss")
FUNNEL_DIAGNOSTICS = ("exposure_recall@50", "exposure_recall", "retention")
DOWNLOADS = ("leaderboard.csv", "pairs.csv", "diagnostics.csv", "diagnostics.json", "units.parquet", "releases.csv")
PLOTLY = "assets/javascripts/plotly.min.js"
SLOT_OUTCOMES = ("n_malformed", "n_unknown", "n_post_cutoff", "n_unsurfaced", "n_unlabelled", "n_scored")
CLEANING = ("n_submitted", "n_versioned", "n_duplicate", "n_over_limit", "n_slots", "n_empty", "n_failed")


@lru_cache(maxsize=4)
def _folder(folder: str, manifest_sha256: str, stamp: float) -> ScoreFolder:
    return read_folder(folder, manifest_sha256)


def scores_of(release: InspireRelease, scores_dir: Path) -> ScoreFolder:
    """The score folder of ``release`` (read once per folder and contents)."""
    folder = Path(scores_dir).resolve()
    stamp = max((p.stat().st_mtime_ns for p in folder.iterdir()), default=0) if folder.is_dir() else 0
    return _folder(str(folder), release.manifest_sha256, stamp)


# ---------------------------------------------------------------- labels
def metric_label(name: str) -> str:
    return t(f"inspire.metric.{name}")


def view_label(name: str) -> str:
    return t(f"inspire.view.{name}")


def gains_label(name: str) -> str:
    return t(f"inspire.gains.{name}")


def condition_label(name: str) -> str:
    return t(f"inspire.condition.{name}")


def split_label(name: str) -> str:
    return t(f"inspire.split.{name}")


def step_label(name: str) -> str:
    """``progress@0.3`` -> ``30 %``."""
    return f"{round(100 * float(name.split('@', 1)[1]))} %"


def names_of(release: InspireRelease) -> dict[str, str]:
    return {m: (f.info.display_name if f.info else m) for m, f in release.models.items()}


def common(release: InspireRelease, s: ScoreFolder) -> dict[str, Any]:
    """What every page shows or needs: the release's identity, the headline cell and the label functions."""
    h = s.headline
    return {"info": dict(release.info), "synthetic": release.synthetic, "manifest": release.manifest_sha256, "meta": s.meta,
            "headline": h, "level": round(100 * s.meta["level"]), "names": names_of(release),
            "headline_label": t("inspire.common.cell", metric=metric_label(h["metric"]), split=split_label(h["split"]),
                                view=view_label(h["track"]), condition=condition_label(h["condition"])),
            "metric_label": metric_label, "view_label": view_label, "gains_label": gains_label,
            "condition_label": condition_label, "split_label": split_label,
            "kind_label": lambda kind: t(f"inspire.kind.{kind}")}


def entry_name(names: dict[str, str], entry: str, condition: str) -> str:
    return f"{names.get(entry, entry)} · {condition_label(condition)}"


def leader(release: InspireRelease, s: ScoreFolder) -> dict[str, Any] | None:
    """The headline cell's first entry (rank 1, then the larger estimate, then the id), or None."""
    h = s.headline
    rows = [r for e, _k, c in s.entries() if c == h["condition"]
            if (r := s.cell(h["track"], h["split"], h["gains"], h["cluster"], e, c, h["metric"])) and r["estimate"] is not None]
    if not rows:
        return None
    best = min(rows, key=lambda r: (r["rank"] if r["rank"] is not None else 10**9, -r["estimate"], r["entry"]))
    return {"name": entry_name(names_of(release), best["entry"], best["condition"]), "stat": best}


# ---------------------------------------------------------------- Home
def home(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    ledger = release.ledger
    assert ledger is not None
    return {**common(release, s), "leader": leader(release, s), "counts": s.meta["counts"], "K": ledger.K,
            "cutoff_months": ledger.cutoff_months, "recency_months": ledger.recency_months, "max_calls": ledger.max_calls,
            "n_papers": len(release.corpus), "n_targets": len(release.targets), "splits": s.splits()}


# ---------------------------------------------------------------- Leaderboard
def _board_rows(release: InspireRelease, s: ScoreFolder, split: str, view: str, gains: str, condition: str) -> list[dict]:
    names = names_of(release)
    cluster = s.headline["cluster"]
    rows = []
    for entry, kind, cond in s.entries():
        if cond != condition:
            continue
        stats = {m: s.cell(view, split, gains, cluster, entry, cond, m) for m in (*RANKED, *FUNNEL_COLUMNS)}
        head = stats[RANKED[0]]
        if head is None:
            continue
        rows.append({"name": names.get(entry, entry), "entry": entry, "kind": kind, "stats": stats,
                     "n_items": head["n_items"], "n_valid": head["n_valid"], "n_invalid": head["n_invalid"]})
    rows.sort(key=lambda r: (-(r["stats"][RANKED[0]]["estimate"] or -1.0), r["entry"]))
    return rows


def leaderboard(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    """Split tabs, then view tabs, then gain-map tabs; in each, one table per condition."""
    s = scores_of(release, scores_dir)
    conditions = [c for c in layout.CONDITIONS if any(c == cond for _e, _k, cond in s.entries())]
    boards = []
    for split in s.splits():
        views = []
        for view in layout.VIEWS:
            maps = []
            for gains in layout.GAIN_MAPS:
                tables = [{"id": f"lb-{split}-{view}-{gains}-{c}", "condition": c, "label": condition_label(c),
                           "rows": _board_rows(release, s, split, view, gains, c)} for c in conditions]
                maps.append({"name": gains, "label": gains_label(gains), "tables": tables,
                             "excluded": s.meta["excluded"].get(gains, 0), "ranked": gains == s.headline["gains"]})
            views.append({"name": view, "label": view_label(view), "note": t(f"inspire.lb.note_{view}"), "maps": maps})
        boards.append({"name": split, "label": split_label(split), "n": s.meta["counts"]["instances"][split], "views": views})
    return {**common(release, s), "boards": boards, "ranked": RANKED, "funnel": FUNNEL_COLUMNS, "downloads": DOWNLOADS}


# ---------------------------------------------------------------- Funnel
def funnel_series(release: InspireRelease, s: ScoreFolder, split: str, view: str, entries) -> tuple[list[dict], list[dict], list[dict]]:
    """For (entry, condition) pairs: the stage series, the G(p) series and the table rows of one view."""
    names = names_of(release)
    h = s.headline
    steps = [f"progress@{k / s.meta['progress_steps']:g}" for k in range(s.meta["progress_steps"] + 1)]
    stages, curves, rows = [], [], []
    for entry, cond in entries:
        cell = {m: s.cell(view, split, h["gains"], h["cluster"], entry, cond, m) for m in (*STAGES, *LOSSES, "gain_kept", "rank_quality")}
        if cell[STAGES[-1]] is None:
            continue
        name = entry_name(names, entry, cond)
        stages.append({"name": name, "values": [cell[m] for m in STAGES]})
        curves.append({"name": name, "values": [s.cell(view, split, h["gains"], h["cluster"], entry, cond, p) for p in steps]})
        rows.append({"name": name, "entry": entry, "condition": cond, "stats": cell})
    return stages, curves, rows


def funnel_views(release: InspireRelease, s: ScoreFolder, entries, prefix: str) -> list[dict]:
    """One block per view on the headline split: the stages' figure, the losses and G(p)."""
    split = s.headline["split"]
    steps = [step_label(f"progress@{k / s.meta['progress_steps']:g}") for k in range(s.meta["progress_steps"] + 1)]
    out = []
    for view in layout.VIEWS:
        stages, curves, rows = funnel_series(release, s, split, view, entries)
        label = view_label(view)
        out.append({"name": view, "label": label, "rows": rows, "id": f"{prefix}-{view}",
                    "stages_chart": funnel_figure([metric_label(m) for m in STAGES], stages, y_title=t("inspire.fn.y_gain"),
                                                  title=t("inspire.fn.stages_title", view=label)) if stages else "",
                    "progress_chart": progress_figure(steps, curves, x_title=t("inspire.fn.x_calls"), y_title=t("inspire.fn.y_exposed"),
                                                      title=t("inspire.fn.progress_title", view=label)) if curves else ""})
    return out


def funnel(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    entries = [(e, c) for e, _k, c in s.entries()]
    return {**common(release, s), "views": funnel_views(release, s, entries, "fn"), "stages": STAGES, "losses": LOSSES}


# ---------------------------------------------------------------- Diagnostics
def diagnostics(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    h = s.headline
    names = names_of(release)
    split, view = h["split"], h["track"]
    pairs = [(e, c) for e, _k, c in s.entries()]
    maps = [{"name": entry_name(names, e, c),
             "stats": [s.cell(view, split, g, h["cluster"], e, c, h["metric"]) for g in layout.GAIN_MAPS]} for e, c in pairs]
    clusters = [{"name": entry_name(names, e, c),
                 "stats": [s.cell(view, split, h["gains"], k, e, c, h["metric"]) for k in layout.CLUSTERS]} for e, c in pairs]
    exposure = [{"name": entry_name(names, e, c),
                 "stats": [s.cell(view, split, h["gains"], h["cluster"], e, c, m) for m in FUNNEL_DIAGNOSTICS]} for e, c in pairs]
    histograms = [{"name": entry_name(names, r["entry"], r["condition"]), "counts": r["counts"]} for r in s.histograms
                  if (r["split"], r["track"]) == (split, view)]
    accounting = [{"name": entry_name(names, a["entry"], a["condition"]), **a} for a in s.meta["accounting"]]
    return {**common(release, s), "maps": maps, "gain_maps": layout.GAIN_MAPS, "clusters": clusters,
            "cluster_kinds": layout.CLUSTERS, "exposure": exposure, "exposure_metrics": FUNNEL_DIAGNOSTICS,
            "histograms": histograms, "K": s.meta["K"], "accounting": accounting, "outcomes": SLOT_OUTCOMES,
            "cleaning": CLEANING, "excluded": s.meta["excluded"], "replay": s.replay}


# ---------------------------------------------------------------- Releases, Archive, Submit
def releases(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    names = names_of(release)
    records = [{"number": n, "date": r.date.isoformat(), "kind": r.kind.value} for n, r in sorted(release.releases.items())]
    rows = [dict(r, name=entry_name(names, r["entry"], r["condition"])) for r in s.releases]
    return {**common(release, s), "records": records, "rows": rows, "implicit": not release.is_history}


def archive(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    files = [{"path": path, "sha256": digest, "size": release.size(path)} for path, digest in sorted(release.files.items())
             if path.startswith("archive/")]
    ledger = json.loads(release.read(layout.LEDGER_JSON))
    return {**common(release, s), "files": files, "ledger_json": json.dumps(ledger, indent=2, ensure_ascii=False)}


def submit(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    ledger = release.ledger
    assert ledger is not None
    example = min(release.instances, key=lambda i: i.instance_id)
    return {**common(release, s), "K": ledger.K, "max_calls": ledger.max_calls, "top_k": ledger.top_k,
            "example": example.instance_id, "cutoff": example.cutoff.isoformat(), "conditions": layout.CONDITIONS}


def downloads(release: InspireRelease, scores_dir: Path) -> dict[str, bytes]:
    """The score files offered for download, verbatim, and the local plotly.js the figures need."""
    s = scores_of(release, scores_dir)
    names = [*DOWNLOADS, REPLAY_JSON] if s.replay is not None else DOWNLOADS
    out = {f"downloads/{name}": (Path(scores_dir) / name).read_bytes() for name in names}
    out[PLOTLY] = plotly_js_path().read_bytes()
    return out


def card(release: InspireRelease, scores_dir: Path) -> dict[str, Any] | None:
    """The leader a portal shows for this benchmark (the headline cell), in the current language."""
    s = scores_of(release, scores_dir)
    best = leader(release, s)
    if best is None:
        return None
    st = best["stat"]
    return {"name": best["name"], "value": st["estimate"], "ci_low": st["ci_low"], "ci_high": st["ci_high"],
            "cell": common(release, s)["headline_label"]}
