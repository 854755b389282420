"""``rapgen synth``: exact counts, verification, determinism, the traces hook, CLI."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner

from rapgen.archive import Archive, verify_archive
from rapgen.cli import cli
from rapgen.sample import SCALES, write_synthetic_archive
from rapgen.sample.synth import _blocks


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("synth") / "repo"
    return root, write_synthetic_archive(root, "small", 5)


def test_small_synth_verifies_with_exact_counts(small):
    root, summary = small
    report = verify_archive(root)
    assert report.ok, [f.to_dict() for f in report.errors][:5]
    sc = SCALES["small"]
    arch = Archive(root)
    assert len(arch.fields) == sc.fields == summary["fields"]
    assert len(arch.blocks) == sc.blocks
    assert sum(f.split == "dev" for f in arch.fields) == sc.dev_fields
    con = arch.connect()
    assert con.execute("SELECT count(*) FROM papers").fetchone()[0] == sc.papers
    assert con.execute("SELECT count(*) FROM assignments").fetchone()[0] == sc.memberships
    types = Counter(r[0] for r in con.execute("SELECT assignment_type FROM assignments").fetchall())
    assert set(types) == {"single", "boundary", "bridge", "other", "low_evidence"}
    assert len(arch.manifest("fixed")) == len(arch.manifest("expanding")) == sc.fields * 5
    early = {r[0] for r in con.execute("SELECT arxiv_id FROM papers WHERE first_submitted < DATE '2024-01-01'").fetchall()}
    exemplars = [e for directions in arch.codebooks.values() for d in directions for e in d.exemplars]
    assert len(exemplars) >= 0.9 * 3 * 8 * sc.fields and set(exemplars) <= early


def test_small_synth_models_and_synthetic_labels(small):
    root, summary = small
    arch = Archive(root)
    assert arch.synthetic is True
    assert "SYNTHETIC" in arch.info["name"] and "synthetic" in arch.info["description"].lower()
    models = arch.models
    assert len(models) == 7 and sum(m.diagnostic for m in models) == 4
    strict = arch.origins.strict_origin
    cutoffs = [m.effective_cutoff for m in models]
    assert None in cutoffs
    assert any(c and c < strict for c in cutoffs) and any(c and c >= strict for c in cutoffs)
    assert all("(synthetic)" in m.display_name for m in models)
    n_units = n_invalid = 0
    for m in models:
        units = arch.predictions(m.model_id)
        conditions = {u.condition for u in units}
        assert conditions == ({"A0", "A1", "A2", "A3", "A4"} if m.diagnostic else {"A0", "A1", "A3"})
        n_units += len(units)
        n_invalid += sum(not u.valid for u in units)
    assert n_units == summary["units"] and n_invalid == summary["invalid_units"]
    assert 0.005 < n_invalid / n_units < 0.08


def test_full_scale_block_structure_is_exact():
    sc = SCALES["full"]
    assert (sc.fields, sc.fields * 5, sc.papers, sc.memberships) == (278, 1390, 279_365, 578_745)
    block_of, names, split = _blocks(np.random.default_rng(0), sc)
    assert len(block_of) == 278 and len(names) == 175
    dev = sum(split[b] == "dev" for b in block_of)
    assert (dev, 278 - dev) == (67, 211)


def test_same_seed_same_bytes_other_seed_differs(small, tmp_path):
    root, _ = small
    write_synthetic_archive(tmp_path / "same", "small", 5)
    write_synthetic_archive(tmp_path / "other", "small", 6)
    assert (tmp_path / "same" / "SHA256SUMS").read_bytes() == (root / "SHA256SUMS").read_bytes()
    assert (tmp_path / "other" / "SHA256SUMS").read_bytes() != (root / "SHA256SUMS").read_bytes()


def test_direction_vocabularies_separate_directions(small):
    root, _ = small
    con = duckdb.connect()
    rows = con.execute(
        f"""SELECT a.field_id, a."primary", p.abstract FROM '{root}/archive/benchmark/assignments.parquet' a
            JOIN '{root}/archive/benchmark/papers.parquet' p USING (arxiv_id)
            WHERE a.assignment_type = 'single' ORDER BY a.field_id, a.arxiv_id"""
    ).fetchall()
    vocab: dict[tuple[str, str], Counter] = {}
    n_rows: Counter = Counter()
    for fid, slot, abstract in rows:
        vocab.setdefault((fid, slot), Counter()).update(set(abstract.rstrip(".").split()))
        n_rows[(fid, slot)] += 1
    # every direction has words that mark it: in >= 30% of its papers, < 10% of its siblings'
    checked = 0
    for (fid, slot), counts in vocab.items():
        if n_rows[(fid, slot)] < 10:
            continue
        siblings = [k for k in vocab if k[0] == fid and k[1] != slot and n_rows[k] >= 10]
        marks = [
            w for w, c in counts.items()
            if c >= 0.3 * n_rows[(fid, slot)] and all(vocab[k][w] < 0.1 * n_rows[k] for k in siblings)
        ]
        assert len(marks) >= 5, (fid, slot, marks)
        checked += 1
    assert checked >= 40


def test_traces_hook_runs_before_sealing(tmp_path):
    calls = []

    def hook(staging: Path, model_ids: list[str]) -> None:
        calls.append(list(model_ids))
        (staging / "archive" / "models" / model_ids[0] / "traces.jsonl").write_bytes(b"")

    write_synthetic_archive(tmp_path / "t", "small", 1, traces=hook)
    assert len(calls) == 1 and len(calls[0]) == 7
    sums = (tmp_path / "t" / "SHA256SUMS").read_text()
    assert f"archive/models/{calls[0][0]}/traces.jsonl\n" in sums


def test_cli_synth_small_and_usage_errors(tmp_path):
    runner = CliRunner()
    out = tmp_path / "s"
    result = runner.invoke(cli, ["synth", "--scale", "small", "--seed", "2", "--out", str(out), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["papers"] == SCALES["small"].papers and summary["models"] == 7
    again = runner.invoke(cli, ["synth", "--scale", "small", "--out", str(out)])
    assert again.exit_code == 2
    assert f"Error: {out}: already holds archive/ or SHA256SUMS; choose an empty --out folder or pass --force" in again.output
    bad = runner.invoke(cli, ["synth", "--scale", "huge", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "'huge' is not one of 'full', 'small'" in bad.output
    neg = runner.invoke(cli, ["synth", "--seed", "-1", "--out", str(tmp_path / "x")])
    assert neg.exit_code == 2


def test_default_traces_are_made_through_the_backend_and_replay(small):
    root, _ = small
    calls = [
        json.loads(line)
        for p in sorted((root / "archive" / "models").glob("*/traces.jsonl"))
        for line in p.read_text().splitlines()
    ]
    assert len(calls) > 100
    assert {c["condition"] for c in calls} == {"A1", "A2", "A3", "A4"}
    result = CliRunner().invoke(cli, ["replay", "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["failed"] == 0
    assert report["calls"] == report["reproduced"] == len(calls)


def test_no_traces_option(tmp_path):
    out = tmp_path / "n"
    result = CliRunner().invoke(cli, ["synth", "--scale", "small", "--out", str(out), "--no-traces"])
    assert result.exit_code == 0, result.output
    assert not list((out / "archive" / "models").glob("*/traces.jsonl"))


def test_force_replaces_an_earlier_synth_output_but_never_submissions(tmp_path):
    runner = CliRunner()
    out = tmp_path / "f"
    args = ["synth", "--scale", "small", "--seed", "3", "--out", str(out), "--no-traces"]
    assert runner.invoke(cli, args).exit_code == 0
    sums = (out / "SHA256SUMS").read_bytes()
    # An earlier synth output holds synth's own seven models: --force replaces it.
    again = runner.invoke(cli, [*args, "--force"])
    assert again.exit_code == 0, again.output
    assert (out / "SHA256SUMS").read_bytes() == sums
    assert verify_archive(out).ok
    # A model folder synth did not write is a submission: refused, nothing touched.
    (out / "archive" / "models" / "someone-else").mkdir()
    refused = runner.invoke(cli, [*args, "--force"])
    assert refused.exit_code == 2
    assert "holds model folders; --force would delete submissions" in refused.output
    assert (out / "archive" / "models" / "someone-else").is_dir()
    (out / "archive" / "models" / "someone-else").rmdir()
    # An archive that is not synth's (another name, or not synthetic) is refused too.
    info_path = out / "archive" / "ARCHIVE.json"
    info = json.loads(info_path.read_text())
    for changed in ({**info, "name": "RAP v1"}, {**info, "synthetic": False}):
        info_path.write_text(json.dumps(changed))
        refused = runner.invoke(cli, [*args, "--force"])
        assert refused.exit_code == 2 and "--force would delete submissions" in refused.output


# ---------------------------------------------------------------- history and intervention records
def test_synth_small_writes_a_history_with_every_record_kind(tmp_path):
    from rapgen.sample.synth_history import BASE_ID, DAMPINGS, ERRATUM_MODEL, PANEL_ID

    out = tmp_path / "h"
    from rapgen.cli.sample_cmds import synth_records

    summary = write_synthetic_archive(out, "small", 4, records=synth_records, history=True)
    assert verify_archive(out).ok
    records = [json.loads(p.read_text()) for p in sorted((out / "archive" / "releases").glob("[0-9][0-9][0-9][0-9].json"))]
    kinds = [r["kind"] for r in records]
    assert summary["releases"] == len(records) == 10
    assert kinds[0] == "initial" and kinds.count("roll") == 3 and kinds.count("models") == 5 and kinds[-1] == "errata"
    assert all(r["simulated"] is True for r in records)
    assert records[-1]["resolved_origins"] == ["2024-01-01", "2024-07-01", "2025-01-01", "2025-07-01", "2026-01-01"]
    assert records[-1]["open_origin"]["origin"] == "2026-07-01"
    changed = f"archive/models/{ERRATUM_MODEL}/model.json"
    assert [r["path"] for r in records[-1]["replaced"]] == [changed]
    old = json.loads((out / "archive" / "releases" / "0010" / "superseded" / changed.removeprefix("archive/")).read_text())
    assert old["knowledge_cutoff"] is None and json.loads((out / changed).read_text())["knowledge_cutoff"] == "2025-06-01"
    templates = Path(__file__).resolve().parent.parent / "templates" / "prompts"
    kit_hash = {name: hashlib.sha256((templates / template).read_bytes()).hexdigest()
                for name, template in (("replays.jsonl", "readout.md.j2"), ("oracle.jsonl", "oracle.md.j2"))}
    for mid in DAMPINGS:
        for name in ("replays.jsonl", "oracle.jsonl", "oracle_traces.jsonl"):
            lines = (out / "archive" / "models" / mid / name).read_text().splitlines()
            assert lines, (mid, name)
            if name in kit_hash:  # the kit's template hash, as `rapgen agent run --readout|--oracle` writes it
                assert {json.loads(x)["prompt_sha256"] for x in lines} == {kit_hash[name]}, (mid, name)
    panel = json.loads((out / "archive" / "models" / PANEL_ID / "model.json").read_text())
    training = json.loads((out / "archive" / "models" / PANEL_ID / "training.json").read_text())
    assert panel["base_model"] == training["base_model"] == BASE_ID and panel["panel"]["origins"] == ["2026-01-01"]
    assert (out / "archive" / "models" / PANEL_ID / "origins" / "2026-01-01" / "predictions.jsonl").stat().st_size > 0
    assert list((out / "archive" / "commitments").glob("*/*.json"))
    again = tmp_path / "again"
    write_synthetic_archive(again, "small", 4, records=synth_records, history=True)
    assert (again / "SHA256SUMS").read_bytes() == (out / "SHA256SUMS").read_bytes()
