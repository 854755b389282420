"""``rapgen sample build``: instrument rules, blocks, manifests, determinism, CLI.

The build runs on a small generated paper file (written from the codebook
text), never on the 175 MB real file; the committed archive is checked
directly where it exists.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from datetime import date, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner

from rapgen.archive import Archive, add_months, verify_archive
from rapgen.cli import cli
from rapgen.sample import build_sample
from rapgen.sample.blocks import block_id_for, connected_blocks, overlap_links, split_blocks
from rapgen.sample.codebooks import load_fields

FIELDS = load_fields()
from rapgen.sample.instrument import THRESHOLDS, TYPES, assign, assign_many, tokenize

FILLER = "we evaluate results on benchmark data and report strong gains over baselines in experiments".split()


def _write_papers(path: Path, n_per_month: int = 30, seed: int = 3) -> None:
    """A small papers.jsonl.gz in the real file's format: each paper is written
    from one direction's text, plus off-range and non-cs.CL papers the build must skip."""
    rng = random.Random(seed)
    recs = []
    month = date(2021, 5, 1)
    serial = 0
    while month < date(2025, 9, 1):
        for _ in range(n_per_month):
            serial += 1
            f = rng.choice(FIELDS)
            d = rng.choice(f.directions)
            words = (d.terms + " " + d.include).split()
            abstract = " ".join(rng.sample(words, min(len(words), 18)) + rng.sample(FILLER, 6))
            cats = ["cs.CL"] if rng.random() < 0.9 else ["cs.CV"]
            day = month + timedelta(days=rng.randrange(28))
            recs.append(
                {
                    "arxiv_id": f"{day.year % 100:02d}{day.month:02d}.{serial:05d}",
                    "title": d.name,
                    "abstract": abstract,
                    "first_submitted": day.isoformat(),
                    "categories": cats + ["cs.LG"],
                }
            )
        month = add_months(month, 1)
    recs.sort(key=lambda r: (r["first_submitted"], r["arxiv_id"]))
    with gzip.GzipFile(path, "wb", mtime=0) as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in recs).encode())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, dict]:
    base = tmp_path_factory.mktemp("sample")
    data = base / "papers.jsonl.gz"
    _write_papers(data)
    summary = build_sample(data, base / "repo")
    return data, base / "repo", summary


# ---------------------------------------------------------------- instrument
def test_tokenize_stems_plurals_and_adds_bigrams():
    assert tokenize("The Models translate Queries") == ["model", "translate", "query", "model translate", "translate query"]
    assert tokenize("bias class analysis") == ["bias", "class", "analysis", "bias class", "class analysis"]


def _scores(best: float, second: float, best_slot: int = 2, second_slot: int = 5) -> list[float]:
    s = [0.1] * 8
    s[best_slot], s[second_slot] = best, second
    return s


@pytest.mark.parametrize(
    "scores, expected",
    [
        # best < other (1.1): the paper fits no direction
        (_scores(1.0, 0.9), ("other", None, "other")),
        # other <= best < low (1.3): weak evidence, no secondary even with a close runner-up
        (_scores(1.2, 1.19), ("D2", None, "low_evidence")),
        # runner-up 2.7 >= 2.5 and 2.7/3.0 = 0.9 >= 0.7: strongly about two directions
        (_scores(3.0, 2.7), ("D2", "D5", "bridge")),
        # 2.9/4.0 = 0.725 >= 0.7 and 2.9 >= 2.5: still a bridge although not "close"
        (_scores(4.0, 2.9), ("D2", "D5", "bridge")),
        # 1.8/2.0 = 0.9 >= 0.85 but 1.8 < 2.5: on the line between two directions
        (_scores(2.0, 1.8), ("D2", "D5", "boundary")),
        # 2.2/3.0 = 0.733 < 0.85 and 2.2 < 2.5: one direction
        (_scores(3.0, 2.2), ("D2", None, "single")),
        # exactly at the boundary ratio counts as boundary
        (_scores(2.0, 1.7), ("D2", "D5", "boundary")),
        # a tie goes to the lower slot, the other tied slot is the secondary
        ([2.0, 0.1, 0.1, 2.0, 0.1, 0.1, 0.1, 0.1], ("D0", "D3", "boundary")),
    ],
)
def test_assign_table(scores, expected):
    assert assign(scores) == expected


def test_assign_many_matches_assign_and_obeys_ledger_rules():
    rng = np.random.default_rng(1)
    scores = np.round(rng.gamma(2.0, 0.8, (4000, 8)), 3)
    primary, secondary, kind = assign_many(scores, THRESHOLDS)
    seen = set()
    for row, p, s, k in zip(scores, primary, secondary, kind):
        one = assign(row)
        assert one == ("other" if p < 0 else f"D{p}", None if s < 0 else f"D{s}", TYPES[k])
        seen.add(TYPES[k])
        if s >= 0:
            assert TYPES[k] in ("boundary", "bridge") and s != p
        if p < 0:
            assert s < 0 and TYPES[k] in ("other", "low_evidence")
        if TYPES[k] == "other":
            assert p < 0
    assert seen == set(TYPES)


# ---------------------------------------------------------------- blocks
def test_block_rule_on_constructed_overlap():
    A = {f"p{i}" for i in range(20)}
    members = {
        "a": A,
        "b": {f"p{i}" for i in range(15)},  # shared 15, overlap 1.0: linked
        "c": {f"p{i}" for i in range(9)} | {"x1"},  # overlap 0.9 but only 9 shared: not linked
        "d": {f"p{i}" for i in range(12)} | {f"y{i}" for i in range(18)},  # 12/min(20,30) = 0.6: linked
        "e": {f"p{i}" for i in range(11, 20)} | {f"q{i}" for i in range(7)} | {f"z{i}" for i in range(20)},  # 9 shared
        "f": {f"r{i}" for i in range(10)},
        "g": {f"r{i}" for i in range(10)} | {f"s{i}" for i in range(10)},  # with f: 10 shared, overlap 1.0
        "h": {f"s{i}" for i in range(10)},  # with g: 10 shared, overlap 1.0 -> f, g, h chained
        "i": {f"p{i}" for i in range(11)} | {f"t{i}" for i in range(9)},  # 11/20 = 0.55 with a: not linked
    }
    links = overlap_links(members)
    assert [(a, b) for a, b, *_ in links] == [("a", "b"), ("a", "d"), ("b", "d"), ("b", "i"), ("f", "g"), ("g", "h")]
    blocks = connected_blocks(sorted(members), links)
    assert blocks == [["a", "b", "d", "i"], ["c"], ["e"], ["f", "g", "h"]]
    assert block_id_for(blocks[0]) == "block-a"


def test_split_is_deterministic_whole_blocks_and_about_a_quarter():
    blocks = [[f"f{i:02d}"] for i in range(13)] + [["g1", "g2", "g3"], ["h1", "h2"]]
    split = split_blocks(blocks, "salt")
    assert split == split_blocks(list(reversed(blocks)), "salt")
    dev = sum(len(b) for b in blocks if split[block_id_for(b)] == "dev")
    assert dev == round(18 * 0.25)
    assert split != split_blocks(blocks, "other-salt")


# ---------------------------------------------------------------- the built archive
def test_build_verifies_and_reports(built):
    _, root, summary = built
    report = verify_archive(root)
    assert report.ok, [f.to_dict() for f in report.errors][:5]
    arch = Archive(root)
    assert arch.synthetic is True
    assert [o.isoformat() for o in arch.origins.origins] == ["2023-01-01", "2023-07-01", "2024-01-01", "2024-07-01", "2025-01-01"]
    assert arch.origins.strict_origin == date(2025, 1, 1)
    assert len(arch.fields) == len(FIELDS) == summary["fields"]
    assert arch.ledger["var_ridge"] == {"ratio": 133.352}
    assert not (root / "archive" / "models").exists()
    assert set(summary["fields_report"]) == {f.field_id for f in FIELDS}
    assert all(len(r["members_per_window"]) == 8 for r in summary["fields_report"].values())


def test_build_reads_only_cs_cl_papers_in_range(built):
    data, root, summary = built
    con = duckdb.connect()
    path = root / "archive" / "benchmark" / "papers.parquet"
    lo, hi, bad = con.execute(
        f"SELECT min(first_submitted), max(first_submitted), count(*) FILTER (WHERE categories NOT LIKE '%cs.CL%') FROM '{path}'"
    ).fetchone()
    assert lo >= date(2021, 7, 1) and hi < date(2025, 7, 1) and bad == 0
    n_in_range = sum(
        1
        for line in gzip.open(data, "rt")
        if "cs.CL" in (r := json.loads(line))["categories"] and "2021-07-01" <= r["first_submitted"] < "2025-07-01"
    )
    assert summary["papers_read"] == n_in_range
    # only papers that belong to some field are published
    orphans = con.execute(
        f"SELECT count(*) FROM '{path}' p ANTI JOIN '{root / 'archive/benchmark/assignments.parquet'}' a USING (arxiv_id)"
    ).fetchone()[0]
    assert orphans == 0


def test_build_is_byte_identical(built, tmp_path):
    data, root, _ = built
    build_sample(data, tmp_path / "again")
    assert (tmp_path / "again" / "SHA256SUMS").read_bytes() == (root / "SHA256SUMS").read_bytes()


def test_manifests_match_the_ledger(built):
    _, root, _ = built
    arch = Archive(root)
    con = arch.connect()
    for regime in ("fixed", "expanding"):
        entries = arch.manifest(regime)
        assert len(entries) == len(arch.fields) * 5
        assert [(e.field_id, e.origin) for e in entries] == sorted((e.field_id, e.origin) for e in entries)
        for e in entries:
            assert e.date_to == e.origin
            assert e.date_from == (add_months(e.origin, -6) if regime == "fixed" else None)
            lo = e.date_from or date(1900, 1, 1)
            ids = [r[0] for r in con.execute(
                "SELECT arxiv_id FROM assignments WHERE field_id = ? AND first_submitted >= ? AND first_submitted < ?",
                [e.field_id, lo, e.date_to],
            ).fetchall()]
            ids.sort(key=lambda s: s.encode())
            assert e.n_papers == len(ids)
            assert e.ids_sha256 == hashlib.sha256("\n".join(ids).encode()).hexdigest()
            assert e.max_date is None or e.max_date < e.origin


def test_build_refuses_an_occupied_target_and_force_replaces(built, tmp_path):
    data, _, _ = built
    target = tmp_path / "repo"
    (target / "archive").mkdir(parents=True)
    (target / "archive" / "stray.txt").write_text("x")
    with pytest.raises(Exception, match="already holds archive/"):
        build_sample(data, target)
    build_sample(data, target, force=True)
    assert not (target / "archive" / "stray.txt").exists()
    assert verify_archive(target).ok
    assert not any(p.name.startswith(".rapgen-build-") for p in target.iterdir())


# ---------------------------------------------------------------- CLI
def test_cli_missing_data_file_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["sample", "build", "--out", str(tmp_path / "o"), "--data", str(tmp_path / "none.jsonl.gz")])
    assert result.exit_code == 2
    assert f"Error: {tmp_path / 'none.jsonl.gz'}: paper data not found; pass --data" in result.output
    assert not (tmp_path / "o" / "archive").exists()


def test_cli_corrupt_data_file_fails_cleanly(tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad, "wt") as handle:
        handle.write('{"arxiv_id": "2101.00001", "title": "t"}\n')
    result = CliRunner().invoke(cli, ["sample", "build", "--out", str(tmp_path / "o"), "--data", str(bad)])
    assert result.exit_code == 1
    assert f"Error: {bad}:1: not a paper record (KeyError" in result.output


def test_cli_build_prints_per_field_report(built, tmp_path):
    data, _, _ = built
    result = CliRunner().invoke(cli, ["sample", "build", "--out", str(tmp_path / "o"), "--data", str(data)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"Built .*: 17 fields in \d+ blocks \(\d+ dev\)", result.output)
    assert "machine-translation" in result.output


# ---------------------------------------------------------------- the committed archive
COMMITTED = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not (COMMITTED / "archive" / "benchmark" / "codebooks.jsonl").is_file(), reason="no committed archive in this checkout")
def test_committed_sample_codebooks_and_ledger():
    arch = Archive(COMMITTED)
    con = arch.connect()
    pre = {r[0] for r in con.execute("SELECT arxiv_id FROM papers WHERE first_submitted < DATE '2023-01-01'").fetchall()}
    assert 14 <= len(arch.fields) <= 18
    for fid, directions in arch.codebooks.items():
        assert len(directions) == 8
        for d in directions:
            assert len(re.findall(r"[.!?](\s|$)", d.definition)) >= 2, (fid, d.slot)
            assert d.include and d.exclude
            assert len(d.exemplars) >= 3 and set(d.exemplars) <= pre, (fid, d.slot)
    types = {r[0] for r in con.execute("SELECT DISTINCT assignment_type FROM assignments").fetchall()}
    assert types == set(TYPES)
    n_bad = con.execute(
        """SELECT count(*) FROM assignments WHERE
             (secondary IS NOT NULL AND (assignment_type NOT IN ('boundary', 'bridge') OR secondary = "primary"))
          OR ("primary" = 'other' AND (secondary IS NOT NULL OR assignment_type NOT IN ('other', 'low_evidence')))
          OR (assignment_type = 'other' AND "primary" <> 'other')"""
    ).fetchone()[0]
    assert n_bad == 0
    splits = [f.split for f in arch.fields]
    assert 0.15 <= splits.count("dev") / len(splits) <= 0.35
    assert (COMMITTED / "archive").stat() and sum(p.stat().st_size for p in (COMMITTED / "archive").rglob("*") if p.is_file()) < 40e6


def test_build_help_shows_a_reproducibility_check_that_works_in_a_clone():
    """--history rebuilds everything the committed SHA256SUMS lists (agents and history
    included), so the whole file compares; and a clone already holds an archive, so no --out ."""
    text = CliRunner().invoke(cli, ["sample", "build", "--help"]).output
    assert "rapgen sample build --history --out /tmp/again && rapgen verify --root /tmp/again" in text
    assert "cmp SHA256SUMS /tmp/again/SHA256SUMS" in text
    assert "--out . " not in text and "--out .\n" not in text
    docs = (Path(__file__).resolve().parents[1] / "docs" / "sample-archive.md").read_text()
    assert "rapgen sample build --history --out /tmp/again" in docs
    assert "cmp SHA256SUMS /tmp/again/SHA256SUMS" in docs


# ---------------------------------------------------------------- the committed sample as a history
from rapgen.archive.sums import parse_sums  # noqa: E402
from rapgen.sample.committed import PANEL, build_committed_sample  # noqa: E402

INTERVENTION_NAMES = ("replays.jsonl", "oracle.jsonl", "oracle_traces.jsonl")


def _listed(path: Path) -> dict[str, str]:
    entries, _ = parse_sums(path.read_bytes())
    return {e.path: e.digest for e in entries}


@pytest.fixture(scope="module")
def committed(tmp_path_factory, built):
    data, _, _ = built
    out = tmp_path_factory.mktemp("committed") / "repo"
    from rapgen.cli.sample_cmds import reference_agents, reference_records

    summary = build_committed_sample(data, out, agents=reference_agents, records=reference_records)
    return data, out, summary


def test_committed_build_is_a_verified_history(committed):
    _, root, summary = committed
    kinds = summary["releases"]
    assert len(kinds) >= 3 and kinds[0] == "initial" and kinds.count("roll") == 3 and "models" in kinds
    assert verify_archive(root).ok and verify_archive(root).ok
    releases = root / "archive" / "releases"
    records = [json.loads(p.read_text()) for p in sorted(releases.glob("[0-9][0-9][0-9][0-9].json"))]
    assert [r["release"] for r in records] == list(range(1, len(kinds) + 1))
    assert all(r["simulated"] is True for r in records)
    assert records[0]["resolved_origins"] == ["2023-01-01", "2023-07-01"]
    assert records[-1]["resolved_origins"][-1] == "2025-01-01" and records[-1]["open_origin"]["origin"] == "2025-07-01"
    first = _listed(releases / "0001.SHA256SUMS")
    for path in ("archive/benchmark/papers.parquet", "archive/benchmark/origins.json", "archive/releases/0001.json",
                 "archive/models/ref-closed-book/predictions.jsonl", "archive/models/ref-sample-classify/traces.jsonl"):
        assert path in first, path
    assert not any(p.startswith("archive/benchmark/windows/") for p in first)
    # one reference agent declares its knowledge cut-off from release 1 on (the exposure analysis has rows)
    card = json.loads((root / "archive/models/ref-sample-classify/model.json").read_text())
    assert (card["knowledge_cutoff"], card["cutoff_precision"]) == ("2024-01-01", "month") and card["cutoff_source"]
    assert "archive/models/ref-sample-classify/model.json" in first
    last = _listed(releases / f"{len(kinds):04d}.SHA256SUMS")
    assert any(p.startswith("archive/commitments/2024-01-01/") for p in last)
    assert any(p.startswith("archive/models/ref-closed-book/origins/2025-01-01/") for p in last)  # the open submitter
    for mid in ("ref-recent-hits", "ref-history-trend", "ref-sample-classify"):
        for name in INTERVENTION_NAMES:
            assert f"archive/models/{mid}/{name}" in last
    assert f"archive/models/{PANEL[1]}/training.json" in last
    sums = _listed(root / "SHA256SUMS")
    assert set(sums) - set(last) == {f"archive/releases/{len(kinds):04d}.SHA256SUMS"}  # nothing unreleased
    assert all(sums[p] == d for p, d in last.items())
    info = json.loads((root / "archive" / "ARCHIVE.json").read_text())
    assert info["format_version"] == 2 and "arxiver" in info["source"] and "simulated" in info["description"]


def test_committed_build_is_byte_identical_through_the_cli(committed, tmp_path):
    data, root, _ = committed
    result = CliRunner().invoke(cli, ["sample", "build", "--history", "--out", str(tmp_path / "again"), "--data", str(data)])
    assert result.exit_code == 0, result.output
    assert re.search(r"as a history of \d+ releases \(initial, models, roll", result.output)
    assert (tmp_path / "again" / "SHA256SUMS").read_bytes() == (root / "SHA256SUMS").read_bytes()
    for path in _listed(root / "SHA256SUMS"):
        assert (tmp_path / "again" / path).read_bytes() == (root / path).read_bytes(), path


# ---------------------------------------------------------------- the codebook text as package data
from rapgen.sample.codebooks import CodebookDataError, parse_fields_yaml  # noqa: E402


@pytest.mark.skipif(not (COMMITTED / "archive" / "benchmark" / "codebooks.jsonl").is_file(), reason="no committed archive in this checkout")
def test_fields_yaml_is_the_source_of_the_published_codebooks():
    arch = Archive(COMMITTED)
    by_id = {f.field_id: f for f in FIELDS}
    assert set(by_id) == {f.field_id for f in arch.fields}
    for field in arch.fields:
        source = by_id[field.field_id]
        assert (field.name, field.definition) == (source.name, source.definition)
        for published, text in zip(arch.codebooks[field.field_id], source.directions):
            assert (published.name, published.definition, published.include, published.exclude) == (
                text.name, text.definition, text.include, text.exclude)


def test_fields_yaml_ships_as_package_data():
    import tomllib
    from importlib import resources

    assert resources.files("rapgen.sample").joinpath("fields.yaml").is_file()
    project = tomllib.loads((COMMITTED / "pyproject.toml").read_text())
    assert "sample/fields.yaml" in project["tool"]["setuptools"]["package-data"]["rapgen"]
    assert len(FIELDS) == 17 and all(len(f.directions) == 8 for f in FIELDS)
    assert {f.field_id: f.breadth for f in FIELDS if f.breadth != 0.10} == {"speech-translation": 0.04}


_DIRECTION = "{name: n, definition: d, include: i, exclude: e, terms: t}"


def _yaml(field: str = "", directions: int = 8) -> str:
    dirs = ", ".join([_DIRECTION] * directions)
    return f"fields:\n- {{field_id: f1, name: F, definition: D, terms: T, directions: [{dirs}]{field}}}\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ("fields: [", "not valid YAML"),
        ("other: []\n", "expected one key 'fields'"),
        ("fields: []\n", "expected one key 'fields'"),
        (_yaml(directions=7), "field 1 (f1): 'directions' must list exactly 8 directions"),
        (_yaml(", breadth: 1.5"), "'breadth' must be a number strictly between 0 and 1"),
        (_yaml(", extra: 1"), "field 1: unknown key 'extra'"),
        (_yaml().replace("name: F, ", ""), "field 1: missing key 'name'"),
        (_yaml().replace("definition: D", "definition: ''"), "'definition' must be a non-empty string"),
        (_yaml().replace("field_id: f1", "field_id: F 1"), "'field_id' does not match"),
        (_yaml().replace("include: i, ", "", 1), "direction D0: missing key 'include'"),
        (_yaml() + _yaml().replace("fields:\n", ""), "field 'f1' appears twice"),
    ],
)
def test_fields_yaml_shape_is_checked(text, message):
    with pytest.raises(CodebookDataError, match=re.escape(message)):
        parse_fields_yaml(text, "fields.yaml")


def test_a_well_formed_fields_yaml_parses():
    (field,) = parse_fields_yaml(_yaml(", breadth: 0.05"))
    assert field.field_id == "f1" and field.breadth == 0.05 and len(field.directions) == 8
