"""IDEAS.md §7, the worked example, as golden tests: every number exact.

Assignment, adapter, credits per gate, per-episode metrics, their means and
the topic bootstrap on SCORING.md §8's count matrix; the credits are
cross-checked with ir_measures (each idea a document of relevance c_r) when
it is installed.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from rapgen.kinds.ideas.archive.adapter import adapt
from rapgen.kinds.ideas.archive.assignment import assign
from rapgen.kinds.ideas.archive.episodes import Episode
from rapgen.kinds.ideas.archive.eval_tables import JudgmentTable
from rapgen.kinds.ideas.archive.evaluation import Judgment
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import parse_predictions
from rapgen.kinds.ideas.archive.topics import parse_topics
from rapgen.kinds.ideas.archive.writers import jsonl_bytes
from rapgen.kinds.ideas.scores.credit import DEFAULT, STRICT, Judged, greedy_credit
from rapgen.kinds.ideas.scores.credit_table import unit_table_values
from rapgen.kinds.ideas.scores.metrics import EpisodeInputs, episode_metrics
from rapgen.kinds.ideas.scores.units import Track, statistics, unit_values
from rapgen.scores import SplitDraws, cluster_index, score_statistics

TOPICS = jsonl_bytes([
    {"topic_id": "diffusion", "name": "Diffusion models", "aliases": ["score-based generative models"], "keywords": ["denoising diffusion", "DDPM"]},
    {"topic_id": "rlhf", "name": "RL from human feedback", "aliases": ["RLHF", "preference optimization"], "keywords": ["reward model", "DPO"]},
    {"topic_id": "gnn", "name": "Graph neural networks", "aliases": ["GNN", "message passing"], "keywords": ["graph transformer"]},
])
D = date(2024, 5, 1)
PAPERS = [
    Paper("2405.01234", "Preference Optimization for Text-to-Image Diffusion Models", "", ("DPO on denoising steps",), D),
    Paper("2406.04321", "Over-smoothing in deep message-passing networks", "", ("depth limits in GNNs",), D),
    Paper("2408.00042", "DDPMs as world models", "", (), D),
]


def test_assignment():
    topics, findings = parse_topics("archive/benchmark/topics.jsonl", TOPICS)
    assert findings == []
    got = [(a.arxiv_id, a.topic_id, a.matched_term) for a in assign(PAPERS, topics)]
    assert got == [
        ("2405.01234", "diffusion", "Diffusion models"),
        ("2406.04321", "gnn", "message passing"),  # "GNNs" is not "GNN": no stemming
        ("2405.01234", "rlhf", "preference optimization"),  # the first term in file order, not DPO
    ]  # 2408.00042: "ddpms" ≠ "ddpm", so no topic


def test_adapter():
    text = ("<think>\nmaybe…\n</think>\n\n## Resolution-adaptive step distillation\n"
            "We learn a per-resolution step schedule and distil it into a 4-step student.")
    idea = adapt(text, "Distilled samplers lose fidelity at high resolution.", "combine", "few-step diffusion samplers")
    assert idea["title"] == "Resolution-adaptive step distillation"
    assert idea["rationale"] == ("Distilled samplers lose fidelity at high resolution. "
                                 "We learn a per-resolution step schedule and distil it into a 4-step student.")
    assert len(idea["rationale"]) == 129
    assert idea["approach"] == "combine: few-step diffusion samplers"
    assert idea["key_terms"] == []


FAILED = None
# Episode -> rank -> [(cand_rank, arxiv_id, (P, M, S) or FAILED)]; ...nnn = 2409.00nnn.
CANDIDATES = {
    "diffusion": {1: [(1, "2409.00101", (3, 1, 3)), (2, "2409.00102", (1, 1, 0))],
                  2: [(1, "2409.00400", (2, 2, 2)), (2, "2409.00200", (3, 2, 2)), (5, "2410.00300", (2, 3, 3))],
                  3: [(1, "2409.00200", (3, 3, 3))],
                  4: [(4, "2410.00500", (2, 3, 2))]},
    "gnn": {r: [(1, f"2409.0300{r}", (1, 1, 1))] for r in range(1, 6)},
    "rlhf": {1: [(1, "2409.20001", (3, 3, 2))], 2: [(1, "2409.20002", FAILED)], 3: [(1, "2409.20001", (3, 3, 3))]},
}
TOPIC_ORDER = ("diffusion", "gnn", "rlhf")
CUTOFF = date(2024, 10, 1)


def judged(topic: str) -> dict[int, list[Judged]]:
    return {r: [Judged(k, pid, *(s if s is not None else (None, None, None))) for k, pid, s in cands]
            for r, cands in CANDIDATES[topic].items()}


EXPECTED = {  # (topic, gate): c, Hit@5, P@5, RR, soft, multiplicity, budget
    ("diffusion", "default"): ((0, 1, 0, 1, 0), 1, 0.4, 0.5, 7 / 9, 1, 0.8),
    ("diffusion", "strict"): ((0, 1, 1, 0, 0), 1, 0.4, 0.5, 17 / 18, 0.5, 0.8),
    ("gnn", "default"): ((0, 0, 0, 0, 0), 0, 0, 0, 0, 0, 1),
    ("gnn", "strict"): ((0, 0, 0, 0, 0), 0, 0, 0, 0, 0, 1),
    ("rlhf", "default"): ((1, 0, 0, 0, 0), 1, 0.2, 1, 8 / 9, 2 / 3, 0.6),
    ("rlhf", "strict"): ((0, 0, 1, 0, 0), 1, 0.2, 1 / 3, 1, 1 / 3, 0.6),
}
GATES = {"default": DEFAULT, "strict": STRICT}


@pytest.mark.parametrize("topic, gate", sorted(EXPECTED))
def test_credit_and_episode_metrics(topic, gate):
    c, hit, p5, rr, soft, mult, budget = EXPECTED[(topic, gate)]
    credit = greedy_credit(judged(topic), 5, GATES[gate])
    assert credit.c == c
    m = episode_metrics(EpisodeInputs(credit, len(CANDIDATES[topic]), 5))
    assert (m["hit@5"], m["p@5"], m["mrr"], m["budget"]) == pytest.approx((hit, p5, rr, budget), abs=1e-15)
    assert m["soft"] == pytest.approx(soft, abs=1e-15) and m["multiplicity"] == pytest.approx(mult, abs=1e-15)
    assert np.isnan(m["coverage"]) and np.isnan(m["novelty"])  # no cluster or feature file


def test_greedy_is_not_maximum_matching():
    # diffusion r3's only passing paper (…200) went to r2: 2 credits where a matching finds 3.
    credit = greedy_credit(judged("diffusion"), 5, DEFAULT)
    assert credit.credited[2].arxiv_id == "2409.00200" and 3 not in credit.credited
    # strict: rlhf r1 fails the gate, so r3 takes 2409.20001.
    assert greedy_credit(judged("rlhf"), 5, STRICT).credited[3].arxiv_id == "2409.20001"


def archive_inputs():
    """The example as parsed files: episodes, predictions (one strategy), judgments."""
    items = [Episode(f"{t}@{CUTOFF.isoformat()}", t, CUTOFF, 10, "0" * 64) for t in TOPIC_ORDER]
    lines, judgments = [], []
    for ep in items:
        for r in sorted(CANDIDATES[ep.topic_id]):
            lines.append({"episode_id": ep.episode_id, "condition": "summary", "rank": r, "title": f"idea {r}", "rationale": "",
                          "approach": "", "key_terms": [], "raw_sha256": None})
            for k, pid, s in CANDIDATES[ep.topic_id][r]:
                P, M, S = s if s is not None else (None, None, None)
                judgments.append(Judgment(ep.episode_id, "summary", r, k, pid, "gpt-4.1-mini", P, M, S,
                                          "ok" if s is not None else "failed", "0" * 64))
    preds, findings = parse_predictions("archive/models/m/predictions.jsonl", jsonl_bytes(lines), {e.episode_id: e for e in items}, 5)
    assert findings == []
    return items, preds, judgments


MEANS = {  # gate: Hit@5, P@5, MRR, soft
    "default": (2 / 3, 0.2, 0.5, (7 / 9 + 8 / 9) / 3),  # 0.666667 0.2 0.5 0.555556
    "strict": (2 / 3, 0.2, (0.5 + 1 / 3) / 3, (17 / 18 + 1) / 3),  # 0.666667 0.2 0.277778 0.648148
}
C8 = np.array([[0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]], dtype=float)


def scored_example(path: str = "rows"):
    """The example scored from judgment records one episode at a time (``rows``), or from the judgment
    columns for both gates at once (``columns``): the golden numbers hold for both."""
    items, preds, judgments = archive_inputs()
    if path == "rows":
        per_model = {"m": {("gpt-4.1-mini", g): unit_values(items, preds, judgments, GATES[g], 5) for g in ("default", "strict")}}
    else:
        by_gate = unit_table_values(items, preds, JudgmentTable.from_records(judgments), [DEFAULT, STRICT], 5)
        per_model = {"m": {("gpt-4.1-mini", g): by_gate[g] for g in ("default", "strict")}}
    stats = statistics(items, per_model, [Track("all_cutoff", lambda _m: np.ones(3, dtype=bool))])
    draws = {"all": SplitDraws(cluster_index([e.topic_id for e in items]), C8)}
    return score_statistics(stats, draws, 0.95, axes=("judge", "gate"))


PATHS = pytest.mark.parametrize("path", ["rows", "columns"])


@PATHS
@pytest.mark.parametrize("gate", ["default", "strict"])
def test_means_over_the_three_episodes(gate, path):
    rows = {r.stat.metric: r for r in scored_example(path).rows if r.stat.axes[1] == gate}
    got = tuple(rows[m].estimate for m in ("hit@5", "p@5", "mrr", "soft"))
    assert got == pytest.approx(MEANS[gate], abs=1e-12)
    assert rows["hit@5"].n_items == 3 and rows["hit@5"].stat.n_valid == 3 and rows["hit@5"].stat.n_invalid == 0
    assert rows["novelty"].estimate is None and rows["coverage"].estimate is None
    assert rows["soft"].rank is None and rows["hit@5"].rank == 1  # soft is not ranked


@pytest.mark.parametrize("metric, interval", [
    ("hit@5", (1 / 3, 1)),  # replicates [1/3, 1, 1, 2/3, 1/3]
    ("mrr", (1 / 3, 0.65)),  # replicates [1/3, 1/2, 1/2, 2/3, 1/3]
    ("p@5", (0.2 / 3, 0.4)),  # replicates [0.066667, 0.4, 0.4, 0.133333, 0.066667]
])
@PATHS
def test_topic_bootstrap_default_gate(metric, interval, path):
    row = next(r for r in scored_example(path).rows if r.stat.axes[1] == "default" and r.stat.metric == metric)
    assert (row.ci_low, row.ci_high) == pytest.approx(interval, abs=1e-12)


@PATHS
def test_gate_difference_is_paired(path):
    # default − strict MRR per topic: [0, 0, 2/3]; one draw matrix for both gates.
    scored = scored_example(path)
    rows = [r for r in scored.rows if r.stat.metric == "mrr"]
    diff = rows[0].estimate - rows[1].estimate
    assert diff == pytest.approx((0 + 0 + 2 / 3) / 3)


ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test extra")


@pytest.mark.parametrize("gate, P, RR", [("default", [0.4, 0, 0.2], [0.5, 0, 1]), ("strict", [0.4, 0, 0.2], [0.5, 0, 1 / 3])])
def test_credits_agree_with_ir_measures(gate, P, RR):
    from ir_measures import RR as RRm, P as Pm, Success

    qrels, run = [], []
    for t in TOPIC_ORDER:
        c = greedy_credit(judged(t), 5, GATES[gate]).c
        for r, rel in enumerate(c, start=1):
            qrels.append(ir_measures.Qrel(t, f"idea{r}", rel))
            if r in CANDIDATES[t]:  # an unfilled slot is no document of the run
                run.append(ir_measures.ScoredDoc(t, f"idea{r}", float(10 - r)))
    got = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc([Pm @ 5, RRm @ 5, Success @ 5], qrels, run)}
    assert [got[(t, "P@5")] for t in TOPIC_ORDER] == pytest.approx(P)
    assert [got[(t, "RR@5")] for t in TOPIC_ORDER] == pytest.approx(RR)
    assert [got[(t, "Success@5")] for t in TOPIC_ORDER] == pytest.approx([1, 0, 1])
