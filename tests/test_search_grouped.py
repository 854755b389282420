"""The kind-neutral backend (KINDS.md §7): shards keyed (group, date_from, date_to) answer exactly as
RAP's (field, origin, regime) backend does on the same papers, from memory or from the cache, and
a shard that does not match its manifest is refused."""

from __future__ import annotations

import pytest

from rapgen.archive import Archive
from rapgen.errors import SearchError
from rapgen.search import Backend, GroupedBackend, GroupIndexes, ManifestShard

QUERIES = ("parsing translation", "model data speech", "reasoning2 safety", "the of and", "speech")
BOUNDS = ((None, None), ("2023-01-01", None), (None, "2024-01-01"), ("2022-06-01", "2024-03-01"))


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("RAPGEN_CACHE", raising=False)


def _rows_and_groups(archive: Archive):
    con = archive.connect()
    try:
        rows = con.execute("SELECT arxiv_id, title, abstract, first_submitted FROM papers "
                           "WHERE arxiv_id IN (SELECT arxiv_id FROM assignments)").fetchall()
        members = con.execute("SELECT field_id, arxiv_id FROM assignments").fetchall()
    finally:
        con.close()
    groups: dict[str, list[str]] = {}
    for field_id, arxiv_id in members:
        groups.setdefault(field_id, []).append(arxiv_id)
    return rows, groups


def _manifest(archive: Archive) -> dict:
    """(field, date_from, date_to) -> the manifest's word, and each key's (field, origin, regime)."""
    expected, units = {}, {}
    for regime in ("fixed", "expanding"):
        for m in archive.manifest(regime):
            key = (m.field_id, m.date_from, m.date_to)
            expected[key] = ManifestShard(m.n_papers, m.ids_sha256)
            units[key] = (m.field_id, m.origin, regime)
    return expected, units


def _grouped(archive: Archive, indexes: GroupIndexes) -> tuple[GroupedBackend, Backend, dict]:
    rap = Backend(archive)
    expected, units = _manifest(archive)
    return GroupedBackend(indexes, top_k=rap.top_k, k1=rap.k1, b=rap.b, expected=expected), rap, units


def test_grouped_shards_answer_exactly_as_raps_backend(tiny_archive):
    archive = Archive(tiny_archive.root)
    grouped, rap, units = _grouped(archive, GroupIndexes.in_memory(*_rows_and_groups(archive)))
    n = 0
    for key, (field_id, origin, regime) in units.items():
        assert grouped.shard(key).ids == rap.shard(field_id, origin, regime).ids  # opened: the manifest check passed
        for q in QUERIES:
            for sort in ("relevance", "date"):
                for lo, hi in BOUNDS:
                    args = {"query": q, "sort": sort, "date_from": lo, "date_to": hi}
                    assert grouped.search(key, args) == rap.search(field_id, origin, regime, args), (key, args)
                    n += 1
    assert n > 100
    bad = {"query": "", "sort": "relevance", "date_from": None, "date_to": None}
    key = next(iter(units))
    assert grouped.search(key, bad) == rap.search(*units[key], bad) and grouped.search(key, bad).error


def test_the_cache_is_built_once_and_answers_as_memory(tiny_archive, tmp_path):
    archive = Archive(tiny_archive.root)
    rows, groups = _rows_and_groups(archive)
    inputs = {"archive/benchmark/papers.parquet": "a" * 64}
    cached = GroupIndexes.cached(tmp_path / "c", inputs, lambda: (rows, groups))

    def boom():
        raise AssertionError("rebuilt a warm cache")

    again = GroupIndexes.cached(tmp_path / "c", inputs, boom)
    assert again.folder == cached.folder and (cached.folder / "groups").is_dir()
    other = GroupIndexes.cached(tmp_path / "c", {"archive/benchmark/papers.parquet": "b" * 64}, lambda: (rows, groups))
    assert other.folder != cached.folder  # another recorded digest, another index
    a, _, units = _grouped(archive, again)
    b, _, _ = _grouped(archive, GroupIndexes.in_memory(rows, groups))
    for key in units:
        for q in QUERIES:
            args = {"query": q, "sort": "relevance", "date_from": None, "date_to": None}
            assert a.search(key, args) == b.search(key, args)


def test_a_shard_off_its_manifest_is_refused(tiny_archive):
    archive = Archive(tiny_archive.root)
    indexes = GroupIndexes.in_memory(*_rows_and_groups(archive))
    expected, units = _manifest(archive)
    key = next(iter(units))
    wrong = {**expected, key: ManifestShard(expected[key].n_papers, "0" * 64)}
    with pytest.raises(SearchError, match=r"papers do not match the manifest .*the cache is stale or the archive is inconsistent"):
        GroupedBackend(indexes, top_k=10, k1=1.5, b=0.75, expected=wrong).shard(key)
    backend = GroupedBackend(indexes, top_k=10, k1=1.5, b=0.75, expected=expected)
    with pytest.raises(SearchError, match="no shard .* in the manifest"):
        backend.shard((key[0], None, key[2].replace(year=1999)))
    with pytest.raises(SearchError, match="group 'nope' has no papers"):
        GroupedBackend(indexes, top_k=10, k1=1.5, b=0.75).shard(("nope", None, key[2]))
