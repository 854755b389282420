"""The Ideas sample builder: deterministic, the §1 file set, IDEAS.md §8's measured counts, the history plan."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from rapgen.archive import format_sums, sha256_bytes
from rapgen.errors import UsageProblem
from rapgen.kinds.ideas.archive.check import REQUIRED_FILES, check_archive
from rapgen.kinds.ideas.sample.build import archive_files, build_sample, read_topics
from rapgen.kinds.ideas.sample.history import history_plan, live_cutoffs

from ideas_factory import CONFIG, TOPICS, tiny_papers

REPO = Path(__file__).resolve().parents[3]


def test_the_assembly_is_deterministic_and_sealed():
    a, _ = archive_files(tiny_papers(), {}, TOPICS, CONFIG)
    b, _ = archive_files(tiny_papers(), {}, TOPICS, CONFIG)
    assert a == b
    assert set(REQUIRED_FILES) <= set(a)
    assert a["SHA256SUMS"] == format_sums({p: sha256_bytes(d) for p, d in a.items() if p != "SHA256SUMS"})
    assert b'"synthetic": true' in a["archive/ARCHIVE.json"] and b'"format": "ideas-archive"' in a["archive/ARCHIVE.json"]


def test_build_writes_the_folder_whole_and_replaces_only_an_earlier_sample(tmp_path, monkeypatch):
    import rapgen.kinds.ideas.sample.build as build

    out = tmp_path / "ideas"
    (out / "stale").mkdir(parents=True)
    files, report = archive_files(tiny_papers(), {}, TOPICS, CONFIG)
    monkeypatch.setattr(build, "sample_files", lambda root: (files, report))  # the tiny inputs, not the committed papers
    with pytest.raises(UsageProblem, match="the folder is not empty"):
        build_sample(REPO, out)
    with pytest.raises(UsageProblem, match="--force replaces only an Ideas archive"):
        build_sample(REPO, out, force=True)
    (out / "stale").rmdir()
    build_sample(REPO, out)
    (out / "archive" / "stale.txt").write_text("left over")
    build_sample(REPO, out, force=True)
    written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert written == files  # the old folder's content is gone


def test_the_topics_file_is_well_formed():
    topics = read_topics()
    assert len(topics) == 12 and [t.topic_id for t in topics][:3] == ["rag", "agents", "reasoning"]


def test_the_history_plan():
    plan = history_plan()
    assert [(p.release, p.kind, p.date) for p in plan[:2]] == [(1, "initial", date(2025, 1, 1)), (2, "roll", date(2025, 2, 1))]
    assert plan[0].resolved == (date(2024, 7, 1), date(2024, 8, 1), date(2024, 9, 1))
    assert plan[0].episodes_for == tuple(date(2024, m, 1) for m in range(7, 13)) + (date(2025, 1, 1),)
    assert plan[0].opened == date(2025, 1, 1) and plan[0].closes == date(2025, 1, 15)
    assert plan[-1].resolved[-1] == date(2025, 3, 1) and len(plan[-1].resolved) == 9 and plan[-1].opened == date(2025, 7, 1)
    assert live_cutoffs(plan) == (date(2025, 1, 1), date(2025, 2, 1), date(2025, 3, 1))
    assert plan[1].files == ("archive/benchmark/windows/2025-01-01/papers.parquet", "archive/benchmark/windows/2025-01-01/assignments.parquet",
                             "archive/benchmark/cutoffs/2025-02-01/episodes.jsonl", "archive/benchmark/cutoffs/2024-10-01/futures.jsonl")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("ideas-sample") / "ideas"
    return out, build_sample(REPO, out)


def test_the_sample_from_the_committed_papers(sample):
    out, report = sample
    assert report.n_papers == 22516  # cs.CL papers of 2024-04-01 … 2025-06-30
    assert (report.n_assigned, report.n_memberships, report.n_episodes) == (10529, 12693, 108)
    assert report.history == (75, 1365) and report.future == (91, 776)
    assert report.size <= 12 * 1024 * 1024
    assert (out / "SHA256SUMS").read_bytes() == (REPO / "benchmarks/ideas/SHA256SUMS").read_bytes()  # the committed sample rebuilds
    files = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS"}
    last = json.loads(files["archive/releases/0014.json"])
    assert "archive/releases/0015.json" not in files and last["resolved_origins"][-1] == "2025-03-01"
    archive, found = check_archive(files, resolved=[date.fromisoformat(c) for c in last["resolved_origins"]])
    assert found == []
    assert set(archive.models) == {"recent-titles", "rising-terms"} and len(archive.pools.futures) == 108
    assert json.loads(files["archive/benchmark/config.json"])["cutoffs"] == ["2024-07-01", "2024-08-01", "2024-09-01"]


def test_the_sample_verifies_as_a_history_of_fourteen_releases():
    from rapgen.archive import verify_archive
    from rapgen.kinds import registry

    report = verify_archive(REPO / "benchmarks/ideas", kinds=registry().formats)
    assert report.ok, report.errors[:3]
    assert sorted(report.history.input.records) == list(range(1, 15))
    kinds = [report.history.input.records[k].kind.value for k in range(1, 15)]
    assert kinds == ["initial", "models"] + ["roll", "models"] * 6
    assert all(r.simulated for r in report.history.input.records.values())
