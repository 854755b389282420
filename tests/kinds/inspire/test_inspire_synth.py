"""The synthetic Inspire archive at test size: checks clean, replays, scores, same bytes from the same seed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from rapgen.errors import UsageProblem
from rapgen.kinds.inspire.archive import read_files
from rapgen.kinds.inspire.sample.synth import NAME, SCALES, write_synthetic_inspire
from rapgen.kinds.inspire.scores import score_units
from rapgen.kinds.inspire.scores.board import COLUMNS, Entry, score_board
from rapgen.kinds.inspire.search import MemoryBackend, fork_map, replay_calls, replay_files


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth-inspire")
    return root, write_synthetic_inspire(root, "small", seed=1)


@pytest.fixture(scope="module")
def files(built):
    return read_files(built[0])


@pytest.fixture(scope="module")
def backend(files):
    return MemoryBackend(files.corpus, files.instances, top_k=files.ledger.top_k, k1=files.ledger.k1, b=files.ledger.b)


def test_small_archive_has_the_declared_size_and_checks_clean(built, files):
    root, summary = built
    sc = SCALES["small"]
    assert files.findings == []
    assert (summary["instances"], len(files.instances), len(files.corpus), len(files.models)) == (sc.instances,) * 2 + (sc.papers, sc.models)
    n_eval = summary["by_split"]["eval"]
    assert summary["calls"] == sc.calls * (sc.instances * sc.models + n_eval * sc.terse_models)
    assert summary["checked"]["calls"] == summary["checked"]["reproduced"] == summary["calls"]
    assert all(len({c.call_index for c in m.calls}) == sc.calls for m in files.models.values())
    conditions = {m.model_id: {p.condition for p in m.predictions} for m in files.models.values()}
    assert sum(c == {"detailed", "terse"} for c in conditions.values()) == sc.terse_models


def test_small_archive_is_marked_synthetic(built, files):
    root, _ = built
    assert files.info["synthetic"] is True and files.info["name"] == NAME
    for m in files.models.values():
        info = json.loads((root / "archive" / "models" / m.model_id / "model.json").read_text())
        assert "(synthetic)" in info["display_name"] and "not a real model" in info["notes"]


def test_every_accounting_path_occurs(files):
    """The lists carry each kind of bad entry the scorer counts, and some calls are malformed."""
    totals: dict[str, int] = {}
    for m in files.models.values():
        for condition in ("detailed", "terse"):
            table = score_units(m.model_id, condition, files.instances, files.judgements, m.predictions, m.calls, files.corpus, K=10)
            for k, v in table.totals().items():
                totals[k] = totals.get(k, 0) + v
    assert all(totals[k] > 0 for k in ("n_versioned", "n_duplicate", "n_over_limit", "n_malformed", "n_unknown", "n_post_cutoff",
                                       "n_unsurfaced", "n_unlabelled", "n_scored", "n_empty", "n_failed")), totals
    assert any(c.sort == "newest" and c.total_hits == 0 and c.returned_ids == () for m in files.models.values() for c in m.calls)


def test_same_seed_same_bytes_whatever_the_workers(built, tmp_path):
    root, _ = built
    write_synthetic_inspire(tmp_path / "again", "small", seed=1, jobs=1, check=False)
    assert (tmp_path / "again" / "SHA256SUMS").read_bytes() == (root / "SHA256SUMS").read_bytes()
    write_synthetic_inspire(tmp_path / "other", "small", seed=2, check=False)
    assert (tmp_path / "other" / "SHA256SUMS").read_bytes() != (root / "SHA256SUMS").read_bytes()


def test_refuses_an_occupied_folder_and_an_unknown_scale(built):
    root, _ = built
    with pytest.raises(UsageProblem, match="already holds archive/"):
        write_synthetic_inspire(root, "small", seed=1)
    with pytest.raises(UsageProblem, match="unknown scale 'huge'; choose from full, small"):
        write_synthetic_inspire(root / "x", "huge")


def test_grouped_replay_equals_the_one_by_one_replay(files, backend):
    m = files.models["synth-inspire-birch"]
    calls = list(m.calls)
    a = next(k for k, c in enumerate(calls) if len(c.returned_ids) > 1)
    calls[a] = dataclasses.replace(calls[a], returned_ids=calls[a].returned_ids[::-1])
    calls[40] = dataclasses.replace(calls[40], total_hits=calls[40].total_hits + 1)
    one_by_one = replay_calls(calls, backend, m.traces_path)
    grouped = replay_files({m.traces_path: calls, "other": files.models["synth-inspire-atlas"].calls}, backend, jobs=2)
    assert grouped[m.traces_path] == one_by_one
    assert [f.line for f in one_by_one.findings] == [calls[a].line, calls[40].line]
    assert one_by_one.findings[0].detail.startswith(f"{calls[a].describe()} does not replay: position 1 holds")
    assert grouped["other"].ok and grouped["other"].n_calls == len(files.models["synth-inspire-atlas"].calls)


def test_fork_map_keeps_task_order():
    tasks = list(range(7))
    assert fork_map(lambda state, t: state * t, tasks, 3, jobs=2) == fork_map(lambda state, t: state * t, tasks, 3, jobs=1) == [
        3 * t for t in tasks]


@pytest.fixture(scope="module")
def board(files):
    entries = [Entry(m.model_id, "model", m.predictions, m.calls) for m in files.models.values()]
    return score_board(files.instances, files.targets, files.judgements, files.corpus, files.ledger, entries, resamples=200)


def _rows(board, **want):
    at = {c: COLUMNS.index(c) for c in want}
    return [dict(zip(COLUMNS, r)) for r in board.rows if all(r[at[c]] == v for c, v in want.items())]


def test_board_covers_every_split_view_gain_map_and_cluster(board, files):
    keys = {(r["track"], r["split"], r["gains"], r["cluster"], r["condition"]) for r in map(lambda r: dict(zip(COLUMNS, r)), board.rows)}
    assert {(v, s, g, c, "detailed") for v in ("clean", "all", "flagged") for s in ("train", "dev", "eval")
            for g in ("declared", "binary", "t2t3") for c in ("target", "topic")} <= keys
    assert {k[1] for k in keys if k[4] == "terse"} == {"eval"}  # terse is answered on eval only
    calls = _rows(board, split="eval", track="all", gains="declared", cluster="target", condition="detailed", metric="total_calls")
    assert [r["estimate"] for r in calls] == [float(SCALES["small"].calls)] * 4 and all(r["rank"] is None for r in calls)


def test_board_estimates_equal_the_per_unit_scores(board, files):
    m = files.models["synth-inspire-atlas"]
    table = score_units(m.model_id, "detailed", files.instances, files.judgements, m.predictions, m.calls, files.corpus, K=10)
    split = {i.instance_id: i.split for i in files.instances}
    ndcg = [u.scores["declared"].ndcg for u in table.units if split[u.instance_id] == "dev"]
    (row,) = _rows(board, split="dev", track="all", gains="declared", cluster="target", entry=m.model_id, metric="ndcg@10")
    assert row["estimate"] == pytest.approx(np.mean(ndcg), abs=1e-12) and row["n_items"] == len(ndcg)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_board_funnel_nests_and_ranks_within_groups(board):
    for r in _rows(board, gains="declared", cluster="target", condition="detailed", metric="ndcg@10"):
        sel = _rows(board, track=r["track"], split=r["split"], gains="declared", cluster="target", condition="detailed",
                    entry=r["entry"], metric="selected_gain")[0]
        exp = _rows(board, track=r["track"], split=r["split"], gains="declared", cluster="target", condition="detailed",
                    entry=r["entry"], metric="exposed_gain")[0]
        if r["estimate"] is not None:
            assert r["estimate"] <= sel["estimate"] + 1e-12 <= exp["estimate"] + 2e-12
    group = _rows(board, track="clean", split="eval", gains="declared", cluster="target", condition="detailed", metric="ndcg@10")
    assert sorted(r["rank"] for r in group)[0] == 1 and sum(r["p_first"] for r in group) == pytest.approx(1.0)
    assert all(r["rank"] is None and r["p_first"] is None for r in _rows(board, gains="binary", metric="ndcg@10"))


def test_manifest_digests_are_the_archive_shard_hash(files):
    """The manifest hashes each shard without sorting it again: the same digest as shard_ids_sha256."""
    from rapgen.archive import shard_ids_sha256

    by_id = {r.instance_id: r for r in files.manifest}
    for inst in files.instances[:12]:
        shard = [i for i, p in files.corpus.items() if p.first_submitted < inst.cutoff]
        assert by_id[inst.instance_id].ids_sha256 == shard_ids_sha256(shard)
        assert by_id[inst.instance_id].n_papers == len(shard)
