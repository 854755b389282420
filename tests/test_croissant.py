"""Croissant files (RELEASES.md, layout): written by the command that cuts each release, listed in its
manifest, byte-identical on rebuild; verify checks each against its release's manifest; a later
models or errata release adds the files of releases cut without one; a format-1 archive's
``archive/croissant.json`` comes from ``rapgen seal --croissant`` and gives way to release 1's."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from factory import make_archive
from history_factory import make_history, make_window
from rapgen.archive.croissant import croissant_path, release_croissant
from rapgen.archive.croissant.check import check_croissant
from rapgen.archive.history import ops
from rapgen.archive.history.check import check_history
from rapgen.archive.history.load import load_history, read_root_sums
from rapgen.archive.history.ops import cut_release, roll_release, start_history
from rapgen.archive.history.records import manifest_path, record_path
from rapgen.archive.seal import seal_archive
from rapgen.archive.sums import format_sums
from rapgen.archive.verify import format_finding, verify_archive
from rapgen.cli import cli
from test_releases_check import ADDS, build

CROISSANT_1 = "archive/croissant.json"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture()
def history(tmp_path):
    h = make_history(tmp_path)
    cut_release(h.root, "models", release_date=date(2026, 1, 12))  # release 4 releases the merged reveal
    return h.root


def _manifest(root: Path, k: int) -> dict[str, str]:
    return load_history(root, with_ledger=False).input.manifests[k]


# ---------------------------------------------------------------- written by every release command
def test_every_release_lists_its_own_croissant_file_describing_its_manifest(history):
    loaded = load_history(history, with_ledger=False)
    assert sorted(loaded.input.records) == [1, 2, 3, 4]
    for k, manifest in loaded.input.manifests.items():
        path = croissant_path(k)
        assert path in manifest, f"release {k} does not list its Croissant file"
        doc = json.loads((history / path).read_bytes())
        assert doc["version"] == str(k) and doc["conformsTo"] == "http://mlcommons.org/croissant/1.1"
        described = {d["@id"]: d["sha256"] for d in doc["distribution"] if "sha256" in d}
        assert described == {p: d for p, d in manifest.items() if p != path}
        assert doc["datePublished"] == loaded.input.records[k].date.isoformat()
        assert f"rap-release-{k}" in doc["citeAs"] and manifest_path(k) in doc["citeAs"]
    assert verify_archive(history).ok


def test_the_croissant_file_is_byte_identical_when_rebuilt(history):
    loaded = load_history(history, with_ledger=False)
    info = json.loads((history / "archive/ARCHIVE.json").read_bytes())
    for k, record in loaded.input.records.items():
        files = {p: d for p, d in loaded.input.manifests[k].items() if p != croissant_path(k)}
        assert release_croissant(record, files, info) == (history / croissant_path(k)).read_bytes()


def test_record_sets_cover_the_union_of_the_ledger_and_each_model(history):
    doc = json.loads((history / croissant_path(4)).read_bytes())
    sets = {r["@id"]: r for r in doc["recordSet"]}
    assert {"papers", "assignments", "fields", "codebooks", "blocks", "predictions-model-a", "predictions-model-b"} <= set(sets)
    filesets = {d["@id"]: d for d in doc["distribution"] if d["@type"] == "cr:FileSet"}
    ledger = filesets["assignments-files"]["includes"]
    assert ledger == ["benchmark/assignments.parquet", "benchmark/windows/2025-07-01/assignments.parquet"]
    assert filesets["predictions-model-a-files"]["includes"] == [
        "models/model-a/origins/2025-07-01/predictions.jsonl", "models/model-a/predictions.jsonl"]
    assert sets["fields"]["field"][0]["source"] == {"fileObject": {"@id": "archive/benchmark/fields.jsonl"},
                                                    "extract": {"column": "field_id"}}
    types = {f["name"]: f.get("dataType") for f in sets["assignments"]["field"]}
    assert types == {"arxiv_id": "sc:Text", "field_id": "sc:Text", "first_submitted": "sc:Date", "primary": "sc:Text",
                     "secondary": "sc:Text", "assignment_type": "sc:Text"}
    # release 1 (no window yet) reads the one ledger file directly and needs no folder entry
    first = json.loads((history / croissant_path(1)).read_bytes())
    assert not any(d["@type"] == "cr:FileSet" for d in first["distribution"]) and "isLiveDataset" in first


# ---------------------------------------------------------------- verify checks each file against its manifest
def _relist_latest(root: Path, path: str, data: bytes) -> None:
    """Rewrite a file of the latest release and re-list it consistently (manifest and SHA256SUMS)."""
    (root / path).write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    loaded = load_history(root, with_ledger=False)
    k = max(loaded.input.records)
    manifest = {**loaded.input.manifests[k], path: digest}
    (root / manifest_path(k)).write_bytes(format_sums(manifest))
    sums = {**read_root_sums(root), path: digest, manifest_path(k): hashlib.sha256(format_sums(manifest)).hexdigest()}
    (root / "SHA256SUMS").write_bytes(format_sums(sums))


def test_a_croissant_digest_that_differs_from_the_manifest_is_an_invariant_finding(history):
    path = croissant_path(4)
    text = (history / path).read_text()
    old = _manifest(history, 4)["archive/benchmark/fields.jsonl"]
    _relist_latest(history, path, text.replace(old, "0" * 64).encode())
    line = next(i for i, s in enumerate(text.split("\n"), 1) if '"@id": "archive/benchmark/fields.jsonl"' in s)
    result = run("verify", "--root", str(history))
    assert result.exit_code == 1
    assert (f"INVARIANT {path}:{line}: release 4: distribution entry archive/benchmark/fields.jsonl: sha256 {'0' * 64} "
            f"differs from releases/0004.SHA256SUMS's {old}") in result.output
    assert "FAILED: 1 finding (1 INVARIANT)" in result.output  # the bytes are listed as they are: only the content is wrong


def test_a_croissant_file_that_leaves_a_file_out_is_an_invariant_finding(history):
    path = croissant_path(4)
    doc = json.loads((history / path).read_bytes())
    doc["distribution"] = [d for d in doc["distribution"] if d["@id"] != "archive/benchmark/blocks.jsonl"]
    doc["recordSet"] = [r for r in doc["recordSet"] if r["@id"] != "blocks"]
    _relist_latest(history, path, json.dumps(doc, indent=2).encode())
    found = [format_finding(f) for f in verify_archive(history).errors]
    assert found == [f"INVARIANT {path}: release 4: does not describe archive/benchmark/blocks.jsonl, which "
                     "releases/0004.SHA256SUMS lists"]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(version="3"), "'version' is \"3\", expected \"4\" (the release number)"),
    (lambda d: d["distribution"][1].update(contentUrl="../../elsewhere"), "contentUrl \"../../elsewhere\" does not point at it"),
    (lambda d: d["distribution"].append({"@type": "cr:FileObject", "@id": "archive/extra.json", "contentUrl": "../extra.json",
                                         "sha256": "1" * 64}), "describes archive/extra.json, which releases/0004.SHA256SUMS does not list"),
    (lambda d: d["distribution"][-1]["includes"].append("benchmark/windows/2026-01-01/assignments.parquet"),
     "includes benchmark/windows/2026-01-01/assignments.parquet, which the file does not describe"),
    (lambda d: d["recordSet"][2]["field"][0]["source"].update(fileObject={"@id": "archive/benchmark/other.jsonl"}),
     "a record set reads archive/benchmark/other.jsonl, which the file does not describe"),
])
def test_check_croissant_names_each_inconsistency(history, edit, message):
    path = croissant_path(4)
    doc = json.loads((history / path).read_bytes())
    edit(doc)
    expected = {p: d for p, d in _manifest(history, 4).items() if p != path}
    found = check_croissant(path, json.dumps(doc, indent=2).encode(), expected, 4, manifest="releases/0004.SHA256SUMS")
    assert len(found) == 1 and found[0].category.value == "INVARIANT", found
    assert found[0].detail.startswith("release 4: ") and message in found[0].detail, found[0].detail


@pytest.mark.parametrize("data", [b"{not json", b"[1, 2]", b"\xff\xfe", b'{"distribution": 3}'])
def test_check_croissant_reports_a_file_that_is_not_a_croissant_document(data):
    found = check_croissant(croissant_path(2), data, {}, 2, manifest="releases/0002.SHA256SUMS")
    assert len(found) == 1 and found[0].path == croissant_path(2) and found[0].detail.startswith("release 2: not ")


# ---------------------------------------------------------------- which release may add which Croissant file
def test_a_models_release_may_add_earlier_croissant_files_and_a_roll_only_its_own():
    past, own = croissant_path(1), croissant_path(3)
    models = build(adds=[ADDS[0], {**ADDS[1], past: "b" * 64}, {**ADDS[2], own: "c" * 64}])
    assert check_history(models) == []
    rolled = build(adds=[ADDS[0], ADDS[1], {**ADDS[2], past: "b" * 64}])
    found = [f for f in check_history(rolled) if f.path == past]
    assert [f.detail for f in found] == ["release 3: added by a roll release, which may not add it"]


# ---------------------------------------------------------------- releases cut before Croissant files existed
def _without_croissants(tmp_path: Path, monkeypatch) -> Path:
    """A history cut by a rapgen that wrote no Croissant files."""
    with monkeypatch.context() as m:
        m.setattr(ops, "_stage_croissant", lambda *args: None)
        m.setattr(ops, "missing_croissants", lambda *args: [])
        return make_history(tmp_path).root


def test_a_later_models_release_adds_the_croissant_files_of_earlier_releases(tmp_path, monkeypatch):
    root = _without_croissants(tmp_path, monkeypatch)
    assert not list((root / "archive/releases").glob("*.croissant.json")) and verify_archive(root).ok
    result = run("release", "cut", "--root", str(root), "--kind", "models", "--date", "2026-01-12")
    assert result.exit_code == 0, result.output
    added = [line.removeprefix("added ") for line in result.output.splitlines()[1:]]
    assert [p for p in added if p.endswith(".croissant.json")] == [croissant_path(k) for k in (1, 2, 3, 4)]
    assert verify_archive(root).ok
    manifest4 = _manifest(root, 4)
    for k in (1, 2, 3):  # each describes its own release's files, and is listed by release 4
        doc = json.loads((root / croissant_path(k)).read_bytes())
        assert {d["@id"] for d in doc["distribution"] if "sha256" in d} == set(_manifest(root, k)) and croissant_path(k) in manifest4
    again = run("release", "cut", "--root", str(root), "--kind", "models", "--date", "2026-01-13")
    assert [line for line in again.output.splitlines() if "croissant" in line] == ["added archive/releases/0005.croissant.json"]


def test_a_roll_never_adds_earlier_croissant_files(tmp_path, monkeypatch):
    root = _without_croissants(tmp_path, monkeypatch)
    roll_release(root, make_window(tmp_path / "w2", date(2026, 1, 1)), release_date=date(2026, 7, 2))
    assert [p for p in _manifest(root, 4) if p.endswith(".croissant.json")] == [croissant_path(4)]
    assert verify_archive(root).ok


# ---------------------------------------------------------------- format 1: rapgen seal --croissant
def _format1(tmp_path: Path) -> Path:
    root = make_archive(tmp_path / "repo").root
    (root / "SHA256SUMS").unlink()
    result = run("seal", "--root", str(root), "--croissant")
    assert result.exit_code == 0, result.output
    return root


def test_seal_croissant_describes_every_file_of_a_new_archive(tmp_path):
    root = _format1(tmp_path)
    sums = read_root_sums(root)
    doc = json.loads((root / CROISSANT_1).read_bytes())
    assert {d["@id"]: d["sha256"] for d in doc["distribution"] if "sha256" in d} == {p: d for p, d in sums.items() if p != CROISSANT_1}
    assert doc["version"] == "1" and "isLiveDataset" not in doc
    assert doc["distribution"][0]["contentUrl"] == "ARCHIVE.json"  # relative to archive/
    assert verify_archive(root).ok


def test_seal_croissant_is_refused_once_the_archive_is_sealed(tmp_path):
    root = make_archive(tmp_path / "repo").root
    before = (root / "SHA256SUMS").read_bytes()
    result = run("seal", "--root", str(root), "--croissant")
    assert result.exit_code == 2 and "--croissant works only when sealing a new archive" in result.output
    assert (root / "SHA256SUMS").read_bytes() == before and not (root / CROISSANT_1).exists()


def test_a_format1_croissant_file_may_predate_later_models_but_not_misdescribe(tmp_path):
    root = _format1(tmp_path)
    folder = root / "archive/models/model-c"
    folder.mkdir()
    (folder / "model.json").write_bytes((root / "archive/models/model-b/model.json").read_bytes().replace(b"model-b", b"model-c"))
    (folder / "predictions.jsonl").write_bytes((root / "archive/models/model-b/predictions.jsonl").read_bytes())
    assert seal_archive(root).added == ("archive/models/model-c/model.json", "archive/models/model-c/predictions.jsonl")
    assert verify_archive(root).ok  # a submission merged after the file was written need not be in it
    sums = read_root_sums(root)
    old = sums["archive/benchmark/fields.jsonl"]
    data = (root / CROISSANT_1).read_bytes().replace(old.encode(), b"f" * 64)
    (root / CROISSANT_1).write_bytes(data)
    (root / "SHA256SUMS").write_bytes(format_sums({**sums, CROISSANT_1: hashlib.sha256(data).hexdigest()}))
    found = [format_finding(f) for f in verify_archive(root).errors]
    assert len(found) == 1 and found[0].startswith(f"INVARIANT {CROISSANT_1}:")
    assert found[0].endswith(f"distribution entry archive/benchmark/fields.jsonl: sha256 {'f' * 64} differs from SHA256SUMS's {old}")


def test_release_start_replaces_the_format1_file_with_release_1s(tmp_path):
    root = _format1(tmp_path)
    start_history(root, release_date=date(2025, 7, 1))
    assert not (root / CROISSANT_1).exists() and CROISSANT_1 not in read_root_sums(root)
    assert croissant_path(1) in _manifest(root, 1) and CROISSANT_1 not in _manifest(root, 1)
    assert verify_archive(root).ok


def test_a_history_with_a_format1_croissant_file_is_a_finding(history):
    data = (history / croissant_path(1)).read_bytes()
    (history / CROISSANT_1).write_bytes(data)
    sums = {**read_root_sums(history), CROISSANT_1: hashlib.sha256(data).hexdigest()}
    (history / "SHA256SUMS").write_bytes(format_sums(sums))
    details = [f.detail for f in verify_archive(history).errors if f.path == CROISSANT_1]
    assert any("belongs to a format-1 archive" in d for d in details), details


def test_a_failed_start_keeps_the_format1_file(tmp_path, monkeypatch):
    root = _format1(tmp_path)
    before = {p: (root / p).read_bytes() for p in (CROISSANT_1, "SHA256SUMS", "archive/ARCHIVE.json")}

    def refuse(root):
        def check():
            raise ops.ArchiveError("simulated failure")
        return check

    monkeypatch.setattr(ops, "_check_after", refuse)
    with pytest.raises(ops.ArchiveError, match="simulated failure"):
        start_history(root, release_date=date(2025, 7, 1))
    assert {p: (root / p).read_bytes() for p in before} == before and not (root / record_path(1)).exists()


def test_seal_croissant_leaves_no_croissant_file_when_sha256sums_cannot_be_written(tmp_path, monkeypatch):
    from rapgen.archive import seal as seal_module
    from rapgen.errors import ArchiveError

    root = make_archive(tmp_path / "repo").root
    (root / "SHA256SUMS").unlink()

    def full_disk(path, digests):
        raise ArchiveError("SHA256SUMS: cannot be written (No space left on device); nothing was changed")

    monkeypatch.setattr(seal_module, "_write", full_disk)
    result = run("seal", "--root", str(root), "--croissant")
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert not (root / CROISSANT_1).exists() and not (root / "SHA256SUMS").exists()
