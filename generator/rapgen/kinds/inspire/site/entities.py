"""The Inspire pages of one entity: Targets (an index and one page per target) and Models (an
index and one page per model or reference agent).

A target page shows the brief, the cutoff, the target's labels by tier and role and, per
entry, what became of each label: ranked (and where), listed but never returned by the
unit's own searches, returned but left out, or never returned. The labels are numbered
(A1, A2, … by gain, then id) and their arXiv ids are not shown (INSPIRE.md §4: no label
ids). What became of a label is read from the unit's ranked list and traces with the
scorer's own cleaning and exposure (:func:`clean_ranking`, :func:`exposure_of`); every
score is the score folder's.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapgen.site import PageSpec, t

from rapgen.kinds.inspire.archive import calls_by_unit, layout
from rapgen.kinds.inspire.archive.kind import InspireRelease
from rapgen.kinds.inspire.scores import EMPTY, clean_ranking, exposure_of
from rapgen.kinds.inspire.site.pages import (
    CLEANING, LOSSES, RANKED, SLOT_OUTCOMES, STAGES, common, entry_name, funnel_views, names_of, scores_of,
)

TARGET_SCORES = ("ndcg@10", "recall@10", "mrr@10", "exposed_gain", "selected_gain", "total_calls")


@dataclass(frozen=True)
class Fate:
    """What one unit did with one label: its slot in the cleaned list (1-based, or None) and
    whether the unit's searches returned it."""

    position: int | None
    exposed: bool

    @property
    def code(self) -> str:
        if self.position is not None:
            return "ranked" if self.exposed else "unsurfaced"
        return "left_out" if self.exposed else "unseen"

    def text(self) -> str:
        return t(f"inspire.tg.fate_{self.code}", position=self.position or 0)


def fates(release: InspireRelease) -> dict[str, dict[tuple[str, str], dict[str, Fate]]]:
    """instance -> (entry, condition) -> label id -> its fate, for every unit the release holds."""
    ledger = release.ledger
    assert ledger is not None
    labels: dict[str, list[str]] = defaultdict(list)
    for j in release.judgements:
        labels[j.instance_id].append(j.arxiv_id)
    out: dict[str, dict[tuple[str, str], dict[str, Fate]]] = defaultdict(dict)
    for model_id, files in sorted(release.models.items()):
        calls = calls_by_unit(files.calls)
        for p in files.predictions:
            cleaned = EMPTY if p.failed else clean_ranking(p.submitted_ids, ledger.K)
            slots = {k: j for j, (k, ok) in enumerate(zip(cleaned.keys, cleaned.canonical), start=1) if ok}
            seen = exposure_of(calls.get((p.instance_id, p.condition), [])).ids
            out[p.instance_id][(model_id, p.condition)] = {a: Fate(slots.get(a), a in seen) for a in labels[p.instance_id]}
    return out


def _ordered_labels(release: InspireRelease, instance_id: str) -> list:
    return sorted((j for j in release.judgements if j.instance_id == instance_id), key=lambda j: (-j.gain, j.arxiv_id))


def _tier_counts(labels) -> dict[str, Any]:
    by = Counter((j.tier, j.role) for j in labels)
    rows = [{"tier": tier, "counts": [by[(tier, role)] for role in layout.ROLES], "total": sum(by[(tier, r)] for r in layout.ROLES)}
            for tier in reversed(layout.TIERS)]
    return {"rows": rows, "roles": layout.ROLES, "totals": [sum(by[(tr, role)] for tr in layout.TIERS) for role in layout.ROLES],
            "total": len(labels)}


# ---------------------------------------------------------------- Targets
def _target_rows(release: InspireRelease, s) -> tuple[list[dict], list[tuple[str, str]]]:
    h = s.headline
    heads = [(e, c) for e, _k, c in s.entries() if c == h["condition"]]
    by_id = {i.instance_id: i for i in release.instances}
    labels: dict[str, list] = defaultdict(list)
    for j in release.judgements:
        labels[j.instance_id].append(j)
    rows = []
    for target in sorted(release.targets, key=lambda x: x.instance_id):
        units = {(u["entry"], u["condition"]): u for u in s.units_by_target.get(target.instance_id, [])}
        tiers = Counter(j.tier for j in labels[target.instance_id])
        rows.append({"id": target.instance_id, "split": by_id[target.instance_id].split, "view": target.view,
                     "topic": target.topic, "cutoff": by_id[target.instance_id].cutoff.isoformat(),
                     "n_labels": len(labels[target.instance_id]), "tiers": [tiers[tr] for tr in reversed(layout.TIERS)],
                     "scores": [units[k]["ndcg@10"] if k in units else None for k in heads]})
    return rows, heads


def targets(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    rows, heads = _target_rows(release, s)
    names = names_of(release)
    return {**common(release, s), "targets": rows, "tiers": list(reversed(layout.TIERS)),
            "heads": [entry_name(names, e, c) for e, c in heads]}


def target_page(instance_id: str, fate_of: dict[tuple[str, str], dict[str, Fate]]):
    """The builder of one target's page."""

    def build(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
        s = scores_of(release, scores_dir)
        names = names_of(release)
        instance = next(i for i in release.instances if i.instance_id == instance_id)
        target = next(x for x in release.targets if x.instance_id == instance_id)
        labels = _ordered_labels(release, instance_id)
        units = {(u["entry"], u["condition"]): u for u in s.units_by_target.get(instance_id, [])}
        columns = [(e, c) for e, _k, c in s.entries()]
        label_rows = [{"name": f"A{n}", "tier": j.tier, "role": t(f"inspire.role.{j.role}"), "gain": j.gain,
                       "fates": [fate_of.get(k, {}).get(j.arxiv_id) for k in columns]}
                      for n, j in enumerate(labels, start=1)]
        for row in label_rows:
            row["found"] = sum(1 for f in row["fates"] if f is not None and f.code == "ranked")
        scored = [{"name": entry_name(names, e, c), "status": units[(e, c)]["status"],
                   "cells": [units[(e, c)][m] for m in TARGET_SCORES], "hits": units[(e, c)]["hits"]}
                  for e, c in columns if (e, c) in units]
        return {**common(release, s), "instance": instance, "target": target, "tiers": _tier_counts(labels),
                "labels": label_rows, "columns": [entry_name(names, e, c) for e, c in columns], "scored": scored,
                "target_scores": TARGET_SCORES, "role_label": lambda r: t(f"inspire.role.{r}")}

    return build


def target_pages(release: InspireRelease, _scores_dir: Path) -> list[PageSpec]:
    fate_of = fates(release)
    return [PageSpec(f"targets/{x.instance_id}.md", "pages/target.md.j2", target_page(x.instance_id, fate_of.get(x.instance_id, {})),
                     in_nav=False) for x in sorted(release.targets, key=lambda x: x.instance_id)]


# ---------------------------------------------------------------- Models
def _replay_of(s, model_id: str) -> dict[str, Any] | None:
    if s.replay is None:
        return None
    units = [u for u in s.replay["units"] if u["model_id"] == model_id]
    return {"n_calls": sum(u["n_calls"] for u in units), "n_reproduced": sum(u["n_reproduced"] for u in units)} if units else None


def _card(release: InspireRelease, s, model_id: str) -> dict[str, Any]:
    h = s.headline
    files = release.models[model_id]
    info = files.info
    kind = "reference" if files.is_reference else "model"
    conditions = [c for e, _k, c in s.entries() if e == model_id]
    head = {c: s.cell(h["track"], h["split"], h["gains"], h["cluster"], model_id, c, h["metric"]) for c in conditions}
    calls = {c: s.cell(h["track"], h["split"], h["gains"], h["cluster"], model_id, c, "total_calls") for c in conditions}
    return {"id": model_id, "name": info.display_name if info else model_id, "kind": kind,
            "provider": info.provider if info else "", "notes": info.notes if info else "",
            "cutoff": info.knowledge_cutoff.isoformat() if info and info.knowledge_cutoff else None,
            "submitted": info.submitted.isoformat() if info and info.submitted else None,
            "conditions": conditions, "head": head, "calls": calls, "replay": _replay_of(s, model_id)}


def models(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
    s = scores_of(release, scores_dir)
    return {**common(release, s), "models": [_card(release, s, m) for m in release.model_ids]}


def model_page(model_id: str):
    def build(release: InspireRelease, scores_dir: Path) -> dict[str, Any]:
        s = scores_of(release, scores_dir)
        h = s.headline
        card = _card(release, s, model_id)
        ranked = [{"condition": c, "stats": [s.cell(h["track"], h["split"], h["gains"], h["cluster"], model_id, c, m) for m in RANKED]}
                  for c in card["conditions"]]
        accounting = [a for a in s.meta["accounting"] if a["entry"] == model_id]
        return {**common(release, s), "m": card, "ranked_rows": ranked, "ranked": RANKED, "accounting": accounting,
                "outcomes": SLOT_OUTCOMES, "cleaning": CLEANING, "stages": STAGES, "losses": LOSSES,
                "views": funnel_views(release, s, [(model_id, c) for c in card["conditions"]], f"md-{model_id}")}

    return build


def model_pages(release: InspireRelease, _scores_dir: Path) -> list[PageSpec]:
    return [PageSpec(f"models/{m}.md", "pages/model.md.j2", model_page(m), in_nav=False) for m in release.model_ids]
