"""The kept §6 draws (scores/diagnostics/memo.py): a cached result is the computed one, bit for
bit; anything wrong with a kept file means computing again; ``--no-cache`` keeps nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rapgen.cli import cli as main
from rapgen.scores.diagnostics import memo
from rapgen.scores.diagnostics.episodes import ChangeRich, Reliability, change_rich_episodes, split_half_reliability
from rapgen.scores.diagnostics.memo import DrawStore, draws_key

COUNTS = np.array([[5, 0, 3, 2, 0, 1, 0, 9], [0, 0, 0, 0, 0, 0, 0, 0], [4, 4, 4, 4, 1, 1, 1, 1]], dtype=np.int64)
TARGET = np.array([[1, 7, 3, 0, 0, 2, 2, 1], [3, 0, 0, 0, 1, 0, 0, 0], [4, 4, 4, 4, 1, 1, 1, 0]], dtype=np.int64)
PARAMS = {"p_max": 0.05, "repeatability_min": 0.5, "null_draws": 50, "seed": 0}


class Counting:
    """``compute`` that counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *a, **k):
        self.calls += 1
        return self.fn(*a, **k)


def _same(a, b, fields) -> None:
    for name in fields:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name


def test_second_call_reads_the_kept_result_bit_for_bit(tmp_path):
    store = DrawStore(tmp_path / "scores")
    compute = Counting(change_rich_episodes)
    first = store.get("change_rich_episodes", compute, (COUNTS, TARGET), PARAMS, ChangeRich)
    second = store.get("change_rich_episodes", compute, (COUNTS, TARGET), PARAMS, ChangeRich)
    assert compute.calls == 1
    fresh = change_rich_episodes(COUNTS, TARGET, **PARAMS)
    _same(first, fresh, ("jsd", "p_value", "repeatability", "change_rich"))
    _same(second, fresh, ("jsd", "p_value", "repeatability", "change_rich"))
    assert np.isnan(second.p_value[1])  # the undefined episode stays undefined
    assert len(list((tmp_path / "scores").glob("change_rich_episodes-*.npz"))) == 1


def test_no_folder_computes_every_time():
    compute = Counting(split_half_reliability)
    for _ in range(2):
        DrawStore(None).get("split_half_reliability", compute, (TARGET,), {"splits": 4, "seed": 1}, Reliability)
    assert compute.calls == 2


@pytest.mark.parametrize("change", ["params", "inputs", "dtype"])
def test_the_key_names_everything_the_result_depends_on(change):
    base = draws_key("f", (COUNTS, TARGET), PARAMS)
    if change == "params":
        other = draws_key("f", (COUNTS, TARGET), {**PARAMS, "seed": 1})
    elif change == "inputs":
        shifted = TARGET.copy()
        shifted[0, 0] += 1
        other = draws_key("f", (COUNTS, shifted), PARAMS)
    else:
        other = draws_key("f", (COUNTS, TARGET.astype(np.int32)), PARAMS)
    assert other != base
    assert draws_key("f", (COUNTS.copy(), TARGET.copy()), dict(reversed(PARAMS.items()))) == base


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong arrays", "wrong dtype"])
def test_a_damaged_kept_file_is_computed_again(tmp_path, damage):
    store = DrawStore(tmp_path)
    compute = Counting(split_half_reliability)
    args = ((TARGET,), {"splits": 4, "seed": 1}, Reliability)
    store.get("split_half_reliability", compute, *args)
    (path,) = tmp_path.glob("*.npz")
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "garbage":
        path.write_bytes(b"not an npz file")
    elif damage == "wrong arrays":
        with path.open("wb") as fh:
            np.savez(fh, other=np.zeros(3))
    else:
        with np.load(path) as z:
            kept = {k: z[k].astype(np.float32) for k in z.files}
        with path.open("wb") as fh:
            np.savez(fh, **kept)
    again = store.get("split_half_reliability", compute, *args)
    assert compute.calls == 2
    _same(again, split_half_reliability(TARGET, 4, 1), ("n_papers", "r_bar", "n_defined", "reliability"))
    assert store.get("split_half_reliability", compute, *args) is not None and compute.calls == 2  # written again


def test_an_unwritable_folder_only_means_computing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would go")
    compute = Counting(split_half_reliability)
    for _ in range(2):
        DrawStore(blocked / "scores").get("split_half_reliability", compute, (TARGET,), {"splits": 2, "seed": 0}, Reliability)
    assert compute.calls == 2


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_store_that_does_not_keep_reads_but_never_writes(tmp_path):
    folder = tmp_path / "kept"
    empty = DrawStore(folder, keep=False)
    fn = Counting(change_rich_episodes)
    first = empty.get("change_rich_episodes", fn, (COUNTS, TARGET), PARAMS, ChangeRich)
    assert fn.calls == 1 and not folder.exists()  # computed, nothing written
    DrawStore(folder).get("change_rich_episodes", fn, (COUNTS, TARGET), PARAMS, ChangeRich)
    assert fn.calls == 2 and len(list(folder.iterdir())) == 1
    before = _digests(folder)
    again = empty.get("change_rich_episodes", fn, (COUNTS, TARGET), PARAMS, ChangeRich)
    assert fn.calls == 2  # read from the folder
    _same(first, again, ("p_value", "change_rich"))
    assert _digests(folder) == before


def test_the_submission_check_reads_the_kept_draws_and_leaves_them_alone(tiny_archive, tmp_path, monkeypatch):
    from test_submit_support import NEW_ID, append_sums, tree_digest, write_submission

    from rapgen.submit import check_submission

    cache = tmp_path / "cache"
    monkeypatch.setenv("RAPGEN_CACHE", str(cache))
    root = tiny_archive.root
    folder = write_submission(root / "archive" / "models" / NEW_ID, root, traces=False)
    append_sums(root, NEW_ID)
    built = CliRunner().invoke(main, ["score", "--root", str(root), "--out", str(tmp_path / "scores")])
    assert built.exit_code == 0, built.output
    fresh = check_submission(root, folder, resamples=100, run_replay=False, run_site=False, diagnostics=True)
    kept_before = tree_digest(cache / "scores")

    def refuse(*a, **k):
        raise AssertionError("drawn again although the cache holds the result")

    import rapgen.scores.diagnostics.sections as sections
    monkeypatch.setattr(sections, "change_rich_episodes", refuse)
    monkeypatch.setattr(sections, "split_half_reliability", refuse)
    warm = check_submission(root, folder, resamples=100, run_replay=False, run_site=False, diagnostics=True)
    assert warm.stages["scores"].status == fresh.stages["scores"].status == "passed"
    assert warm.leaderboard == fresh.leaderboard
    assert tree_digest(cache / "scores") == kept_before


def test_rapgen_score_with_and_without_the_cache_writes_the_same_bytes(tiny_archive, tmp_path, monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)
    root = tiny_archive.root
    runner = CliRunner()
    fresh = runner.invoke(main, ["score", "--root", str(root), "--out", str(tmp_path / "fresh"), "--no-cache"])
    assert fresh.exit_code == 0, fresh.output
    assert not (root / ".rapgen-cache" / "scores").exists()  # --no-cache keeps nothing
    cold = runner.invoke(main, ["score", "--root", str(root), "--out", str(tmp_path / "cold")])
    assert cold.exit_code == 0, cold.output
    kept = sorted(p.name.split("-")[0] for p in (root / ".rapgen-cache" / "scores").glob("*.npz"))
    assert kept == ["change_rich_episodes", "split_half_reliability"]

    def refuse(*a, **k):
        raise AssertionError("drawn again although the cache holds the result")

    monkeypatch.setattr(memo, "_write", refuse)  # a warm run writes nothing and draws nothing
    import rapgen.scores.diagnostics.sections as sections
    monkeypatch.setattr(sections, "change_rich_episodes", refuse)
    monkeypatch.setattr(sections, "split_half_reliability", refuse)
    warm = runner.invoke(main, ["score", "--root", str(root), "--out", str(tmp_path / "warm")])
    assert warm.exit_code == 0, warm.output
    assert _digests(tmp_path / "fresh") == _digests(tmp_path / "cold") == _digests(tmp_path / "warm")


def test_the_cache_follows_rapgen_cache(tiny_archive, tmp_path, monkeypatch):
    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path / "elsewhere"))
    result = CliRunner().invoke(main, ["score", "--root", str(tiny_archive.root), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "elsewhere" / "scores").glob("*.npz"))) == 2
    assert not (tiny_archive.root / ".rapgen-cache" / "scores").exists()
    assert os.access(tmp_path / "elsewhere" / "scores", os.W_OK)


def test_kept_revision_pairs_are_the_drawn_ones(tmp_path):
    from datetime import date

    from rapgen.scores.interventions import reliability

    rng = np.random.default_rng(3)
    counts = rng.integers(0, 5, size=(3, 25, 8))
    counts[2, 4] = 0  # a window without papers: its pairs draw nothing
    field_ids = ["beta", "alpha", "Gamma"]
    origins = [date(2024 + (m // 12), m % 12 + 1, 1) for m in range(25)]
    store = DrawStore(tmp_path / "scores")
    fresh = reliability.revision_reliability(counts, field_ids, origins, 6, 2)
    first = reliability.revision_reliability(counts, field_ids, origins, 6, 2, store=store)
    compute = Counting(reliability._revision_draws)
    original, reliability._revision_draws = reliability._revision_draws, compute
    try:
        second = reliability.revision_reliability(counts, field_ids, origins, 6, 2, store=store)
    finally:
        reliability._revision_draws = original
    assert compute.calls == 0  # read from the store
    assert len(list((tmp_path / "scores").glob("revision_reliability-*.npz"))) == 1
    assert fresh
    for kept in (first, second):
        assert [(p.horizon, p.field, p.first, p.second) for p in kept] == [(p.horizon, p.field, p.first, p.second) for p in fresh]
        assert np.array([p.reliability for p in kept]).tobytes() == np.array([p.reliability for p in fresh]).tobytes()
    other = reliability.revision_reliability(counts, field_ids, origins, 6, 3, store=store)  # another seed, another key
    assert len(list((tmp_path / "scores").glob("revision_reliability-*.npz"))) == 2
    assert [p.reliability for p in other] != [p.reliability for p in fresh]
