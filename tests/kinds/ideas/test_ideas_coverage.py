"""A model that never forecast a newly resolved cutoff, and the way back: through the command line on a copy
of the committed sample (its history of 14 releases) rolled once more, as docs/ideas.md's block does: release 15
resolves 2025-04-01, which neither model forecast.

- Both models are *partial* (9 of 10 cutoffs): no row and no rank in All cutoffs and Forecast-Strict, listed in
  scores.json with the missing cutoff and release 14's row (the same numbers ``score --release 14`` gives);
  their 2025-04-01 units are ``no_forecast`` (undefined, never a zero).
- recent-titles adds its 2025-04-01 forecasts (seal, models release): still partial, now *awaiting evaluation*.
- ``rapgen evaluate`` writes that cutoff's evaluator files beside its predictions (origins/2025-04-01/), leaves
  the released ones alone and names the next commands; verify reports the files unlisted until ``seal``; a
  models release lists them; the history verifies and recent-titles is ranked on all 120 episodes.
- The pages show the partial entry dimmed, unranked, with its last complete release's row.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.cli.common import open_release
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.writers import papers_bytes
from rapgen.kinds.ideas.sample.models import recent_titles

REPO = Path(__file__).resolve().parents[3]
TITLES = ("Retrieval-augmented generation with long contexts", "Large language model agents for tool use",
          "Chain-of-thought reasoning in small models", "Machine translation of low-resource languages")
NEW = "2025-04-01"
LATER = f"archive/models/recent-titles/origins/{NEW}"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def ok(*args: str):
    result = run(*args)
    assert result.exit_code == 0, (args, result.output)
    return result


def score(root: Path, out: Path, *extra: str) -> dict:
    ok("score", "--root", str(root), "--out", str(out), "--resamples", "100", *extra)
    return json.loads((out / "scores.json").read_text())


def rows(folder: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((folder / "leaderboard.csv").read_text())))


@pytest.fixture(scope="module")
def rolled(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("ideas-coverage")
    root = tmp / "ideas"
    shutil.copytree(REPO / "benchmarks/ideas", root)
    papers = [Paper(f"2507.{i:05d}", t, "An abstract.", (), date(2025, 7, 1 + i)) for i, t in enumerate(TITLES * 3)]
    (tmp / "july.parquet").write_bytes(papers_bytes(papers))
    ok("release", "window", "--root", str(root), "--papers", str(tmp / "july.parquet"), "--month", "2025-07-01", "--out", str(tmp / "w07"))
    ok("release", "roll", "--root", str(root), "--window", str(tmp / "w07"), "--date", "2025-08-01")
    return root


def copy_of(root: Path, tmp_path: Path) -> Path:
    out = tmp_path / "ideas"
    shutil.copytree(root, out)
    return out


def later_forecasts(root: Path) -> bytes:
    """recent-titles' ideas for the episodes of 2025-04-01, made as the sample makes them."""
    _, release = open_release(root)
    a = release.archive
    lines = []
    for e in (e for e in a.pools.episodes if e.cutoff.isoformat() == NEW):
        history = sorted((a.papers[p] for p in a.pools.history[e.episode_id]), key=lambda p: (p.first_submitted, p.arxiv_id))
        lines += recent_titles(e.episode_id, history)
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_model_missing_a_resolved_cutoff_is_partial_with_its_last_complete_row(rolled, tmp_path):
    meta = score(rolled, tmp_path / "now")
    assert not [r for r in rows(tmp_path / "now") if r["track"] in ("all_cutoff", "forecast_strict")]
    partial = {(p["track"], p["judge"], p["entry"]): p for p in meta["partial"]}
    assert len(partial) == 8  # two tracks x two judges x two models
    p = partial[("all_cutoff", "lexical-a", "recent-titles")]
    assert (p["cutoffs"], p["evaluated"], p["of"], p["missing"], p["awaiting"]) == (9, 9, 10, [NEW], [])
    assert p["last_complete_release"] == 14
    assert partial[("forecast_strict", "lexical-a", "rising-terms")]["of"] == 4
    before = score(rolled, tmp_path / "r1", "--release", "14")
    assert "partial" in before and before["partial"] == []
    then = {(r["gate"], r["metric"]): r for r in rows(tmp_path / "r1")
            if (r["track"], r["judge"], r["entry"]) == ("all_cutoff", "lexical-a", "recent-titles")}
    for r in p["rows"]:
        assert (r["estimate"], r["ci_low"], r["ci_high"]) == tuple(float(then[(r["gate"], r["metric"])][k]) for k in ("estimate", "ci_low", "ci_high"))
    units = pq.read_table(tmp_path / "now" / "units.parquet").to_pylist()
    missing = [u for u in units if str(u["cutoff"]) == NEW]
    assert missing and {u["status"] for u in missing} == {"no_forecast"} and all(u["hit@5"] is None for u in missing)
    assert {u["status"] for u in units if str(u["cutoff"]) != NEW} <= {"ok", "empty"}
    evaluation = json.loads((tmp_path / "now" / "diagnostics.json").read_text())["evaluation"]
    assert {r["n_episodes"] for r in evaluation} == {108}  # the forecast episodes, not the 120 resolved


def test_forecasts_then_evaluate_then_a_models_release_make_it_complete(rolled, tmp_path):
    root = copy_of(rolled, tmp_path)
    forecasts = later_forecasts(root)
    (root / LATER).mkdir(parents=True)
    (root / LATER / "predictions.jsonl").write_bytes(forecasts)
    assert "Appended 1 lines" in ok("seal", "--root", str(root)).output
    ok("release", "cut", "--root", str(root), "--kind", "models", "--date", "2025-08-05")
    meta = score(root, tmp_path / "s3")
    p = next(x for x in meta["partial"] if (x["track"], x["judge"], x["entry"]) == ("all_cutoff", "lexical-a", "recent-titles"))
    assert (p["cutoffs"], p["evaluated"], p["missing"], p["awaiting"]) == (10, 9, [], [NEW])
    units = pq.read_table(tmp_path / "s3" / "units.parquet").to_pylist()
    assert {u["status"] for u in units if u["entry"] == "recent-titles" and str(u["cutoff"]) == NEW} == {"awaiting"}

    released = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "archive/models/recent-titles").rglob("*") if p.is_file()}
    done = ok("evaluate", "--root", str(root), "--model", "recent-titles", "--judge", "lexical-a", "--judge", "lexical-b")
    assert "Wrote 5 files" in done.output and "5 already up to date" in done.output
    assert f"rapgen seal --root {root}" in done.output and f"rapgen release cut --root {root} --kind models" in done.output
    for path, data in released.items():
        assert (root / path).read_bytes() == data, path  # released files untouched
    written = sorted(p.relative_to(root).as_posix() for p in (root / LATER).rglob("*.parquet"))
    assert written == [f"{LATER}/eval/{j}/{n}.parquet" for j in ("lexical-a", "lexical-b") for n in ("candidates", "judgments")] \
        + [f"{LATER}/features.parquet"]
    unlisted = run("verify", "--root", str(root))
    assert unlisted.exit_code == 1 and unlisted.output.count(f"UNLISTED {LATER}/") == 5
    assert "Appended 5 lines" in ok("seal", "--root", str(root)).output
    ok("release", "cut", "--root", str(root), "--kind", "models", "--date", "2025-08-06")
    assert "history of 17 releases holds" in ok("release", "verify", "--root", str(root)).output

    meta = score(root, tmp_path / "s4")
    assert {x["entry"] for x in meta["partial"]} == {"rising-terms"}
    head = [r for r in rows(tmp_path / "s4") if (r["track"], r["judge"], r["gate"], r["metric"]) == ("all_cutoff", "lexical-a", "default", "hit@5")]
    assert [(r["entry"], r["rank"], r["n_items"]) for r in head] == [("recent-titles", "1", "120")]
    again = run("evaluate", "--root", str(root), "--model", "recent-titles", "--judge", "lexical-a", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["written"] == [] and json.loads(again.stdout)["next"] == []

    site, work = tmp_path / "site", tmp_path / "work"
    ok("build", "--root", str(root), "--site-dir", str(site), "--work-dir", str(work), "--resamples", "100")
    html = (site / "leaderboard/index.html").read_text(encoding="utf-8")
    table = html.split('id="lb-all_cutoff-lexical-a-default"', 1)[1].split("</table>", 1)[0]
    dim = table.split('class="rap-dim"', 1)[1]
    assert "Rising terms" in dim and "partial (9 of 10 cutoffs)" in dim and f"no forecast for {NEW}" in dim
    assert "row from release 14, unranked" in dim and "rank" not in dim.split("</tr>", 1)[0].replace("unranked", "")
    releases = (site / "releases/index.html").read_text(encoding="utf-8")
    assert "Partial entries in release 17" in releases and "Rising terms" in releases.split("Partial entries in release 17", 2)[-1]
    assert "部分覆盖" in (site / "zh/leaderboard/index.html").read_text(encoding="utf-8")


def test_an_unresolved_cutoff_is_left_for_later_and_a_bad_forecast_stops_before_writing(rolled, tmp_path):
    root = copy_of(rolled, tmp_path)
    folder = root / "archive/models/recent-titles/origins/2025-08-01"
    folder.mkdir(parents=True)
    episodes = [json.loads(x)["episode_id"] for x in (root / "archive/benchmark/cutoffs/2025-08-01/episodes.jsonl").read_text().splitlines()]
    (folder / "predictions.jsonl").write_text("".join(json.dumps({"episode_id": e, "condition": "direct", "rank": None, "status": "empty"}) + "\n"
                                                      for e in episodes))
    ok("seal", "--root", str(root))
    done = ok("evaluate", "--root", str(root), "--model", "recent-titles", "--judge", "lexical-a", "--json")
    summary = json.loads(done.stdout)
    # the resolved cutoffs' groups (all evaluated already), not 2025-08-01, which is still open
    assert summary["cutoff_groups"][0] == "predictions.jsonl" and "origins/2025-08-01" not in summary["cutoff_groups"]
    assert len(summary["cutoff_groups"]) == 7 and summary["written"] == []
    assert not (folder / "eval").exists()
