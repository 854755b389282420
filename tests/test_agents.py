"""Reference agents: valid predictions, real traces under the cap, append-only writes."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

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

    from rapgen.archive import open_release
    from rapgen.site import load_score_outputs
    from rapgen.site.model import build_site_model
    from rapgen.site.render import render_pages

    models = {**MODELS, "m-ref": {"display_name": "Reference agent: recent hits", "provider": "rapgen", "proprietary": False,
                                  "knowledge_cutoff": None, "release_date": None, "diagnostic": False, "reference_agent": True}}
    root = make_site_archive(tmp_path / "repo", models=models)
    scores = make_score_outputs(tmp_path / "scores", Archive(root).manifest_sha256, models=models)
    site = build_site_model(open_release(root), load_score_outputs(scores))
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


# ---------------------------------------------------------------- intervention records
from rapgen.agents.interventions import (  # noqa: E402
    ArchiveData,
    intervention_files,
    panel_cells_of,
    panel_design,
)
from rapgen.search import call_is_malformed as malformed  # noqa: E402 - the one predicate the agents use
from rapgen.agents.policies import history_shares, read_evidence  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def sha256_file(path: Path) -> str:
    """What ``sha256sum`` prints for a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
from rapgen.archive.intervention_folder import ArchiveFacts, check_model_interventions  # noqa: E402
from rapgen.archive.interventions import parse_training  # noqa: E402

PANEL = ("ref-history-trend", "ref-history-trend-tuned")
REF_IDS = [a.model_id for a in REFERENCE_AGENTS]


def _block(*rows):
    return {"windows": [{"date_from": "x", "date_to": "y", "counts": {f"D{i}": n for i, n in enumerate(r)}} for r in rows]}


def test_history_shares_hand_computed():
    # one window: (counts + 0.5) / 8
    assert history_shares(_block([3, 1, 0, 0, 0, 0, 0, 0]), 0.5) == [0.4375, 0.1875] + [0.0625] * 6
    # two windows: uniform, then [.4375, .1875, .0625 ...]; one step of half the change
    got = history_shares(_block([0] * 8, [3, 1, 0, 0, 0, 0, 0, 0]), 0.5)
    assert got == pytest.approx([0.59375, 0.21875] + [0.03125] * 6, abs=1e-12)
    # damping 0: the newest window alone
    assert history_shares(_block([5] * 8, [3, 1, 0, 0, 0, 0, 0, 0]), 0.0) == pytest.approx([0.4375, 0.1875] + [0.0625] * 6)


def test_read_evidence_reads_only_the_evidence(_tiny_template):
    arch = Archive(_tiny_template.root)
    fid = arch.fields[0].field_id
    directions = arch.codebooks[fid]
    d0 = " ".join((directions[0].name, directions[0].definition, directions[0].include))
    d1 = " ".join((directions[1].name, directions[1].definition, directions[1].include))
    paper = lambda i, day, text: {"arxiv_id": f"p{i}", "first_submitted": day, "title": text, "abstract": text}  # noqa: E731
    evidence = [{"call_index": 0, "query": "q", "sort": "date", "date_from": None, "date_to": None, "total_hits": 4,
                 "papers": [paper(1, "2024-10-01", d0), paper(2, "2024-11-01", d0), paper(3, "2023-05-01", d1)]},
                {"call_index": 1, "query": "q", "sort": "date", "date_from": None, "date_to": None, "error": "malformed call"}]
    state, why = read_evidence(evidence, directions, date(2025, 1, 1), 6, "state")
    assert "2 evidence papers" in why and state.index(max(state)) == 0
    forecast, why = read_evidence(evidence, directions, date(2025, 1, 1), 6, "forecast")
    assert "1 older and 2 recent" in why
    assert forecast[0] > state[0] and forecast[1] < state[1]  # the older -> recent change continued
    assert sum(forecast) == pytest.approx(1.0) and sum(state) == pytest.approx(1.0)
    assert read_evidence(evidence[1:], directions, date(2025, 1, 1), 6, "forecast") == (None, "the evidence holds no paper")


@pytest.fixture(scope="module")
def with_records(tmp_path_factory, _tiny_template):
    import shutil

    root = tmp_path_factory.mktemp("records") / "repo"
    shutil.copytree(_tiny_template.root, root)
    add_agents_to_archive(root, submitted=DAY, cache_dir=root.parent / "cache")
    files = intervention_files(root, REF_IDS, panel=PANEL, cache_dir=root.parent / "cache")
    return root, files


def _facts(arch: Archive, data: ArchiveData, extra_ids) -> ArchiveFacts:
    return ArchiveFacts(arch.fields, arch.blocks, arch.origins.origins, arch.origins.window_months,
                        int(arch.ledger["search"]["max_calls"]), tuple(arch.model_ids) + tuple(extra_ids), data.papers,
                        data.counts, malformed, arch.predictions)


def test_intervention_records_pass_every_check(with_records):
    root, files = with_records
    diagnostic = [a.model_id for a in REFERENCE_AGENTS if a.diagnostic]
    arch = Archive(root)
    later = f"origins/{arch.origins.origins[-1].isoformat()}"
    assert sorted(files) == sorted(
        [f"archive/models/{m}/{n}" for m in diagnostic for n in ("oracle.jsonl", "oracle_traces.jsonl", "replays.jsonl")]
        + [f"archive/models/{PANEL[1]}/{n}" for n in ("model.json", f"{later}/predictions.jsonl", f"{later}/traces.jsonl",
                                                       "training.json")])
    data = ArchiveData.load(arch)
    facts = _facts(arch, data, [PANEL[1]])
    for mid in diagnostic:
        folder = f"archive/models/{mid}"
        mine = {n: files[f"{folder}/{n}"] for n in ("replays.jsonl", "oracle.jsonl", "oracle_traces.jsonl")}
        mine["model.json"] = arch.read_bytes(f"{folder}/model.json")
        records, findings = check_model_interventions(folder, mine, arch.predictions(mid), arch.traces(mid), facts)
        assert findings == []
        pairs = {(u.field_id, u.origin) for u in arch.predictions(mid) if u.condition == "A3"}
        assert len(records.readouts) == 8 * len(pairs)
        assert {r.cell for r in records.readouts} == {f"{x}->{y}:{b}" for x in "FS" for y in "FS" for b in ("all", "matched")}
        assert len(records.oracle) == 3 * len(arch.fields) * len(arch.origins.origins)
        assert {c.condition for c in records.oracle_traces} == {"O3"} and max(c.call_index for c in records.oracle_traces) < 20
        lines = [json.loads(x) for x in mine["replays.jsonl"].splitlines()]
        # The kit's template hashes (what `rapgen agent run --readout|--oracle` writes), not a constant of the agents.
        assert {x["prompt_sha256"] for x in lines} == {sha256_file(REPO / "templates/prompts/readout.md.j2")}
        assert {json.loads(x)["prompt_sha256"] for x in mine["oracle.jsonl"].splitlines()} == {sha256_file(REPO / "templates/prompts/oracle.md.j2")}


def test_a_tampered_readout_or_oracle_line_is_caught(with_records):
    root, files = with_records
    arch = Archive(root)
    facts = _facts(arch, ArchiveData.load(arch), [PANEL[1]])
    mid = "ref-recent-hits"
    folder = f"archive/models/{mid}"
    replays = files[f"{folder}/replays.jsonl"].decode().splitlines(keepends=True)
    first = json.loads(replays[0])
    first["evidence_sha256"] = "0" * 64
    oracle = files[f"{folder}/oracle.jsonl"].decode().splitlines(keepends=True)
    unit = json.loads(oracle[0])
    unit["input_sha256"] = "1" * 64
    mine = {"model.json": arch.read_bytes(f"{folder}/model.json"),
            "replays.jsonl": (json.dumps(first) + "\n" + "".join(replays[1:])).encode(),
            "oracle.jsonl": (json.dumps(unit) + "\n" + "".join(oracle[1:])).encode()}
    _, findings = check_model_interventions(folder, mine, arch.predictions(mid), arch.traces(mid), facts)
    assert [(f.path, f.line) for f in findings] == [(f"{folder}/oracle.jsonl", 1), (f"{folder}/replays.jsonl", 1)]


def test_the_panel_model_is_dependency_disjoint_and_checks(with_records):
    root, files = with_records
    arch = Archive(root)
    panel, design = panel_design(arch, arch.origins.origins[-1])
    cells = panel_cells_of(arch, panel, design)
    used = set(design["fields"]) | set(design["gate"]["fields"])
    for b in arch.blocks:
        if used & set(b.fields):
            assert not {f for f, _ in cells} & set(b.fields)  # no field of a training block is scored
    assert cells and {f for f, _ in cells} <= {f.field_id for f in arch.fields if f.split == "test"}
    assert any(f.split == "test" for f in arch.fields if f.field_id in design["fields"])  # a test block was excluded
    folder = f"archive/models/{PANEL[1]}"
    later = f"origins/{arch.origins.origins[-1].isoformat()}"
    mine = {n: files[f"{folder}/{n}"] for n in ("model.json", "training.json")}
    info = json.loads(mine["model.json"])
    assert info["base_model"] == PANEL[0] and info["panel"]["conditions"] == ["A1", "A3"] and info["diagnostic"] is False
    training, found = parse_training("t", mine["training.json"], [f.field_id for f in arch.fields], arch.origins.origins, PANEL[0])
    assert not found and training.base_model == PANEL[0]
    units, found = parse_predictions("p", files[f"{folder}/{later}/predictions.jsonl"], arch.field_map, arch.origins.origins,
                                     coverage=False)
    assert not found and {u.condition for u in units} == {"A1", "A3"}
    traces, _ = parse_traces("t", files[f"{folder}/{later}/traces.jsonl"], arch.field_map, arch.origins.origins, 20)
    assert len(units) == 2 * len(cells)
    data = ArchiveData.load(arch)
    _, findings = check_model_interventions(folder, mine, units, traces, _facts(arch, data, [PANEL[1]]))
    assert findings == []


def test_intervention_records_are_deterministic(with_records):
    root, files = with_records
    assert intervention_files(root, REF_IDS, panel=PANEL, cache_dir=root.parent / "cache2") == files
