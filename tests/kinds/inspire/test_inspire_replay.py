"""Inspire's replay on the shared backend: every recorded call of the sample reproduces from the
search cache; an edited answer is a finding naming the call, and the report says it failed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rapgen.archive import verify_archive
from rapgen.errors import SearchError
from rapgen.kinds import Registry
from rapgen.kinds.inspire import KIND
from rapgen.kinds.inspire.sample.files import seal
from rapgen.kinds.inspire.search import release_backend, replay_into, replay_lines, replay_release
from rapgen.kinds.rap import KIND as RAP

SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "inspire"
KINDS = Registry([KIND, RAP]).formats
TRACES = "archive/models/bm25-brief/traces.jsonl"


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


def _release(root: Path):
    report = verify_archive(root, kinds=KINDS)
    assert report.ok, report.findings
    return report.verified.release()


def test_every_call_of_the_sample_replays_from_the_cache(tmp_path):
    release = _release(SAMPLE)
    report = replay_release(release, cache_dir=tmp_path / "cache")
    assert report.ok and report.n_calls == report.n_reproduced == 1080 and not report.findings
    assert report.units == {("bm25-brief", "detailed"): (90, 90), ("bm25-brief", "terse"): (90, 90),
                            ("keyword-loop", "detailed"): (450, 450), ("keyword-loop", "terse"): (450, 450)}
    (folder,) = (tmp_path / "cache" / "search").iterdir()
    assert json.loads((folder / "inputs.json").read_text())["files"] == {
        "archive/corpus/papers.parquet": release.files["archive/corpus/papers.parquet"]}
    built = (folder / "meta.json").stat().st_mtime_ns
    backend = release_backend(release, cache_dir=tmp_path / "cache")
    assert backend.grouped.indexes.folder == folder and (folder / "meta.json").stat().st_mtime_ns == built
    assert replay_lines(report)[-1] == "1080/1080 calls reproduced: every call reproduced"


@pytest.fixture
def edited(tmp_path) -> Path:
    """A copy of the sample with two answers of bm25-brief edited: an order swapped, a count changed."""
    root = tmp_path / "inspire"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".rapgen-cache"))
    lines = (root / TRACES).read_text().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["returned_ids"][:2] = first["returned_ids"][1::-1]
    second["total_hits"] += 1
    lines[0], lines[1] = json.dumps(first), json.dumps(second)
    (root / TRACES).write_text("\n".join(lines) + "\n")
    seal(root)
    return root


def test_an_edited_answer_verifies_but_does_not_replay(edited, tmp_path):
    release = _release(edited)  # still corpus papers before the cutoff: only replay can tell
    report = replay_release(release, models=["bm25-brief"], memory=True)
    assert not report.ok and (report.n_calls, report.n_reproduced) == (180, 178)
    details = [(f.path, f.line, f.detail) for f in report.findings]
    first = json.loads((edited / TRACES).read_text().splitlines()[0])
    assert details[0] == (TRACES, 1, f"call 0 of {first['instance_id']} {first['condition']} does not replay: position 1 holds "
                                     f"{first['returned_ids'][0]} in the trace, {first['returned_ids'][1]} on replay")
    assert details[1][1] == 2 and "does not replay: total_hits" in details[1][2] and "recorded," in details[1][2]
    assert sum(same for (m, _c), (_n, same) in report.units.items() if m == "bm25-brief") == 178
    lines = replay_lines(report)
    assert lines[-1] == "178/180 calls reproduced: 2 calls do not reproduce" and any(TRACES + ":1: call 0" in x for x in lines)
    assert replay_into(release, tmp_path / "scores", models=["bm25-brief"], memory=True)
    written = json.loads((tmp_path / "scores" / "replay.json").read_text())
    assert (written["ok"], written["n_calls"] - written["n_reproduced"], len(written["differences"])) == (False, 2, 2)


def test_a_corpus_that_is_not_the_manifests_is_refused(edited):
    release = _release(edited)
    backend = release_backend(release, memory=True)
    key = backend.key_of(release.instances[0].instance_id)
    backend.grouped.expected[tuple(key)] = type(backend.grouped.expected[tuple(key)])(1, "0" * 64)
    with pytest.raises(SearchError, match="do not match the manifest"):
        replay_release(release, backend=backend)
