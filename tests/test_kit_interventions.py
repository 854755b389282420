"""``rapgen agent run --readout|--oracle`` and ``rapgen prompt --readout|O1-O3`` against the fake endpoint:
the files parse and check with the archive's own rules and zero findings, hashes recompute, runs resume."""

from __future__ import annotations

import hashlib
import json
from datetime import date

import pandas as pd
import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.archive.evidence import PaperText, canonical_counts, canonical_json
from rapgen.archive.intervention_folder import ArchiveFacts, check_model_interventions
from rapgen.cli import cli
from rapgen.kit import AgentConfig, SearchSession, build_prompt, run_agent
from rapgen.search import validate_call
from test_kit_support import FakeChat, scripted_reply, tool_reply, unit_of, weights
from test_submit_support import fake_executor, read_jsonl

FIELDS = ("alpha", "beta", "delta", "gamma")
ENV = {"OPENAI_API_KEY": ""}


def _source_reply(request):
    """The scripted endpoint, except that alpha's State units stop after one Search call (n_A4 = 1 < n_A3 = 2)."""
    system = request["messages"][0]["content"]
    searched = sum(m["role"] == "tool" for m in request["messages"])
    if unit_of(request)[0] == "alpha" and "present state" in system and searched >= 1:
        return tool_reply(("Finish", weights(*unit_of(request))))
    return scripted_reply(request)


@pytest.fixture
def model(tiny_archive, tmp_path):
    """A folder with A3 and A4 units (and their traces) from the scripted endpoint."""
    repo, out = tiny_archive.root, tmp_path / "m"
    with FakeChat(_source_reply) as chat:
        config = AgentConfig(base_url=chat.base_url, model="m", retries=0, timeout=5, conditions=("A3", "A4"), fields=FIELDS)
        run_agent(repo, out, config, session=SearchSession(Archive(repo), executor=fake_executor(repo)))
    return repo, out


def _agent(repo, out, url, *extra):
    return CliRunner().invoke(cli, ["agent", "run", "--base-url", url, "--model", "m", "--root", str(repo), "--out", str(out),
                                    "--retries", "0", "--timeout", "5", *extra], env=ENV)


def _facts(repo) -> ArchiveFacts:
    """The archive facts computed here from the parquet files, independently of the kit."""
    archive = Archive(repo)
    papers = pd.read_parquet(repo / "archive/benchmark/papers.parquet")
    texts = {r.arxiv_id: PaperText(pd.Timestamp(r.first_submitted).date().isoformat(), r.title, r.abstract) for r in papers.itertuples()}
    rows = pd.read_parquet(repo / "archive/benchmark/assignments.parquet")
    by_field = {f: [(pd.Timestamp(d).date(), p) for d, p in zip(g.first_submitted, g.primary)] for f, g in rows.groupby("field_id")}

    def malformed(call) -> bool:
        try:
            validate_call({"query": call.query, "sort": call.sort, "date_from": call.date_from, "date_to": call.date_to})
        except ValueError:
            return True
        return False

    return ArchiveFacts(archive.fields, archive.blocks, archive.origins.origins, archive.origins.window_months,
                        int(archive.ledger["search"]["max_calls"]), archive.model_ids, texts,
                        lambda f, a, b: canonical_counts(by_field.get(f, []), a, b), malformed, lambda mid: [])


def _check(repo, out):
    archive = Archive(repo)
    from rapgen.archive import parse_predictions, parse_traces

    units, _ = parse_predictions("p", (out / "predictions.jsonl").read_bytes(), archive.field_map, archive.origins.origins)
    traces, _ = parse_traces("t", (out / "traces.jsonl").read_bytes(), archive.field_map, archive.origins.origins, 20)
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".json", ".jsonl")}
    return check_model_interventions(f"archive/models/{out.name}", files, units, traces, _facts(repo))


def _line_findings(findings):
    return [f for f in findings if f.line is not None]


def _template_sha(repo_root, name) -> str:
    return hashlib.sha256((repo_root / "templates/prompts" / name).read_bytes()).hexdigest()


def test_readouts_cover_every_pair_and_check_with_zero_findings(model, repo_root):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        r = _agent(repo, out, chat.base_url, "--readout")
    assert r.exit_code == 0, r.output
    lines = read_jsonl(out / "replays.jsonl")
    n_pairs = len(FIELDS) * len(Archive(repo).origins.origins)
    assert len(lines) == n_pairs * 8  # 2 sources × 2 readouts × 2 budgets
    records, findings = _check(repo, out)
    assert findings == [] and len(records.readouts) == len(lines)
    assert {l["prompt_sha256"] for l in lines} == {_template_sha(repo_root, "readout.md.j2")}
    # delta/gamma units are not in FIELDS; beta 2024-01-01 made two malformed calls: both sources have n = 2
    beta = [l for l in lines if l["field_id"] == "beta" and l["origin"] == "2024-01-01"]
    assert {l["calls_used"] for l in beta} == {2}  # two malformed calls still count
    alpha = {(l["source_condition"], l["budget"]): l["calls_used"] for l in lines if l["field_id"] == "alpha"}
    assert alpha == {("A3", "all"): 2, ("A3", "matched"): 1, ("A4", "all"): 1, ("A4", "matched"): 1}
    evidence = {(l["source_condition"], l["budget"]): l["evidence_sha256"] for l in lines if (l["field_id"], l["origin"]) == ("alpha", "2024-01-01")}
    assert evidence[("A3", "all")] != evidence[("A3", "matched")] and evidence[("A4", "all")] == evidence[("A4", "matched")]
    assert all("Search" not in [t["function"]["name"] for t in q["tools"]] for q in chat.requests)


def test_a_readout_prompt_embeds_the_evidence_and_nothing_else_of_the_source(model):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        assert _agent(repo, out, chat.base_url, "--readout", "--sources", "A4", "--readouts", "forecast", "--budgets", "all").exit_code == 0
    (line,) = [l for l in read_jsonl(out / "replays.jsonl") if (l["field_id"], l["origin"]) == ("alpha", "2024-01-01")]
    (request,) = [q for q in chat.requests if unit_of(q) == ("alpha", "2024-01-01")]
    system = request["messages"][0]["content"]
    r = CliRunner().invoke(cli, ["prompt", "--root", str(repo), "alpha", "2024-01-01", "A4", "--readout", "forecast",
                                 "--model", str(out), "--json"])
    shown = json.loads(r.output)
    assert shown["evidence_sha256"] == line["evidence_sha256"] and shown["messages"][0]["content"] == system
    start = system.index('\n[{"call_index"') + 1
    evidence = json.loads(system[start:system.index("\n", start)])
    assert hashlib.sha256(canonical_json(evidence)).hexdigest() == line["evidence_sha256"]
    assert len(evidence) == line["calls_used"] == 1 and all("papers" in c for c in evidence)
    a4 = build_prompt(Archive(repo), "alpha", "2024-01-01", "A4").system
    assert "scripted alpha" not in system and "State" not in request["messages"][1]["content"]
    # the Forecast prompt's own text up to its Evidence section, and its Finish line
    a3 = build_prompt(Archive(repo), "alpha", "2024-01-01", "A3").system
    assert system.split("# Evidence")[0] == a3.split("# Evidence")[0] and a4.split("# Evidence")[0] != a3.split("# Evidence")[0]
    assert system.split("- `Finish`")[1] == a3.split("- `Finish`")[1]


def test_oracle_units_check_with_zero_findings_and_o3_searches(model, repo_root):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        r = _agent(repo, out, chat.base_url, "--oracle", "O1,O2,O3")
    assert r.exit_code == 0, r.output
    lines, calls = read_jsonl(out / "oracle.jsonl"), read_jsonl(out / "oracle_traces.jsonl")
    n = len(FIELDS) * len(Archive(repo).origins.origins)
    assert sorted({l["condition"] for l in lines}) == ["O1", "O2", "O3"] and len(lines) == 3 * n
    records, findings = _check(repo, out)
    assert findings == [] and len(records.oracle_traces) == len(calls) > 0
    assert {c["condition"] for c in calls} == {"O3"}
    assert {l["prompt_sha256"] for l in lines} == {_template_sha(repo_root, "oracle.md.j2")}
    o1 = next(q for q in chat.requests if unit_of(q) == ("alpha", "2024-01-01") and "Search" not in json.dumps(q["tools"]))
    assert '{"windows":[{"date_from":"2023-07-01","date_to":"2024-01-01","counts":{"D0":' in o1["messages"][0]["content"]
    r = CliRunner().invoke(cli, ["prompt", "--root", str(repo), "alpha", "2024-01-01", "O2", "--json"])
    (unit,) = [l for l in lines if (l["field_id"], l["origin"], l["condition"]) == ("alpha", "2024-01-01", "O2")]
    assert json.loads(r.output)["input_sha256"] == unit["input_sha256"]


def test_odd_replies_become_invalid_records_with_reasons(model):
    repo, out = model
    odd = iter([b"not json", {"choices": []}, {"choices": [{"message": {"role": "assistant", "content": "D0 grows"}}]},
                tool_reply(("Finish", {"D0": -1, **{f"D{k}": 1 for k in range(1, 8)}}))])

    def reply(request):
        return next(odd, None) or tool_reply(("Finish", weights(*unit_of(request))))

    with FakeChat(reply) as chat:
        r = _agent(repo, out, chat.base_url, "--oracle", "O1")
    assert r.exit_code == 0, r.output
    reasons = [l.get("reason") for l in read_jsonl(out / "oracle.jsonl")][:4]
    assert reasons[0].startswith("endpoint error") and reasons[1] == "the endpoint's reply has no choices[0].message"
    assert reasons[2:] == ["no tool call (the model answered in text)", "Finish weight D0 is negative"]
    assert _check(repo, out)[1] == []


def test_usage_and_response_model_are_recorded_when_the_endpoint_gives_them(model):
    repo, out = model

    def reply(request):
        body = tool_reply(("Finish", weights(*unit_of(request))))
        return {**body, "model": "served-7b", "usage": {"prompt_tokens": 900, "completion_tokens": 40,
                                                         "completion_tokens_details": {"reasoning_tokens": 7}}}

    with FakeChat(reply) as chat:
        assert _agent(repo, out, chat.base_url, "--readout", "--budgets", "matched", "--max-output-tokens", "512").exit_code == 0
    line = read_jsonl(out / "replays.jsonl")[0]
    assert (line["response_model"], line["attempts"]) == ("served-7b", 1)
    assert line["usage"] == {"input_tokens": 900, "output_tokens": 40, "reasoning_tokens": 7}
    assert chat.requests[0]["max_tokens"] == 512 and line["max_output_tokens"] == 512
    assert _check(repo, out)[1] == []


def test_an_interrupted_readout_run_resumes_without_repeating_a_paid_unit(model, monkeypatch):
    repo, out = model
    import rapgen.kit.intervention_runner as runner

    real, seen = runner.run_episode, []

    def crash_on_sixth(*args):
        seen.append(1)
        if len(seen) == 6:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(runner, "run_episode", crash_on_sixth)
    with FakeChat(scripted_reply) as chat:
        _agent(repo, out, chat.base_url, "--readout")
        assert len(read_jsonl(out / "replays.jsonl")) == 5
        monkeypatch.setattr(runner, "run_episode", real)
        again = _agent(repo, out, chat.base_url, "--readout")
        assert _agent(repo, out, chat.base_url, "--readout").exit_code == 2  # neither --resume nor --force
        r = _agent(repo, out, chat.base_url, "--readout", "--resume")
    assert again.exit_code == 2 and r.exit_code == 0, r.output
    lines = read_jsonl(out / "replays.jsonl")
    keys = [(l["field_id"], l["origin"], l["source_condition"], l["readout"], l["budget"]) for l in lines]
    assert len(keys) == len(set(keys)) == len(FIELDS) * 5 * 8
    assert _check(repo, out)[1] == []


def test_resume_drops_the_calls_of_a_cut_off_o3_unit(model):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        assert _agent(repo, out, chat.base_url, "--oracle", "O3", "--origins", "2023-01-01").exit_code == 0
        lines = (out / "oracle.jsonl").read_bytes().splitlines(keepends=True)
        (out / "oracle.jsonl").write_bytes(b"".join(lines[:-1]))  # the last unit's line never got written
        r = _agent(repo, out, chat.base_url, "--oracle", "O3", "--origins", "2023-01-01", "--resume")
    assert r.exit_code == 0 and "dropped 2 trace lines" in r.output, r.output
    calls = read_jsonl(out / "oracle_traces.jsonl")
    assert [c["call_index"] for c in calls] == [0, 1] * (len(calls) // 2) and len(calls) >= 4
    assert _line_findings(_check(repo, out)[1]) == []


@pytest.mark.parametrize("tamper, message, every", [
    (lambda l: {**l, "prompt_sha256": "0" * 64}, "made with another readout template", True),
    (lambda l: {**l, "prompt_sha256": "0" * 64}, "one replay template per file", False),
    (lambda l: {**l, "evidence_sha256": "0" * 64}, "made from other evidence", False),
    (lambda l: {**l, "calls_used": 9}, "made from other evidence", False),
    (lambda l: {**l, "budget": "some"}, "'budget'", False),
])
def test_resume_refuses_a_readout_line_it_would_not_write(model, tamper, message, every):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        assert _agent(repo, out, chat.base_url, "--readout", "--origins", "2023-01-01").exit_code == 0
        lines = read_jsonl(out / "replays.jsonl")
        lines = [tamper(l) if every or i == 0 else l for i, l in enumerate(lines)]
        (out / "replays.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
        r = _agent(repo, out, chat.base_url, "--readout", "--resume")
    assert r.exit_code == 1 and f"replays.jsonl line {2 if message.startswith('one') else 1}" in r.output and message in r.output, r.output


def test_resume_refuses_a_torn_line_and_a_wrong_counts_hash(model):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        assert _agent(repo, out, chat.base_url, "--oracle", "O2", "--origins", "2023-01-01").exit_code == 0
        good = (out / "oracle.jsonl").read_bytes()
        (out / "oracle.jsonl").write_bytes(good[:-5])
        torn = _agent(repo, out, chat.base_url, "--oracle", "O2", "--resume")
        first = json.loads(good.splitlines()[0])
        (out / "oracle.jsonl").write_text(json.dumps({**first, "input_sha256": "a" * 64}) + "\n")
        wrong = _agent(repo, out, chat.base_url, "--oracle", "O2", "--resume")
    assert torn.exit_code == 1 and f"line {len(FIELDS)}: the last line is incomplete" in torn.output
    assert wrong.exit_code == 1 and "oracle.jsonl line 1" in wrong.output and "input_sha256" in wrong.output


@pytest.mark.parametrize("extra, message", [
    (("--readout", "--oracle", "O1"), "not both"),
    (("--readouts", "forecast"), "go with --readout"),
    (("--readout", "--conditions", "A1"), "--conditions is for the main run"),
    (("--oracle", "O4"), "'O4' is not one of O1, O2, O3"),
    (("--readout", "--budgets", "half"), "'half' is not one of all, matched"),
])
def test_bad_options_are_usage_errors_that_write_nothing(model, extra, message):
    repo, out = model
    with FakeChat(scripted_reply) as chat:
        r = _agent(repo, out, chat.base_url, *extra)
    assert r.exit_code == 2 and message in r.output, r.output
    assert not (out / "replays.jsonl").exists() and not (out / "oracle.jsonl").exists() and chat.requests == []


def test_a_folder_without_pairs_is_a_usage_error(tiny_archive, tmp_path):
    repo, out = tiny_archive.root, tmp_path / "m"
    with FakeChat(scripted_reply) as chat:
        config = AgentConfig(base_url=chat.base_url, model="m", retries=0, timeout=5, conditions=("A3",), fields=FIELDS)
        run_agent(repo, out, config, session=SearchSession(Archive(repo), executor=fake_executor(repo)))
        r = _agent(repo, out, chat.base_url, "--readout")
        p = CliRunner().invoke(cli, ["prompt", "--root", str(repo), "alpha", "2024-01-01", "A3", "--readout", "state", "--model", str(out)])
    assert r.exit_code == 2 and "no pair to read out" in r.output
    assert p.exit_code == 2 and "is not a pair" in p.output


def test_the_oracle_prompt_shares_the_forecast_text_and_the_search_tool(tiny_archive):
    repo = tiny_archive.root
    shown = {c: json.loads(CliRunner().invoke(cli, ["prompt", "--root", str(repo), "alpha", "2024-01-01", c, "--json"]).output)
             for c in ("O1", "O3", "A3")}
    o1, o3, a3 = (shown[c]["messages"][0]["content"] for c in ("O1", "O3", "A3"))
    assert o1.split("# Evidence")[0] == o3.split("# Evidence")[0] == a3.split("# Evidence")[0]
    assert o3.split("# Tools")[1] == a3.split("# Tools")[1] and shown["O3"]["tools"] == shown["A3"]["tools"]
    assert [t["function"]["name"] for t in shown["O1"]["tools"]] == ["Finish"]
    assert shown["O1"]["messages"][1] == shown["A3"]["messages"][1]
    assert shown["O1"]["template_sha256"] == shown["O3"]["template_sha256"] != shown["A3"]["template_sha256"]
    assert '"date_from":"2022-07-01"' in o3 and '"date_from":"2022-07-01"' not in o1  # O1 shows h3 only
    assert date.fromisoformat(shown["O1"]["origin"]) == date(2024, 1, 1)


def test_a_session_serves_o3_on_the_expanding_shard_and_records_it_as_o3(tiny_archive):
    repo = tiny_archive.root
    session = SearchSession(Archive(repo), executor=fake_executor(repo))
    args = {"query": "parsing", "sort": "date", "date_from": None, "date_to": None}
    o3, a3 = session.call("alpha", "2024-01-01", "O3", args), session.call("alpha", "2024-01-01", "A3", args)
    assert o3.ids == a3.ids and o3.total_hits == a3.total_hits > 0
    assert [r["condition"] for r in session.records] == ["O3", "A3"]
    for _ in range(session.max_calls - 1):
        session.call("alpha", "2024-01-01", "O3", args)
    capped = session.call("alpha", "2024-01-01", "O3", args)
    assert capped.call_index is None and "call cap" in capped.error
    assert sum(r["condition"] == "O3" for r in session.records) == session.max_calls
    from rapgen.kit.prompt import tool_schemas

    assert [t["function"]["name"] for t in tool_schemas("O2")] == ["Finish"] and tool_schemas("O3") == tool_schemas("A3")


def test_a_dead_endpoint_stops_the_run_before_anything_is_written(model):
    repo, out = model
    with FakeChat(lambda request: (503, b"{}")) as chat:
        r = _agent(repo, out, chat.base_url, "--oracle", "O1")
    assert r.exit_code == 1 and "the endpoint failed on the first 3 units" in r.output
    assert not (out / "oracle.jsonl").exists() and len(chat.requests) == 3


@pytest.mark.parametrize("extra, message", [
    (("alpha", "2024-01-01", "A1", "--readout", "state", "--model", "x"), "reads the evidence of an A3 or A4 unit"),
    (("alpha", "2024-01-01", "A3", "--model", "x"), "--model and --budget go with --readout"),
    (("alpha", "2024-01-01", "A3", "--readout", "state"), "--readout needs --model"),
    (("alpha", "2024-01-01", "A3", "--readout", "state", "--model", "nobody"), "neither a folder nor a listed model"),
    (("alpha", "2024-01-01", "O4"), "'O4' is not one of"),
])
def test_prompt_usage_errors(tiny_archive, extra, message):
    r = CliRunner().invoke(cli, ["prompt", "--root", str(tiny_archive.root), *extra])
    assert r.exit_code == 2 and message in r.output, r.output


def test_a_listed_model_with_the_kits_records_verifies_and_a_changed_hash_does_not(tiny_archive):
    """End to end: A0–A4, readouts and O1–O3 into archive/models/<id>/, sealed, then rapgen verify."""
    from factory import reseal

    from rapgen.archive import verify_archive

    repo = tiny_archive.root
    out = repo / "archive/models/model-k"
    info = {"display_name": "K", "provider": "P", "proprietary": False, "knowledge_cutoff": "2023-06-01", "release_date": "2023-07-01"}
    with FakeChat(_source_reply) as chat:
        config = AgentConfig(base_url=chat.base_url, model="m", retries=0, timeout=5, conditions=("A0", "A1", "A2", "A3", "A4"),
                             model_info=info)
        run_agent(repo, out, config, session=SearchSession(Archive(repo), executor=fake_executor(repo)))
        assert _agent(repo, out, chat.base_url, "--readout").exit_code == 0
        assert _agent(repo, out, chat.base_url, "--oracle", "O1,O2,O3").exit_code == 0
    reseal(repo)
    assert verify_archive(repo).findings == []
    lines = read_jsonl(out / "oracle.jsonl")
    lines[2]["input_sha256"] = "0" * 64
    (out / "oracle.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    reseal(repo)
    (finding,) = verify_archive(repo).findings
    assert (finding.path, finding.line) == ("archive/models/model-k/oracle.jsonl", 3) and "input_sha256" in finding.detail
