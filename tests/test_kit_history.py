"""The submitter's kit across a release history, on copies of the committed sample (nine releases;
origins.json 2023-01-01 and 2023-07-01; later origins 2024-01-01, 2024-07-01, 2025-01-01 resolved
by rolls; 2025-07-01 open, closing 2025-07-15).

prompt, search, serve-search (HTTP and MCP) and agent run take every origin the history knows;
agent run writes a later origin's units to origins/<origin>/; rapgen submit commit seals an open
entry; and each result passes rapgen submit check as the Live track or a later origin."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import threading
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.kit import SearchSession
from rapgen.kit.serve import make_server
from test_kit_serve import _request
from test_kit_support import FakeChat, tool_reply

REPO = Path(__file__).resolve().parent.parent
OPEN = "2025-07-01"
LATER = "2024-07-01"
FIELD = "alignment-safety"
KNOWN = "2023-01-01, 2023-07-01, 2024-01-01, 2024-07-01, 2025-01-01, 2025-07-01 (open)"
TODO_FIXES = {"provider": "Example Lab", "cutoff_source": "unknown", "contact": "lab@example.org"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kit-history-cache")  # one shard index for every test


@pytest.fixture
def sample(tmp_path) -> Path:
    """A writable copy of the committed sample (archive/ and SHA256SUMS only)."""
    dest = tmp_path / "repo"
    dest.mkdir()
    shutil.copytree(REPO / "archive", dest / "archive")
    shutil.copyfile(REPO / "SHA256SUMS", dest / "SHA256SUMS")
    return dest


def invoke(cache: Path, *args: str):
    return CliRunner().invoke(cli, list(args), env={"RAPGEN_CACHE": str(cache), "OPENAI_API_KEY": ""})


def agent_run(cache: Path, root: Path, out: Path, *extra: str):
    with FakeChat() as chat:
        return invoke(cache, "agent", "run", "--base-url", chat.base_url, "--model", "fake-1", "--root", str(root),
                      "--out", str(out), *extra)


def fill_model_json(folder: Path) -> None:
    path = folder / "model.json"
    record = json.loads(path.read_text())
    record.update(TODO_FIXES)
    path.write_text(json.dumps(record, indent=2) + "\n")


def check(cache: Path, root: Path, folder: Path, *args: str):
    return invoke(cache, "submit", "check", "--no-scores", "--root", str(root), *args, str(folder))


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# ---------------------------------------------------------------- prompt, search, serve-search
def test_prompt_takes_the_open_and_a_later_origin_and_lists_every_origin_otherwise(cache) -> None:
    for origin, target in ((OPEN, "[2025-07-01, 2026-01-01)"), (LATER, "[2024-07-01, 2025-01-01)")):
        result = invoke(cache, "prompt", "--root", str(REPO), FIELD, origin, "A1")
        assert result.exit_code == 0, result.output
        assert f"The forecast origin is {origin}" in result.stdout and target in result.stdout
    unknown = invoke(cache, "prompt", "--root", str(REPO), FIELD, "2025-08-01", "A0")
    assert unknown.exit_code == 2
    assert unknown.stderr == f"Error: origin 2025-08-01 is not an origin of this archive ({KNOWN})\n"


def test_search_cli_at_later_origins_reads_their_shards(cache) -> None:
    for origin, regime, span in ((OPEN, "fixed", "[2025-01-01, 2025-07-01)"), (LATER, "expanding", "[start, 2024-07-01)")):
        result = invoke(cache, "search", "--root", str(REPO), "--cache-dir", str(cache), FIELD, origin, regime,
                        "reward model", "--sort", "date")
        assert result.exit_code == 0, result.output
        assert f"{FIELD} {origin} {regime} {span}" in result.stdout
    data = json.loads(invoke(cache, "search", "--root", str(REPO), "--cache-dir", str(cache), "--json", FIELD, LATER, "fixed",
                             "reward model", "--sort", "date").stdout)
    # The ledger holds papers up to 2025-06-30; none on or after 2024-07-01 is in 2024-07-01's shard.
    assert data["total_hits"] > 0 and all("2024-01-01" <= p["first_submitted"] < LATER for p in data["results"])
    unknown = invoke(cache, "search", "--root", str(REPO), "--no-verify", "--cache-dir", str(cache), FIELD, "2026-01-01", "fixed", "x")
    assert unknown.exit_code == 2 and f"choose from {KNOWN}" in unknown.stderr


def _add_papers_after(root: Path, start: str, months_later: int = 6) -> int:
    """Put a window on disk (not listed) whose papers are the previous window's, renamed and dated
    ``months_later`` months on: papers on or after ``start`` that an unverified reader indexes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = root / "archive/benchmark/windows/2025-01-01"
    dest = root / f"archive/benchmark/windows/{start}"
    dest.mkdir(parents=True)
    n = 0
    for name in ("papers.parquet", "assignments.parquet"):
        table = pq.read_table(source / name)
        ids = pc.binary_join_element_wise(pa.scalar("x"), table["arxiv_id"], "")
        shifted = pc.add(table["first_submitted"], pa.scalar(181 * 86400 * 1000, pa.duration("ms"))).cast(table.schema.field("first_submitted").type)
        table = table.set_column(table.schema.get_field_index("arxiv_id"), "arxiv_id", ids)
        table = table.set_column(table.schema.get_field_index("first_submitted"), "first_submitted", shifted)
        assert pc.min(table["first_submitted"]).as_py() >= date.fromisoformat(start)
        pq.write_table(table, dest / name)
        n = max(n, table.num_rows)
    return n


def test_a_search_at_the_open_origin_never_returns_a_paper_on_or_after_it(sample, tmp_path) -> None:
    """Even with papers dated after the open origin in the ledger, its shards hold none of them."""
    assert _add_papers_after(sample, OPEN) > 0
    archive = Archive(sample)
    session = SearchSession(archive, cache_dir=tmp_path / "cache")  # a fresh index that holds the papers after T
    con = archive.connect()
    try:
        after = con.execute("SELECT count(*) FROM assignments WHERE first_submitted >= ?", [date.fromisoformat(OPEN)]).fetchone()[0]
    finally:
        con.close()
    assert after > 0
    for field in sorted(archive.field_map):
        for condition in ("A1", "A3"):
            for args in ({"query": "language model", "sort": "date"},
                         {"query": "language model", "sort": "relevance", "date_from": "2025-06-01", "date_to": "2026-01-01"},
                         {"query": "language model", "sort": "date", "date_from": OPEN}):
                out = session.call(field, OPEN, condition, args)
                assert out.error is None
                assert all(p["first_submitted"] < OPEN for p in out.papers), (field, condition, args)
                if args.get("date_from") == OPEN:
                    assert out.total_hits == 0
    assert any(r["total_hits"] > 0 for r in session.records)


def test_the_index_key_follows_the_windows_an_unverified_reader_indexes(sample) -> None:
    from rapgen.search.cache import cache_key, input_digest

    before = input_digest(Archive(sample))
    assert len(before["windows_sha256"]) == 6  # three rolled-in windows, two files each, as SHA256SUMS lists them
    _add_papers_after(sample, OPEN)
    after = input_digest(Archive(sample))
    new = {p: d for p, d in after["windows_sha256"].items() if p not in before["windows_sha256"]}
    assert sorted(new) == [f"archive/benchmark/windows/{OPEN}/assignments.parquet", f"archive/benchmark/windows/{OPEN}/papers.parquet"]
    assert new[f"archive/benchmark/windows/{OPEN}/papers.parquet"] == hashlib.sha256(
        (sample / f"archive/benchmark/windows/{OPEN}/papers.parquet").read_bytes()).hexdigest()
    assert cache_key(after) != cache_key(before)  # never an index built without the window


def test_serve_search_http_serves_later_origins(cache) -> None:
    session = SearchSession(Archive(REPO), cache_dir=cache)
    server = make_server(session, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for origin in (OPEN, LATER):
            status, body = _request(base + "/search", {"field_id": FIELD, "origin": origin, "condition": "A3",
                                                       "arguments": {"query": "reward model", "sort": "date"}})
            answer = json.loads(body)
            assert status == 200 and answer["call_index"] == 0 and answer["total_hits"] > 0
            assert all(p["first_submitted"] < origin for p in answer["papers"])
        status, body = _request(base + "/search", {"field_id": FIELD, "origin": "2025-08-01", "condition": "A3",
                                                   "arguments": {"query": "reward model", "sort": "date"}})
        assert status == 400 and json.loads(body)["error"] == f"origin '2025-08-01' is not an origin of this archive ({KNOWN})"
    finally:
        server.shutdown()
        server.server_close()
    assert [(r["origin"], r["condition"]) for r in session.records] == [(OPEN, "A3"), (LATER, "A3")]


def test_serve_search_mcp_at_the_open_origin(cache, tmp_path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    traces = tmp_path / "traces.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rapgen", "serve-search", "--mcp", "--root", str(REPO), "--field", FIELD, "--origin", OPEN,
              "--condition", "A1", "--traces", str(traces)],
        env={"PYTHONPATH": str(REPO / "generator"), "RAPGEN_CACHE": str(cache)},
    )

    async def main():
        with anyio.fail_after(180):
            async with Client(params) as client:
                return await client.call_tool("search", {"query": "reward model", "sort": "date"})

    result = anyio.run(main)
    assert not result.is_error and result.structured_content["total_hits"] > 0
    assert all(p["first_submitted"] < OPEN for p in result.structured_content["papers"])
    assert [(x["origin"], x["condition"], x["call_index"]) for x in lines(traces)] == [(OPEN, "A1", 0)]
    refused = invoke(cache, "serve-search", "--root", str(REPO), "--mcp", "--field", FIELD, "--origin", "2025-08-01",
                     "--condition", "A1")
    assert refused.exit_code == 2 and refused.stderr == f"Error: origin '2025-08-01' is not an origin of this archive ({KNOWN})\n"


# ---------------------------------------------------------------- agent run, submit check, submit commit
def test_agent_run_defaults_to_the_resolved_origins_each_in_its_file(sample, cache, tmp_path) -> None:
    out = tmp_path / "every-one"
    result = agent_run(cache, sample, out, "--fields", FIELD)
    assert result.exit_code == 0, result.output
    assert "15 units (15 valid, 0 invalid)" in result.stdout
    assert {x["origin"] for x in lines(out / "predictions.jsonl")} == {"2023-01-01", "2023-07-01"}
    for origin in ("2024-01-01", LATER, "2025-01-01"):
        assert {(x["origin"], x["condition"]) for x in lines(out / "origins" / origin / "predictions.jsonl")} == {
            (origin, c) for c in ("A0", "A1", "A3")}
        assert {x["origin"] for x in lines(out / "origins" / origin / "traces.jsonl")} == {origin}
    assert not (out / "origins" / OPEN).exists()  # the open origin is a Live entry: run only when asked for
    assert "Live:" not in result.stdout
    # A line in the wrong origin's file is refused on --resume, naming the file it belongs in.
    wrong = out / "origins" / LATER / "predictions.jsonl"
    wrong.write_text(wrong.read_text() + (out / "predictions.jsonl").read_text().splitlines()[0] + "\n")
    refused = agent_run(cache, sample, out, "--fields", FIELD, "--resume")
    assert refused.exit_code == 1
    assert (f"{wrong} line 4: origin '2023-01-01' does not belong in this file: its units belong in predictions.jsonl; "
            "cannot resume") in refused.stderr
    bad = agent_run(cache, sample, tmp_path / "bad-one", "--origins", "2025-08-01")
    assert bad.exit_code == 2 and "origin '2025-08-01' is not in this archive; choose from 2023-01-01, " in bad.stderr


def test_a_new_model_enters_the_live_track_openly(sample, cache, tmp_path) -> None:
    out = tmp_path / "live-open"
    result = agent_run(cache, sample, out, "--origins", OPEN)
    assert result.exit_code == 0, result.output
    assert "51 units (51 valid, 0 invalid), 68 Search calls" in result.stdout
    assert f"Live: {OPEN} is open until 2025-07-15. Open entry: add {out}/origins/{OPEN}/ to the archive; sealed entry: " \
           f"rapgen submit commit --root {sample} {out}" in result.stdout
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "model.json", f"origins/{OPEN}/predictions.jsonl", f"origins/{OPEN}/traces.jsonl"]
    assert all(t["origin"] == OPEN for t in lines(out / "origins" / OPEN / "traces.jsonl"))
    fill_model_json(out)
    on_time = check(cache, sample, out, "--now", "2025-07-05")
    assert on_time.exit_code == 0, on_time.output
    assert f"| {OPEN} | `origins/{OPEN}/predictions.jsonl` | A0 17/17, A1 17/17, A3 17/17 | ✅ complete |" in on_time.stdout
    assert f"| {OPEN} | open `{out}/origins/{OPEN}/predictions.jsonl`" in on_time.stdout and "✅ on time" in on_time.stdout
    late = check(cache, sample, out, "--now", "2025-07-16")
    assert late.exit_code == 1 and "**LATE**" in late.stdout
    assert "the deadline for origin 2025-07-01 was 2025-07-15; this submission is dated 2025-07-16" in late.stdout


def test_a_sealed_live_entry_made_with_submit_commit(sample, cache, tmp_path) -> None:
    out = tmp_path / "live-sealed"
    assert agent_run(cache, sample, out, "--origins", OPEN).exit_code == 0
    fill_model_json(out)
    made = invoke(cache, "submit", "commit", "--root", str(sample), str(out))
    assert made.exit_code == 0, made.output
    path = sample / "archive/commitments" / OPEN / "live-sealed.json"
    assert made.stdout.startswith(f"wrote {path}: live-sealed sealed for {OPEN}")
    assert "Warning: today is after 2025-07-01's deadline 2025-07-15; a pull request opened now is LATE." in made.stderr
    digest = {n: hashlib.sha256((out / "origins" / OPEN / n).read_bytes()).hexdigest() for n in ("predictions.jsonl", "traces.jsonl")}
    assert json.loads(path.read_text()) == {"model_id": "live-sealed", "origin": OPEN, "files": digest, "kit": "rapgen 0.1.0"}
    again = invoke(cache, "submit", "commit", "--root", str(sample), str(out))
    assert again.exit_code == 0 and again.stdout.startswith("unchanged ")
    printed = invoke(cache, "submit", "commit", "--root", str(sample), "--out", "-", str(out))
    assert printed.exit_code == 0 and printed.stdout == path.read_text()
    # The pull request: the commitment and, for a new model, only its model.json.
    (sample / "archive/models/live-sealed").mkdir()
    shutil.copyfile(out / "model.json", sample / "archive/models/live-sealed/model.json")
    assert invoke(cache, "seal", "--root", str(sample)).exit_code == 0
    result = check(cache, sample, sample / "archive/models/live-sealed", "--now", "2025-07-10T09:00:00Z")
    assert result.exit_code == 0, result.output
    assert f"| {OPEN} | sealed `archive/commitments/{OPEN}/live-sealed.json`" in result.stdout and "✅ on time" in result.stdout
    # Files that changed after sealing are refused, never re-sealed.
    trace_file = out / "origins" / OPEN / "traces.jsonl"
    trace_file.write_text("".join(trace_file.read_text().splitlines(keepends=True)[:-1]))
    changed = invoke(cache, "submit", "commit", "--root", str(sample), str(out))
    assert changed.exit_code == 1 and changed.stderr == f"Error: {path}: already exists and differs; a commitment is never replaced\n"


def test_submit_commit_refuses_what_it_cannot_seal(sample, cache, tmp_path) -> None:
    out = tmp_path / "not-yet"
    out.mkdir()
    missing = invoke(cache, "submit", "commit", "--root", str(sample), str(out))
    assert missing.exit_code == 2
    assert missing.stderr == (f"Error: {out}/origins/{OPEN}/predictions.jsonl: missing; write it first with "
                              f"'rapgen agent run --origins {OPEN} --out {out}'\n")
    resolved = invoke(cache, "submit", "commit", "--root", str(sample), "--origin", "2025-01-01", str(out))
    assert resolved.exit_code == 1
    assert resolved.stderr == ("Error: origin 2025-01-01 is resolved; only the open origin 2025-07-01 (closes 2025-07-15) "
                               "takes Live submissions\n")
    unknown = invoke(cache, "submit", "commit", "--root", str(sample), "--origin", "2026-07-01", str(out))
    assert unknown.exit_code == 1 and "2026-07-01 is not an origin of this archive" in unknown.stderr
    assert invoke(cache, "submit", "commit", "--root", str(sample), "--origin", "soon", str(out)).exit_code == 2
    folder = out / "origins" / OPEN
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text(json.dumps({"field_id": FIELD, "origin": OPEN, "condition": "A0",
                                                          "weights": {f"D{k}": 1 for k in range(8)}}) + "\n")
    partial = invoke(cache, "submit", "commit", "--root", str(sample), str(out))
    assert partial.exit_code == 1 and "nothing was sealed" in partial.stderr and len(partial.stderr.splitlines()) == 1
    assert not (sample / "archive/commitments" / OPEN).exists()


def test_a_listed_model_adds_a_later_origin_with_agent_run(sample, cache, tmp_path) -> None:
    """A model listed by a release, without 2024-07-01, runs it into its own folder; model.json stays as listed."""
    folder = sample / "archive/models/kit-early"
    first = agent_run(cache, sample, folder, "--origins", "2023-01-01,2023-07-01")
    assert first.exit_code == 0, first.output
    fill_model_json(folder)
    assert invoke(cache, "seal", "--root", str(sample)).exit_code == 0
    cut = invoke(cache, "release", "cut", "--root", str(sample), "--kind", "models", "--date", "2025-07-16", "--simulated")
    assert cut.exit_code == 0, cut.output
    listed = (folder / "model.json").read_bytes()
    later = agent_run(cache, sample, folder, "--origins", LATER)
    assert later.exit_code == 0, later.output
    assert (folder / "model.json").read_bytes() == listed
    assert {x["origin"] for x in lines(folder / "origins" / LATER / "predictions.jsonl")} == {LATER}
    assert invoke(cache, "seal", "--root", str(sample)).exit_code == 0
    result = check(cache, sample, folder)
    assert result.exit_code == 0, result.output
    assert f"| {LATER} | `origins/{LATER}/predictions.jsonl` | A0 17/17, A1 17/17, A3 17/17 | ✅ complete |" in result.stdout
    assert "| 2023-01-01 | `predictions.jsonl` (listed) |" in result.stdout
    assert f"origin {LATER} is resolved: its files are a later origin, not a Live entry" in result.stdout
    resumed = agent_run(cache, sample, folder, "--origins", LATER, "--resume")
    assert resumed.exit_code == 0 and "resumed: 51 units were already in" in resumed.stderr
    assert (folder / "model.json").read_bytes() == listed


def test_intervention_runs_cover_the_resolved_later_origins(cache, tmp_path) -> None:
    """Readouts and exact-history units at a later resolved origin; never at the open one."""
    folder = tmp_path / "ref-history-trend"
    folder.mkdir()
    source = REPO / "archive/models/ref-history-trend"
    for name in ("model.json", "predictions.jsonl", "traces.jsonl"):
        shutil.copyfile(source / name, folder / name)
    shutil.copytree(source / "origins", folder / "origins")
    reply = lambda request: tool_reply(("Finish", {f"D{k}": k + 1 for k in range(8)}))  # noqa: E731
    base = ["agent", "run", "--model", "fake-1", "--root", str(REPO), "--out", str(folder), "--fields", FIELD]
    with FakeChat(reply) as chat:
        readout = invoke(cache, *base, "--base-url", chat.base_url, "--readout", "--origins", LATER)
        oracle = invoke(cache, *base, "--base-url", chat.base_url, "--oracle", "O1,O2", "--origins", LATER)
        refused = invoke(cache, *base, "--base-url", chat.base_url, "--oracle", "O1", "--origins", OPEN)
    assert readout.exit_code == 0, readout.output
    replays = lines(folder / "replays.jsonl")
    calls = [t for t in lines(source / "origins" / LATER / "traces.jsonl") if t["field_id"] == FIELD]
    n = {c: sum(t["condition"] == c for t in calls) for c in ("A3", "A4")}
    assert len(replays) == 8 and {r["origin"] for r in replays} == {LATER}
    assert {(r["source_condition"], r["budget"], r["calls_used"]) for r in replays} == {
        (c, "all", n[c]) for c in n} | {(c, "matched", min(n.values())) for c in n}
    assert oracle.exit_code == 0, oracle.output
    assert {(u["origin"], u["condition"]) for u in lines(folder / "oracle.jsonl")} == {(LATER, "O1"), (LATER, "O2")}
    assert refused.exit_code == 2 and refused.stderr == (
        "Error: origin 2025-07-01 is open: intervention records cover resolved origins only "
        "(2023-01-01, 2023-07-01, 2024-01-01, 2024-07-01, 2025-01-01)\n")
