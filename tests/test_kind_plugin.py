"""A benchmark kind is a plug-in: the toy kind of ``tests/toy_kind/`` verifies, scores and renders
through the engine (``verify_archive``, the release view, the CLI, ``render_release``) with no line
of rapgen naming it; an archive whose ``format`` no kind reads is one clear finding."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import rapgen.kinds
import toy_kind
from rapgen.archive import Category, verify_archive
from rapgen.cli import cli
from rapgen.errors import RapgenError
from rapgen.kinds import Registry, registry
from rapgen.site import render_release

REPO = Path(__file__).resolve().parent.parent
ITEMS = {"q1": "a", "q2": "b", "q3": "c", "q4": "d"}
ANSWERS = {"always-a": {q: "a" for q in ITEMS}, "oracle": dict(ITEMS)}


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def make_toy(root: Path, fmt: str = "toy-archive") -> Path:
    _write(root, "archive/ARCHIVE.json", json.dumps({"format": fmt, "format_version": 1, "name": "Toy quiz",
                                                     "created": "2026-01-01", "synthetic": True}))
    _write(root, toy_kind.ITEMS, "".join(json.dumps({"item_id": q, "answer": a}) + "\n" for q, a in ITEMS.items()))
    for model, answers in ANSWERS.items():
        _write(root, f"archive/models/{model}/model.json", json.dumps({"model_id": model, "display_name": model}))
        _write(root, f"archive/models/{model}/predictions.jsonl",
               "".join(json.dumps({"item_id": q, "answer": a}) + "\n" for q, a in answers.items()))
    return seal(root)


def seal(root: Path) -> Path:
    files = sorted(p.relative_to(root).as_posix() for p in (root / "archive").rglob("*") if p.is_file())
    (root / "SHA256SUMS").write_text("".join(f"{hashlib.sha256((root / p).read_bytes()).hexdigest()}  {p}\n" for p in files))
    return root


@pytest.fixture
def kinds(monkeypatch) -> Registry:
    """The shipped kinds plus the toy one, as every command sees them."""
    with_toy = registry().plus(toy_kind.KIND)
    monkeypatch.setattr(rapgen.kinds, "registry", lambda: with_toy)
    return with_toy


def test_the_registry_finds_rap_and_refuses_a_second_name_or_format():
    shipped = registry()
    assert list(shipped) == sorted(shipped) and {"ideas", "rap"} <= set(shipped)  # name order; other kinds may be installed
    assert shipped.for_format("rap-archive").name == "rap" and shipped.for_format("ideas-archive").name == "ideas"
    assert shipped.for_format("inspire-archive").name == "inspire"
    with pytest.raises(RapgenError, match="two benchmark kinds are named 'toy'"):
        shipped.plus(toy_kind.KIND, toy_kind.KIND)
    from dataclasses import replace

    with pytest.raises(RapgenError, match="kinds 'rap' and 'toy2' both read format 'rap-archive'"):
        shipped.plus(replace(toy_kind.KIND, name="toy2", archive=replace(toy_kind.KIND.archive, format="rap-archive")))


def test_the_toy_kind_verifies_scores_and_renders(tmp_path, kinds):
    root = make_toy(tmp_path / "toy")
    report = verify_archive(root, kinds=kinds.formats)
    assert report.ok, report.findings
    verified = report.verified
    assert verified.format == "toy-archive" and verified.info["name"] == "Toy quiz"
    release = verified.release()
    assert isinstance(release, toy_kind.ToyRelease) and release.number == 1 and release.implicit
    assert release.manifest_sha256 == hashlib.sha256((root / "SHA256SUMS").read_bytes()).hexdigest()
    kind = kinds.for_format(verified.format)
    rows = kind.score(release, resamples=200)
    by_model = {r["entry"]: r for r in rows}
    assert by_model["oracle"]["estimate"] == 1.0 and by_model["always-a"]["estimate"] == 0.25
    assert by_model["always-a"]["ci_low"] <= 0.25 <= by_model["always-a"]["ci_high"] and by_model["oracle"]["ci_low"] == 1.0
    kind.write_scores(rows, tmp_path / "scores")
    rendered = render_release(kind.site, release, tmp_path / "scores", tmp_path / "docs")
    page = (tmp_path / "docs" / "index.md").read_text()
    assert rendered.pages == ("index.md",) and rendered.synthetic
    assert "# Toy quiz" in page and "| always-a | 0.250 |" in page and "| oracle | 1.000 | [1.000, 1.000] |" in page


def test_the_commands_run_the_toy_kind(tmp_path, kinds):
    root = make_toy(tmp_path / "toy")
    run = CliRunner().invoke
    verified = run(cli, ["verify", "--root", str(root)])
    assert verified.exit_code == 0 and verified.output.startswith("OK:"), verified.output
    scored = run(cli, ["score", "--root", str(root), "--out", str(tmp_path / "scores"), "--resamples", "50"])
    assert scored.exit_code == 0, scored.output
    assert json.loads((tmp_path / "scores" / "leaderboard.json").read_text())[1]["entry"] == "oracle"
    rendered = run(cli, ["render", "--root", str(root), "--scores", str(tmp_path / "scores"), "--out", str(tmp_path / "docs")])
    assert rendered.exit_code == 0, rendered.output
    assert "| oracle | 1.000 |" in (tmp_path / "docs" / "index.md").read_text()
    # a toy archive that breaks its own rule is the toy check's finding, through the same command
    (root / toy_kind.ITEMS).write_text((root / toy_kind.ITEMS).read_text() + json.dumps({"item_id": "q5", "answer": "e"}) + "\n")
    seal(root)  # a new item, which no model answered
    broken = run(cli, ["verify", "--root", str(root)])
    assert broken.exit_code == 1 and "INVARIANT archive/models/always-a/predictions.jsonl: a model answers every item exactly once" in broken.output


def test_an_unknown_format_is_one_finding_and_the_structure_is_not_evaluated(tmp_path):
    root = make_toy(tmp_path / "toy")  # the shipped kinds do not read toy-archive
    known = ", ".join(sorted(registry().formats))
    report = verify_archive(root, kinds=registry().formats)
    assert not report.ok and report.verified is None
    assert [(f.category, f.path, f.detail) for f in report.errors] == [
        (Category.NOT_EVALUATED, "archive", "structural checks not run: no benchmark kind reads format 'toy-archive'"),
        (Category.INVARIANT, "archive/ARCHIVE.json", f"unknown archive format 'toy-archive'; this rapgen reads {known}"),
    ]
    result = CliRunner().invoke(cli, ["verify", "--root", str(root)])
    assert result.exit_code == 1
    assert f"INVARIANT archive/ARCHIVE.json: unknown archive format 'toy-archive'; this rapgen reads {known}" in result.output
    assert "NOT-EVALUATED archive: structural checks not run" in result.output


def test_no_line_of_rapgen_names_the_toy_kind():
    package = REPO / "generator" / "rapgen"
    assert not [p for p in package.rglob("*.py") if "toy" in p.read_text(encoding="utf-8").lower()]
