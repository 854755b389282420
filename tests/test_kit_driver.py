"""The chat driver against a fake endpoint that replays what real servers send:
every reply shape is a defined outcome, never a crash, and paid work survives."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.kit import AgentConfig, SearchSession, run_agent
from test_kit_support import FakeChat, tool_reply, unit_of, weights
from test_submit_support import fake_executor, read_jsonl

ONE = {"fields": ("alpha",), "origins": ("2024-01-01",)}


def _run(repo, out, reply, conditions=("A1",), **kw):
    session = SearchSession(Archive(repo), executor=fake_executor(repo))
    with FakeChat(reply) as chat:
        config = AgentConfig(base_url=chat.base_url, model="m", retries=0, timeout=5, conditions=conditions, **{**ONE, **kw})
        summary = run_agent(repo, out, config, session=session)
    return summary, chat, read_jsonl(out / "predictions.jsonl"), (read_jsonl(out / "traces.jsonl") if (out / "traces.jsonl").exists() else [])


def _finish(request) -> dict:
    return weights(*unit_of(request))


def _then_finish(first):
    """A reply function: ``first`` on the first turn, then a valid Finish."""

    def reply(request):
        if len(request["messages"]) == 2:
            return first(request) if callable(first) else first
        return tool_reply(("Finish", _finish(request)))

    return reply


def _message(**message) -> dict:
    return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}]}


HUGE_INT = "1" + "0" * 400
# (reply to the first turn, the unit's reason); the run never crashes.
INVALID = [
    ("a string", "the endpoint's reply has no choices[0].message"),
    ({"choices": []}, "the endpoint's reply has no choices[0].message"),
    ({"choices": ["hi"]}, "the endpoint's reply has no choices[0].message"),
    ({"choices": [{"message": "hi"}]}, "the endpoint's choices[0].message is not an object"),
    ({"choices": [{"message": [1, 2]}]}, "the endpoint's choices[0].message is not an object"),
    (_message(content=None, tool_calls="Finish"), "the reply's tool_calls is not a list"),
    (_message(content=None, tool_calls=["Finish"]), "tool call 0 of the reply is not an object with a function name"),
    (_message(content=None, tool_calls=[{"function": {"arguments": "{}"}}]), "tool call 0 of the reply is not an object with a function name"),
    ({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": []}}]},
     "the reply says finish_reason tool_calls but holds no tool call"),
    (_message(content="D0 will grow."), "no tool call (the model answered in text)"),
    (_message(content=None), "no tool call (the model answered in text)"),
    (tool_reply(("Finish", '{"D0": 1,')), "Finish: the arguments are not valid JSON"),
    (tool_reply(("Finish", "[1, 2]")), "Finish arguments are not a JSON object"),
    (tool_reply(("Finish", '{"D0": NaN}')), "Finish: the arguments are not valid JSON (NaN is not a JSON number"),
    (tool_reply(("Finish", "[" * 100000 + "]" * 100000)), "Finish: the arguments are not valid JSON"),
    (tool_reply(("Finish", '{"D0": 1e400, "D1": 1, "D2": 1, "D3": 1, "D4": 1, "D5": 1, "D6": 1, "D7": 1}')),
     "Finish weight D0 is not finite (it does not fit a double)"),
    (tool_reply(("Finish", '{"D0": ' + HUGE_INT + ', "D1": 1, "D2": 1, "D3": 1, "D4": 1, "D5": 1, "D6": 1, "D7": 1}')),
     "Finish weight D0 is not finite (it does not fit a double)"),
    (tool_reply(("Finish", '{"D0": ' + "9" * 5000 + '}')), "Finish: the arguments are not valid JSON"),
    (tool_reply(("Finish", '{"D0": 1, "D1": 1, "D2": 1, "D3": 1, "D4": 1, "D5": 1, "D6": 1, "D7": 1, "rationale": "\\ud800"}')),
     "Finish rationale is not valid Unicode (a lone surrogate)"),
    (tool_reply(("Finish", {**{f"D{k}": 0 for k in range(8)}})), "Finish weights total zero"),
    (tool_reply(("Finish", {**{f"D{k}": 1 for k in range(7)}, "D9": 1})), "Finish needs exactly D0–D7 (missing D7)"),
    (_message(content=None, tool_calls=[{"id": "a", "type": "function", "function": {"name": "Finish", "arguments": 42}}]),
     "Finish: the arguments are a JSON int, not a JSON string"),
    ((500, b"oops"), "endpoint error: HTTP 500 from"),
    ((404, b"{}"), "endpoint error: HTTP 404 from"),
    (b"<html>not json</html>", "endpoint error: the reply from"),
    (b"\xff\xfe{}", "endpoint error: the reply from"),
    (b'{"choices": [' * 50000 + b"]}" * 50000, "endpoint error: the reply from"),
    ('{"choices": [{"message": {"content": "' + "\\ud800" + '"}}]}', "no tool call (the model answered in text)"),
]


@pytest.mark.parametrize(("first", "reason"), INVALID, ids=range(len(INVALID)))
def test_every_odd_reply_is_an_invalid_unit_with_a_reason(tiny_archive, tmp_path, first, reason) -> None:
    raw = first.encode() if isinstance(first, str) and first.startswith("{") else first
    repo = tiny_archive.root
    # A second, normal unit follows: the run goes on after the odd one.
    def reply(request):
        if unit_of(request)[1] == "2024-01-01":
            return _then_finish(raw)(request)
        return tool_reply(("Finish", _finish(request)))

    summary, _, lines, _ = _run(repo, tmp_path / "m", reply, conditions=("A0",), origins=("2024-01-01", "2024-07-01"))
    assert summary.units == 2
    bad, good = lines
    assert bad["weights"] is None and bad["status"] == "invalid" and bad["reason"].startswith(reason), bad["reason"]
    assert good["weights"] is not None


def test_missing_ids_objects_as_arguments_and_parallel_calls(tiny_archive, tmp_path) -> None:
    """vLLM / llama.cpp shapes: no call ids, arguments as objects, several calls in one reply, content beside calls."""
    repo = tiny_archive.root
    first = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"type": "function", "function": {"name": "Search", "arguments": {"query": "parsing", "sort": "relevance"}}},
        {"type": "function", "function": {"name": "Search", "arguments": '{"query": "dialogue", "sort": "date"}'}},
        {"id": "x", "type": "function", "function": {"name": "Search", "arguments": "{not json"}},
        {"id": "", "type": "function", "function": {"name": "Browse", "arguments": None}},
    ]}}]}
    summary, chat, lines, traces = _run(repo, tmp_path / "m", _then_finish(first))
    assert lines[0]["weights"] is not None and summary.calls == 3
    assert [(t["call_index"], t["query"], t["sort"]) for t in traces] == [(0, "parsing", "relevance"), (1, "dialogue", "date"), (2, "", "")]
    second = chat.requests[1]["messages"]
    assistant = second[2]
    assert assistant["content"] == "Let me look."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_0_0", "call_0_1", "x", "call_0_3"]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"query": "parsing", "sort": "relevance"}'  # sent back as a string
    tools = second[3:]
    assert [m["tool_call_id"] for m in tools] == ["call_0_0", "call_0_1", "x", "call_0_3"]
    bodies = [json.loads(m["content"]) for m in tools]
    assert bodies[0]["call_index"] == 0 and bodies[1]["call_index"] == 1
    assert bodies[2]["error"].startswith("malformed call: the arguments are not valid JSON") and bodies[2]["call_index"] == 2
    assert bodies[3]["error"] == "unknown tool 'Browse'; the tools are Search, Finish"


def test_finish_ends_the_unit_and_later_calls_in_the_reply_are_not_run(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root

    def reply(request):
        return tool_reply(("Finish", _finish(request)), ("Search", {"query": "late", "sort": "relevance"}))

    summary, chat, lines, traces = _run(repo, tmp_path / "m", reply)
    assert lines[0]["weights"] == weights("alpha", "2024-01-01") and traces == [] and len(chat.requests) == 1


def test_search_with_a_lone_surrogate_is_a_malformed_call_recorded_sanitised(tiny_archive, tmp_path) -> None:
    first = tool_reply(("Search", '{"query": "\\ud800", "sort": "relevance"}'), ("Search", '{"query": "x", "sort": "\\udfff"}'))
    summary, chat, lines, traces = _run(tiny_archive.root, tmp_path / "m", _then_finish(first))
    assert lines[0]["weights"] is not None
    assert [(t["call_index"], t["query"], t["sort"], t["total_hits"]) for t in traces] == [(0, "", "relevance", 0), (1, "", "", 0)]
    bodies = [json.loads(m["content"]) for m in chat.requests[1]["messages"][3:]]
    assert "not valid Unicode" in bodies[0]["error"] and bodies[1]["error"].startswith("malformed call: sort must be")


def test_too_many_turns_is_invalid(tiny_archive, tmp_path) -> None:
    def reply(request):
        return tool_reply(("Search", {"query": "parsing", "sort": "relevance"}))

    summary, _, lines, traces = _run(tiny_archive.root, tmp_path / "m", reply, max_turns=4)
    assert lines[0]["reason"] == "no Finish call within 4 turns" and len(traces) == 4


def test_a_timeout_is_an_invalid_unit(tiny_archive, tmp_path) -> None:
    import time

    def reply(request):
        if unit_of(request)[1] == "2024-01-01":
            time.sleep(3)
        return tool_reply(("Finish", _finish(request)))

    repo = tiny_archive.root
    session = SearchSession(Archive(repo), executor=fake_executor(repo))
    with FakeChat(reply) as chat:
        config = AgentConfig(base_url=chat.base_url, model="m", retries=0, timeout=1, conditions=("A0",), fields=("alpha",),
                             origins=("2023-07-01", "2024-01-01"))
        run_agent(repo, tmp_path / "m", config, session=session)
    lines = read_jsonl(tmp_path / "m" / "predictions.jsonl")
    assert lines[0]["weights"] is not None
    assert lines[1]["reason"].startswith("endpoint error: cannot reach") and "timed out" in lines[1]["reason"]


# ---------------------------------------------------------------- paid work survives; --resume
def _scripted(request):
    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    if any(t["function"]["name"] == "Search" for t in request["tools"]) and done < 2:
        return tool_reply(("Search", {"query": f"parsing {done}", "sort": "relevance"}))
    return tool_reply(("Finish", _finish(request)))


def _cli(repo, out, url, *extra):
    return CliRunner().invoke(cli, ["agent", "run", "--base-url", url, "--model", "m", "--root", str(repo), "--out", str(out),
                                    "--retries", "0", "--timeout", "5", "--fields", "alpha,beta", *extra], env={"OPENAI_API_KEY": ""})


def test_an_interrupted_run_keeps_every_finished_unit_and_resumes(tiny_archive, tmp_path, monkeypatch) -> None:
    repo, out = tiny_archive.root, tmp_path / "m"
    import rapgen.kit.runner as runner

    real = runner.run_episode
    seen = []

    def crash_on_seventh(*args):
        seen.append(1)
        if len(seen) == 7:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(runner, "run_episode", crash_on_seventh)
    with FakeChat(_scripted) as chat:
        r = _cli(repo, out, chat.base_url)
        assert r.exit_code == 130 and "Error: interrupted" in r.stderr
        kept = read_jsonl(out / "predictions.jsonl")
        assert len(kept) == 6  # every unit finished before the interruption
        monkeypatch.setattr(runner, "run_episode", real)
        r = _cli(repo, out, chat.base_url, "--resume")
        assert r.exit_code == 0, r.output
    lines = read_jsonl(out / "predictions.jsonl")
    assert lines[:6] == kept and len(lines) == 30 and len({(l["field_id"], l["origin"], l["condition"]) for l in lines}) == 30
    assert "resumed: 6 units" in r.stderr and "30 units (30 valid, 0 invalid)" in r.stdout
    traces = read_jsonl(out / "traces.jsonl")
    per_unit = {}
    for t in traces:
        per_unit.setdefault((t["field_id"], t["origin"], t["condition"]), []).append(t["call_index"])
    assert all(v == [0, 1] for v in per_unit.values()) and len(per_unit) == 20


def test_resume_drops_the_calls_of_a_unit_cut_off_mid_way(tiny_archive, tmp_path) -> None:
    repo, out = tiny_archive.root, tmp_path / "m"
    with FakeChat(_scripted) as chat:
        assert _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01").exit_code == 0
        lines = (out / "predictions.jsonl").read_text().splitlines(keepends=True)
        (out / "predictions.jsonl").write_text(lines[0])  # beta's prediction line never made it; its calls did
        r = _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01", "--resume")
    assert r.exit_code == 0, r.output
    assert "dropped 2 trace lines of an interrupted unit" in r.stderr
    traces = read_jsonl(out / "traces.jsonl")
    assert [(t["field_id"], t["call_index"]) for t in traces] == [("alpha", 0), ("alpha", 1), ("beta", 0), ("beta", 1)]


def _prepared(repo, out, chat):
    assert _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01").exit_code == 0


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda o: (o / "predictions.jsonl").write_text((o / "predictions.jsonl").read_text() + '{"field_id": "alpha"'),
         "predictions.jsonl line 3: the last line is incomplete"),
        (lambda o: (o / "predictions.jsonl").write_text((o / "predictions.jsonl").read_text() * 2),
         "predictions.jsonl line 3: unit alpha 2023-01-01 A1 is there twice"),
        (lambda o: (o / "predictions.jsonl").write_text('{"field_id": "omega", "origin": "2023-01-01", "condition": "A1", "weights": null}\n'),
         "predictions.jsonl line 1: field_id 'omega' is not a field of this archive"),
        (lambda o: (o / "predictions.jsonl").write_text("[]\n"), "predictions.jsonl line 1: not a JSON object"),
        (lambda o: (o / "traces.jsonl").write_text((o / "traces.jsonl").read_text().replace('"call_index": 1', '"call_index": 5', 1)),
         "traces.jsonl line 2: call_index 5 of alpha 2023-01-01 A1, expected 1"),
        (lambda o: (o / "traces.jsonl").write_text((o / "traces.jsonl").read_text().replace('"prompt_sha256": "', '"prompt_sha256": "0', 1)),
         "traces.jsonl line 1: made with another prompt"),
        (lambda o: (o / "model.json").write_text((o / "model.json").read_text().replace('"prompt_sha256": "', '"prompt_sha256": "0')),
         "model.json: made with another prompt version"),
    ],
    ids=["torn-line", "duplicate", "unknown-field", "not-object", "gap", "prompt", "prompt-version"],
)
def test_resume_refuses_an_inconsistent_folder(tiny_archive, tmp_path, damage, message) -> None:
    repo, out = tiny_archive.root, tmp_path / "m"
    with FakeChat(_scripted) as chat:
        _prepared(repo, out, chat)
        damage(out)
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        r = _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01", "--resume")
    assert r.exit_code == 1
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr and "cannot resume" in r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing touched


def test_resume_of_a_finished_run_does_nothing_and_force_starts_again(tiny_archive, tmp_path) -> None:
    repo, out = tiny_archive.root, tmp_path / "m"
    with FakeChat(_scripted) as chat:
        _prepared(repo, out, chat)
        before = (out / "predictions.jsonl").read_bytes()
        r = _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01", "--resume")
        assert r.exit_code == 0 and (out / "predictions.jsonl").read_bytes() == before
        assert len(chat.requests) == 2 * 3  # no request for the resumed units
        r = _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01", "--resume", "--force")
        assert r.exit_code == 2 and "exclude each other" in r.stderr
        r = _cli(repo, out, chat.base_url, "--conditions", "A1", "--origins", "2023-01-01", "--force")
        assert r.exit_code == 0 and (out / "predictions.jsonl").read_bytes() == before
