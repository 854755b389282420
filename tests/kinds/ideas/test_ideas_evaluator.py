"""The evaluator against a fake OpenAI-compatible endpoint on 127.0.0.1: judgments, embeddings,
the cache (a rerun costs nothing), resuming an interrupted run, failed judgments."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from rapgen.kinds.ideas.archive.check import JUDGES_JSONL, check_archive
from rapgen.kinds.ideas.archive.evaluation import parse_judgments
from rapgen.kinds.ideas.kit.embedding import EmbeddingsClient, EndpointEmbedder, TfidfEmbedder
from rapgen.kinds.ideas.kit.evaluate import evaluate_model
from rapgen.kinds.ideas.kit.judges import FAILED, PROMPT_SHA256, ChatJudge, Verdict, judge_line, read_verdict
from rapgen.kit import ChatClient, EndpointError
from test_kit_support import FakeChat

MODEL = "archive/models/recent-titles"


class FakeEndpoint(FakeChat):
    """The kit tests' fake endpoint with a scripted judge and embeddings; after ``fail_after`` chat
    requests it answers HTTP 500; ``garbled`` replies are not JSON."""

    def __init__(self, *, fail_after: int | None = None, garbled: bool = False):
        self.fail_after, self.garbled = fail_after, garbled
        super().__init__(self.judge, self.embed)

    @property
    def chat(self) -> int:
        return sum(1 for r in self.requests if "messages" in r)

    @property
    def embeddings(self) -> int:
        return sum(1 for r in self.requests if "input" in r)

    def embed(self, body: dict) -> dict:
        return {"data": [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]}

    def judge(self, body: dict):
        if self.fail_after is not None and self.chat > self.fail_after:
            return 500, b'{"error": "overloaded"}'
        assert body["temperature"] == 0 and body["messages"][0]["content"].startswith("You judge whether")
        h = hashlib.sha256(body["messages"][1]["content"].encode()).digest()
        content = "not json at all" if self.garbled else json.dumps({"P": 2 + h[0] % 2, "M": 2 + h[1] % 2, "S": 1 + h[2] % 3})
        return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}


def vector(text: str) -> list[float]:
    """A deterministic 16-dimensional embedding of the text's words."""
    out = [0.0] * 16
    for w in text.lower().split():
        out[hashlib.sha256(w.encode()).digest()[0] % 16] += 1.0
    return out


def chat_judge(endpoint: FakeEndpoint) -> ChatJudge:
    return ChatJudge("gpt-fake", ChatClient(endpoint.base_url, None, timeout=10, retries=0), "fake-judge-1", server_version="fake 1.0")


@pytest.fixture
def ideas(ideas_files):
    archive, found = check_archive(ideas_files)
    assert found == []
    return ideas_files, archive


def run(tmp_path: Path, archive, judge, *, embedder=None, journal="journal.jsonl"):
    mf = archive.models["recent-titles"]
    return evaluate_model(tmp_path / "model", archive.papers, archive.pools, mf.predictions, judge, embedder or TfidfEmbedder(), 10,
                          journal=tmp_path / journal)


def with_judge(files: dict, judge, model_dir: Path) -> dict:
    """The archive's files with the judge's line in judges.jsonl and the evaluator's output in the model folder."""
    files = dict(files)
    files[JUDGES_JSONL] = files[JUDGES_JSONL] + judge_line(judge.record()) + b"\n"
    for p in model_dir.rglob("*.parquet"):
        files[f"{MODEL}/{p.relative_to(model_dir)}"] = p.read_bytes()
    return files


def test_a_chat_judge_run_verifies_and_a_rerun_costs_nothing(ideas, tmp_path):
    files, archive = ideas
    with FakeEndpoint() as endpoint:
        first = run(tmp_path, archive, chat_judge(endpoint))
        n = endpoint.chat
        assert first.judged == n == 300 and first.reused == 0  # 6 episodes x 5 ideas x 10 candidates
        again = run(tmp_path, archive, chat_judge(endpoint))
        assert endpoint.chat == n and again.judged == 0 and again.reused == first.judged
    merged = with_judge(files, chat_judge(endpoint), tmp_path / "model")
    checked, found = check_archive(merged)
    assert found == []
    assert set(checked.models["recent-titles"].evals) == {"lexical-a", "lexical-b", "gpt-fake"}
    assert chat_judge(endpoint).record()["prompt_sha256"] == PROMPT_SHA256


def test_an_interrupted_run_resumes_without_paying_twice(ideas, tmp_path):
    files, archive = ideas
    with FakeEndpoint(fail_after=25) as endpoint:
        with pytest.raises(EndpointError):
            run(tmp_path, archive, chat_judge(endpoint))
        assert not (tmp_path / "model" / "eval").exists()  # nothing half-written
        assert len((tmp_path / "journal.jsonl").read_text().splitlines()) == 25
    with FakeEndpoint() as endpoint:
        resumed = run(tmp_path, archive, chat_judge(endpoint))
        assert resumed.reused == 25 and resumed.judged == endpoint.chat == 275
    with FakeEndpoint() as endpoint:
        fresh = run(tmp_path / "fresh", archive, chat_judge(endpoint))
    a = (tmp_path / "model/eval/gpt-fake/judgments.parquet").read_bytes()
    b = (tmp_path / "fresh/model/eval/gpt-fake/judgments.parquet").read_bytes()
    assert a == b and fresh.judged == 300


def test_a_torn_journal_line_is_dropped_and_judged_again(ideas, tmp_path):
    files, archive = ideas
    with FakeEndpoint() as endpoint:
        run(tmp_path, archive, chat_judge(endpoint))
    journal = tmp_path / "journal.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[:-20])  # a crash in the middle of the last line
    with FakeEndpoint() as endpoint:
        (tmp_path / "model" / "eval" / "gpt-fake" / "judgments.parquet").unlink()
        again = run(tmp_path, archive, chat_judge(endpoint))
        assert endpoint.chat == 1 and again.judged == 1
    assert journal.read_bytes().endswith(b"\n") and len(journal.read_text().splitlines()) == 300


def test_unusable_replies_are_failed_judgments(ideas, tmp_path):
    files, archive = ideas
    with FakeEndpoint(garbled=True) as endpoint:
        result = run(tmp_path, archive, chat_judge(endpoint))
    judgments, found = parse_judgments("j", (tmp_path / "model/eval/gpt-fake/judgments.parquet").read_bytes())
    assert found == [] and len(judgments) == result.judged
    assert all(j.status == "failed" and (j.P, j.M, j.S) == (None, None, None) for j in judgments)


@pytest.mark.parametrize("content, verdict", [
    ('{"P": 3, "M": 2, "S": 1}', Verdict(3, 2, 1)),
    ('```json\n{"P": 0, "M": 0, "S": 3}\n```', Verdict(0, 0, 3)),
    ('{"P": 4, "M": 2, "S": 1}', FAILED),
    ('{"P": 3, "M": 2}', FAILED),
    ('{"P": true, "M": 2, "S": 1}', FAILED),
    ('{"P": 3, "M": 2, "S": 1, "why": "x"}', FAILED),
    ("P=3", FAILED),
    (None, FAILED),
])
def test_read_verdict(content, verdict):
    assert read_verdict(content) == verdict


def test_endpoint_embeddings_are_cached(ideas, tmp_path):
    files, archive = ideas
    lexical = __import__("rapgen.kinds.ideas.sample.models", fromlist=["JUDGES"]).JUDGES[0]
    with FakeEndpoint() as endpoint:
        client = EmbeddingsClient(endpoint.base_url, None, timeout=10, retries=0)
        emb = EndpointEmbedder(client, "fake-embed", cache=tmp_path / "vectors.jsonl", batch=32)
        run(tmp_path, archive, lexical, embedder=emb)
        calls = endpoint.embeddings
        assert calls > 0 and endpoint.chat == 0
        emb2 = EndpointEmbedder(EmbeddingsClient(endpoint.base_url, None, timeout=10, retries=0), "fake-embed", cache=tmp_path / "vectors.jsonl")
        run(tmp_path / "again", archive, lexical, embedder=emb2)
        assert endpoint.embeddings == calls  # every vector came from the cache
    a = (tmp_path / "model/eval/lexical-a/candidates.parquet").read_bytes()
    assert a == (tmp_path / "again/model/eval/lexical-a/candidates.parquet").read_bytes()
    merged = dict(files)
    merged[f"{MODEL}/eval/lexical-a/candidates.parquet"] = a
    merged[f"{MODEL}/eval/lexical-a/judgments.parquet"] = (tmp_path / "model/eval/lexical-a/judgments.parquet").read_bytes()
    merged[f"{MODEL}/features.parquet"] = (tmp_path / "model/features.parquet").read_bytes()
    assert check_archive(merged)[1] == []


def test_the_lexical_evaluator_rebuilds_the_archived_files(ideas, tmp_path):
    """Re-running the sample's evaluator reproduces its evaluator files byte for byte."""
    files, archive = ideas
    from rapgen.kinds.ideas.sample.models import JUDGES

    for judge in JUDGES:
        run(tmp_path, archive, judge, journal=f"{judge.judge_id}.jsonl")
    for name in ("eval/lexical-a/candidates.parquet", "eval/lexical-a/judgments.parquet", "eval/lexical-b/judgments.parquet", "features.parquet"):
        assert (tmp_path / "model" / name).read_bytes() == files[f"{MODEL}/{name}"], name
