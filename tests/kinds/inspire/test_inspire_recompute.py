"""The committed sample's leaderboard equals an independent recomputation to 1e-9.

The recomputation below reads the archive's files with json and pyarrow alone and
follows INSPIRE.md §2–§3 literally, one target at a time in plain Python — no
code of the kind's scorer — for every entry, condition, split, view and metric
of the leaderboard (declared gains, target clusters). Where ir_measures is
installed, its nDCG@10, RR@10, R@10 and Success@10 give the same per-target values.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import pytest

from rapgen.archive import verify_archive
from rapgen.kinds import Registry
from rapgen.kinds.inspire import KIND
from rapgen.kinds.rap import KIND as RAP

SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "inspire"
K = 10
PATTERNS = (re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$"), re.compile(r"^([a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$"))


def _canon(s: str) -> tuple[str, bool]:
    for p in PATTERNS:
        m = p.match(s)
        if m:
            return m.group(1), True
    return s, False


def _lines(rel: str) -> list[dict]:
    return [json.loads(x) for x in (SAMPLE / rel).read_text(encoding="utf-8").splitlines() if x.strip()]


def _table(rel: str) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(SAMPLE / rel).to_pylist()


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(j + 1) for j, g in enumerate(gains[:K], start=1))


def _phi(ids: set[str], Y: dict[str, float], idcg: float) -> float:
    return _dcg(sorted((Y[i] for i in ids if i in Y), reverse=True)) / idcg


def _unit(ranking: list[str] | None, returned: list[list[str]], Y: dict[str, float]) -> dict[str, float | None]:
    """One target's metric values (None: undefined), INSPIRE.md §2–§3 as written."""
    kept: list[tuple[str, bool]] = []
    for s in ranking or []:
        key, ok = _canon(s)
        if key not in [k for k, _ in kept]:
            kept.append((key, ok))
    kept = kept[:K]
    E = {_canon(i)[0] for ids in returned for i in ids if _canon(i)[1]}
    gains = [Y[k] if ok and k in Y and k in E else 0.0 for k, ok in kept]
    idcg = _dcg(sorted(Y.values(), reverse=True))
    h = sum(1 for g in gains if g > 0)
    first = next((j for j, g in enumerate(gains, start=1) if g > 0), None)
    ndcg = _dcg(gains) / idcg
    exposed = _phi(E, Y, idcg)
    selected = _phi({k for k, ok in kept if ok} & E, Y, idcg)
    return {
        "ndcg@10": ndcg, "recall@10": h / len(Y), "mrr@10": 1 / first if first else 0.0, "anyhit@10": float(h >= 1),
        "hits3": float(h >= 3) if len(Y) >= 3 else None, "hits5": float(h >= 5) if len(Y) >= 5 else None,
        "exposed_gain": exposed, "selected_gain": selected, "zero_exposure": float(not (E & Y.keys())),
        "exposure_loss": 1 - exposed, "selection_loss": exposed - selected, "ranking_loss": selected - ndcg,
        "total_calls": float(len(returned)), "_num": ndcg, "_exp": exposed, "_sel": selected,
    }


def recompute() -> dict[tuple, float | None]:
    """(view, split, entry, condition, metric) -> estimate, from the raw files."""
    instances = {r["instance_id"]: r for r in _lines("archive/benchmark/instances.jsonl")}
    view = {r["instance_id"]: r["view"] for r in _table("archive/benchmark/targets.parquet")}
    labels: dict[str, dict[str, float]] = defaultdict(dict)
    for j in _table("archive/benchmark/judgements.parquet"):
        if j["gain"] > 0:
            labels[j["instance_id"]][j["arxiv_id"]] = j["gain"]
    out: dict[tuple, float | None] = {}
    for folder in sorted((SAMPLE / "archive/models").iterdir()):
        preds = _lines(f"archive/models/{folder.name}/predictions.jsonl")
        calls: dict[tuple, list] = defaultdict(list)
        for c in _lines(f"archive/models/{folder.name}/traces.jsonl"):
            calls[(c["instance_id"], c["condition"])].append((c["call_index"], c["returned_ids"]))
        by_unit = {(p["instance_id"], p["condition"]): p for p in preds}
        for condition in sorted({p["condition"] for p in preds}):
            for split in ("train", "dev", "eval"):
                items = sorted(i for i, r in instances.items() if r["split"] == split)
                if not any((i, condition) in by_unit for i in items):
                    continue
                units = {}
                for i in items:
                    p = by_unit.get((i, condition))
                    ranking = [e["arxiv_id"] for e in p["ranking"]] if p and p["status"] == "submitted" else None
                    units[i] = _unit(ranking, [ids for _, ids in sorted(calls.get((i, condition), []))], labels[i])
                for v in ("clean", "all", "flagged"):
                    chosen = [units[i] for i in items if v == "all" or view[i] == v]
                    for metric in (*(m for m in chosen[0] if not m.startswith("_")), "gain_kept", "rank_quality") if chosen else ():
                        if metric in ("gain_kept", "rank_quality"):
                            den = sum(u["_exp" if metric == "gain_kept" else "_sel"] for u in chosen)
                            value = sum(u["_num"] for u in chosen) / den if den > 0 else None
                        else:
                            defined = [u[metric] for u in chosen if u[metric] is not None]
                            value = sum(defined) / len(defined) if defined else None
                        out[(v, split, folder.name, condition, metric)] = value
    return out


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory) -> list[dict]:
    report = verify_archive(SAMPLE, kinds=Registry([KIND, RAP]).formats)
    assert report.ok
    out = tmp_path_factory.mktemp("scores")
    KIND.write_scores(KIND.score(report.verified.release(), resamples=20), out)
    return list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))


def test_every_leaderboard_estimate_equals_the_recomputation(leaderboard):
    want = recompute()
    got = {(r["track"], r["split"], r["entry"], r["condition"], r["metric"]): None if r["estimate"] == "" else float(r["estimate"])
           for r in leaderboard if (r["gains"], r["cluster"]) == ("declared", "target")}
    assert set(got) == set(want) and len(got) == 2 * 2 * 2 * 3 * 15  # entries, splits, conditions, views, metrics
    for key, value in want.items():
        if value is None:
            assert got[key] is None, key
        else:
            assert got[key] is not None and abs(got[key] - value) <= 1e-9, (key, got[key], value)


def test_ir_measures_agrees_per_target():
    ir = pytest.importorskip("ir_measures")
    instances = {r["instance_id"]: r for r in _lines("archive/benchmark/instances.jsonl")}
    qrels = [ir.Qrel(j["instance_id"], j["arxiv_id"], int(round(j["gain"] * 2))) for j in _table("archive/benchmark/judgements.parquet")]
    labels: dict[str, dict[str, float]] = defaultdict(dict)
    for j in _table("archive/benchmark/judgements.parquet"):
        labels[j["instance_id"]][j["arxiv_id"]] = j["gain"]
    preds = [p for p in _lines("archive/models/bm25-brief/predictions.jsonl") if p["condition"] == "detailed"]
    returned: dict[str, list] = defaultdict(list)
    for c in _lines("archive/models/bm25-brief/traces.jsonl"):
        if c["condition"] == "detailed":
            returned[c["instance_id"]].append(c["returned_ids"])
    run = []
    for p in preds:
        seen = {i for ids in returned[p["instance_id"]] for i in ids}
        for rank, e in enumerate(p["ranking"] or []):
            key = _canon(e["arxiv_id"])[0]
            doc = key if key in seen else f"unsurfaced-{rank}"  # an unsurfaced slot scores as an id outside the qrels
            run.append(ir.ScoredDoc(p["instance_id"], doc, float(K - rank)))
    measures = [ir.nDCG @ 10, ir.RR @ 10, ir.R @ 10, ir.Success @ 10]
    per = {(m.query_id, str(m.measure)): m.value for m in ir.iter_calc(measures, qrels, run)}
    for p in preds:
        iid = p["instance_id"]
        ranking = [e["arxiv_id"] for e in p["ranking"]] if p["status"] == "submitted" else None
        mine = _unit(ranking, returned[iid], labels[iid])
        for measure, metric in zip(measures, ("ndcg@10", "mrr@10", "recall@10", "anyhit@10")):
            assert abs(per.get((iid, str(measure)), 0.0) - mine[metric]) <= 1e-9, (iid, metric)
    assert len(instances) == 90
