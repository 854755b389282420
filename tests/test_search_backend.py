"""The backend over a real (tiny) archive: cache, manifest checks and the ``rapgen search`` CLI."""

from __future__ import annotations

import json
from datetime import date

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.errors import SearchError
from rapgen.search import Backend
from rapgen.search import cache as search_cache


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


def test_every_shard_matches_its_manifest(tiny_archive):
    archive = Archive(tiny_archive.root)
    backend = Backend(archive)
    assert backend.folder.parent == tiny_archive.root / ".rapgen-cache" / "search"
    for regime in ("fixed", "expanding"):
        for m in archive.manifest(regime):
            shard = backend.shard(m.field_id, m.origin, regime)  # raises if ids_sha256 differs
            assert shard.n == m.n_papers
            assert (shard.index.days[shard.member] < (m.origin - date(1970, 1, 1)).days).all()


def test_cache_is_reused_and_keyed_by_inputs(tiny_archive, monkeypatch, tmp_path):
    archive = Archive(tiny_archive.root)
    first = Backend(archive, cache_dir=tmp_path / "c")
    assert first.folder.parent == tmp_path / "c" / "search"

    def boom(*a, **k):
        raise AssertionError("rebuilt a warm cache")

    original = search_cache.build_index
    monkeypatch.setattr(search_cache, "build_index", boom)
    again = Backend(Archive(tiny_archive.root), cache_dir=tmp_path / "c")
    assert again.folder == first.folder
    monkeypatch.setattr(search_cache, "build_index", original)
    monkeypatch.setenv("RAPGEN_CACHE", str(tmp_path / "env"))
    via_env = Backend(Archive(tiny_archive.root))
    assert via_env.folder.parent == tmp_path / "env" / "search"
    assert via_env.folder.name == first.folder.name  # same inputs, same key
    inputs = json.loads((first.folder / "inputs.json").read_text())
    assert set(inputs) >= {"engine", "papers_sha256", "assignments_sha256", "analyzer"}


def test_rebuilt_cache_gives_identical_results(tiny_archive, tmp_path):
    archive = Archive(tiny_archive.root)
    a = Backend(archive, cache_dir=tmp_path / "a")
    b = Backend(archive, cache_dir=tmp_path / "b")
    for q in ("parsing translation", "model data speech", "reasoning2 safety"):
        for sort in ("relevance", "date"):
            args = {"query": q, "sort": sort}
            assert a.search("beta", "2024-07-01", "expanding", args) == b.search("beta", "2024-07-01", "expanding", args)


def test_stale_manifest_is_detected(tiny_archive):
    path = tiny_archive.root / "archive" / "search" / "manifest_fixed.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["ids_sha256"] = "0" * 64
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    backend = Backend(Archive(tiny_archive.root))
    with pytest.raises(SearchError, match="do not match the manifest"):
        backend.shard(row["field_id"], row["origin"], "fixed")


def test_unknown_shard_is_a_search_error(tiny_archive):
    backend = Backend(Archive(tiny_archive.root))
    with pytest.raises(SearchError, match="not a field"):
        backend.shard("nope", "2024-01-01", "fixed")
    with pytest.raises(SearchError, match="no fixed shard"):
        backend.shard("alpha", "2024-02-01", "fixed")


def test_cli_search_text_and_json(tiny_archive):
    runner = CliRunner()
    root = str(tiny_archive.root)
    result = runner.invoke(cli, ["search", "alpha", "2024-07-01", "fixed", "parsing translation", "--root", root], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "hits in alpha 2024-07-01 fixed [2024-01-01, 2024-07-01)" in result.output
    result = runner.invoke(cli, ["search", "alpha", "2024-07-01", "expanding", "parsing", "--sort", "date", "--json", "--root", root])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    dates = [p["first_submitted"] for p in data["results"]]
    assert dates == sorted(dates, reverse=True) and all(d < "2024-07-01" for d in dates)
    assert data["total_hits"] >= len(data["results"]) > 0
    assert set(data["results"][0]) == {"arxiv_id", "first_submitted", "title", "abstract"}


@pytest.mark.parametrize("extra,code,message", [
    (["--date-from", "2024-13-01"], 2, "Error: malformed Search call: date_from '2024-13-01' is not a calendar date"),
    (["--date-from", "2024-03-01", "--date-to", "2024-02-01"], 2, "Error: malformed Search call: date_from 2024-03-01 must be before date_to 2024-02-01"),
])
def test_cli_search_malformed_call(tiny_archive, extra, code, message):
    result = CliRunner().invoke(cli, ["search", "alpha", "2024-07-01", "fixed", "parsing", "--root", str(tiny_archive.root), *extra])
    assert result.exit_code == code
    assert message in result.stderr


def test_cli_search_unknown_field_and_regime(tiny_archive):
    runner = CliRunner()
    result = runner.invoke(cli, ["search", "nope", "2024-07-01", "fixed", "parsing", "--root", str(tiny_archive.root)])
    assert result.exit_code == 2  # a name given on the command line: a usage error
    assert "Error: field 'nope' is not a field of this archive; choose from alpha, beta, " in result.stderr
    for origin in ("2024-08-01", "July", "2024-W27-1"):
        result = runner.invoke(cli, ["search", "alpha", origin, "fixed", "parsing", "--root", str(tiny_archive.root)])
        assert result.exit_code == 2
        assert f"Error: origin '{origin}' is not an origin of this archive; choose from 2023-01-01, " in result.stderr
    result = runner.invoke(cli, ["search", "alpha", "2024-07-01", "rolling", "parsing", "--root", str(tiny_archive.root)])
    assert result.exit_code == 2


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_search_lone_surrogate_is_a_one_line_usage_error(tiny_archive, as_json):
    # Undecodable argv bytes reach Python as lone surrogates: a malformed call, never a traceback.
    args = ["search", "alpha", "2024-07-01", "fixed", "parsing \udcff", "--root", str(tiny_archive.root)]
    result = CliRunner().invoke(cli, args + (["--json"] if as_json else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1:] == [
        "Error: malformed Search call: the query is not valid Unicode text (a lone surrogate at position 8)"]
    if as_json:
        data = json.loads(result.stdout)
        assert data["call"]["query"] == "parsing \\udcff" and data["results"] == []


def test_cli_search_query_syntax_is_plain_text(tiny_archive):
    runner = CliRunner()
    root = str(tiny_archive.root)
    outputs = []
    for query in ('title:parsing (translation "', "title parsing translation"):
        result = runner.invoke(cli, ["search", "alpha", "2024-07-01", "fixed", query, "--json", "--root", root])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        outputs.append((data["total_hits"], [p["arxiv_id"] for p in data["results"]]))
    assert outputs[0] == outputs[1] and outputs[0][0] > 0


def test_cache_is_keyed_by_the_verified_digests_without_rehashing(tiny_archive, monkeypatch, tmp_path):
    from rapgen.archive import PAPERS_PARQUET, open_verified

    verified = open_verified(tiny_archive.root).release()
    plain_key = search_cache.cache_key(search_cache.input_digest(Archive(tiny_archive.root)))

    def no_hashing(*a, **k):
        raise AssertionError("re-hashed a parquet file the verifier already hashed")

    monkeypatch.setattr(search_cache, "sha256_file", no_hashing)
    digest = search_cache.input_digest(verified)
    assert digest["papers_sha256"] == verified.files[PAPERS_PARQUET]
    backend = Backend(verified, cache_dir=tmp_path / "c")
    assert backend.folder.name == search_cache.cache_key(digest) == plain_key  # same key as the SHA256SUMS lines give


def test_cli_search_shows_control_characters_in_titles_escaped(tiny_archive, monkeypatch):
    original = Backend.papers

    def hostile(self, ids):
        return [{**p, "title": "evil\x1b[2J\u202etitle\r"} for p in original(self, ids)]

    monkeypatch.setattr(Backend, "papers", hostile)
    result = CliRunner().invoke(cli, ["search", "alpha", "2024-07-01", "fixed", "parsing", "--root", str(tiny_archive.root)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\r" not in result.stdout
    assert "evil\\x1b[2J\\u202etitle\\x0d" in result.stdout


def test_search_variants_answer_each_call_as_search_does(tiny_archive, tmp_path):
    # Shared scoring between calls of one query must not leak one call's options into another's.
    archive = Archive(tiny_archive.root)
    backend = Backend(archive, cache_dir=tmp_path / "c")
    variants = []
    for q in ("parsing translation", "model data speech", "parsing translation"):
        variants += [
            {"query": q, "sort": "relevance"},
            {"query": q, "sort": "date"},
            {"query": q, "sort": "relevance", "date_from": "2024-01-01", "date_to": "2024-07-01"},
            {"query": q, "sort": "relevance", "date_from": "2023-01-01"},
            {"query": q, "sort": "date", "date_to": "2023-06-01"},
        ]
    variants.insert(3, {"query": "  ", "sort": "relevance"})  # malformed, in the middle of a shared query
    together = backend.search_variants("beta", "2024-07-01", "expanding", variants)
    alone = [backend.search("beta", "2024-07-01", "expanding", v) for v in variants]
    assert together == alone
    assert together[3].error == "the query is empty"
    assert len({(r.total_hits, r.ids) for r in together if r.ok}) > 3  # the options really change the answers


def test_primed_terms_give_the_answers_of_terms_looked_up_one_by_one(tiny_archive, tmp_path):
    # A replay looks up every term of a shard's calls at once (Shard.prime): the clauses, their
    # BM25 leaves and so every score, tie and answer must be the ones of the term-by-term path.
    from rapgen.search.engine import validate_call

    archive = Archive(tiny_archive.root)
    calls = []
    for q in ("parsing translation", "model data speech", "zzzunknownterm parsing", "speech", "the of and"):
        calls += [validate_call({"query": q, "sort": s, **bounds}) for s in ("relevance", "date")
                  for bounds in ({}, {"date_from": "2024-01-01"}, {"date_to": "2023-06-01"})]
    primed, plain = Backend(archive, cache_dir=tmp_path / "c"), Backend(archive, cache_dir=tmp_path / "c")
    for regime in ("fixed", "expanding"):
        for m in archive.manifest(regime):
            a, b = primed.shard(m.field_id, m.origin, regime), plain.shard(m.field_id, m.origin, regime)
            a.prime([t for c in calls for t in c.terms], primed.k1, primed.b)
            for call in calls:
                options = {"top_k": primed.top_k, "k1": primed.k1, "b": primed.b}
                mine, theirs = a.execute(call, **options), b.execute(call, **options)
                assert mine == theirs
                assert a.replay_answer(call, **options) == (theirs.total_hits, list(theirs.ids))
