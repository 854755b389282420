"""Inspire's kit: the prompt, the session's call cap and traces (which replay), the loopback server,
an agent run against a scripted endpoint, and the reference agent reproducing the committed sample."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from inspire_fixture import A, B, CUTOFF, write_example_archive
from rapgen.archive import verify_archive
from rapgen.errors import UsageProblem
from rapgen.kinds import Registry
from rapgen.kinds.inspire import KIND
from rapgen.kinds.inspire.archive import parse_traces
from rapgen.kinds.inspire.kit import (
    SEARCH_TOOL, SUBMIT_TOOL, AgentConfig, InspireSession, build_prompt, make_server, ranking_of, run_agent, run_reference,
)
from rapgen.kinds.inspire.sample.files import seal
from rapgen.kinds.inspire.search import release_backend, replay_calls
from rapgen.kinds.rap import KIND as RAP

SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "inspire"
KINDS = Registry([KIND, RAP]).formats


def _release(root: Path):
    report = verify_archive(root, kinds=KINDS)
    assert report.ok, report.findings
    return report.verified.release()


@pytest.fixture
def example(tmp_path):
    return _release(write_example_archive(tmp_path / "ex"))


def _session(release, **kwargs) -> InspireSession:
    return InspireSession.of_release(release, release_backend(release, memory=True), **kwargs)


def _args(query: str, **more) -> dict:
    return {"query": query, "sort": "relevance", "date_from": None, "date_to": None, **more}


def test_the_prompt_offers_the_two_tools_and_the_condition_brief(example):
    instances = {i.instance_id: i for i in example.instances}
    detailed = build_prompt(instances, example.ledger, "insp-0001", "detailed")
    terse = build_prompt(instances, example.ledger, "insp-0001", "terse")
    assert [t["function"]["name"] for t in detailed.tools] == [SEARCH_TOOL, SUBMIT_TOOL] == ["search_papers", "submit_ranking"]
    assert f"first posted before {CUTOFF.isoformat()}" in detailed.system and "at most 50 calls" in detailed.system
    assert detailed.user.endswith(instances["insp-0001"].brief) and terse.user.endswith(instances["insp-0001"].brief_terse)
    assert detailed.prompt_sha256 != terse.prompt_sha256 and len(detailed.prompt_sha256) == 64
    with pytest.raises(UsageProblem, match="'insp-9999' is not an instance"):
        build_prompt(instances, example.ledger, "insp-9999", "detailed")
    with pytest.raises(UsageProblem, match="'A1' is not an Inspire condition"):
        build_prompt(instances, example.ledger, "insp-0001", "A1")


def test_the_session_enforces_the_cap_and_records_what_replays(example):
    session = _session(example)
    first = session.call("insp-0001", "detailed", _args("Title"))
    assert first.error is None and first.call_index == 0 and first.total_hits > 0 and first.calls_left == 49
    assert set(first.papers[0]) == {"arxiv_id", "first_submitted", "title", "abstract"}
    unknown_key = session.call("insp-0001", "detailed", {**_args("x"), "limit": 5})
    bad_sort = session.call("insp-0001", "detailed", _args("x", sort="newest"))
    assert unknown_key.error.startswith("malformed call") and bad_sort.error.startswith("malformed call: ")
    for k in range(47):
        session.call("insp-0001", "detailed", _args(f"Abstract {k}"))
    capped = session.call("insp-0001", "detailed", _args("Title"))
    assert capped.call_index is None and "call cap of 50" in capped.error and session.calls_made("insp-0001", "detailed") == 50
    assert session.call("insp-0002", "detailed", _args("Title")).call_index == 0  # the cap is per unit
    lines = session.records
    assert [r["call_index"] for r in lines if r["instance_id"] == "insp-0001"] == list(range(50))
    assert (lines[1]["query"], lines[1]["total_hits"], lines[1]["returned_ids"]) == ("", 0, [])  # sanitised
    assert (lines[2]["sort"], lines[2]["total_hits"]) == ("newest", 0)  # as given
    data = "".join(json.dumps(r) + "\n" for r in lines).encode()
    calls, findings = parse_traces(data, example.instances, example.ledger.max_calls)
    assert not findings and replay_calls(calls, release_backend(example, memory=True)).ok
    with pytest.raises(Exception, match="is not an instance"):
        session.call("insp-9", "detailed", _args("x"))


def _post(url: str, body: object, content_type: str = "application/json") -> tuple[int, dict]:
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_server_counts_only_calls(example):
    session = _session(example)
    server = make_server(session, example.ledger)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        ok = _post(base + "/search_papers", {"instance_id": "insp-0001", "condition": "detailed", "arguments": _args("Title")})
        assert ok[0] == 200 and ok[1]["call_index"] == 0 and ok[1]["calls_left"] == 49
        assert _post(base + "/search_papers", {"instance_id": "insp-0001", "condition": "detailed"})[0] == 400
        assert _post(base + "/search_papers", {"instance_id": "x", "condition": "detailed", "arguments": {}})[0] == 400
        assert _post(base + "/search_papers", b"{nan}")[0] == 400
        assert _post(base + "/search_papers", {}, "text/plain")[0] == 415
        assert _post(base + "/search", {})[0] == 404
        assert session.calls_made("insp-0001", "detailed") == 1  # no refused request was counted
        with urllib.request.urlopen(base + "/health") as r:
            assert json.loads(r.read()) == {"ok": True, "max_calls": 50, "top_k": 10}
        with urllib.request.urlopen(base + "/tools?instance_id=insp-0002&condition=terse") as r:
            assert json.loads(r.read())["instance_id"] == "insp-0002"
        with urllib.request.urlopen(base + "/traces") as r:
            assert [json.loads(x)["call_index"] for x in r.read().decode().splitlines()] == [0]
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(UsageProblem, match="loopback only"):
        make_server(session, example.ledger, host="0.0.0.0")


def test_the_server_refuses_a_foreign_host_or_origin_uncounted(example):
    """The kit's guard (a DNS-rebinding page names another Host; a web page sends its Origin)."""
    session = _session(example)
    server = make_server(session, example.ledger)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = json.dumps({"instance_id": "insp-0001", "condition": "detailed", "arguments": _args("Title")}).encode()
    try:
        for headers, status in (({"Host": "attacker.example"}, 421), ({"Origin": "http://attacker.example"}, 403)):
            request = urllib.request.Request(f"http://127.0.0.1:{server.server_address[1]}/search_papers", data=body,
                                             headers={"Content-Type": "application/json", **headers})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == status
        assert session.calls_made("insp-0001", "detailed") == 0
    finally:
        server.shutdown()
        server.server_close()


class ScriptedClient:
    """An OpenAI-compatible endpoint in a list: each unit searches once, then submits what it saw plus noise."""

    def __init__(self):
        self.attempts = 0

    def complete(self, payload: dict) -> dict:
        self.attempts += 1
        tool_turns = [m for m in payload["messages"] if m["role"] == "tool"]
        if not tool_turns:
            call = {"id": "c1", "type": "function", "function": {"name": "search_papers",
                                                                 "arguments": json.dumps(_args("Title Abstract"))}}
        else:
            seen = [p["arxiv_id"] for p in json.loads(tool_turns[-1]["content"]).get("papers", [])]
            ranking = [{"arxiv_id": i, "rationale": "seen"} for i in seen[:3]] + ["not-an-id"]
            call = {"id": "c2", "type": "function", "function": {"name": "submit_ranking", "arguments": json.dumps({"ranking": ranking})}}
        return {"model": "scripted", "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]},
                                                  "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


def test_an_agent_run_writes_a_folder_that_verifies_and_replays(example, tmp_path):
    out = tmp_path / "ex" / "archive" / "models" / "scripted"
    summary = run_agent(example, out, AgentConfig("http://127.0.0.1:9/v1", "scripted-model"), model_id="scripted",
                        backend=release_backend(example, memory=True), client=ScriptedClient())
    assert summary.to_dict() == {"units": 3, "submitted": 3, "failed": 0, "calls": 3, "reasons": {}}
    lines = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert lines[0]["ranking"][-1] == {"arxiv_id": "not-an-id"} and lines[0]["tokens_in"] == 20 and len(lines[0]["prompt_sha256"]) == 64
    seal(tmp_path / "ex")
    release = _release(tmp_path / "ex")
    from rapgen.kinds.inspire.search import replay_release

    report = replay_release(release, models=["scripted"], memory=True)
    assert report.ok and report.n_calls == 3
    with pytest.raises(UsageProblem, match="already holds"):
        run_agent(example, out, AgentConfig("http://127.0.0.1:9/v1", "m"), model_id="scripted", client=ScriptedClient(),
                  backend=release_backend(example, memory=True))


def test_a_unit_without_a_submission_is_failed_with_its_reason(example, tmp_path):
    class Talker(ScriptedClient):
        def complete(self, payload):
            return {"choices": [{"message": {"role": "assistant", "content": "I think A."}, "finish_reason": "stop"}]}

    summary = run_agent(example, tmp_path / "m", AgentConfig("http://127.0.0.1:9/v1", "m"), model_id="m", client=Talker(),
                        backend=release_backend(example, memory=True), instance_ids=["insp-0001"])
    (line,) = [json.loads(x) for x in (tmp_path / "m" / "predictions.jsonl").read_text().splitlines()]
    assert (line["status"], line["ranking"], line["reason"]) == ("failed", None, "no tool call (the model answered in text)")
    assert summary.failed == 1


@pytest.mark.parametrize("arguments, ok", [
    ({"ranking": [{"arxiv_id": A}, B]}, True), ({"ranking": []}, True), ({"ranking": [{"arxiv_id": 7}]}, False),
    ({"ranking": [{"arxiv_id": A, "score": 1}]}, False), ({"rank": []}, False), ("A", False),
])
def test_submissions_are_checked_before_they_are_taken(arguments, ok):
    ranking, problem = ranking_of(arguments)
    assert (ranking is not None) == ok and (problem is None) == ok


def test_the_reference_agent_reproduces_the_committed_sample(tmp_path):
    release = _release(SAMPLE)
    run_reference(release, "bm25-brief", tmp_path / "bm25", backend=release_backend(release, memory=True))
    committed = SAMPLE / "archive" / "models" / "bm25-brief"
    for name in ("predictions.jsonl", "traces.jsonl"):
        assert (tmp_path / "bm25" / name).read_bytes() == (committed / name).read_bytes(), name
    assert json.loads((tmp_path / "bm25" / "model.json").read_text()) == json.loads((committed / "model.json").read_text())
    with pytest.raises(UsageProblem, match="no reference agent 'bm25'"):
        run_reference(release, "bm25", tmp_path / "x")
