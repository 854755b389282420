"""rapgen agent run against a fake OpenAI-compatible endpoint, and the end-to-end
done-when: a kit-made submission passes the check, appears on the rendered site
and its traces replay exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.kit import AgentConfig, SearchSession, build_prompt, run_agent, template_sha256
from rapgen.submit import check_submission
from test_kit_support import FakeChat
from test_submit_support import append_sums, fake_executor, read_jsonl, tree_digest


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("RAPGEN_CACHE", str(path))
    return path


def test_agent_run_writes_an_honest_submission(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    out = tmp_path / "kit-model"
    session = SearchSession(Archive(repo), executor=fake_executor(repo))
    with FakeChat() as chat:
        summary = run_agent(repo, out, AgentConfig(base_url=chat.base_url, model="fake-1", api_key="sk-test", retries=0), session=session)
    assert summary.units == 60 and summary.invalid == 6  # delta 2023-01-01 and gamma 2023-07-01, in each of A0 A1 A3
    lines = read_jsonl(out / "predictions.jsonl")
    bad = {(l["field_id"], l["origin"], l["condition"]): l for l in lines if l.get("status") == "invalid"}
    assert bad[("delta", "2023-01-01", "A0")] == {"field_id": "delta", "origin": "2023-01-01", "condition": "A0", "weights": None,
                                                   "status": "invalid", "reason": "no tool call (the model answered in text)"}
    assert bad[("gamma", "2023-07-01", "A3")]["reason"] == "Finish weight D2 is negative"
    good = next(l for l in lines if l["field_id"] == "alpha" and l["condition"] == "A1")
    assert set(good["weights"]) == {f"D{k}" for k in range(8)} and good["rationale"].startswith("scripted alpha")
    # Requests: the benchmark's prompt and tools, the model name and the key.
    first = chat.requests[0]
    assert first["model"] == "fake-1" and first["tool_choice"] == "auto" and first["temperature"] == 0.0
    assert [t["function"]["name"] for t in first["tools"]] == ["Finish"]  # A0 runs first
    assert chat.headers[0]["Authorization"] == "Bearer sk-test"
    # Traces: two calls per Search unit; beta 2024-01-01's two malformed calls are both recorded,
    # the unknown-key one sanitised (query "") so that it replays as an error too.
    traces = read_jsonl(out / "traces.jsonl")
    beta = [t for t in traces if t["field_id"] == "beta" and t["origin"] == "2024-01-01"]
    assert [(t["condition"], t["call_index"], t["query"], t["sort"], t["total_hits"], t["returned_ids"]) for t in beta] == [
        ("A1", 0, "", "relevance", 0, []), ("A1", 1, "parsing", "popularity", 0, []),
        ("A3", 0, "", "relevance", 0, []), ("A3", 1, "parsing", "popularity", 0, [])]
    assert len(traces) == 2 * 2 * 20 - 2 * 2  # two Search conditions × 20 units × 2 calls, minus delta's
    archive = Archive(repo)
    for t in traces[:5] + traces[-5:]:
        assert t["prompt_sha256"] == build_prompt(archive, t["field_id"], t["origin"], t["condition"]).prompt_sha256
    model = json.loads((out / "model.json").read_text())
    assert model["model_id"] == "kit-model" and model["display_name"] == "fake-1" and model["diagnostic"] is False
    assert model["prompt_sha256"] == template_sha256() and list(model)[-1] == "prompt_sha256"


def test_agent_cli_end_to_end(tiny_archive, tmp_path, cache) -> None:
    """The done-when: agent run (real Search backend) -> check passes -> site page -> traces replay exactly."""
    repo = tiny_archive.root
    work = tmp_path / "kit"
    runner = CliRunner()
    assert runner.invoke(cli, ["submit", "init", str(work)]).exit_code == 0
    (work / "model.json").write_text((work / "model.json").read_text().replace("TODO: the name shown on the leaderboard", "Kit Model")
                                     .replace("TODO: who trained or serves the model", "Example Lab")
                                     .replace("TODO: where the cut-off date comes from (model card URL), or say it is unknown", "unknown")
                                     .replace("TODO: an e-mail address or GitHub handle", "lab@example.org"))
    with FakeChat() as chat:
        result = runner.invoke(cli, ["agent", "run", "--base-url", chat.base_url, "--model", "fake-1", "--root", str(repo),
                                     "--out", str(work), "--conditions", "A0,A1,A3"], env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 0, result.output
    assert "60 units (54 valid, 6 invalid)" in result.stdout
    assert "Authorization" not in chat.headers[0]
    # Check it outside the archive first, then as the pull request adds it.
    external = runner.invoke(cli, ["submit", "check", "--no-scores", "--root", str(repo), str(work)])
    assert external.exit_code == 0, external.output
    target = repo / "archive" / "models" / "kit"
    target.mkdir()
    for name in ("model.json", "predictions.jsonl", "traces.jsonl"):
        shutil.copyfile(work / name, target / name)
    append_sums(repo, "kit")
    before = tree_digest(repo)
    res = check_submission(repo, target, resamples=100)
    assert tree_digest(repo) == before
    assert res.ok, [p.one_line() for p in res.problems]
    assert res.stages["scores"].status == "passed"
    assert res.stages["replay"].status == "passed"
    assert res.replay["calls"] == res.n_trace_calls > 0 and res.replay["reproduced"] == res.replay["calls"]
    assert res.stages["site"].status == "passed" and any("kit" in p for p in res.site_pages)
    assert any(r["entry"] == "kit" and r["condition"] == "A3" for r in res.leaderboard)


def test_agent_run_refuses_to_overwrite_and_bad_options(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    out = tmp_path / "m"
    out.mkdir()
    (out / "predictions.jsonl").write_text("{}\n")
    runner = CliRunner()
    base = ["agent", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "x", "--root", str(repo)]
    r = runner.invoke(cli, base + ["--out", str(out)])
    assert r.exit_code == 2 and "already exists; use --resume to continue the run, --force to replace it" in r.stderr
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "Bad Name")])
    assert r.exit_code == 2 and "not a valid model id" in r.stderr
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "ok"), "--fields", "omega"])
    assert r.exit_code == 2 and "field 'omega' is not in this archive; choose from alpha, beta, " in r.stderr
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "ok"), "--origins", "2024-02-01"])
    assert r.exit_code == 2 and "origin '2024-02-01' is not in this archive; choose from 2023-01-01, " in r.stderr
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "ok"), "--conditions", "A9"])
    assert r.exit_code == 2 and "condition 'A9' is not a condition; choose from A0, A1, A2, A3, A4" in r.stderr
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "ok"), "--knowledge-cutoff", "2024-13-01"])
    assert r.exit_code == 2 and "not a valid date" in r.stderr


def test_unreachable_endpoint_records_invalid_units(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    out = tmp_path / "down"
    config = AgentConfig(base_url="http://127.0.0.1:9/v1", model="x", fields=("alpha",), origins=("2023-01-01",), conditions=("A0",), retries=0, timeout=2)
    summary = run_agent(repo, out, config, session=SearchSession(Archive(repo), executor=fake_executor(repo)))
    assert summary.invalid == 1
    line = read_jsonl(out / "predictions.jsonl")[0]
    assert line["status"] == "invalid" and line["reason"].startswith("endpoint error: cannot reach http://127.0.0.1:9/v1/chat/completions")
    assert not (out / "traces.jsonl").exists()


def test_a_dead_endpoint_stops_the_run_and_writes_nothing(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    out = tmp_path / "dead"
    result = CliRunner().invoke(cli, ["agent", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "x", "--root", str(repo),
                                      "--out", str(out), "--conditions", "A0", "--timeout", "2", "--retries", "0"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: the endpoint failed on the first 3 units (endpoint error: cannot reach")
    assert "[1/20] A0 alpha 2023-01-01: invalid (endpoint error" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("notaurl", "--base-url 'notaurl' is not an http:// or https:// URL with a host"),
        ("127.0.0.1:8000/v1", "--base-url '127.0.0.1:8000/v1' is not an http:// or https:// URL with a host"),
        ("ftp://example.org/v1", "--base-url 'ftp://example.org/v1' is not an http:// or https:// URL with a host"),
        ("http:///v1", "--base-url 'http:///v1' is not an http:// or https:// URL with a host"),
        ("http://127.0.0.1:99999/v1", "--base-url 'http://127.0.0.1:99999/v1' is not a valid URL"),
    ],
)
def test_agent_run_rejects_a_bad_base_url(tiny_archive, tmp_path, url, message) -> None:
    out = tmp_path / "m"
    r = CliRunner().invoke(cli, ["agent", "run", "--base-url", url, "--model", "x", "--root", str(tiny_archive.root), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {message}")
    assert "e.g. http://127.0.0.1:8000/v1" in r.stderr and "internal error" not in r.stderr
    assert not out.exists()


def test_one_model_json_writer_for_init_the_driver_and_the_reference_agents(tmp_path) -> None:
    from datetime import date

    from rapgen.agents import REFERENCE_AGENTS
    from rapgen.agents.run import _model_json
    from rapgen.archive import MODEL_KEYS, parse_model_json
    from rapgen.kit import init_submission, model_record

    init_submission(tmp_path / "m1", today=date(2026, 1, 2))
    scaffolded = json.loads((tmp_path / "m1" / "model.json").read_text())
    reference = _model_json(REFERENCE_AGENTS[0], date(2026, 1, 2))
    driver = model_record("m2", today=date(2026, 1, 2), display_name="x", prompt_sha256="a" * 64)
    for record in (scaffolded, reference, driver):
        assert tuple(record)[: len(MODEL_KEYS)] == MODEL_KEYS
    assert list(reference)[len(MODEL_KEYS):] == ["reference_agent"] and list(driver)[len(MODEL_KEYS):] == ["prompt_sha256"]
    info, findings = parse_model_json("model.json", json.dumps(driver).encode(), folder="m2")
    assert not findings and info.extra == {"prompt_sha256": "a" * 64}
    with pytest.raises(ValueError, match="no key 'colour'"):
        model_record("m3", colour="red")
