"""Reference agents: valid predictions, real traces under the cap, append-only writes."""

from __future__ import annotations

import json
from datetime import date

import pytest
from click.testing import CliRunner

from rapgen.agents import REFERENCE_AGENTS, add_agents_to_archive, run_agents
from rapgen.agents import run as agents_run
from rapgen.agents.policies import direction_queries, extrapolate
from rapgen.archive import Archive
from rapgen.archive.parse import parse_model_json, parse_predictions, parse_traces
from rapgen.cli import cli
from rapgen.errors import SubmissionError

DAY = date(2026, 11, 29)


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


@pytest.fixture(scope="module")
def agent_output(tmp_path_factory, _tiny_template):
    out = tmp_path_factory.mktemp("agents")
    summaries = run_agents(_tiny_template.root, out, submitted=DAY, cache_dir=out / "cache")
    return out, summaries


def test_agents_write_valid_model_folders(agent_output, _tiny_template):
    out, summaries = agent_output
    archive = Archive(_tiny_template.root)
    assert [s["model_id"] for s in summaries] == [a.model_id for a in REFERENCE_AGENTS]
    for spec in REFERENCE_AGENTS:
        folder = out / spec.model_id
        info, findings = parse_model_json("model.json", (folder / "model.json").read_bytes(), folder=spec.model_id)
        assert not findings
        assert info.extra == {"reference_agent": True} and info.display_name.startswith("Reference agent")
        assert info.provider == "rapgen" and not info.proprietary and info.knowledge_cutoff is None
        assert info.diagnostic == ("A2" in spec.policies)
        units, findings = parse_predictions("p", (folder / "predictions.jsonl").read_bytes(), archive.field_map, archive.origins.origins)
        assert not findings
        assert all(u.valid for u in units)
        assert {u.condition for u in units} == set(spec.policies) >= {"A0", "A1", "A3"}
        assert len(units) == len(archive.fields) * len(archive.origins.origins) * len(spec.policies)


def test_traces_are_real_calls_under_the_cap(agent_output, _tiny_template):
    out, summaries = agent_output
    archive = Archive(_tiny_template.root)
    for s in summaries:
        path = out / s["model_id"] / "traces.jsonl"
        if s["calls"] == 0:
            assert not path.exists()
            continue
        calls, findings = parse_traces("t", path.read_bytes(), archive.field_map, archive.origins.origins, 20)
        assert not findings and len(calls) == s["calls"]
        per_unit: dict = {}
        for c in calls:
            per_unit.setdefault((c.field_id, c.origin, c.condition), []).append(c.call_index)
        assert all(v == list(range(len(v))) and len(v) <= 20 for v in per_unit.values())
        assert s["max_calls_per_unit"] == max(len(v) for v in per_unit.values())
    trend = {(c.condition) for c in parse_traces("t", (out / "ref-history-trend" / "traces.jsonl").read_bytes(),
                                                  archive.field_map, archive.origins.origins, 20)[0] if c.date_from is None}
    assert trend == {"A3"}  # only the history policy looks before the recent window


def test_agents_are_deterministic(agent_output, _tiny_template, tmp_path):
    out, _ = agent_output
    run_agents(_tiny_template.root, tmp_path, agent_ids=["ref-history-trend"], submitted=DAY, cache_dir=tmp_path / "cache")
    for name in ("model.json", "predictions.jsonl", "traces.jsonl"):
        assert (tmp_path / "ref-history-trend" / name).read_bytes() == (out / "ref-history-trend" / name).read_bytes()


def test_a_policy_that_exceeds_the_cap_gives_an_invalid_unit(_tiny_template, tmp_path, monkeypatch):
    def greedy(unit, directions):
        for i in range(25):
            unit.hits(f"parsing{i % 6}", None, None)
        return [1.0] * 8, "never reached"

    spec = agents_run.AgentSpec("greedy", "Reference agent: greedy", "test", {"A0": agents_run.closed_book, "A1": greedy, "A3": greedy})
    monkeypatch.setattr(agents_run, "REFERENCE_AGENTS", (spec,))
    run_agents(_tiny_template.root, tmp_path, submitted=DAY, cache_dir=tmp_path / "cache", verify=False)
    lines = [json.loads(l) for l in (tmp_path / "greedy" / "predictions.jsonl").read_text().splitlines()]
    a1 = [l for l in lines if l["condition"] == "A1"]
    assert all(l["weights"] is None and l["status"] == "invalid" and "call cap of 20" in l["reason"] for l in a1)
    traces = (tmp_path / "greedy" / "traces.jsonl").read_text().splitlines()
    assert len(traces) == 20 * 2 * 4 * 5  # exactly the cap, for A1 and A3 of every episode


def test_into_archive_refuses_an_existing_model(tiny_archive):
    root = tiny_archive.root
    (root / "archive" / "models" / "ref-recent-hits").mkdir()
    before = sorted(p.name for p in (root / "archive" / "models").iterdir())
    with pytest.raises(SubmissionError, match="ref-recent-hits/ already exists"):
        add_agents_to_archive(root, submitted=DAY)
    assert sorted(p.name for p in (root / "archive" / "models").iterdir()) == before
    assert not list(root.glob(".rapgen-agents.*"))


def test_cli_agents_run_into_archive_then_seal(tiny_archive):
    runner = CliRunner()
    root = str(tiny_archive.root)
    result = runner.invoke(cli, ["reference-agents", "run", "--root", root, "--into-archive", "--agent", "ref-closed-book", "--submitted", "2026-11-29"])
    assert result.exit_code == 0, result.output
    assert "ref-closed-book" in result.stdout and "rapgen seal" in result.stderr
    assert (tiny_archive.root / "archive" / "models" / "ref-closed-book" / "predictions.jsonl").is_file()
    again = runner.invoke(cli, ["reference-agents", "run", "--root", root, "--into-archive", "--agent", "ref-closed-book"])
    assert again.exit_code == 1
    assert "Error: archive/models/ref-closed-book/ already exists" in again.stderr


@pytest.mark.parametrize("dest", ["--out", "--into-archive"])
def test_cli_agents_run_unknown_agent_is_a_usage_error(tiny_archive, tmp_path, dest):
    before = sorted(p.name for p in (tiny_archive.root / "archive" / "models").iterdir())
    where = ["--out", str(tmp_path / "o")] if dest == "--out" else ["--into-archive"]
    result = CliRunner().invoke(cli, ["reference-agents", "run", "--root", str(tiny_archive.root), *where, "--agent", "ref-closed-book", "--agent", "nope"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: unknown reference agent 'nope'; choose from ref-closed-book, ref-recent-hits, ")
    assert "(see 'rapgen reference-agents list')" in result.stderr
    assert not (tmp_path / "o").exists()
    assert sorted(p.name for p in (tiny_archive.root / "archive" / "models").iterdir()) == before


@pytest.mark.parametrize("args", [[], ["--out", "x", "--into-archive"]])
def test_cli_agents_run_needs_exactly_one_destination(tiny_archive, args):
    result = CliRunner().invoke(cli, ["reference-agents", "run", "--root", str(tiny_archive.root), *args])
    assert result.exit_code == 2
    assert "give exactly one of --out DIR or --into-archive" in result.stderr


def test_direction_queries_drop_words_shared_by_the_field(_tiny_template):
    queries = direction_queries(Archive(_tiny_template.root).codebooks["alpha"])
    assert queries[0] == "parsing"  # "in", "alpha", "papers", "about", ... are in every direction
    assert len(set(queries)) == 8


def test_extrapolate_continues_the_change_and_stays_a_composition():
    older = [0.25, 0.25, 0.5] + [0.0] * 5
    newer = [0.5, 0.25, 0.25] + [0.0] * 5
    out = extrapolate(older, newer, 0.5)
    assert sum(out) == pytest.approx(1.0)
    assert out[0] > out[1] > out[2] > 0 and min(out) > 0


def test_direction_classifier_labels_by_specific_words():
    from rapgen.agents.policies import DirectionClassifier

    from rapgen.archive import Direction

    dirs = tuple(
        Direction(f"D{i}", name, "", include, "", ())
        for i, (name, include) in enumerate([
            ("Speech recognition", "acoustic asr speech"), ("Machine translation", "translation bilingual nmt"),
            ("Parsing", "syntax treebank parser"), ("Dialogue", "conversation chatbot dialogue"),
            ("Summarisation", "summary abstractive"), ("Retrieval", "search retrieval ranking"),
            ("Reasoning", "math chain thought"), ("Safety", "jailbreak harmful"),
        ])
    )
    clf = DirectionClassifier(dirs)
    assert clf.label("A treebank parser", "We improve syntax.") == 2
    assert clf.label("Nothing relevant", "xyz") is None
    shares = clf.composition([("treebank parser", "")] * 6 + [("bilingual nmt", "")] * 2)
    assert sum(shares) == pytest.approx(1.0)
    assert shares[2] > shares[1] > shares[0] == shares[7]
    assert "treebank" in clf.broad_query.split()


def test_site_marks_reference_agents_and_only_them(tmp_path):
    """model.json "reference_agent": true gives a badge on the leaderboard, the models index and the model page."""
    from test_site_support import MODELS, make_score_outputs, make_site_archive

    from rapgen.site import load_score_outputs
    from rapgen.site.model import build_site_model
    from rapgen.site.render import render_pages

    models = {**MODELS, "m-ref": {"display_name": "Reference agent: recent hits", "provider": "rapgen", "proprietary": False,
                                  "knowledge_cutoff": None, "release_date": None, "diagnostic": False, "reference_agent": True}}
    root = make_site_archive(tmp_path / "repo", models=models)
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256, models=models)
    site = build_site_model(Archive(root), load_score_outputs(scores))
    rows = [r for p in site.panels["test"] for r in p.rows]
    assert {r.entry for r in rows if r.reference_agent} == {"m-ref"}
    assert {r.entry for r in rows} >= {"m-open", "m-prop"}
    pages = render_pages(site)
    badge = '<span class="rap-badge" title="a deterministic reference agent shipped with rapgen, not a language model">reference agent</span>'
    board = [line for line in pages["leaderboard.md"].splitlines() if line.startswith("<tr><td>")]
    ref_lines = [line for line in board if "Reference agent: recent hits" in line]
    assert ref_lines and all(badge in line for line in ref_lines)
    assert not any(badge in line for line in board if "Reference agent: recent hits" not in line)
    assert pages["models/m-ref.md"].count(badge) == 1 and '!!! note "Reference agent"' in pages["models/m-ref.md"]
    assert "| reference_agent |" not in pages["models/m-ref.md"]  # shown as the marker, not as a raw row
    for other in ("models/m-open.md", "models/m-prop.md"):
        assert badge not in pages[other] and "Reference agent" not in pages[other]
    index = [line for line in pages["models/index.md"].splitlines() if line.startswith("<tr>")]
    assert [badge in line for line in index] == ["m-ref" in line for line in index]
