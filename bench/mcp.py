"""Benchmark the MCP Search server against ``rapgen search`` at full scale, in one run.

Usage:
    python bench/mcp.py [--root DIR] [--cache-dir DIR] [--field F] [--origin T] [--condition C] [--cli-calls N]

DIR is a full-scale archive (default: one written by ``rapgen synth --scale full``
into --cache-dir on the first run). Figures printed (all measured in this run, on
the same unit and the same calls):

  * the shard index: built once into --cache-dir if it is cold (timed), then warm for everything below;
  * MCP server start-up: spawn ``rapgen serve-search --mcp`` → the official MCP client
    connected and ``tools/list`` answered, and → the first ``search`` result (field arrays loaded);
  * MCP per-call latency: the unit's full call cap, sequential, over stdio (median, p95, max);
  * ``rapgen search`` in process: ``Backend.search`` plus the paper lookup that the CLI's
    ``--json`` output does (a DuckDB query over papers.parquet), on a warm backend, and
    ``Backend.search`` alone (median, p95); the MCP server reads titles and abstracts from
    one in-memory copy loaded on its first call instead;
  * ``rapgen search`` as a command: one process per call, ``--json``, with the default
    archive verification and with ``--no-verify`` (median of --cli-calls runs each);
  * agreement: every MCP call returns the same ``total_hits`` and ids, in order, as the CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "generator"
# This file is named like the ``mcp`` package: keep its own folder off the path so ``import mcp`` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(GENERATOR))

def _calls(backend, shard, n: int) -> list[dict]:
    """``n`` calls whose queries are the first words of titles spread over the shard (so they hit),
    every fourth sorted by date."""
    ids = shard.ids
    picked = [ids[(k * len(ids)) // n] for k in range(n)] if ids else []
    titles = [t for t, _ in backend.paper_texts(picked)] or ["research"] * n
    return [{"query": " ".join(titles[k % len(titles)].split()[:3]) or "research", "sort": "date" if k % 4 == 3 else "relevance"}
            for k in range(n)]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:8.2f} ms  p95 {_pct(values, 0.95) * 1e3:8.2f} ms  max {max(values) * 1e3:8.2f} ms"


def bench_mcp(root: Path, cache: Path, unit: tuple[str, str, str], calls: list[dict]) -> dict:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    traces = Path(tempfile.mkdtemp(prefix="rapgen-bench-mcp.")) / "traces.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rapgen", "serve-search", "--mcp", "--root", str(root), "--cache-dir", str(cache),
              "--field", unit[0], "--origin", unit[1], "--condition", unit[2], "--traces", str(traces)],
        env={"PYTHONPATH": str(GENERATOR)},
    )

    async def run() -> dict:
        start = time.perf_counter()
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            listed = time.perf_counter() - start
            latencies, results = [], []
            for k, args in enumerate(calls):
                t0 = time.perf_counter()
                result = await client.call_tool(tools[0].name, args)
                latencies.append(time.perf_counter() - t0)
                if k == 0:
                    first = time.perf_counter() - start
                results.append(result.structured_content)
            refused = await client.call_tool(tools[0].name, calls[0])
        return {"startup_list": listed, "startup_first": first, "latencies": latencies, "results": results,
                "refused": bool(refused.is_error and refused.structured_content.get("call_index") is None)}

    out = anyio.run(run)
    out["trace_lines"] = len(traces.read_text().splitlines())
    return out


def bench_in_process(root: Path, cache: Path, unit: tuple[str, str, str], calls: list[dict]) -> dict:
    from rapgen.archive import CONDITION_REGIME, Archive
    from rapgen.search import Backend

    archive = Archive(root)
    backend = Backend(archive, cache_dir=cache)
    regime = CONDITION_REGIME[unit[2]]
    shard = backend.shard(unit[0], unit[1], regime)  # warm: field arrays loaded, as in a running server
    latencies, search_only, results = [], [], []
    for args in calls:
        t0 = time.perf_counter()
        result = shard.search({**args, "date_from": None, "date_to": None}, top_k=backend.top_k, k1=backend.k1, b=backend.b)
        t1 = time.perf_counter()
        papers = backend.papers(list(result.ids))
        latencies.append(time.perf_counter() - t0)
        search_only.append(t1 - t0)
        results.append((result.total_hits, [p["arxiv_id"] for p in papers]))
    return {"latencies": latencies, "search_only": search_only, "results": results, "regime": regime}


def bench_cli(root: Path, cache: Path, unit: tuple[str, str, str], regime: str, calls: list[dict], n: int, verify: bool) -> dict:
    latencies, results = [], []
    for args in calls[:n]:
        cmd = [sys.executable, "-m", "rapgen", "search", "--root", str(root), "--cache-dir", str(cache), "--json",
               unit[0], unit[1], regime, args["query"], "--sort", args["sort"]] + ([] if verify else ["--no-verify"])
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(GENERATOR)})
        latencies.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise SystemExit(f"rapgen search failed: {done.stderr.strip()[-300:]}")
        data = json.loads(done.stdout)
        results.append((data["total_hits"], [p["arxiv_id"] for p in data["results"]]))
    return {"latencies": latencies, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="full-scale archive (default: rapgen synth --scale full into --cache-dir)")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "rapgen-bench-mcp-cache")
    parser.add_argument("--field", default=None, help="default: the archive's first field")
    parser.add_argument("--origin", default=None, help="default: the archive's last origin")
    parser.add_argument("--condition", default="A3", choices=["A1", "A2", "A3", "A4"])
    parser.add_argument("--cli-calls", type=int, default=5)
    opts = parser.parse_args()
    if opts.root is None:
        opts.root = opts.cache_dir / "synth-full"
        if not (opts.root / "SHA256SUMS").is_file():
            print(f"writing a full-scale archive into {opts.root} (rapgen synth --scale full, a few minutes) …", flush=True)
            subprocess.run([sys.executable, "-m", "rapgen", "synth", "--scale", "full", "--out", str(opts.root)], check=True,
                           stdout=subprocess.DEVNULL)

    from rapgen.archive import Archive
    from rapgen.search import Backend

    archive = Archive(opts.root)
    field_id = opts.field or archive.fields[0].field_id
    origin = opts.origin or archive.origins.origins[-1].isoformat()
    unit = (field_id, origin, opts.condition)
    max_calls = int(archive.ledger["search"]["max_calls"])
    print(f"archive {opts.root}: {len(archive.fields)} fields, unit {' '.join(unit)}, {max_calls} calls (the cap)")

    t0 = time.perf_counter()
    backend = Backend(archive, cache_dir=opts.cache_dir)
    shard = backend.shard(field_id, origin, "expanding" if opts.condition in ("A3", "A4") else "fixed")
    print(f"shard index ready in {time.perf_counter() - t0:.1f} s (cold if the cache was empty); shard holds {shard.n:,} papers")
    calls = _calls(backend, shard, max_calls)

    mcp = bench_mcp(opts.root, opts.cache_dir, unit, calls)
    inproc = bench_in_process(opts.root, opts.cache_dir, unit, calls)
    cli_verify = bench_cli(opts.root, opts.cache_dir, unit, inproc["regime"], calls, opts.cli_calls, True)
    cli_fast = bench_cli(opts.root, opts.cache_dir, unit, inproc["regime"], calls, opts.cli_calls, False)

    got = [(r["total_hits"], [p["arxiv_id"] for p in r["papers"]]) for r in mcp["results"]]
    hits = [total for total, _ in got]
    print(f"calls: total_hits median {statistics.median(hits):,.0f}, min {min(hits):,}, max {max(hits):,}; "
          f"{sum(len(ids) for _, ids in got)} papers returned in all")
    agree = got == inproc["results"] and got[: opts.cli_calls] == cli_verify["results"] == cli_fast["results"]
    print(f"MCP start-up (spawn -> tools/list answered):      {mcp['startup_list'] * 1e3:8.1f} ms")
    print(f"MCP start-up (spawn -> first search result):      {mcp['startup_first'] * 1e3:8.1f} ms")
    print(f"MCP per call over stdio ({len(calls)} calls):            {_ms(mcp['latencies'][1:] or mcp['latencies'])}  (first call excluded)")
    print(f"rapgen search in process (warm backend):          {_ms(inproc['latencies'])}  (search + the CLI's paper lookup)")
    print(f"  of which Backend.search alone:                  {_ms(inproc['search_only'])}")
    print(f"rapgen search CLI, verifying the archive ({opts.cli_calls}×):  {_ms(cli_verify['latencies'])}")
    print(f"rapgen search CLI, --no-verify ({opts.cli_calls}×):            {_ms(cli_fast['latencies'])}")
    ratio = statistics.median(mcp["latencies"][1:] or mcp["latencies"]) / statistics.median(inproc["latencies"])
    print(f"MCP per call / in-process per call: {ratio:.2f}×;  CLI --no-verify per call / MCP per call: "
          f"{statistics.median(cli_fast['latencies']) / statistics.median(mcp['latencies'][1:] or mcp['latencies']):.0f}×")
    print(f"same total_hits and ids in the same order as the CLI: {'yes' if agree else 'NO'};  "
          f"call {max_calls + 1} refused: {'yes' if mcp['refused'] else 'NO'};  trace lines written: {mcp['trace_lines']}")
    if not agree or not mcp["refused"] or mcp["trace_lines"] != max_calls:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
