"""Who takes part in which Ideas track, from coverage alone (units.entry_mask, statistics, rank groups).

Four topics x two cutoffs. In All cutoffs an entry scored everywhere is ranked; one without forecasts for a
cutoff, or whose judge covers only one cutoff, has no row (partial); one no judge has evaluated keeps its
row, with no numbers. In Live an entry is scored on the on-time cutoffs it has, and ranks and pairs compare
only entries scored on the same cutoffs.
"""

from __future__ import annotations

from datetime import date

import numpy as np

from rapgen.kinds.ideas.archive.episodes import Episode
from rapgen.kinds.ideas.scores.coverage import partial_entries
from rapgen.kinds.ideas.scores.metrics import METRICS
from rapgen.kinds.ideas.scores.units import GROUP_BY, Coverage, Track, UnitValues, statistics
from rapgen.scores import SplitDraws, cluster_index, score_statistics

C1, C2 = date(2025, 1, 1), date(2025, 2, 1)
ITEMS = [Episode(f"t{k}@{c.isoformat()}", f"t{k}", c, 5, "0" * 64) for k in range(4) for c in (C1, C2)]
AT1 = np.array([e.cutoff == C1 for e in ITEMS])
EVERY = np.ones(len(ITEMS), dtype=bool)
JUDGE = "j"


def values(hit: float, scored: np.ndarray) -> UnitValues:
    table = {m.name: np.where(scored, hit, np.nan) for m in METRICS}
    return UnitValues({"direct": table}, 0, {"direct": np.full(len(ITEMS), 5)})


COVER = {  # model -> (forecast, evaluated)
    "complete": (EVERY, EVERY), "no-feb": (AT1, AT1), "feb-awaits": (EVERY, AT1), "unjudged": (EVERY, ~EVERY),
    "live-both": (EVERY, EVERY), "live-jan": (EVERY, EVERY),
}
HIT = {"complete": 0.9, "no-feb": 0.5, "feb-awaits": 0.5, "unjudged": 0.0, "live-both": 0.1, "live-jan": 0.95}
COVERAGE = {(m, JUDGE, "direct"): Coverage(f, e) for m, (f, e) in COVER.items()}
PER_MODEL = {m: {(JUDGE, "default"): values(HIT[m], f & e)} for m, (f, e) in COVER.items()}
LIVE = {"live-both": EVERY, "live-jan": AT1}
TRACKS = [Track("all_cutoff", lambda _m: EVERY), Track("live", lambda m: LIVE.get(m), whole=False)]


def scored():
    stats = statistics(ITEMS, PER_MODEL, TRACKS, COVERAGE)
    counts = np.random.default_rng(0).integers(0, 3, (200, 4)).astype(float)
    return score_statistics(stats, {"all": SplitDraws(cluster_index([e.topic_id for e in ITEMS]), counts)}, 0.95,
                            axes=("judge", "gate"), group_by=GROUP_BY)


def test_all_cutoff_ranks_complete_entries_and_keeps_an_unjudged_row_empty():
    rows = {r.stat.entry: r for r in scored().rows if r.stat.track == "all_cutoff" and r.stat.metric == "hit@5"}
    assert set(rows) == {"complete", "unjudged", "live-both", "live-jan"}
    assert rows["complete"].estimate == 0.9 and rows["complete"].n_items == 8
    assert rows["unjudged"].estimate is None and rows["unjudged"].rank is None


def test_partial_entries_say_what_is_missing_and_what_awaits_evaluation():
    found = {p["entry"]: p for p in partial_entries(ITEMS, TRACKS, COVERAGE, [JUDGE])}
    assert set(found) == {"no-feb", "feb-awaits"}  # live is not a whole track
    assert (found["no-feb"]["cutoffs"], found["no-feb"]["of"], found["no-feb"]["missing"]) == (1, 2, ["2025-02-01"])
    assert (found["feb-awaits"]["cutoffs"], found["feb-awaits"]["evaluated"], found["feb-awaits"]["awaiting"]) == (2, 1, ["2025-02-01"])


def test_live_ranks_and_pairs_compare_only_the_same_cutoffs():
    result = scored()
    live = {r.stat.entry: r for r in result.rows if r.stat.track == "live" and r.stat.metric == "hit@5"}
    assert set(live) == {"live-both", "live-jan"}
    assert live["live-jan"].n_items == 4 and live["live-both"].n_items == 8
    assert live["live-jan"].rank == 1 and live["live-both"].rank == 1  # each alone in its group, though 0.1 < 0.95
    assert not [p for p in result.pairs if result.rows[p.a].stat.track == "live"]
