"""Releases before an errata release are rebuilt from the bytes they listed (RELEASES.md, principle 2).

A history of four releases (tests/history_factory.py, then a models release) is scored and built
as release 4; an errata release then replaces model-a's predictions. Release 4 rebuilt afterwards
must be the same bytes (scores, Markdown, HTML), releases.csv's blocks 1-4 must be release 4's
own, and the errata's changed numbers must show on the Releases page.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from history_factory import make_history
from rapgen.archive import open_verified
from rapgen.archive.history.ops import Replacement, cut_release
from rapgen.archive.history.records import superseded_path
from rapgen.cli import cli
from rapgen.pipeline import run_build

RESAMPLES = 40
REPLACED = "archive/models/model-a/predictions.jsonl"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(root: Path, out: Path, release: int | None) -> None:
    run_build(root, out / "site", resamples=RESAMPLES, work_dir=out / "work", release=release)


def _mirrored(data: bytes) -> bytes:
    """Every valid unit's weights mirrored (w -> max + 1 - w): other numbers, same structure."""
    out = []
    for line in data.decode().splitlines():
        obj = json.loads(line)
        if obj.get("weights"):
            top = max(obj["weights"].values()) + 1
            obj["weights"] = {k: top - v for k, v in obj["weights"].items()}
        out.append(json.dumps(obj))
    return ("\n".join(out) + "\n").encode()


@pytest.fixture(scope="module")
def errata(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("errata")
    history = make_history(tmp)
    root = history.root
    cut_release(root, "models", release_date=date(2026, 1, 12))
    _build(root, tmp / "at4", 4)
    old = (root / REPLACED).read_bytes()
    fixed = tmp / "fixed.jsonl"
    fixed.write_bytes(_mirrored(old))
    cut_release(root, "errata", replaced=[Replacement(REPLACED, "weights were mirrored", fixed)], release_date=date(2026, 1, 13))
    assert (root / REPLACED).read_bytes() != old
    _build(root, tmp / "again4", 4)
    _build(root, tmp / "latest", None)
    return root, tmp, old


def test_release_view_reads_the_superseded_copy(errata):
    root, _, old = errata
    verified = open_verified(root)
    kept = superseded_path(5, REPLACED)
    four = verified.release(4)
    assert four.source(REPLACED) == kept and four.view.superseded == {REPLACED: kept}
    assert (root / kept).read_bytes() == old and four.read(REPLACED) == old  # the bytes verify hashed, not a copy
    assert verified.release(5).view.superseded == {}  # the errata release lists the corrected file
    assert verified.release(1).view.superseded == {REPLACED: kept}  # listed unchanged from release 1 on
    assert four.predictions("model-a") != verified.release(5).predictions("model-a")  # parsed from the old bytes


def test_release_before_errata_rebuilds_byte_for_byte(errata):
    _, tmp, _ = errata
    for part in ("work/scores", "work/docs", "site"):
        before, after = _files(tmp / "at4" / part), _files(tmp / "again4" / part)
        assert sorted(before) == sorted(after), part
        assert [name for name in before if before[name] != after[name]] == [], part


def test_score_release_cli_after_errata_matches(errata):
    root, tmp, _ = errata
    res = CliRunner().invoke(cli, ["score", "--root", str(root), "--out", str(tmp / "cli4"), "--release", "4",
                                   "--resamples", str(RESAMPLES)])
    assert res.exit_code == 0, res.output
    for name in ("leaderboard.csv", "releases.csv", "live.csv", "scores.json"):
        assert (tmp / "cli4" / name).read_bytes() == (tmp / "at4/work/scores" / name).read_bytes(), name


def test_releases_csv_keeps_each_release_block_and_shows_the_errata_changes(errata):
    _, tmp, _ = errata
    latest = (tmp / "latest/work/scores/releases.csv").read_text().splitlines()
    at4 = (tmp / "at4/work/scores/releases.csv").read_text().splitlines()
    assert [r for r in latest if not r.startswith("5,")] == at4  # blocks 1-4: each from its own files
    rel = pd.read_csv(tmp / "latest/work/scores/releases.csv")
    key = ["track", "split", "policy", "entry", "condition", "metric"]
    both = rel[rel["release"] == 4].merge(rel[rel["release"] == 5], on=key, suffixes=("_4", "_5"))
    changed = both[(both["estimate_4"] != both["estimate_5"]) & both["estimate_4"].notna()]
    assert len(changed) and set(changed["entry"]) == {"model-a"}  # only the replaced file's model moved
    page = (tmp / "latest/work/docs/releases.md").read_text()
    section = page[page.index("## Release 5 · "):page.index("## Release 4 · ")]
    assert "errata" in section and "weights were mirrored" in section
    assert f"**Numbers and ranks changed by this release** (" in section and "No number or rank changed" not in section
    row = changed[(changed["track"] == "all_origin") & (changed["policy"] == "canonical") & (changed["metric"] == "spearman")].iloc[0]
    assert f"<td>{row['split']}</td><td>canonical</td><td>model-a</td><td>{row['condition']}</td><td>spearman</td>" in section
