"""The build scores while the replay's workers answer the calls (pipeline._score_and_replay): the score
step runs once, in a thread, after the workers are forked; its failure, or a worker's, leaves no
replay file and never a half-written score folder; the outputs are those of the serial steps."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from pathlib import Path

import pytest

from rapgen.archive import open_release
from rapgen.pipeline import run_build
from rapgen.search import replay_archive
from rapgen.search import replay as replay_module


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


@pytest.fixture
def replayable(replayable):
    """conftest's archive with traces: its root."""
    return replayable[0]


def test_beside_runs_once_in_a_thread_while_the_workers_exist(replayable) -> None:
    seen: list[tuple[bool, int]] = []

    def beside() -> None:
        seen.append((threading.current_thread() is threading.main_thread(), len(mp.active_children())))

    archive = open_release(replayable)
    with_beside = replay_archive(archive, jobs=2, beside=beside).data
    assert seen == [(False, 2)]  # once, off the main thread, with both workers forked before it
    assert with_beside == replay_archive(archive, jobs=2).data


def test_a_failing_beside_is_raised_after_the_workers(replayable) -> None:
    def beside() -> None:
        raise RuntimeError("score failed")

    with pytest.raises(RuntimeError, match="score failed"):
        replay_archive(open_release(replayable), jobs=2, beside=beside)


def _broken_field(job):
    raise OSError("shard unreadable")


def test_a_failing_worker_waits_for_the_beside_work(replayable, monkeypatch) -> None:
    done: list[str] = []

    def beside() -> None:
        time.sleep(0.5)
        done.append("written")

    monkeypatch.setattr(replay_module, "_run_field", _broken_field)  # inherited by the forked workers
    with pytest.raises(OSError, match="shard unreadable"):
        replay_archive(open_release(replayable), jobs=2, beside=beside)
    assert done == ["written"]


def _with_score(wrap):
    from dataclasses import replace

    from rapgen.kinds import Registry, registry

    kinds = registry()
    return Registry([replace(kinds["rap"], score=wrap(kinds["rap"].score)), *(kinds[n] for n in kinds if n != "rap")])


def test_the_build_scores_beside_the_replay_and_keeps_the_serial_outputs(replayable, tmp_path) -> None:
    seen: list[tuple[bool, int]] = []

    def watch(score):
        def watched(*args, **kwargs):
            seen.append((threading.current_thread() is threading.main_thread(), len(mp.active_children())))
            return score(*args, **kwargs)
        return watched

    overlapped = run_build(replayable, tmp_path / "site", work_dir=tmp_path / "work", resamples=20, kinds=_with_score(watch))
    jobs = replay_module.default_jobs()
    assert seen == ([(False, jobs)] if jobs > 1 else [(True, 0)])  # once, in a thread, while the workers run
    assert list(overlapped.timings) == ["verify", "score", "replay", "render", "mkdocs"]
    assert all(v >= 0 for v in overlapped.timings.values())
    serial = tmp_path / "serial"
    run_build(replayable, tmp_path / "site2", work_dir=serial, resamples=20, replay=False)
    from rapgen.kinds.rap.replay import replay as serial_replay

    assert serial_replay(open_release(replayable), serial / "scores")
    ours = {p.relative_to(tmp_path / "work" / "scores"): p.read_bytes() for p in (tmp_path / "work" / "scores").rglob("*") if p.is_file()}
    theirs = {p.relative_to(serial / "scores"): p.read_bytes() for p in (serial / "scores").rglob("*") if p.is_file()}
    assert "replay.json" in {p.name for p in ours}
    assert ours == theirs


def test_a_score_failure_in_the_build_writes_no_replay_file(replayable, tmp_path) -> None:
    def breaks(score):
        def broken(*args, **kwargs):
            raise RuntimeError("scoring broke")
        return broken

    with pytest.raises(RuntimeError, match="scoring broke"):
        run_build(replayable, tmp_path / "site", work_dir=tmp_path / "work", resamples=20, kinds=_with_score(breaks))
    assert not (tmp_path / "work" / "scores" / "replay.json").exists()


def test_the_build_hands_the_scorers_counterfactual_plan_to_the_replay(tiny_archive, tmp_path, monkeypatch) -> None:
    """With intervention records, the build's score step makes the Search-option counterfactual's
    plan on its own grid and draws and the replay completes it (it makes none itself); the score
    folder is byte for byte the one of scoring, then replaying on its own."""
    import importlib

    from interventions_factory import add_interventions
    from rapgen.scores import compute_scores, write_scores
    from rapgen.search import call_is_malformed

    rap_replay = importlib.import_module("rapgen.kinds.rap.replay")  # the module (the package exports its function)
    root = tiny_archive.root
    add_interventions(root)  # model-a's Search calls, replays, oracle units: a counterfactual to make
    serial = tmp_path / "serial"
    write_scores(compute_scores(open_release(root), 20, malformed=call_is_malformed), serial)
    assert rap_replay.replay(open_release(root), serial)  # makes the plan itself, after the scores

    def made_again(*args, **kwargs):
        raise AssertionError("the replay made the plan again")

    monkeypatch.setattr(rap_replay, "counterfactual_plan", made_again)
    run_build(root, tmp_path / "site", work_dir=tmp_path / "work", resamples=20)
    built = tmp_path / "work" / "scores"
    ours = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    theirs = {p.relative_to(serial): p.read_bytes() for p in serial.rglob("*") if p.is_file()}
    counterfactual = ours[Path("interventions") / "option_counterfactual.csv"]
    assert counterfactual.count(b"\n") > 1  # rows, not only the header
    assert ours == theirs
