"""The Compare page: any two entries side by side, with the paired difference from ``pairs.csv``.

The scorer computes the difference of every pair of entries in a rank group from
the same bootstrap draws (``pairs.csv``: estimate = a − b with its interval); the
page embeds those rows and the entries' own estimates (``leaderboard.csv``) for
the headline policy, and ``compare.js`` shows the two the reader picks. A pair
stored as (b, a) is shown as a − b by negating the estimate and swapping the
interval's ends, which is exact for a percentile interval of a difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rapgen.archive import CONDITIONS as MODEL_CONDITIONS, RapRelease
from rapgen.scores import BASELINE_CONDITION, METRICS, PRIMARY, TRACKS
from rapgen.site.cells import CONDITION_LABEL, METRIC_LABEL, SPLIT_LABEL, SPLITS, TRACK_LABEL, num, records
from rapgen.site.escape import clean
from rapgen.site.i18n import current
from rapgen.site.inputs import ScoreOutputs

CONDITIONS = (*MODEL_CONDITIONS, BASELINE_CONDITION)
DIGITS = 4


@dataclass
class ComparePage:
    data: str  # JSON for compare.js
    n_entries: int
    n_pairs: int
    policy: str


def _r(value) -> float | None:
    v = num(value)
    return None if v is None else round(v, DIGITS)


def build_compare(archive: RapRelease, out: ScoreOutputs) -> ComparePage | None:
    """None when the score folder has no pairs.csv (scores written before it existed)."""
    if out.pairs is None:
        return None
    names = {m.model_id: m.display_name for m in archive.models}
    lb = out.leaderboard[(out.leaderboard["policy"] == PRIMARY.policy) & out.leaderboard["track"].isin(TRACKS)]
    pairs = out.pairs[(out.pairs["policy"] == PRIMARY.policy) & out.pairs["track"].isin(TRACKS)]
    kinds = {}
    for r in records(lb[["entry", "kind"]].drop_duplicates()):
        kinds[r["entry"]] = r["kind"]
    entries = sorted(kinds, key=lambda e: (kinds[e] != "model", e))
    pos = {e: i for i, e in enumerate(entries)}
    present = set(pairs["metric"])
    metrics = [m for m in METRICS if m.name in present]
    est: dict = {}
    for r in records(lb):
        if r["entry"] in pos and r["metric"] in present:
            est.setdefault(f"{r['track']}/{r['split']}", {}).setdefault(f"{r['condition']}/{r['metric']}", {})[pos[r["entry"]]] = [
                _r(r["estimate"]), _r(r["ci_low"]), _r(r["ci_high"])]
    diffs: dict = {}
    for r in records(pairs):
        if r["entry_a"] in pos and r["entry_b"] in pos:
            diffs.setdefault(f"{r['track']}/{r['split']}", {}).setdefault(f"{r['condition']}/{r['metric']}", []).append(
                [pos[r["entry_a"]], pos[r["entry_b"]], _r(r["estimate"]), _r(r["ci_low"]), _r(r["ci_high"]), int(r["n_fields"])])
    doc = {
        "entries": [[clean(e), clean(names.get(e, e)), kinds[e]] for e in entries],
        "tracks": [[t, TRACK_LABEL[t]] for t in TRACKS], "splits": [[s, SPLIT_LABEL[s]] for s in SPLITS],
        "conditions": [[c, CONDITION_LABEL[c]] for c in CONDITIONS],
        "metrics": [[m.name, METRIC_LABEL[m.name], m.higher_is_better] for m in metrics],
        "text": current().js("cmp.js"),
        "est": est, "pairs": diffs,
    }
    data = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return ComparePage(data, len(entries), len(pairs), PRIMARY.policy)
