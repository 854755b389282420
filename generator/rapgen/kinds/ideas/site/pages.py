"""What each Ideas page shows (IDEAS.md §6): a context per page, built from the release and its scores.

Every number comes from the score folder (:mod:`~rapgen.kinds.ideas.site.scores`);
the archive gives only descriptions (topics, terms, history and future sizes,
model cards, file digests). Builders run inside the page's language, so every
label they return is already in it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from statistics import median
from typing import Any

from rapgen.kinds.ideas.archive.kind import IdeasRelease
from rapgen.kinds.ideas.site.scores import SCORE_FILES, IdeasScores, read_scores
from rapgen.site import t  # the current page language's labels

RANKED = ("hit@5", "p@5", "mrr")
DESCRIPTIVE = ("soft", "coverage", "novelty", "multiplicity", "budget")
DOWNLOADS = ("leaderboard.csv", "pairs.csv", "units.parquet", "releases.csv", "diagnostics.json")


@dataclass(frozen=True)
class Stat:
    """A score with its interval, rank and P(first) (None where there is none)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    rank: int | None = None
    p_first: float | None = None


@lru_cache(maxsize=4)
def _scores(folder: str, manifest_sha256: str) -> IdeasScores:
    return read_scores(folder, manifest_sha256)


def scores_of(release: IdeasRelease, scores_dir: Path) -> IdeasScores:
    return _scores(str(Path(scores_dir).resolve()), release.manifest_sha256)


def _stat(row: dict | None) -> Stat:
    if row is None:
        return Stat(None)
    return Stat(row["estimate"], row["ci_low"], row["ci_high"], row["rank"], row["p_first"])


def _names(release: IdeasRelease) -> dict[str, str]:
    return {m: (mf.info.display_name if mf.info else m) for m, mf in release.archive.models.items()}


def track_label(name: str) -> str:
    return t(f"ideas.track.{name}")


def metric_label(name: str) -> str:
    return t(f"ideas.metric.{name}")


def _common(release: IdeasRelease, s: IdeasScores) -> dict[str, Any]:
    meta = s.meta
    p = meta["primary"]
    return {"info": dict(release.info), "synthetic": release.synthetic, "manifest": release.manifest_sha256, "meta": meta,
            "primary": p, "primary_label": t("ideas.common.cell", metric=metric_label(p["metric"]), track=track_label(p["track"]),
                                             judge=p["judge"], gate=t(f"ideas.gate.{p['gate']}")),
            "level": round(100 * meta["level"]), "names": _names(release), "metric_label": metric_label,
            "track_label": track_label}


def _leader(release: IdeasRelease, s: IdeasScores) -> dict | None:
    head = s.meta.get("headline")
    if head is None:
        return None
    return {"name": _names(release).get(head["entry"], head["entry"]), "condition": head["condition"],
            "stat": Stat(head["estimate"], head["ci_low"], head["ci_high"], head["rank"], head["p_first"])}


# ---------------------------------------------------------------- pages
def home(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    a = release.archive
    assert a.config is not None
    counts = s.meta["counts"]
    return {**_common(release, s), "leader": _leader(release, s), "counts": counts,
            "cutoffs": [c.isoformat() for c in a.config.cutoffs], "horizon": a.config.horizon_months, "top_k": a.config.top_k,
            "n_topics": len(a.topics), "n_papers": len(a.papers), "n_judges": len(s.meta["axes"]["judge"])}


def leaderboard(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    names = _names(release)
    judges, gates = s.meta["axes"]["judge"], s.meta["axes"]["gate"]
    tracks = []
    for track in (tr["name"] for tr in s.meta["tracks"]):
        cells = []
        for judge in judges:
            failed = s.failed(judge)
            for gate in gates:
                rows = []
                for entry, cond in s.entries(track, judge, gate):
                    stats = {m: _stat(s.cells.get((track, judge, gate, entry, cond, m))) for m in (*RANKED, "budget")}
                    any_row = s.cells[(track, judge, gate, entry, cond, "hit@5")]
                    rows.append({"name": names.get(entry, entry), "entry": entry, "condition": cond, "stats": stats,
                                 "n_items": any_row["n_items"], "empty": any_row["n_invalid"], "failed": failed.get((entry, cond), 0)})
                rows.sort(key=lambda r: (-(r["stats"]["hit@5"].value or -1.0), r["entry"], r["condition"]))
                cells.append({"id": f"lb-{track}-{judge}-{gate}", "judge": judge, "gate": gate,
                              "label": f"{judge} · {t(f'ideas.gate.{gate}')}", "rows": rows,
                              "partial": _partial_rows(s, names, track, judge, gate)})
        tracks.append({"name": track, "label": track_label(track), "note": t(f"ideas.lb.note_{track}"), "cells": cells,
                       "empty": not any(c["rows"] or c["partial"] for c in cells)})
    return {**_common(release, s), "tracks": tracks, "ranked": RANKED, "downloads": DOWNLOADS}


def partial_label(p: dict) -> str:
    """"partial (k of n cutoffs)", what is missing or awaiting evaluation, and where the row shown is from."""
    parts = [t("ideas.lb.partial", cutoffs=p["cutoffs"], of=p["of"])]
    if p["missing"]:
        parts.append(t("ideas.lb.partial_missing", cutoffs=", ".join(p["missing"])))
    if p["awaiting"]:
        parts.append(t("ideas.lb.partial_awaiting", cutoffs=", ".join(p["awaiting"])))
    last = p.get("last_complete_release")
    parts.append(t("ideas.lb.partial_row", release=last) if last else t("ideas.lb.partial_never"))
    return "; ".join(parts)


def _partial_rows(s: IdeasScores, names: dict[str, str], track: str, judge: str, gate: str) -> list[dict[str, Any]]:
    """The cell's partial entries: unranked, each with its last complete release's row (dimmed), or none."""
    out = []
    for p in s.meta.get("partial") or []:
        if (p["track"], p["judge"]) != (track, judge):
            continue
        got = {r["metric"]: r for r in p.get("rows") or [] if r["gate"] == gate}
        stats = {m: Stat(got[m]["estimate"], got[m]["ci_low"], got[m]["ci_high"]) if m in got else Stat(None) for m in (*RANKED, "budget")}
        n_items = next(iter(got.values()))["n_items"] if got else None
        out.append({"name": names.get(p["entry"], p["entry"]), "entry": p["entry"], "condition": p["condition"], "stats": stats,
                    "n_items": n_items, "label": partial_label(p), "badge": t("ideas.lb.partial", cutoffs=p["cutoffs"], of=p["of"])})
    return out


def _topic_rows(release: IdeasRelease) -> list[dict[str, Any]]:
    a = release.archive
    assert a.pools is not None
    by_topic: dict[str, list] = defaultdict(list)
    for e in a.pools.episodes:
        by_topic[e.topic_id].append(e)
    assigned: dict[str, int] = defaultdict(int)
    for x in a.assignments:
        assigned[x.topic_id] += 1
    out = []
    for topic in a.topics:
        eps = by_topic.get(topic.topic_id, [])
        fut = [len(a.pools.future.get(e.episode_id, ())) for e in eps if e.episode_id in a.pools.future]
        out.append({"id": topic.topic_id, "name": topic.name, "terms": topic.terms, "assigned": assigned[topic.topic_id],
                    "episodes": len(eps), "history": median([e.n_history for e in eps]) if eps else None,
                    "future": median(fut) if fut else None, "url": f"{topic.topic_id}.md"})
    return out


def topics(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    assert release.archive.config is not None
    return {**_common(release, s), "topics": _topic_rows(release), "horizon": release.archive.config.horizon_months}


def topic_page(topic_id: str):
    """The builder of one topic's page: its terms, and per cutoff |H|, |F| and each entry's Hit@5."""

    def build(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
        s = scores_of(release, scores_dir)
        a = release.archive
        assert a.pools is not None
        topic = next(x for x in a.topics if x.topic_id == topic_id)
        p = s.meta["primary"]
        hits: dict[str, dict[tuple[str, str], float | None]] = defaultdict(dict)
        for u in s.units:
            if u["topic_id"] == topic_id and (u["judge"], u["gate"]) == (p["judge"], p["gate"]):
                hits[u["episode_id"]][(u["entry"], u["condition"])] = u["hit@5"]
        entries = sorted({k for v in hits.values() for k in v})
        rows = [{"cutoff": e.cutoff.isoformat(), "history": e.n_history, "future": len(a.pools.future.get(e.episode_id, ()))
                 if e.episode_id in a.pools.future else None, "hits": [hits.get(e.episode_id, {}).get(k) for k in entries]}
                for e in a.pools.episodes if e.topic_id == topic_id]
        names = _names(release)
        return {**_common(release, s), "topic": topic, "rows": rows,
                "entries": [f"{names.get(m, m)} · {c}" for m, c in entries], "row": next(r for r in _topic_rows(release) if r["id"] == topic_id)}

    return build


def models(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    cards = []
    for model_id, audit in s.meta["models"].items():
        info = release.archive.models[model_id].info
        cards.append({"id": model_id, **audit, "provider": info.provider if info else "", "notes": info.notes if info else ""})
    return {**_common(release, s), "models": cards}


def diagnostics(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    p = s.meta["primary"]
    names = _names(release)
    combos = []
    for judge in s.meta["axes"]["judge"]:
        for gate in s.meta["axes"]["gate"]:
            rows = [{"name": names.get(e, e), "condition": c,
                     "stats": {m: _stat(s.cells.get((p["track"], judge, gate, e, c, m))) for m in DESCRIPTIVE}}
                    for e, c in s.entries(p["track"], judge, gate)]
            combos.append({"id": f"dg-{judge}-{gate}", "label": f"{judge} · {t(f'ideas.gate.{gate}')}", "rows": rows})
    d = s.diagnostics
    sensitivity = [dict(r, name=names.get(r["entry"], r["entry"])) for r in d["gate_sensitivity"] if r["track"] == p["track"]]
    evaluation = [dict(r, name=names.get(r["entry"], r["entry"])) for r in d["evaluation"]]
    return {**_common(release, s), "combos": combos, "descriptive": DESCRIPTIVE, "agreement": d["judge_agreement"],
            "sensitivity": sensitivity, "evaluation": evaluation}


def releases(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    p = s.meta["primary"]
    names = _names(release)
    records = [{"number": n, "date": r.date.isoformat(), "kind": r.kind.value, "simulated": r.simulated}
               for n, r in sorted(release.releases.items())]
    rows = [dict(r, name=names.get(r["entry"], r["entry"])) for r in s.releases
            if (r["track"], r["judge"], r["gate"], r["metric"]) == (p["track"], p["judge"], p["gate"], p["metric"])]
    rows = sorted(rows + _releases_without_rows(release, rows), key=lambda r: int(r["release"]))
    partial = [dict(x, name=names.get(x["entry"], x["entry"]), label=partial_label(x), track_label=track_label(x["track"]))
               for x in s.meta.get("partial") or [] if x["judge"] == p["judge"]]
    return {**_common(release, s), "records": records, "rows": rows, "implicit": not release.is_history, "partial": partial,
            "number": s.meta["release"]["number"]}


def _releases_without_rows(release: IdeasRelease, rows: list[dict]) -> list[dict[str, Any]]:
    """A note for each release in which the headline cell has no row: every entry was partial there (a roll's
    newly resolved cutoff waits for the evaluator files of the next models release)."""
    shown, out, before = {int(r["release"]) for r in rows}, [], set()
    for n, r in sorted(release.releases.items()):
        resolved = set(r.resolved_origins)
        if n not in shown:
            new = ", ".join(c.isoformat() for c in sorted(resolved - before))
            note = t("ideas.rel.no_complete_new", cutoffs=new) if new else t("ideas.rel.no_complete")
            out.append({"release": str(n), "date": r.date.isoformat(), "note": note})
        before = resolved
    return out


def archive(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    files = [{"path": path, "sha256": digest, "size": release.disk_path(path).stat().st_size,
              "group": "models" if path.startswith("archive/models/") else "benchmark"}
             for path, digest in sorted(release.files.items()) if path.startswith("archive/")]
    ledger = release.archive.ledger
    return {**_common(release, s), "files": files,
            "ledger_json": json.dumps(ledger.raw if ledger else {}, indent=2, ensure_ascii=False, sort_keys=False),
            "judges": [j for j in release.archive.judges.values()]}


def submit(release: IdeasRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    a = release.archive
    assert a.config is not None
    return {**_common(release, s), "top_k": a.config.top_k, "example": a.pools.episodes[0].episode_id if a.pools else "",
            "judges": list(a.judges)}


def card(release: IdeasRelease, scores_dir: Path) -> dict[str, Any] | None:
    """The leader a portal shows: the headline cell's (IDEAS.md §6), in the current language."""
    s = scores_of(release, scores_dir)
    leader = _leader(release, s)
    if leader is None:
        return None
    st = leader["stat"]
    return {"name": f"{leader['name']} · {leader['condition']}", "value": st.value, "ci_low": st.ci_low, "ci_high": st.ci_high,
            "cell": _common(release, s)["primary_label"]}


def downloads(release: IdeasRelease, scores_dir: Path) -> dict[str, bytes]:
    """The score files offered for download, verbatim."""
    scores_of(release, scores_dir)  # the folder belongs to the release shown
    return {f"downloads/{name}": (Path(scores_dir) / name).read_bytes() for name in DOWNLOADS if name in SCORE_FILES}
