"""The kit's prompt for an Ideas episode (rapgen prompt --benchmark ideas --episode ID) on the committed sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli

SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "ideas"
EPISODE = "rag@2024-09-01"


def _prompt(*args: str):
    return CliRunner().invoke(cli, ["prompt", "--root", str(SAMPLE), *args])


def test_an_episode_prompt_names_the_topic_the_cutoff_and_the_five_ranked_ideas():
    text = _prompt("--episode", EPISODE)
    assert text.exit_code == 0, text.output
    head, _, body = text.stdout.partition("\n")
    assert head.startswith("prompt_sha256: ")
    assert "The topic is Retrieval-augmented generation (also: RAG," in body and "Today is 2024-09-01" in body
    assert "from 2024-09-01 to 2024-12-31 (inclusive)" in body and "at most 5 concrete research ideas" in body
    data = json.loads(_prompt("--episode", EPISODE, "--json").stdout)
    assert (data["episode_id"], data["topic_id"], data["cutoff"], data["future_to"], data["top_k"]) == \
        (EPISODE, "rag", "2024-09-01", "2024-12-31", 5)
    (tool,) = data["tools"]
    ideas = tool["function"]["parameters"]["properties"]["ideas"]
    assert tool["function"]["name"] == "submit_ideas" and ideas["maxItems"] == 5
    assert set(ideas["items"]["properties"]) == {"title", "rationale", "approach", "key_terms"}  # a predictions.jsonl line
    listing = [line for line in data["messages"][1]["content"].splitlines() if line.startswith("- ")]
    dates = [line[2:12] for line in listing]
    assert listing and dates == sorted(dates, reverse=True) and max(dates) < "2024-09-01"  # the history, newest first
    assert f"before the cutoff: {data['n_history']}" in data["messages"][1]["content"]
    assert data["prompt_sha256"] in head


@pytest.mark.parametrize("args, message", [
    (("--episode", "rag@2031-01-01"), "episode 'rag@2031-01-01' is not an episode of this archive; e.g. "),
    (("--episode", "rag"), "episode 'rag' is not an episode of this archive (an episode id is TOPIC@YYYY-MM-DD)"),
    ((), "an Ideas prompt names an episode: give --episode TOPIC@YYYY-MM-DD"),
    (("--instance", "insp-0001"), "--instance is not an option of rapgen prompt for a benchmark of kind 'ideas' (it takes --episode)"),
])
def test_a_bad_episode_is_one_line_and_exit_2(args, message):
    r = _prompt(*args)
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {message}") and r.stderr.count("\n") == 1, r.output


def test_ideas_has_no_search_server():
    r = CliRunner().invoke(cli, ["serve-search", "--root", str(SAMPLE)])
    assert r.exit_code == 2 and "rapgen serve-search has nothing to do for a benchmark of kind 'ideas'" in r.stderr
