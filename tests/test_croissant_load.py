"""The Croissant files as MLCommons' own tool reads them: ``mlcroissant validate`` passes (no error,
no warning) and ``mlcroissant load --record_set assignments`` yields exactly the ledger rows the
release lists, on a tiny history, a small synthetic history and the committed sample."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from history_factory import make_history
from rapgen.archive.croissant import croissant_path
from rapgen.archive.history.load import load_history
from rapgen.archive.history.ops import cut_release
from rapgen.archive.layout import ASSIGNMENTS_PARQUET, ORIGIN_FILE_PATTERN, WINDOW_FILE_PATTERN

mlc = pytest.importorskip("mlcroissant")
REPO = Path(__file__).resolve().parent.parent
MLCROISSANT = Path(sys.executable).with_name("mlcroissant")
_WINDOW, _ORIGIN = re.compile(WINDOW_FILE_PATTERN), re.compile(ORIGIN_FILE_PATTERN)
LEDGER_COLUMNS = ("arxiv_id", "field_id", "first_submitted", "primary", "secondary", "assignment_type")


def _value(v):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if hasattr(v, "date") and callable(v.date):
        return v.date()
    return None if v is None or v != v else v


def croissant_rows(path: Path, record_set: str) -> list[tuple]:
    dataset = mlc.Dataset(str(path))
    return [tuple(_value(v) for v in r.values()) for r in dataset.records(record_set)]


def ledger_rows(root: Path, manifest: dict[str, str]) -> list[tuple]:
    """The release's ledger as DuckDB reads it: benchmark/ and every window the manifest lists."""
    files = [str(root / p) for p in sorted(manifest) if p == ASSIGNMENTS_PARQUET
             or ((m := _WINDOW.match(p)) and m.group(2) == "assignments")]
    cols = ", ".join(f'"{c}"' for c in LEDGER_COLUMNS)
    return [tuple(r) for r in duckdb.read_parquet(files).select(cols).fetchall()]


def validate(path: Path) -> None:
    dataset = mlc.Dataset(str(path))  # raises mlc.ValidationError on an error
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, issues.report()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    h = make_history(tmp_path_factory.mktemp("croissant-load"))
    cut_release(h.root, "models", release_date=date(2026, 1, 12))
    return h.root


def test_every_release_validates_and_loads_its_ledger(tiny):
    loaded = load_history(tiny, with_ledger=False)
    for k, manifest in loaded.input.manifests.items():
        path = tiny / croissant_path(k)
        validate(path)
        assert sorted(croissant_rows(path, "assignments"), key=repr) == sorted(ledger_rows(tiny, manifest), key=repr), k


def test_every_record_set_of_the_latest_release_loads(tiny):
    path = tiny / croissant_path(4)
    doc = json.loads(path.read_bytes())
    manifest = load_history(tiny, with_ledger=False).input.manifests[4]
    units = sum(len((tiny / p).read_bytes().splitlines()) for p in manifest
                if p == "archive/models/model-a/predictions.jsonl" or ((m := _ORIGIN.match(p)) and m.group(1) == "model-a"
                                                                        and m.group(3) == "predictions"))
    counts = {r["@id"]: len(croissant_rows(path, r["@id"])) for r in doc["recordSet"]}
    assert counts["predictions-model-a"] == units and counts["fields"] == counts["codebooks"] == 4
    assert counts["papers"] == len(duckdb.read_parquet([str(tiny / p) for p in manifest if p.endswith("papers.parquet")]).fetchall())
    invalid = [r for r in croissant_rows(path, "predictions-model-a") if set(r[3].values()) == {None}]
    assert [r[:3] for r in invalid] == [("gamma", date(2024, 1, 1), "A1")]  # weights null: a row without weights


def test_the_mlcroissant_command_line_validates_and_loads(tiny):
    path = str(tiny / croissant_path(4))
    done = subprocess.run([str(MLCROISSANT), "validate", "--jsonld", path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([str(MLCROISSANT), "load", "--jsonld", path, "--record_set", "assignments", "--num_records", "3"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("'assignments/arxiv_id'") == 3


def test_a_tampered_ledger_file_fails_to_load(tiny, tmp_path):
    """mlcroissant checks a FileObject's digest when it reads it: the file the fields table comes from."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(tiny, root)
    (root / "archive/benchmark/fields.jsonl").write_bytes(b"{}\n")
    with pytest.raises(Exception, match=r"Download\(archive/benchmark/fields.jsonl\)") as raised:
        croissant_rows(root / croissant_path(4), "fields")
    assert "Hash of downloaded file" in str(raised.value.__cause__)


def test_a_small_synthetic_history_validates_and_loads(tmp_path):
    from rapgen.cli.sample_cmds import synth_records
    from rapgen.sample import write_synthetic_archive

    root = tmp_path / "synth"
    write_synthetic_archive(root, "small", 1, records=synth_records, history=True)
    loaded = load_history(root, with_ledger=False)
    assert len(loaded.input.records) == 10
    for k in loaded.input.manifests:
        validate(root / croissant_path(k))
    for k in (1, 3, 10):  # the initial release, the first roll (a window joins the ledger), the errata release
        rows = croissant_rows(root / croissant_path(k), "assignments")
        assert sorted(rows, key=repr) == sorted(ledger_rows(root, loaded.input.manifests[k]), key=repr), k


def test_the_committed_sample_validates_and_loads():
    loaded = load_history(REPO, with_ledger=False)
    latest = max(loaded.input.records)
    for k in loaded.input.manifests:
        validate(REPO / croissant_path(k))
    rows = croissant_rows(REPO / croissant_path(latest), "assignments")
    assert len(rows) > 40_000 and sorted(rows, key=repr) == sorted(ledger_rows(REPO, loaded.input.manifests[latest]), key=repr)
