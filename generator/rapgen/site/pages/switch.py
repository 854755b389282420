"""What the leaderboard's metric and policy choice switches between, embedded once per page.

The server-rendered tables show the headline (``PRIMARY``) metric and policy; this
module packs every other (policy, metric) cell of the same panels — estimate,
interval and the CI-aware rank from ``ranks.csv``'s ``metric`` column — into one
compact JSON document that ``leaderboard.js`` reads. Nothing is computed here:
values are copied from ``leaderboard.csv`` and ``ranks.csv``, rounded to the
digits the page prints.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from rapgen.scores import BASELINE_CONDITION as BASE, JSD, METRICS, POLICIES, PRIMARY, SPEARMAN, TRACKS, TV, TV_GAIN
from rapgen.site.cells import CONDITION_LABEL, LEADER_CONDITIONS, METRIC_LABEL, LeaderPanel, index, num, records
from rapgen.site.escape import chart_text
from rapgen.site.i18n import current, t
from rapgen.site.inputs import ScoreOutputs

# The metrics a reader can choose on the leaderboard (the descriptive ones stay on the model pages).
LEADER_METRICS: tuple[str, ...] = (SPEARMAN, TV, JSD, TV_GAIN)
DIGITS = 4  # one more than printed, so the page's rounding matches the server's


def _r(value) -> float | None:
    v = num(value)
    return None if v is None else round(v, DIGITS)


def _rank_cells(out: ScoreOutputs) -> dict[tuple, tuple]:
    """(track, split, policy, condition, metric, entry) -> (rank, tied 0/1)."""
    groups = defaultdict(list)
    for r in records(out.ranks):
        groups[(r["track"], r["split"], r["policy"], r["condition"], r["metric"])].append(r)
    found = {}
    for key, rows in groups.items():
        counts = Counter(num(r["rank"]) for r in rows)
        for r in rows:
            rk = num(r["rank"])
            found[key + (r["entry"],)] = (rk, int(rk is not None and counts[rk] > 1))
    return found


def _value(row, rank) -> list | None:
    if row is None:
        return None
    return [_r(row["estimate"]), _r(row["ci_low"]), _r(row["ci_high"]), rank[0] if rank else None, rank[1] if rank else 0]


def switch_data(panels: dict[str, list[LeaderPanel]], out: ScoreOutputs) -> str:
    """The JSON the leaderboard's choice reads: metrics, policies and, per panel
    (table id), the rows' entries and every (policy, metric, condition) value list."""
    lb = out.leaderboard
    idx = index(lb, ["track", "split", "policy", "kind", "entry", "condition", "metric"])
    ranks = _rank_cells(out)
    specs = {m.name: m for m in METRICS}
    doc_panels = {}
    for split_panels in panels.values():
        for p in split_panels:
            if p.track not in TRACKS or not (p.rows or p.baselines):
                continue
            values: dict = {}
            for policy in POLICIES:
                for metric in LEADER_METRICS:
                    per = {}
                    for cond in LEADER_CONDITIONS:
                        per[cond] = [_value(idx.get((p.track, p.split, policy, "model", r.entry, cond, metric)),
                                            ranks.get((p.track, p.split, policy, cond, metric, r.entry))) for r in p.rows]
                    per[BASE] = [_value(idx.get((p.track, p.split, policy, "baseline", r.entry, BASE, metric)),
                                        ranks.get((p.track, p.split, policy, BASE, metric, r.entry))
                                        or ranks.get((p.track, p.split, policy, PRIMARY.condition, metric, r.entry))) for r in p.baselines]
                    values[f"{policy}/{metric}"] = per
            doc_panels[p.table_id] = {
                "models": [r.entry for r in p.rows], "baselines": [r.entry for r in p.baselines],
                "labels": [chart_text(r.name) for r in p.rows], "baseline_labels": [chart_text(t("common.baseline_suffix", name=r.name)) for r in p.baselines],
                "values": values,
            }
    doc = {
        "primary": [PRIMARY.policy, PRIMARY.metric],
        "conditions": list(LEADER_CONDITIONS), "series": [CONDITION_LABEL[c] for c in LEADER_CONDITIONS] + [CONDITION_LABEL[BASE]],
        "metrics": {name: {"label": METRIC_LABEL[name], "higher": specs[name].higher_is_better} for name in LEADER_METRICS},
        "text": current().js("lb.js"),
        "panels": doc_panels,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
