"""rapgen serve-search --mcp, driven by the official MCP Python client over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.kit.prompt import search_schema

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

GENERATOR = str(Path(__file__).resolve().parents[1] / "generator")
UNIT = ("alpha", "2024-01-01", "A3")
CAP = 20


def _params(root: Path, traces: Path, cache: Path, *unit: str) -> StdioServerParameters:
    field_id, origin, condition = unit or UNIT
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "rapgen", "serve-search", "--mcp", "--root", str(root), "--field", field_id, "--origin", origin,
              "--condition", condition, "--traces", str(traces)],
        env={"PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(cache)},
    )


def _cli_ids(root: Path, cache: Path, query: str, sort: str, **bounds) -> tuple[int, list[str]]:
    args = ["search", "--root", str(root), "--cache-dir", str(cache), "--json", UNIT[0], UNIT[1], "expanding", query, "--sort", sort]
    for key, value in bounds.items():
        args += [f"--{key.replace('_', '-')}", value]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return data["total_hits"], [{k: p[k] for k in ("arxiv_id", "first_submitted", "title", "abstract")} for p in data["results"]]


def _run(coro_fn, *args):
    async def main():
        with anyio.fail_after(120):
            return await coro_fn(*args)

    return anyio.run(main)


def test_mcp_client_sees_one_search_tool_the_cli_results_and_the_cap(tiny_archive, tmp_path) -> None:
    root, traces, cache = tiny_archive.root, tmp_path / "traces.jsonl", tmp_path / "cache"
    calls = [("parsing methods", "relevance", {}), ("dialogue", "date", {"date_from": "2022-01-01"}),
             ("language", "relevance", {"date_to": "2023-06-01"})]
    expected = [_cli_ids(root, cache, q, s, **b) for q, s, b in calls]
    assert any(ids for _, ids in expected)

    async def session():
        async with Client(_params(root, traces, cache)) as client:
            tools = (await client.list_tools()).tools
            got = []
            for q, s, b in calls:
                got.append(await client.call_tool(tools[0].name, {"query": q, "sort": s, **b}))
            malformed = await client.call_tool("search", {"query": "x", "sort": "relevance", "field_id": "beta"})
            # The rest of the cap in parallel: every call counts once, in some order.
            extra = CAP - len(calls) - 1 + 3
            async with anyio.create_task_group() as group:
                results = []

                async def one(k):
                    results.append(await client.call_tool("search", {"query": f"parsing {k}", "sort": "date"}))

                for k in range(extra):
                    group.start_soon(one, k)
            after = await client.call_tool("search", {"query": "parsing", "sort": "relevance"})
            return tools, got, malformed, results, after

    tools, got, malformed, parallel, after = _run(session)
    assert len(tools) == 1 and "search" in tools[0].name
    assert tools[0].input_schema == search_schema()["function"]["parameters"]
    assert set(tools[0].input_schema["properties"]) == {"query", "sort", "date_from", "date_to"}
    for result, (total, ids) in zip(got, expected):
        assert not result.is_error
        data = result.structured_content
        assert data == json.loads(result.content[0].text)
        assert data["total_hits"] == total and data["papers"] == ids  # the same papers, text included, in order
    assert [r.structured_content["call_index"] for r in got] == [0, 1, 2]
    assert malformed.is_error and malformed.structured_content["call_index"] == 3
    assert "unknown argument 'field_id'" in malformed.structured_content["error"]  # no unit arguments
    refused = [r for r in parallel if r.structured_content.get("call_index") is None]
    assert len(refused) == 3 and all(r.is_error and "call cap of 20" in r.structured_content["error"] for r in refused)
    assert sorted(r.structured_content["call_index"] for r in parallel if r not in refused) == list(range(4, CAP))
    assert after.is_error and after.structured_content["call_index"] is None
    lines = [json.loads(line) for line in traces.read_text().splitlines()]
    assert [line["call_index"] for line in lines] == list(range(CAP))  # exactly the counted calls, gapless
    assert {(line["field_id"], line["origin"], line["condition"]) for line in lines} == {UNIT}
    assert [line["returned_ids"] for line in lines[:3]] == [[p["arxiv_id"] for p in ids] for _, ids in expected]
    assert lines[3]["query"] == "" and lines[3]["total_hits"] == 0  # the malformed call, sanitised


def test_mcp_server_refuses_a_unit_that_does_not_exist(tiny_archive, tmp_path) -> None:
    runner = CliRunner()
    base = ["serve-search", "--root", str(tiny_archive.root)]
    r = runner.invoke(cli, base + ["--mcp", "--field", "omega", "--origin", "2024-01-01", "--condition", "A1", "--traces", str(tmp_path / "t")])
    assert r.exit_code == 2 and r.stderr.startswith("Error: field_id 'omega' is not a field of this archive")
    assert not (tmp_path / "t").exists()
    r = runner.invoke(cli, base + ["--mcp", "--field", "alpha"])
    assert r.exit_code == 2 and "give --field, --origin and --condition" in r.stderr
    r = runner.invoke(cli, base + ["--field", "alpha"])
    assert r.exit_code == 2 and "add --mcp or --mcp-http PORT" in r.stderr
    r = runner.invoke(cli, base + ["--mcp", "--mcp-http", "9000", "--field", "alpha", "--origin", "2024-01-01", "--condition", "A1"])
    assert r.exit_code == 2 and "not both" in r.stderr
    r = runner.invoke(cli, base + ["--mcp", "--field", "alpha", "--origin", "2024-01-01", "--condition", "A0"])
    assert r.exit_code == 2  # A0 has no Search tool: not even a choice
    existing = tmp_path / "old.jsonl"
    existing.write_text("")
    r = runner.invoke(cli, base + ["--mcp", "--field", "alpha", "--origin", "2024-01-01", "--condition", "A1", "--traces", str(existing)])
    assert r.exit_code == 2 and "already exists; choose a new file" in r.stderr
    r = runner.invoke(cli, base + ["--mcp-http", "9000", "--host", "0.0.0.0", "--field", "alpha", "--origin", "2024-01-01", "--condition", "A1"])
    assert r.exit_code == 2 and "loopback only" in r.stderr


def test_mcp_over_streamable_http_on_loopback(tiny_archive, tmp_path) -> None:
    import socket
    import subprocess
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    traces = tmp_path / "t.jsonl"
    env = {**os.environ, "PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rapgen", "serve-search", "--mcp-http", str(port), "--root", str(tiny_archive.root),
                             "--field", "beta", "--origin", "2023-07-01", "--condition", "A1", "--traces", str(traces)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                return names, await client.call_tool("search", {"query": "parsing", "sort": "relevance"})

        names, result = _run(session)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert names == ["search"] and not result.is_error and result.structured_content["call_index"] == 0
    assert [json.loads(line)["call_index"] for line in traces.read_text().splitlines()] == [0]
