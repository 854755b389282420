"""The kit's commands on an Inspire root, through the command line: rapgen prompt, serve-search over a real
loopback socket and over MCP, agent run against a scripted OpenAI-compatible endpoint on 127.0.0.1, and the
bm25-brief reference agent end to end (its folder verifies, scores and replays)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from inspire_fixture import CUTOFF, write_example_archive
from test_kit_support import FakeChat
from rapgen.cli import cli

GENERATOR = str(Path(__file__).resolve().parents[3] / "generator")


def _args(query: str) -> dict:
    return {"query": query, "sort": "relevance", "date_from": None, "date_to": None}


@pytest.fixture
def ex(tmp_path) -> Path:
    return write_example_archive(tmp_path / "ex")


def _invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), env={"OPENAI_API_KEY": "", **(env or {})})


# ---------------------------------------------------------------- prompt

def test_prompt_prints_the_instance_prompt_and_its_tools(ex):
    text = _invoke("prompt", "--root", str(ex), "--instance", "insp-0002")
    assert text.exit_code == 0, text.output
    head, _, rest = text.stdout.partition("\n")
    assert head.startswith("prompt_sha256: ") and "template_sha256: " in head
    assert f"first posted before {CUTOFF.isoformat()}" in rest and "Research brief:\n\nBrief 2:" in rest
    js = json.loads(_invoke("prompt", "--root", str(ex), "--instance", "insp-0002", "--json").stdout)
    assert (js["instance_id"], js["condition"], js["max_calls"], js["K"]) == ("insp-0002", "detailed", 50, 10)
    assert [t["function"]["name"] for t in js["tools"]] == ["search_papers", "submit_ranking"]
    assert js["prompt_sha256"] in head and js["messages"][1]["content"].endswith("Brief 2: we want to solve a problem. "
                                                                                  "What prior work should we read to make progress on this problem?")
    terse = json.loads(_invoke("prompt", "--root", str(ex), "--instance", "insp-0002", "--condition", "terse", "--json").stdout)
    assert terse["messages"][1]["content"].endswith("Brief 2.") and terse["prompt_sha256"] != js["prompt_sha256"]


@pytest.mark.parametrize("args, message", [
    (("--instance", "insp-9999"), "instance 'insp-9999' is not an instance of this archive (e.g. insp-0001, insp-0002, insp-0003)"),
    (("--instance", "insp-0001", "--condition", "A1"), "condition 'A1' is not an Inspire condition (detailed, terse)"),
    ((), "an Inspire prompt names an instance: give --instance ID"),
    (("--instance", "insp-0001", "--readout", "state"), "--readout is not an option of rapgen prompt for a benchmark of kind 'inspire'"),
    (("--episode", "rag@2024-09-01"), "--episode is not an option of rapgen prompt for a benchmark of kind 'inspire'"),
])
def test_prompt_refuses_bad_input_in_one_line(ex, args, message):
    r = _invoke("prompt", "--root", str(ex), *args)
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {message}") and r.stderr.count("\n") == 1, r.output


# ---------------------------------------------------------------- serve-search over HTTP

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture
def served(ex, tmp_path):
    """``rapgen serve-search --root EX --instance insp-0001 --traces T`` in its own process, on a free port."""
    port, traces = _free_port(), tmp_path / "served.jsonl"
    env = {**os.environ, "PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rapgen", "serve-search", "--root", str(ex), "--instance", "insp-0001",
                             "--port", str(port), "--traces", str(traces)], env=env, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if _request(base + "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the server did not come up")
        yield base, traces
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stderr.close()


def test_the_http_server_searches_refuses_past_the_cap_and_refuses_a_foreign_host(served):
    base, traces = served
    unit = {"instance_id": "insp-0001", "condition": "detailed"}
    status, first = _request(base + "/search_papers", {**unit, "arguments": _args("Title")})
    assert status == 200 and first["call_index"] == 0 and first["total_hits"] > 0 and first["calls_left"] == 49
    assert all(p["first_submitted"] < CUTOFF.isoformat() for p in first["papers"])
    assert _request(base + "/health")[1] == {"ok": True, "max_calls": 50, "top_k": 10, **unit}
    other = _request(base + "/search_papers", {"instance_id": "insp-0002", "condition": "detailed", "arguments": _args("Title")})
    assert other == (400, {"error": "this server serves insp-0001 (detailed) only"})
    refused = _request(base + "/search_papers", {**unit, "arguments": _args("Title")}, {"Host": "attacker.example"})
    assert refused[0] == 421
    for k in range(49):
        assert _request(base + "/search_papers", {**unit, "arguments": _args(f"Abstract {k}")})[1]["call_index"] == k + 1
    status, over = _request(base + "/search_papers", {**unit, "arguments": _args("Title")})
    assert status == 200 and over["call_index"] is None and "call cap of 50 search_papers calls is reached" in over["error"]
    lines = [json.loads(x) for x in traces.read_text().splitlines()]
    assert [x["call_index"] for x in lines] == list(range(50))  # the refused requests were never counted


@pytest.mark.parametrize("args, message", [
    (("--mcp",), "an MCP server serves one instance: give --instance ID"),
    (("--condition", "terse"), "--condition goes with --instance ID"),
    (("--instance", "insp-0404"), "instance 'insp-0404' is not an instance of this archive"),
    (("--field", "alpha"), "--field is not an option of rapgen serve-search for a benchmark of kind 'inspire'"),
    (("--instance", "insp-0001", "--host", "0.0.0.0"), "--host 0.0.0.0: serve-search binds to loopback only"),
])
def test_serve_search_refuses_bad_input_before_serving(ex, args, message):
    r = _invoke("serve-search", "--root", str(ex), *args)
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {message}"), r.output


# ---------------------------------------------------------------- serve-search over MCP

def test_the_mcp_server_lists_search_papers_answers_and_refuses_past_the_cap(ex, tmp_path):
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    traces = tmp_path / "mcp.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "rapgen", "serve-search", "--mcp", "--root", str(ex), "--instance", "insp-0003",
                                      "--condition", "terse", "--traces", str(traces)],
        env={"PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(tmp_path / "cache")})

    async def session():
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            first = await client.call_tool("search_papers", {"query": "Title", "sort": "relevance"})
            for k in range(49):
                await client.call_tool("search_papers", {"query": f"Abstract {k}", "sort": "date"})
            over = await client.call_tool("search_papers", {"query": "Title", "sort": "relevance"})
            return tools, first, over

    async def main():
        with anyio.fail_after(120):
            return await session()

    tools, first, over = anyio.run(main)
    assert [t.name for t in tools] == ["search_papers"] and "Bound to instance insp-0003 (terse brief)" in tools[0].description
    assert set(tools[0].input_schema["properties"]) == {"query", "sort", "date_from", "date_to"}
    assert not first.is_error and first.structured_content["call_index"] == 0 and first.structured_content["papers"]
    assert first.structured_content == json.loads(first.content[0].text)
    assert over.is_error and over.structured_content["call_index"] is None and "call cap of 50" in over.structured_content["error"]
    lines = [json.loads(x) for x in traces.read_text().splitlines()]
    assert [x["call_index"] for x in lines] == list(range(50)) and {(x["instance_id"], x["condition"]) for x in lines} == {("insp-0003", "terse")}


def test_the_mcp_server_over_streamable_http_answers_on_loopback(ex, tmp_path):
    """``--mcp-http PORT``: the same tool at http://127.0.0.1:PORT/mcp, each call recorded."""
    pytest.importorskip("mcp")
    from mcp import Client

    port, traces = _free_port(), tmp_path / "mcp-http.jsonl"
    env = {**os.environ, "PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rapgen", "serve-search", "--mcp-http", str(port), "--root", str(ex),
                             "--instance", "insp-0002", "--traces", str(traces)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the server did not come up")

        async def session():
            with anyio.fail_after(120):
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    names = [t.name for t in (await client.list_tools()).tools]
                    first = await client.call_tool("search_papers", {"query": "Title", "sort": "relevance"})
                    second = await client.call_tool("search_papers", {"query": "Abstract", "sort": "date"})
                    return names, first, second

        names, first, second = anyio.run(session)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert names == ["search_papers"]
    assert not first.is_error and first.structured_content["call_index"] == 0 and first.structured_content["papers"]
    assert not second.is_error and second.structured_content["call_index"] == 1
    lines = [json.loads(x) for x in traces.read_text().splitlines()]
    assert [(x["instance_id"], x["condition"], x["call_index"]) for x in lines] == [("insp-0002", "detailed", 0), ("insp-0002", "detailed", 1)]


# ---------------------------------------------------------------- agent run

def _scripted(request: dict) -> dict:
    """Search once with the brief's first words, then submit what the search returned (and one id it did not)."""
    tool_turns = [m for m in request["messages"] if m["role"] == "tool"]
    if not tool_turns:
        call = {"id": "s", "type": "function", "function": {"name": "search_papers", "arguments": json.dumps(_args("Title Abstract"))}}
    else:
        seen = [p["arxiv_id"] for p in json.loads(tool_turns[-1]["content"])["papers"]]
        ranking = [{"arxiv_id": i} for i in seen[:4]] + [{"arxiv_id": "2399.99999", "rationale": "never surfaced"}]
        call = {"id": "f", "type": "function", "function": {"name": "submit_ranking", "arguments": json.dumps({"ranking": ranking})}}
    return {"model": "scripted", "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]},
                                              "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}


def test_agent_run_writes_a_folder_that_verifies_scores_and_replays(ex, tmp_path):
    from rapgen.kinds.inspire.sample.files import seal

    out = ex / "archive" / "models" / "scripted"
    cache = {"RAPGEN_CACHE": str(tmp_path / "cache")}
    with FakeChat(_scripted) as chat:
        r = _invoke("agent", "run", "--root", str(ex), "--base-url", chat.base_url, "--model", "fake-1", "--out", str(out),
                    "--display-name", "Scripted", env=cache)
        assert r.exit_code == 0, r.output
        assert len(chat.requests) == 6 and chat.requests[0]["tools"][0]["function"]["name"] == "search_papers"
    assert "3 units (3 submitted, 0 failed), 3 search_papers calls" in r.stdout and "[3/3] insp-0003 detailed: submitted" in r.stderr
    lines = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert [x["instance_id"] for x in lines] == ["insp-0001", "insp-0002", "insp-0003"] and lines[0]["tokens_in"] == 14
    assert json.loads((out / "model.json").read_text())["display_name"] == "Scripted"
    seal(ex)
    assert _invoke("verify", "--root", str(ex)).exit_code == 0
    replay = _invoke("replay", "--root", str(ex), "--model", "scripted", "--json", env=cache)
    assert replay.exit_code == 0, replay.output
    assert (data := json.loads(replay.stdout))["ok"] and data["n_calls"] == data["n_reproduced"] == 3
    score = _invoke("score", "--root", str(ex), "--out", str(tmp_path / "scores"))
    assert score.exit_code == 0, score.output
    assert "scripted" in (tmp_path / "scores" / "leaderboard.csv").read_text()


@pytest.mark.parametrize("extra, code, message", [
    (("--base-url", "ftp://x"), 2, "--base-url 'ftp://x' is not an http:// or https:// URL with a host"),
    (("--base-url", "http://127.0.0.1:9/v1", "--retries", "0"), 1, "the endpoint failed on the first 3 units"),
    (("--base-url", "http://127.0.0.1:9/v1", "--instances", "insp-0404"), 2, "instance 'insp-0404' is not an instance of this archive"),
    (("--base-url", "http://127.0.0.1:9/v1", "--fields", "alpha"), 2, "--fields is not an option of rapgen agent run for a benchmark of kind 'inspire'"),
    (("--base-url", "http://127.0.0.1:9/v1", "--conditions", "A1"), 2, "condition 'A1' is not an Inspire condition"),
])
def test_agent_run_refuses_bad_input_and_writes_nothing(ex, tmp_path, extra, code, message):
    out = tmp_path / "runs" / "m1"
    r = _invoke("agent", "run", "--root", str(ex), "--model", "m", "--out", str(out), "--timeout", "2", *extra)
    assert r.exit_code == code and r.stderr.splitlines()[-1].startswith(f"Error: {message}"), r.output
    assert not out.exists()


# ---------------------------------------------------------------- the reference agent

def test_bm25_brief_runs_into_the_archive_and_verifies_scores_and_replays(ex, tmp_path):
    from rapgen.kinds.inspire.sample.files import seal

    listed = _invoke("reference-agents", "list", "--root", str(ex))
    assert listed.exit_code == 0 and listed.stdout.split()[:3] == ["bm25-brief", "detailed", "terse"]
    cache = {"RAPGEN_CACHE": str(tmp_path / "cache")}
    r = _invoke("reference-agents", "run", "--root", str(ex), "--into-archive", "--agent", "bm25-brief", env=cache)
    assert r.exit_code == 0, r.output
    assert r.stdout.split()[:5] == ["bm25-brief", "6", "units", "6", "calls"] and "rapgen seal" in r.stderr
    again = _invoke("reference-agents", "run", "--root", str(ex), "--into-archive", "--agent", "bm25-brief", env=cache)
    assert again.exit_code == 2 and "already exists" in again.stderr
    seal(ex)
    assert _invoke("verify", "--root", str(ex)).exit_code == 0
    assert _invoke("replay", "--root", str(ex), "--model", "bm25-brief", env=cache).exit_code == 0
    score = _invoke("score", "--root", str(ex), "--out", str(tmp_path / "scores"))
    assert score.exit_code == 0 and "bm25-brief" in (tmp_path / "scores" / "leaderboard.csv").read_text()
    scratch = _invoke("reference-agents", "run", "--root", str(ex), "--out", str(tmp_path / "ref"), "--agent", "nobody")
    assert scratch.exit_code == 2 and "no reference agent 'nobody' (choose from bm25-brief, keyword-loop)" in scratch.stderr
