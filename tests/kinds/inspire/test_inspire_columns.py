"""The vectorised scorer (scores.columns, scores.funnel) equals the per-unit one bit for bit, on random archives."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pytest

from inspire_fixture import LEDGER
from rapgen.kinds.inspire.archive import Call, CorpusPaper, Instance, Judgement, Prediction, RankedEntry, brief_digest
from rapgen.kinds.inspire.scores import diagnostic_sums, item_sums, progress_sums, score_units
from rapgen.kinds.inspire.scores.columns import Codes, item_arrays, label_table, metric_sums, sequential_dcg, unit_columns
from rapgen.kinds.inspire.scores.funnel import funnel_sums, progress_arrays
from rapgen.kinds.inspire.scores.gains import dcg

MAPS = ("declared", "binary", "t2t3")
CUTOFF = date(2025, 3, 1)


def _world(seed: int):
    """A random archive: labels of every tier and role (some targets T1 only, so t2t3 excludes
    them), lists with versions, duplicates, strings that are no ids, unknown and post-cutoff ids,
    over-long, empty, failed and absent units; calls out of order, with repeats, versioned and
    malformed returned ids, units without calls and calls of another condition."""
    rng = np.random.default_rng(seed)
    papers = [f"24{m:02d}.{n:05d}" for m in range(1, 13) for n in range(1, 9)]
    late = [f"2504.{n:05d}" for n in range(1, 6)]
    corpus = {p: CorpusPaper(p, "t", "a", date(2024, 1, 1) + timedelta(days=int(rng.integers(0, 400))), "x") for p in papers + late}
    for p in late:
        corpus[p] = CorpusPaper(p, "t", "a", date(2025, 4, 1), "x")
    n = int(rng.integers(5, 25))
    instances = [Instance(f"insp-{k:04d}", "eval", CUTOFF, "b", "b", brief_digest("b"), k) for k in rng.permutation(n) + 1]
    judgements = []
    for inst in instances:
        only_t1 = rng.random() < 0.2
        for aid in rng.choice(papers, size=int(rng.integers(1, 13)), replace=False):
            tier = "T1" if only_t1 else str(rng.choice(["T1", "T2", "T3"]))
            role = str(rng.choice(["conceptual", "infrastructural"]))
            judgements.append(Judgement(inst.instance_id, str(aid), tier, role, LEDGER.gain(role, tier), 3, 3, "r"))
    pool = papers + late + ["2301.99999"]
    preds, calls = [], []
    for inst in instances:
        for cond in ("detailed", "terse"):
            if rng.random() < 0.1:
                continue  # absent: scored as failed
            n_calls = int(rng.integers(0, 9))
            for k in rng.permutation(n_calls):
                ids = [str(a) + ("v3" if rng.random() < 0.1 else "") for a in rng.choice(pool, size=int(rng.integers(0, 12)))]
                if rng.random() < 0.1:
                    ids.append("junk id")
                calls.append(Call(inst.instance_id, cond, int(k), "q", "relevance", None, None, 99, tuple(ids), 1))
            if rng.random() < 0.1:
                preds.append(Prediction(inst.instance_id, cond, "failed", None, "x", None, None, None, None))
                continue
            size = int(rng.integers(0, 14))
            ranked = [str(a) for a in rng.choice(pool, size=size)]
            ranked = [a + "v2" if rng.random() < 0.15 else a for a in ranked] + (["not an id"] if rng.random() < 0.2 else [])
            preds.append(Prediction(inst.instance_id, cond, "submitted", tuple(RankedEntry(a) for a in ranked), None, 1, 1, 1.0, None))
    return instances, judgements, corpus, preds, calls


@pytest.mark.parametrize("seed", range(12))
def test_columns_equal_the_per_unit_scorer(seed):
    instances, judgements, corpus, preds, calls = _world(seed)
    labels = label_table(instances, judgements)
    cutoffs = {i.instance_id: i.cutoff for i in instances}
    codes = Codes()  # shared across conditions, as the board shares it across entries
    for cond in ("detailed", "terse"):
        old = score_units("m", cond, instances, judgements, preds, calls, corpus, K=LEDGER.K, gain_maps=MAPS)
        cols = unit_columns("m", cond, labels, preds, calls, corpus, cutoffs, K=LEDGER.K, codes=codes)
        assert labels.items == old.items
        for key, total in old.totals().items():
            per_unit = [u.counts[key] for u in old.units]
            assert cols.counts[key].tolist() == per_unit, key
            assert int(cols.counts[key].sum()) == total
        for gain_map in MAPS:
            arrays = item_arrays(cols, labels, gain_map, LEDGER.K)
            assert arrays.defined.tolist() == [u.scores[gain_map] is not None for u in old.units]
            for new, ref in ((metric_sums(arrays), item_sums(old, gain_map)),
                             (funnel_sums(cols, labels, arrays, gain_map, prefix=7), diagnostic_sums(old, judgements, prefix=7, gain_map=gain_map)),
                             (progress_arrays(cols, labels, arrays, gain_map, K=LEDGER.K, steps=4),
                              progress_sums(old, judgements, K=LEDGER.K, steps=4, gain_map=gain_map))):
                assert np.array_equal(new[0], ref[0]) and np.array_equal(new[1], ref[1]), (cond, gain_map)


def test_the_random_worlds_reach_every_path():
    """The property test above is only as good as its inputs: every outcome and exclusion occurs."""
    seen: dict[str, int] = {}
    excluded = 0
    for seed in range(12):
        instances, judgements, corpus, preds, calls = _world(seed)
        old = score_units("m", "detailed", instances, judgements, preds, calls, corpus, K=LEDGER.K, gain_maps=MAPS)
        for k, v in old.totals().items():
            seen[k] = seen.get(k, 0) + v
        excluded += sum(u.scores["t2t3"] is None for u in old.units)
    assert excluded > 0 and all(v > 0 for v in seen.values()), seen


@pytest.mark.parametrize("gains", [[], [7.0], [0.5, 3.0, 0.0, 1.0], [4.0] * 12, [1e-300, 1e300, 3.0]])
def test_sequential_dcg_adds_in_dcg_order(gains):
    row = np.array([gains + [0.0] * 3]) if gains else np.zeros((1, 3))
    assert sequential_dcg(row, LEDGER.K)[0] == dcg(gains, LEDGER.K)
