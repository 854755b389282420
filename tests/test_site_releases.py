"""The site's release pieces (RELEASES.md, "Outputs and site"): rapgen build --release N byte for
byte, the Releases page, the Live tab (sealed entries, the simulated label), movement markers and
partial models; a format-1 archive shows none of them."""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from factory import make_archive
from history_factory import FIRST_OPEN, add_lines, make_window, prediction_lines
from rapgen.archive import open_verified
from rapgen.archive.history.ops import cut_release, roll_release, start_history
from rapgen.archive.history.records import Commitment, commitment_path, format_commitment, reveal_path
from rapgen.cli import cli
from rapgen.pipeline import run_build
from rapgen.scores import SCORE_FILES
from rapgen.site.pages.live import partial_rows
from rapgen.site.pages.releases import movements

RESAMPLES = 40


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(root: Path, out: Path, release: int | None):
    return run_build(root, out / "site", resamples=RESAMPLES, work_dir=out / "work", release=release)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Release 1 built at release 1; then a sealed commitment (release 2, built too), the roll
    resolving the open origin (3) and the reveal (4)."""
    tmp = tmp_path_factory.mktemp("site-history")
    root = tmp / "repo"
    make_archive(root)
    start_history(root, release_date=date(2025, 7, 1), simulated=True)
    _build(root, tmp / "at1", 1)
    predictions = prediction_lines(FIRST_OPEN)
    commitment = Commitment("model-a", FIRST_OPEN, hashlib.sha256(predictions).hexdigest(), None, "rapgen 0.1")
    add_lines(root, {commitment_path(FIRST_OPEN, "model-a"): format_commitment(commitment)})
    cut_release(root, "models", release_date=date(2025, 7, 15))
    _build(root, tmp / "at2", None)
    roll_release(root, make_window(tmp / "window", FIRST_OPEN), release_date=date(2026, 1, 10))
    add_lines(root, {reveal_path("model-a", FIRST_OPEN, "predictions.jsonl"): predictions})
    cut_release(root, "models", release_date=date(2026, 1, 12))
    _build(root, tmp / "latest", None)
    return root, tmp, commitment


def test_release_1_site_byte_for_byte_after_later_releases(history):
    root, tmp, _ = history
    _build(root, tmp / "again1", 1)
    for part in ("work/docs", "site"):
        before, after = _files(tmp / "at1" / part), _files(tmp / "again1" / part)
        assert sorted(before) == sorted(after), part
        changed = [name for name in before if before[name] != after[name]]
        assert changed == [], f"{part}: {changed}"
    # the later release's site is a different one (more releases listed)
    assert _files(tmp / "latest" / "work/docs")["releases.md"] != _files(tmp / "at1" / "work/docs")["releases.md"]


def test_the_site_names_the_origins_of_the_release_it_shows(history):
    """Release 1 resolved origins.json's five origins (strict 2025-01-01); the roll (release 3)
    resolved FIRST_OPEN too and made it the strict origin. Each site names its own release's."""
    _, tmp, _ = history
    first = ["2023-01-01", "2023-07-01", "2024-01-01", "2024-07-01", "2025-01-01"]
    for build, origins, strict in (("at1", first, "2025-01-01"), ("latest", first + [FIRST_OPEN.isoformat()], FIRST_OPEN.isoformat())):
        docs = tmp / build / "work/docs"
        board, home = (docs / "leaderboard.md").read_text(), (docs / "index.md").read_text()
        assert f"**All-Origin** averages every origin ({', '.join(origins)})." in board, build
        assert f"**Forecast-Strict** uses only the {strict} origin" in board, build
        assert f"{', '.join(origins)} (strict: {strict})" in home, build
        model = (docs / "models/model-a.md").read_text()
        assert f"(no known cutoff before {strict})" in model or f"is before {strict})" in model, build
        chart = re.search(r'"x":\s*\[([^\]]*)\]', model)
        assert chart and [o.strip('" ') for o in chart.group(1).split(",")] == origins, build  # Scores by origin


def test_releases_page_lists_each_release_with_its_manifest(history):
    root, tmp, _ = history
    page = (tmp / "latest" / "work/docs/releases.md").read_text()
    for n, kind in ((1, "initial"), (2, "models"), (3, "roll"), (4, "models")):
        assert f"## Release {n} · " in page and f"· {kind} {{ #release-{n} }}" in page
    sums = (root / "archive/releases/0003.SHA256SUMS").read_bytes()
    assert hashlib.sha256(sums).hexdigest() in page
    assert "Rank across releases" in page and "rap-chart" in page
    assert "downloads/releases.csv" in page and (tmp / "latest/work/docs/downloads/releases.csv").is_file()
    # release 1's own site lists release 1 only
    first = (tmp / "at1" / "work/docs/releases.md").read_text()
    assert "## Release 1 · " in first and "## Release 2 · " not in first
    config = (tmp / "latest/work/mkdocs.generated.yml").read_text()
    assert "Releases: releases.md" in config


def test_live_tab_shows_sealed_entry_as_digest_and_says_simulated(history):
    _, tmp, commitment = history
    board = (tmp / "at2" / "work/docs/leaderboard.md").read_text()
    assert "Live · Test" in board and "Live · Dev" in board
    assert board.count("<strong>Simulated.</strong>") == 2  # one per Live panel (Test, Dev)
    assert "Sealed entries" in board
    root = tmp / "repo"
    digest = open_verified(root).digests[commitment_path(FIRST_OPEN, "model-a")]
    assert f"<code>{digest}</code>" in board  # the commitment's digest, not the (unrevealed) files
    assert commitment.predictions_sha256 not in board
    assert "2025-07-15" in board  # the receipt date: release 2's date
    submit = (tmp / "at2" / "work/docs/submit.md").read_text()
    assert f"## The open origin: {FIRST_OPEN.isoformat()}" in submit and "<strong>Simulated.</strong>" in submit


def test_format_1_archive_has_no_release_pieces(tmp_path):
    root = tmp_path / "repo"
    make_archive(root)
    _build(root, tmp_path / "out", None)
    docs = tmp_path / "out/work/docs"
    assert not (docs / "releases.md").exists()
    board = (docs / "leaderboard.md").read_text()
    assert "Live ·" not in board and "▲" not in board and "▼" not in board and "Simulated" not in board
    assert "open origin" not in (docs / "submit.md").read_text()
    assert "Releases" not in (tmp_path / "out/work/mkdocs.generated.yml").read_text()


def test_build_release_unknown_is_a_usage_error(history):
    root, tmp, _ = history
    res = CliRunner().invoke(cli, ["build", "--root", str(root), "--release", "9", "--work-dir", str(tmp / "w9"),
                                   "--site-dir", str(tmp / "s9"), "--resamples", "5"])
    assert res.exit_code == 2, res.output
    assert "9" in res.output and "Traceback" not in res.output
    assert not (tmp / "s9").exists()


def _releases(rows: list[tuple]) -> pd.DataFrame:
    cols = SCORE_FILES["releases.csv"]
    full = [(n, f"2025-0{n}-01", "all_origin", "test", "canonical", e, "A3", "spearman", est, est - .1, est + .1, rank)
            for n, e, est, rank in rows]
    return pd.DataFrame(full, columns=list(cols))


@pytest.mark.parametrize("rows, current, expected", [
    # rank 2 -> 1 is a move up, 1 -> 2 down, unchanged nothing, new entry nothing
    ([(1, "a", .3, 2), (1, "b", .5, 1), (2, "a", .6, 1), (2, "b", .4, 2), (2, "c", .1, 3)], 2, {"a": "▲", "b": "▼"}),
    ([(1, "a", .3, 1), (2, "a", .3, 1)], 2, {}),
    ([(1, "a", .3, 1)], 1, {}),  # the first release has nothing to move from
    ([(1, "a", .3, 3), (2, "a", .3, 2), (3, "a", .3, 2)], 3, {}),  # only the previous release counts
])
def test_movement_markers(rows, current, expected):
    got = movements(_releases(rows), current, "all_origin", "test")
    assert {e: arrow for e, (arrow, _) in got.items()} == expected
    for e, (_, title) in got.items():
        assert f"release {current - 1}" in title


class _Out:
    def __init__(self, releases, meta):
        self.releases, self.scores_json = releases, {"release": meta}


def test_partial_model_listed_unranked_with_last_complete_row():
    rel = _releases([(1, "p", .42, 1), (2, "q", .5, 1)])
    meta = {"number": 2, "partial": {"p": {"A3": {"origins": 1, "of": 2, "last_complete_release": 1}},
                                     "q": {"A2": {"origins": 1, "of": 2, "last_complete_release": None}}}}
    rows = partial_rows(_Out(rel, meta), "test", {"p": "Model P"})
    assert len(rows) == 1  # q is partial only in A2, a column the leaderboard does not show
    r = rows[0]
    assert r.partial_label == "partial (1 of 2 origins)" and r.name == "Model P"
    assert r.cells["A3"].value == pytest.approx(.42) and r.cells["A3"].rank is None  # unranked
    assert r.cells["A0"].value is None and "row from release 1" in r.validity_title


def test_release_headline_orders_by_expanding_estimate_zero_included():
    from rapgen.site.pages.releases import _headline

    rows = [{"split": "test", "entry": e, "condition": "A3", "estimate": v, "ci_low": None, "ci_high": None, "rank": 1}
            for e, v in (("a", 0.0), ("b", -0.5), ("c", None), ("d", 0.3))]
    assert [r[0] for r in _headline(rows, "test").rows] == ["d", "a", "b", "c"]


def _live_panel(board: str, split: str = "Test") -> str:
    start = board.index(f"Live · {split}</h2>")
    return board[start:board.index("</div>", start)]


def _build_from(root: Path, scores: Path, out: Path) -> CliRunner:
    return CliRunner().invoke(cli, ["build", "--root", str(root), "--scores", str(scores), "--work-dir", str(out / "work"),
                                    "--site-dir", str(out / "site")])


def test_live_panel_shows_live_csv_rows_with_their_origin_set(history):
    root, tmp, _ = history
    scores = tmp / "live-scores"
    shutil.copytree(tmp / "latest/work/scores", scores)
    live = pd.read_csv(scores / "live.csv", dtype={"origins": str})
    head = (live["split"] == "test") & (live["policy"] == "canonical") & (live["metric"] == "spearman")
    model = head & (live["entry"] == "model-a") & (live["condition"] == "A3")
    assert model.sum() == 1 and live.loc[model, "origins"].item() == FIRST_OPEN.isoformat()
    # numbers only live.csv holds: the panel must show these, whatever releases.csv says
    live.loc[model, ["estimate", "ci_low", "ci_high", "rank"]] = [0.8125, 0.6875, 0.9375, 4]
    ewma = head & (live["entry"] == "ewma")
    live.loc[ewma, ["estimate", "ci_low", "ci_high"]] = [-0.5625, -0.75, -0.375]
    live.to_csv(scores / "live.csv", index=False)
    rel = pd.read_csv(scores / "releases.csv")
    rel[rel["track"] != "live"].to_csv(scores / "releases.csv", index=False)
    res = _build_from(root, scores, tmp / "from-live")
    assert res.exit_code == 0, res.output
    panel = _live_panel((tmp / "from-live/work/docs/leaderboard.md").read_text())
    assert "0.812" in panel and "[0.688, 0.938]" in panel and "rank 4" in panel
    assert f'title="on-time origins: {FIRST_OPEN.isoformat()}"' in panel and ">1/1</td>" in panel
    assert "On-time origins" in panel and "Live origins" in panel
    assert "-0.562" in panel  # the baselines' own rows over every live origin, from live.csv too
    assert "Sealed entries" not in panel  # the reveal resolved model-a's commitment


def test_live_panel_refuses_live_csv_without_a_declared_column(history):
    root, tmp, _ = history
    scores = tmp / "bad-live-scores"
    shutil.copytree(tmp / "latest/work/scores", scores)
    live = pd.read_csv(scores / "live.csv")
    live.drop(columns=["origins"]).to_csv(scores / "live.csv", index=False)
    res = _build_from(root, scores, tmp / "bad-live")
    assert res.exit_code == 1, res.output
    assert f"{scores / 'live.csv'}: line 1: missing column 'origins'" in res.output and "Traceback" not in res.output
    (scores / "live.csv").unlink()
    res = _build_from(root, scores, tmp / "no-live")
    assert res.exit_code == 1 and "live.csv: missing" in res.output, res.output


def test_live_rows_grouped_by_origin_set():
    from rapgen.site.pages.live import _baselines, _rows

    cols = SCORE_FILES["live.csv"]
    def row(entry, kind, cond, origins, est, rank):
        return ("test", "canonical", entry, kind, cond, "spearman", origins, len(origins.split()), est, est - .1, est + .1, 3, rank)
    two, one = "2025-01-01 2025-07-01", "2025-07-01"
    live = pd.DataFrame([row("m1", "model", "A3", one, .9, 1), row("m2", "model", "A3", two, .2, 1),
                         row("m3", "model", "A3", two, .4, 1), row("ewma", "baseline", "BASE", two, .1, 2),
                         row("ewma", "baseline", "BASE", one, .3, 2),
                         ("test", "tv", "m1", "model", "A3", "spearman", one, 1, .0, .0, .0, 3, 1)], columns=list(cols))
    base, n_live = _baselines(live, "test")
    assert n_live == 2 and [(b.entry, b.cells["BASE"].value) for b in base] == [("ewma", .1)]
    rows = _rows(live, "test", n_live, {"m1": "Model 1"}, "leaderboard.md")
    # the full origin set first, then by Expanding estimate; ranks are those of each set
    assert [(r.entry, r.n_valid, r.n_expected) for r in rows] == [("m3", 2, 2), ("m2", 2, 2), ("m1", 1, 2)]
    assert rows[2].name == "Model 1" and rows[2].cells["A3"].value == .9 and rows[2].validity_title == f"on-time origins: {one}"
    assert rows[0].cells["A0"].value is None
