"""rapgen prompt: the system prompt per condition and the tool schemas."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.kit import build_prompt, tool_schemas


@pytest.fixture
def archive(tiny_archive) -> Archive:
    return Archive(tiny_archive.root)


def test_prompt_names_field_cutoff_window_and_all_directions(archive) -> None:
    p = build_prompt(archive, "beta", "2024-07-01", "A1")
    s = p.system
    assert "Field Beta (`beta`): Research on beta." in s
    assert "The forecast origin is 2024-07-01" in s and "nothing first submitted on or\nafter 2024-07-01 exists" in s
    assert "target window\n[2024-07-01, 2025-01-01)" in s
    for d in archive.codebooks["beta"]:
        assert f"## {d.slot}: {d.name}\n\n{d.definition}\nInclude: {d.include}\nExclude: {d.exclude}" in s
    assert "at most\n  20 `Search` calls" in s and "at most 8 papers" in s
    assert "[2024-01-01, 2024-07-01) (the fixed window)" in s
    assert p.user == "Forecast the direction shares of Field Beta for [2024-07-01, 2025-01-01). Answer with Finish."


@pytest.mark.parametrize(
    ("condition", "present", "absent"),
    [
        ("A0", "You have no search tool", ["`Search` takes", "fixed window", "expanding history"]),
        ("A1", "(the fixed window)", ["no search tool", "expanding history", "present state"]),
        ("A2", "This is the present state, not a forecast", ["no search tool", "expanding history", "target window"]),
        ("A3", "(the expanding history)", ["no search tool", "fixed window", "present state"]),
        ("A4", "(the expanding history)", ["no search tool", "fixed window", "target window"]),
    ],
)
def test_evidence_paragraph_per_condition(archive, condition, present, absent) -> None:
    s = build_prompt(archive, "alpha", "2024-01-01", condition).system
    assert present in s
    for text in absent:
        assert text not in s, text
    assert "`Finish` gives your answer and ends the episode" in s


def test_state_conditions_describe_the_recent_window(archive) -> None:
    p = build_prompt(archive, "alpha", "2024-01-01", "A4")
    assert "recent window\n[2023-07-01, 2024-01-01)" in p.system
    assert p.user.startswith("Describe the direction shares of Field Alpha for [2023-07-01, 2024-01-01)")


def test_tool_schemas() -> None:
    assert [t["function"]["name"] for t in tool_schemas("A0")] == ["Finish"]
    search, finish = tool_schemas("A3")
    sp = search["function"]["parameters"]
    assert sp["additionalProperties"] is False
    assert list(sp["properties"]) == ["query", "sort", "date_from", "date_to"]
    assert sp["required"] == ["query", "sort"]
    assert sp["properties"]["sort"]["enum"] == ["relevance", "date"]
    assert sp["properties"]["date_from"]["type"] == ["string", "null"]
    fp = finish["function"]["parameters"]
    assert fp["additionalProperties"] is False
    assert fp["required"] == [f"D{k}" for k in range(8)]
    assert list(fp["properties"]) == [f"D{k}" for k in range(8)] + ["rationale"]
    assert all(fp["properties"][f"D{k}"] == {"type": "number", "minimum": 0} for k in range(8))


def test_prompt_cli_text_and_json(tiny_archive) -> None:
    runner = CliRunner()
    text = runner.invoke(cli, ["prompt", "--root", str(tiny_archive.root), "gamma", "2025-01-01", "A3"])
    assert text.exit_code == 0, text.output
    assert "Field Gamma (`gamma`)" in text.stdout and "# Tool schemas" in text.stdout and '"name": "Search"' in text.stdout
    js = runner.invoke(cli, ["prompt", "--json", "--root", str(tiny_archive.root), "gamma", "2025-01-01", "A0"])
    data = json.loads(js.stdout)
    assert [m["role"] for m in data["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in data["tools"]] == ["Finish"]
    assert data["max_calls"] == 20 and data["top_k"] == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["omega", "2024-01-01", "A1"], "field 'omega' is not a field of this archive; choose from alpha, beta, delta, gamma"),
        (["alpha", "2024-02-01", "A1"], "origin 2024-02-01 is not an origin of this archive"),
        (["alpha", "January", "A1"], "origin 'January' is not a YYYY-MM-DD date"),
    ],
)
def test_prompt_usage_errors(tiny_archive, args, message) -> None:
    result = CliRunner().invoke(cli, ["prompt", "--root", str(tiny_archive.root), *args])
    assert result.exit_code == 2
    assert result.stderr == f"Error: {message}" + result.stderr[len(f"Error: {message}"):]
    assert message in result.stderr


def test_prompt_rejects_an_unknown_condition(tiny_archive) -> None:
    result = CliRunner().invoke(cli, ["prompt", "--root", str(tiny_archive.root), "alpha", "2024-01-01", "A7"])
    assert result.exit_code == 2 and "A7" in result.stderr


def test_prompt_is_deterministic(archive) -> None:
    assert build_prompt(archive, "delta", "2023-07-01", "A2") == build_prompt(archive, "delta", "2023-07-01", "A2")


# ---------------------------------------------------------------- fidelity to the frozen prompts
# The benchmark's instructions (RAP paper, Appendix C.3), each as the text that carries it.
FROZEN_INSTRUCTIONS = {
    "condition on the provided slate": "Condition on the slate of directions provided below",
    "no new directions": "without adding, merging or renaming any",
    "shares of paper counts": "share of the window's paper counts",
    "not citations": "not of citations or any other\nmeasure of attention",
    "Finish: D0 to D7": "`D0` to `D7`, one\n  non-negative number per direction",
    "Finish: optional rationale": "optionally\n  a short `rationale`",
    "Finish ends the episode": "ends the episode",
}
# Instructions earlier kit versions added that the frozen prompts do not have.
NOT_IN_THE_PAPER = ["Reply with a tool call", "A reply without a tool call", "recorded as invalid", "exactly once",
                    "scaled to sum to one", "knowledge cut-off", "Today is"]


@pytest.mark.parametrize("condition", ["A0", "A1", "A2", "A3", "A4"])
def test_every_frozen_instruction_and_no_other(archive, condition) -> None:
    s = build_prompt(archive, "gamma", "2024-07-01", condition).system
    for name, text in FROZEN_INSTRUCTIONS.items():
        assert text in s, name
    for text in NOT_IN_THE_PAPER:
        assert text not in s, text
    assert s.count("`Finish`") == 1  # one Finish paragraph, no repeated rules


def test_the_driver_adds_no_instruction_of_its_own() -> None:
    import rapgen.kit.runner as runner

    assert not hasattr(runner, "NUDGE")  # a text reply ends the unit; no extra user message is ever sent


def test_prompt_sha256_identifies_exactly_what_is_sent(archive) -> None:
    import hashlib

    p = build_prompt(archive, "alpha", "2024-01-01", "A1")
    canonical = json.dumps({"messages": p.messages, "tools": p.tools}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert p.prompt_sha256 == hashlib.sha256(canonical.encode()).hexdigest()
    others = {build_prompt(archive, f, o, c).prompt_sha256 for f, o, c in
              [("alpha", "2024-01-01", "A3"), ("beta", "2024-01-01", "A1"), ("alpha", "2023-07-01", "A1")]}
    assert p.prompt_sha256 not in others and len(others) == 3
    assert p.template_sha256 == build_prompt(archive, "beta", "2023-07-01", "A0").template_sha256  # one version


def test_a_changed_template_changes_both_hashes(archive, tmp_path, monkeypatch) -> None:
    from rapgen.kit.prompt import templates_dir

    before = build_prompt(archive, "alpha", "2024-01-01", "A1")
    (tmp_path / "system.md.j2").write_text((templates_dir() / "system.md.j2").read_text() + "Be brief.\n")
    monkeypatch.setenv("RAPGEN_PROMPT_TEMPLATES", str(tmp_path))
    after = build_prompt(archive, "alpha", "2024-01-01", "A1")
    assert after.system == before.system + "Be brief.\n"
    assert after.prompt_sha256 != before.prompt_sha256 and after.template_sha256 != before.template_sha256


def test_prompt_cli_prints_the_hashes(tiny_archive, archive) -> None:
    p = build_prompt(archive, "gamma", "2025-01-01", "A3")
    runner = CliRunner()
    text = runner.invoke(cli, ["prompt", "--root", str(tiny_archive.root), "gamma", "2025-01-01", "A3"])
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[0] == f"prompt_sha256: {p.prompt_sha256}  template_sha256: {p.template_sha256}"
    data = json.loads(runner.invoke(cli, ["prompt", "--json", "--root", str(tiny_archive.root), "gamma", "2025-01-01", "A3"]).stdout)
    assert data["prompt_sha256"] == p.prompt_sha256 and data["template_sha256"] == p.template_sha256


def test_prompt_cli_escapes_archive_text_for_the_terminal(tiny_archive) -> None:
    fields = tiny_archive.root / "archive" / "benchmark" / "fields.jsonl"
    text = fields.read_text()
    fields.write_text(text.replace('"Research on beta."', '"Research on \\u001b[31mbeta\\u202e."', 1))
    runner = CliRunner()
    out = runner.invoke(cli, ["prompt", "--root", str(tiny_archive.root), "beta", "2024-07-01", "A1"])
    assert out.exit_code == 0, out.output
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout and "Research on \\x1b[31mbeta\\u202e." in out.stdout
    js = runner.invoke(cli, ["prompt", "--json", "--root", str(tiny_archive.root), "beta", "2024-07-01", "A1"])
    assert js.stdout.isascii() and "Research on \x1b[31mbeta\u202e." in json.loads(js.stdout)["messages"][0]["content"]
