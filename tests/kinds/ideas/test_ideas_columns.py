"""The column implementations give exactly what the row-by-row statements of the rules give, on random inputs.

Each test draws many seeded random cases and compares the two paths bit for
bit: the evaluator files' parsing and checks (findings, in order, with their
expected and actual values and kinds), the credit and every episode metric
(float arrays compared as bytes), the ``phrase-v1`` rebuild, the clusters and
the episode pools.
"""

from __future__ import annotations

import io
import random
from datetime import date, timedelta

import numpy as np
import pyarrow.parquet as pq
import pytest

from rapgen.archive import shard_ids_sha256
from rapgen.kinds.ideas.archive.assignment import Assignment, assign, assign_all
from rapgen.kinds.ideas.archive.check import check_archive
from rapgen.kinds.ideas.archive.codes import EvalIndex, IdeaIndex
from rapgen.kinds.ideas.archive.config import Config, future_end
from rapgen.kinds.ideas.archive.episodes import Episode, build_pools, episode_id
from rapgen.kinds.ideas.archive.eval_tables import (
    JudgmentTable,
    check_candidate_table,
    check_judgment_table,
    parse_candidate_table,
    parse_cluster_table,
    parse_judgment_table,
)
from rapgen.kinds.ideas.archive.evaluation import (
    CANDIDATE_COLUMNS,
    CLUSTER_COLUMNS,
    JUDGMENT_COLUMNS,
    Judgment,
    check_candidates,
    check_judgments,
    parse_candidates,
    parse_clusters,
    parse_judgments,
)
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.predictions import Idea, Predictions
from rapgen.kinds.ideas.archive.topics import Topic
from rapgen.kinds.ideas.archive.writers import parquet_bytes
from rapgen.kinds.ideas.scores.credit import DEFAULT, STRICT
from rapgen.kinds.ideas.scores.credit_table import unit_table_values
from rapgen.kinds.ideas.scores.units import unit_values

RT = "archive/models/recent-titles"
CAND = f"{RT}/eval/lexical-a/candidates.parquet"
JUDG = f"{RT}/eval/lexical-a/judgments.parquet"
SEEDS = range(80)


def _rows(data: bytes) -> list[dict]:
    return pq.read_table(io.BytesIO(data)).to_pylist()


def _bytes(columns, table: list[dict]) -> bytes:
    return parquet_bytes(columns, [[r[c] for c, _ in columns] for r in table])


def _same(a: list, b: list) -> None:
    assert a == b
    assert [f.kind for f in a] == [f.kind for f in b]


@pytest.fixture(scope="module")
def checked(_tiny_ideas):
    archive, found = check_archive({p: b for p, b in _tiny_ideas.items() if p != "SHA256SUMS"})
    assert found == []
    return archive


# ---------------------------------------------------------------- evaluator files
def _mutate(rng: random.Random, cands: list[dict], judgs: list[dict], archive, edits=tuple(range(15))) -> None:
    """A few random edits of both files: reorders, repeats, deletions, other keys, papers, scores and keys."""
    future = archive.pools.future
    eids = sorted(future) + ["nope@2024-06-01"]
    history = [p for ids in archive.pools.history.values() for p in ids]
    for _ in range(rng.randint(1, 4)):
        table = rng.choice([cands, judgs])
        if not table:
            continue
        i = rng.randrange(len(table))
        row = table[i]
        edit = rng.choice(edits)
        if edit == 0:
            j = rng.randrange(len(table))
            table[i], table[j] = table[j], table[i]
        elif edit == 1:
            table.insert(rng.randrange(len(table) + 1), dict(row))
        elif edit == 2:
            del table[i]
        elif edit == 3:
            row["cand_rank"] = rng.randint(0, 12)
        elif edit == 4:
            row["arxiv_id"] = rng.choice([rng.choice(future.get(row["episode_id"], ("2499.00001",))), rng.choice(history), "2499.99999"])
        elif edit == 5 and "cosine" in row:
            row["cosine"] = rng.choice([row["cosine"] + 0.5, 0.0, cands[max(i - 1, 0)]["cosine"]])
        elif edit == 6 and "cache_key" in row:
            row["cache_key"] = rng.choice(["0" * 64, row["cache_key"].upper(), "x"])
        elif edit == 7 and "judge_id" in row:
            row["judge_id"] = "lexical-b"
        elif edit == 8 and "status" in row:
            row.update(rng.choice([{"status": "maybe"}, {"status": "failed"}, {"status": "ok", "P": None}, {"S": 4}, {"M": -1},
                                   {"status": "failed", "P": None, "M": None, "S": None}]))
        elif edit == 9:
            row["episode_id"] = rng.choice(eids)
        elif edit == 10:
            row["condition"] = rng.choice(["direct", "other"])
        elif edit == 11:
            row["rank"] = rng.randint(0, 7)
        elif edit == 12 and "P" in row and row["status"] == "ok":
            row.update(P=rng.randint(0, 3), M=rng.randint(0, 3), S=rng.randint(0, 3))
        elif edit == 13:
            rng.shuffle(table)
        elif edit == 14:
            row2 = dict(table[rng.randrange(len(table))])
            row2["rank"], row2["cand_rank"] = row["rank"], row["cand_rank"]
            table.append(row2)


def _both(archive, cands_bytes: bytes, judgs_bytes: bytes):
    mf = archive.models["recent-titles"]
    judge = archive.judges["lexical-a"]
    old_c, fc_old = parse_candidates(CAND, cands_bytes)
    old_j, fj_old = parse_judgments(JUDG, judgs_bytes)
    new_c, fc_new = parse_candidate_table(CAND, cands_bytes)
    new_j, fj_new = parse_judgment_table(JUDG, judgs_bytes)
    _same(fc_old, fc_new)
    _same(fj_old, fj_new)
    assert new_c.records() == old_c and new_j.records() == old_j
    ideas = IdeaIndex(EvalIndex(archive.papers, archive.pools), mf.predictions)
    _same(check_candidates(CAND, old_c, mf.predictions, archive.pools.future, 10), check_candidate_table(CAND, new_c, ideas, 10))
    try:
        old = check_judgments(JUDG, old_j, old_c, mf.predictions, archive.papers, archive.pools.future, "lexical-a", judge.line)
    except KeyError:  # the row-by-row check cannot look up a judged idea that predictions.jsonl lacks
        new = check_judgment_table(JUDG, new_j, new_c, ideas, "lexical-a", judge.line)
        assert any("not an idea of predictions.jsonl" in f.detail for f in new)
        return None
    _same(old, check_judgment_table(JUDG, new_j, new_c, ideas, "lexical-a", judge.line))
    return fc_old + fj_old + check_candidates(CAND, old_c, mf.predictions, archive.pools.future, 10) + old


def test_clean_evaluator_files_agree(checked, _tiny_ideas):
    assert _both(checked, _tiny_ideas[CAND], _tiny_ideas[JUDG]) == []


@pytest.mark.parametrize("edits", [tuple(range(15)), (5, 6, 8)], ids=["any", "cosine-key-status"])
def test_evaluator_checks_agree_on_random_edits(checked, _tiny_ideas, edits):
    found = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        cands, judgs = _rows(_tiny_ideas[CAND]), _rows(_tiny_ideas[JUDG])
        _mutate(rng, cands, judgs, checked, edits)
        result = _both(checked, _bytes(CANDIDATE_COLUMNS, cands), _bytes(JUDGMENT_COLUMNS, judgs))
        found += bool(result)
    assert found >= len(SEEDS) // 2  # most edits are caught, so the comparison covers the finding paths


# ---------------------------------------------------------------- credit and metrics
def _random_units(rng: random.Random):
    """Episodes, predictions and judgments with colliding papers, failed verdicts, repeats and strays."""
    cutoff = date(2024, 7, 1)
    items = [Episode(episode_id(f"t{k}", cutoff), f"t{k}", cutoff, 3, "0" * 64) for k in range(rng.randint(1, 6))]
    conditions = ("summary", "memory", "direct")[: rng.randint(1, 3)]
    p = Predictions(conditions=conditions)
    judgments = []
    papers = [f"2409.{n:05d}" for n in range(rng.randint(1, 8))]
    for ep in items:
        for c in conditions:
            n = rng.choice([0, 1, 3, 5, 5, 5])
            if n == 0:
                p.empty[(ep.episode_id, c)] = 1
                continue
            p.ideas[(ep.episode_id, c)] = tuple(Idea(ep.episode_id, c, r, f"i{r}", "", "", (), None) for r in range(1, n + 1))
            for r in range(1, n + 1):
                for k in rng.sample(range(1, 11), rng.randint(0, 6)):
                    scores = rng.choice([(None, None, None)] + [(rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 3))] * 6)
                    judgments.append(Judgment(ep.episode_id, c, r, k, rng.choice(papers), "j", *scores,
                                              "failed" if scores[0] is None else "ok", "0" * 64))
    if judgments:  # repeats, rows sharing a key with other papers and scores, and rows of no idea
        judgments += rng.sample(judgments, min(3, len(judgments)))
        judgments += [Judgment(j.episode_id, j.condition, j.rank, j.cand_rank, rng.choice(papers), "j", 3, 3, rng.randint(2, 3), "ok", "0" * 64)
                      for j in rng.sample(judgments, min(3, len(judgments)))]
        judgments.append(Judgment("t99@2024-07-01", "summary", 1, 1, papers[0], "j", 3, 3, 3, "ok", "0" * 64))
    rng.shuffle(judgments)
    features = {i.key: rng.random() for unit in p.ideas.values() for i in unit} if rng.random() < 0.7 else None
    clusters = ({ep.episode_id: {pid: rng.randrange(5) for pid in papers if rng.random() < 0.8} for ep in items}
                if rng.random() < 0.7 else None)
    return items, p, judgments, features, clusters


def test_credit_and_metrics_agree_on_random_units():
    for seed in range(150):
        rng = random.Random(seed)
        items, p, judgments, features, clusters = _random_units(rng)
        evaluated = rng.random() < 0.9
        table = JudgmentTable.from_records(judgments) if evaluated else None
        new = unit_table_values(items, p, table, [DEFAULT, STRICT], 5, clusters=clusters, n_clusters=5, features=features)
        for gate in (DEFAULT, STRICT):
            old = unit_values(items, p, judgments if evaluated else None, gate, 5, clusters=clusters, n_clusters=5, features=features)
            got = new[gate.name]
            assert got.failed == old.failed and list(got.values) == list(old.values)
            for c in old.values:
                assert np.array_equal(got.n_ideas[c], old.n_ideas[c])
                for metric, want in old.values[c].items():
                    assert got.values[c][metric].tobytes() == want.tobytes(), (seed, gate.name, c, metric)


# ---------------------------------------------------------------- phrase-v1
WORDS = ["graph", "neural", "networks", "gnn", "gnns", "diffusion", "ddpm", "straße", "strasse", "ﬁne", "fine", "tuning", "2", "x"]


def test_the_assignment_rebuild_agrees_on_random_texts():
    for seed in range(40):
        rng = random.Random(seed)
        topics = [Topic(f"t{k}", " ".join(rng.sample(WORDS, rng.randint(1, 2))),
                        tuple(rng.choice(["GNN", "Fine-tuning", "DDPM", "Straße"]) for _ in range(rng.randint(0, 2))),
                        tuple(" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(rng.randint(0, 2)))) for k in range(4)]
        papers = {}
        for n in range(rng.randint(0, 40)):
            text = rng.choice([" ", "-", ", ", "  ", "\n", "—"]).join(rng.choice([w.upper(), w.title(), w]) for w in rng.choices(WORDS, k=rng.randint(0, 8)))
            points = tuple(rng.choice(WORDS) + " " + rng.choice(WORDS) for _ in range(rng.randint(0, 2)))
            pid = f"24{rng.randint(1, 12):02d}.{n:05d}"
            papers[pid] = Paper(pid, text, "", points, date(2024, 5, 1))
        assert assign_all(papers, topics) == assign(papers, topics), seed


# ---------------------------------------------------------------- clusters and pools
def test_clusters_agree_on_random_edits(checked, _tiny_ideas):
    path = "archive/benchmark/future_clusters.parquet"
    index = EvalIndex(checked.papers, checked.pools)
    for seed in range(30):
        rng = random.Random(seed)
        rows = _rows(_tiny_ideas[path])
        for _ in range(rng.randint(0, 3)):
            row = rows[rng.randrange(len(rows))]
            rng.choice([lambda: row.update(cluster=rng.choice([-1, 5, 2])), lambda: row.update(arxiv_id="2499.99999"),
                        lambda: row.update(episode_id="gnn@2024-06-01"), lambda: rows.append(dict(row, cluster=(row["cluster"] + 1) % 5))])()
        data = _bytes(CLUSTER_COLUMNS, rows)
        flat, old_found = parse_clusters(path, data, checked.pools.future, 5)
        nested: dict = {}
        for (e, pid), k in flat.items():
            nested.setdefault(e, {})[pid] = k
        new, new_found = parse_cluster_table(path, data, index, 5)
        _same(old_found, new_found)
        assert new == nested and [list(v) for v in new.values()] == [list(v) for v in nested.values()]


def _pools_by_rows(assignments, topic_ids, config, cutoffs, resolved):
    """The pools as the rule states them, one comprehension per (topic, cutoff)."""
    episodes, futures, history, future = [], [], {}, {}
    for topic_id in topic_ids:
        members = [(a.arxiv_id, a.first_submitted) for a in assignments if a.topic_id == topic_id]
        for t in cutoffs:
            h = tuple(sorted((p for p, d in members if config.start <= d < t), key=lambda s: s.encode("utf-8")))
            if len(h) < config.min_history:
                continue
            eid = episode_id(topic_id, t)
            episodes.append((eid, len(h), shard_ids_sha256(h)))
            history[eid] = h
            if t in resolved:
                end = future_end(t, config.horizon_months)
                f = tuple(sorted((p for p, d in members if t <= d <= end), key=lambda s: s.encode("utf-8")))
                futures.append((eid, end, len(f), shard_ids_sha256(f)))
                future[eid] = f
    return episodes, futures, history, future


def test_pools_agree_on_random_assignments():
    for seed in range(40):
        rng = random.Random(seed)
        cutoffs = (date(2024, 6, 1), date(2024, 7, 1), date(2024, 8, 1))
        config = Config(date(2024, 4, 1), cutoffs[0], cutoffs, rng.randint(0, 2), 5, rng.randint(0, 3), cutoffs[1])
        rows = [Assignment(f"t{rng.randrange(3)}", rng.choice(["2405.0001", "2405.00010", "2406.1", "é1", "Z9"]) + str(rng.randrange(9)),
                           date(2024, 3, 25) + timedelta(days=rng.randrange(200)), "x") for _ in range(rng.randint(0, 60))]
        rows += rng.sample(rows, min(2, len(rows)))  # repeated rows count twice, as they always did
        resolved = cutoffs[: rng.randint(0, 3)]
        pools = build_pools(rows, ["t0", "t1", "t2", "t3"], config, cutoffs, resolved)
        episodes, futures, history, future = _pools_by_rows(rows, ["t0", "t1", "t2", "t3"], config, cutoffs, resolved)
        assert [(e.episode_id, e.n_history, e.history_sha256) for e in pools.episodes] == episodes
        assert [(f.episode_id, f.future_to, f.n_future, f.future_sha256) for f in pools.futures] == futures
        assert pools.history == history and pools.future == future
