"""RAP's site: every page is built from one presentation model (:mod:`rapgen.site`), so the kind
hands the engine its whole renderer rather than a list of pages; ``card`` is what a portal shows."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from rapgen.archive import TEST_SPLIT, RapRelease
from rapgen.scores import PRIMARY
from rapgen.site import SiteSpec, render_docs

CARD_SPLIT = TEST_SPLIT  # the split the headline is read on


def card(release: RapRelease, scores_dir: Path) -> dict[str, Any] | None:
    """The model with the highest headline estimate (Spearman, All-Origin, canonical policy, A3) on the test split."""
    policy = PRIMARY.policy
    with open(Path(scores_dir) / "leaderboard.csv", encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle)
                if (r["track"], r["split"], r["policy"], r["kind"], r["condition"], r["metric"])
                == (PRIMARY.track, CARD_SPLIT, policy, "model", PRIMARY.condition, PRIMARY.metric) and r["estimate"]]
    if not rows:
        return None
    best = max(rows, key=lambda r: float(r["estimate"]))
    names = {m.model_id: m.display_name for m in release.models}
    return {"name": names.get(best["entry"], best["entry"]), "value": float(best["estimate"]),
            "ci_low": float(best["ci_low"]) if best["ci_low"] else None, "ci_high": float(best["ci_high"]) if best["ci_high"] else None,
            "cell": f"{PRIMARY.metric}, {PRIMARY.track}, {policy}, {PRIMARY.condition}, {CARD_SPLIT}"}


SITE = SiteSpec(render=render_docs, card=card)
