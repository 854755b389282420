"""The synthetic Ideas archive: deterministic, IDEAS.md §1's file set, clean under check_archive, scored."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from rapgen.archive import format_sums, sha256_bytes
from rapgen.archive.verify import verify_archive
from rapgen.kinds.ideas.archive.check import REQUIRED_FILES, check_archive
from rapgen.kinds.ideas.sample.synth import IDEAS_SCALES, IdeasScale, synthetic_ideas_files, write_synthetic_ideas
from rapgen.kinds.ideas.scores.score import per_model_values, score_archive, score_files


@pytest.fixture(scope="module")
def small():
    return synthetic_ideas_files("small", 1)


def _files(files):
    return {p: b for p, b in files.items() if p != "SHA256SUMS"}


def test_the_full_scale_is_the_issues_size():
    s = IDEAS_SCALES["full"]
    assert (s.topics, s.cutoffs, s.strategies, s.top_k, s.depth, s.judges) == (52, 12, 6, 5, 10, 2)
    assert s.topics * s.cutoffs == 624 and s.judgments == 374_400


def test_the_small_archive_has_the_file_set_and_is_sealed(small):
    files, summary = small
    assert set(REQUIRED_FILES) <= set(files) and "archive/benchmark/future_clusters.parquet" in files
    for model in ("synthetic-a", "synthetic-b"):
        base = f"archive/models/{model}"
        assert {f"{base}/{n}" for n in ("model.json", "predictions.jsonl", "raw.jsonl", "features.parquet")} <= set(files)
        for judge in ("synth-judge-a", "synth-judge-b"):
            assert {f"{base}/eval/{judge}/candidates.parquet", f"{base}/eval/{judge}/judgments.parquet"} <= set(files)
    assert files["SHA256SUMS"] == format_sums({p: sha256_bytes(b) for p, b in files.items() if p != "SHA256SUMS"})
    document = json.loads(files["archive/ARCHIVE.json"])
    assert document["format"] == "ideas-archive" and document["synthetic"] is True and "synthetic" in document["description"]
    judged = sum(pq.read_metadata(io.BytesIO(b)).num_rows for p, b in files.items() if p.endswith("judgments.parquet"))
    assert summary.episodes == 12 and summary.judgments == judged == summary.ideas * 10 * 2


def test_the_small_archive_checks_clean_and_scores(small):
    files, summary = small
    archive, found = check_archive(_files(files))
    assert found == []
    assert len(archive.pools.episodes) == 12 and set(archive.models) == {"synthetic-a", "synthetic-b"}
    assert sum(len(mf.evals["synth-judge-a"][1]) for mf in archive.models.values()) == summary.ideas * 10
    raw = files["archive/models/synthetic-a/raw.jsonl"].decode().splitlines()
    assert raw and all(json.loads(line)["condition"] == "mdf" for line in raw)  # mdf goes through adapter v1
    judgments = pq.read_table(io.BytesIO(files["archive/models/synthetic-a/eval/synth-judge-b/judgments.parquet"])).to_pylist()
    statuses = {j["status"] for j in judgments}
    assert statuses <= {"ok", "failed"} and 0 < np.mean([j["P"] + j["M"] >= 5 and j["S"] >= 2 for j in judgments if j["status"] == "ok"]) < 0.3
    scored = score_archive(archive, resamples=200)
    tracks = {(r.stat.track, r.stat.entry) for r in scored.rows}
    assert tracks == {("all_cutoff", "synthetic-a"), ("all_cutoff", "synthetic-b"), ("forecast_strict", "synthetic-a")}
    assert {r.stat.axes for r in scored.rows} == {(j, g) for j in ("synth-judge-a", "synth-judge-b") for g in ("default", "strict")}
    assert {r.stat.condition for r in scored.rows} == {"summary", "mdf"}
    hits = [r for r in scored.rows if r.stat.metric == "hit@5" and r.stat.track == "all_cutoff"]
    assert all(r.estimate is not None and r.ci_low <= r.estimate <= r.ci_high and r.rank >= 1 for r in hits)


def test_the_reference_values_are_the_same_bits(small):
    archive, _ = check_archive(_files(small[0]))
    fast, slow = per_model_values(archive), per_model_values(archive, reference=True)
    assert list(fast) == list(slow) and all(list(fast[m]) == list(slow[m]) for m in fast)
    for m in fast:
        for axis, values in fast[m].items():
            assert values.failed == slow[m][axis].failed
            for c, table in values.values.items():
                assert all(table[k].tobytes() == slow[m][axis].values[c][k].tobytes() for k in table)
    assert score_files(archive, resamples=200) == score_files(archive, resamples=200, values=slow)


def test_the_same_seed_gives_the_same_bytes(small):
    again, _ = synthetic_ideas_files("small", 1)
    assert again == small[0]
    other, _ = synthetic_ideas_files("small", 2)
    assert other["archive/benchmark/papers.parquet"] != small[0]["archive/benchmark/papers.parquet"]


def test_written_whole_and_hashes_verify(tmp_path, small):
    out = tmp_path / "synth"
    (out / "stale").mkdir(parents=True)
    write_synthetic_ideas(out, "small", 1)
    written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert written == small[0]
    report = verify_archive(out, invariants=False)
    assert not [f for f in report.findings if f.category.value != "WARNING"]


def test_a_future_smaller_than_the_depth_gives_all_of_it():
    files, summary = synthetic_ideas_files(IdeasScale(topics=3, cutoffs=2, models=1, strategies=2, top_k=5, depth=10, judges=1,
                                                      papers_per_topic=24), 3)
    archive, found = check_archive(_files(files))
    assert found == []
    candidates = pq.read_table(io.BytesIO(files["archive/models/synthetic-a/eval/synth-judge-a/candidates.parquet"])).to_pylist()
    sizes = {e: len(f) for e, f in archive.pools.future.items()}
    per_idea: dict = {}
    for c in candidates:
        per_idea.setdefault((c["episode_id"], c["condition"], c["rank"]), []).append(c["cand_rank"])
    assert all(ranks == list(range(1, min(10, sizes[key[0]]) + 1)) for key, ranks in per_idea.items())
    assert any(sizes[key[0]] < 10 for key in per_idea) and summary.judgments == len(candidates)


def test_an_unknown_scale_is_refused():
    with pytest.raises(ValueError, match="unknown scale 'huge'"):
        synthetic_ideas_files("huge")
