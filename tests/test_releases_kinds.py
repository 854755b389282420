"""Release histories of the Ideas and Inspire benchmarks, through the CLI on copies of the samples.

Ideas: the committed sample is a history of 14 releases (2025-07-01 open); a monthly roll of
a copy (the month's window in, cutoff M − 3 resolved, M + 1 opened), a models release, and
``score --release N`` as a view. Inspire: start and an errata cut; a roll is refused.
Adversarial: a broken hash chain, a commitment revealed early, an evaluator folder
judged against a cutoff not yet resolved — each exit 1 naming the file and the problem.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.archive import format_sums, read_root_sums, sha256_bytes
from rapgen.cli import cli
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.writers import papers_bytes

REPO = Path(__file__).resolve().parent.parent
TITLES = ("Retrieval-augmented generation with long contexts", "Large language model agents for tool use",
          "Chain-of-thought reasoning in small models", "Machine translation of low-resource languages")


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def reseal(root: Path, path: str | None = None, data: bytes | None = None) -> None:
    """Write ``data`` at ``path`` (if given) and re-seal SHA256SUMS, as a tamperer would."""
    if path is not None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    sums = read_root_sums(root)
    if path is not None:
        sums[path] = sha256_bytes(data)
    (root / "SHA256SUMS").write_bytes(format_sums(sums))


@pytest.fixture(scope="module")
def ideas_rolled(tmp_path_factory) -> Path:
    """The Ideas sample (14 releases, 2025-07-01 open) rolled once more (release 15), with July papers made up."""
    tmp = tmp_path_factory.mktemp("ideas")
    root = tmp / "ideas"
    shutil.copytree(REPO / "benchmarks/ideas", root)
    listing = run("release", "list", "--root", str(root)).output
    assert re.search(r"^  14 2025-07-15 models   resolved 2025-03-01 open 2025-07-01 until 2025-07-15 ", listing, re.M), listing
    papers = [Paper(f"2507.{i:05d}", t, "An abstract.", (), date(2025, 7, 1 + i)) for i, t in enumerate(TITLES * 3)]
    (tmp / "july.parquet").write_bytes(papers_bytes(papers))
    done = run("release", "window", "--root", str(root), "--papers", str(tmp / "july.parquet"), "--month", "2025-07-01",
               "--out", str(tmp / "w07"))
    assert done.exit_code == 0, done.output
    done = run("release", "roll", "--root", str(root), "--window", str(tmp / "w07"), "--date", "2025-08-01")
    assert done.exit_code == 0, done.output
    return root


def copy_of(root: Path, tmp_path: Path) -> Path:
    out = tmp_path / root.name
    shutil.copytree(root, out)
    return out


def test_an_ideas_roll_resolves_m_minus_3_and_opens_m_plus_1(ideas_rolled):
    record = json.loads((ideas_rolled / "archive/releases/0015.json").read_text())
    assert record["kind"] == "roll" and record["resolved_origins"][-1] == "2025-04-01"
    assert record["open_origin"] == {"origin": "2025-08-01", "closes": "2025-08-15"}
    manifest = (ideas_rolled / "archive/releases/0015.SHA256SUMS").read_text()
    for path in ("benchmark/windows/2025-07-01/papers.parquet", "benchmark/cutoffs/2025-04-01/futures.jsonl",
                 "benchmark/cutoffs/2025-08-01/episodes.jsonl"):
        assert f"archive/{path}" in manifest
    done = run("release", "verify", "--root", str(ideas_rolled))
    assert done.exit_code == 0 and "history of 15 releases holds" in done.output, done.output


def test_score_release_n_is_a_view_of_that_release(ideas_rolled, tmp_path):
    for n, last in ((1, "2024-09-01"), (14, "2025-03-01"), (15, "2025-04-01")):
        done = run("score", "--root", str(ideas_rolled), "--release", str(n), "--out", str(tmp_path / f"s{n}"), "--resamples", "50")
        assert done.exit_code == 0, done.output
        meta = json.loads((tmp_path / f"s{n}/scores.json").read_text())
        assert meta["release"]["number"] == n and meta["counts"]["resolved_cutoffs"][-1] == last


def test_a_broken_hash_chain_is_named(ideas_rolled, tmp_path):
    root = copy_of(ideas_rolled, tmp_path)
    path = "archive/releases/0015.json"
    record = json.loads((root / path).read_text())
    record["parent_sha256"] = "0" * 64
    reseal(root, path, (json.dumps(record, indent=2) + "\n").encode())
    done = run("release", "verify", "--root", str(root))
    assert done.exit_code == 1
    assert re.search(r"^INVARIANT archive/releases/0015\.json: release 15: parent_sha256 does not match releases/0014\.SHA256SUMS", done.output, re.M), done.output
    assert "Traceback" not in done.output


def test_a_roll_with_a_paper_outside_its_month_writes_nothing(ideas_rolled, tmp_path):
    root = copy_of(ideas_rolled, tmp_path)
    before = (root / "SHA256SUMS").read_bytes()
    bad = tmp_path / "w08"
    bad.mkdir()
    done = run("release", "window", "--root", str(root), "--papers", str(root / "archive/benchmark/windows/2025-07-01/papers.parquet"),
               "--month", "2025-07-01", "--out", str(bad))
    assert done.exit_code == 0, done.output
    done = run("release", "roll", "--root", str(root), "--window", str(bad), "--date", "2025-09-01")
    assert done.exit_code == 2 and "outside the window [2025-08-01, 2025-09-01)" in done.output, done.output
    assert (root / "SHA256SUMS").read_bytes() == before
    assert not list(root.glob(".rapgen-release-*"))


def test_an_evaluation_against_a_cutoff_not_yet_resolved_is_named(ideas_rolled, tmp_path):
    root = copy_of(ideas_rolled, tmp_path)
    model = "archive/models/recent-titles"
    src = root / model / "eval/lexical-a/judgments.parquet"
    path = f"{model}/origins/2025-05-01/eval/lexical-a/judgments.parquet"
    reseal(root, path, src.read_bytes())
    done = run("release", "verify", "--root", str(root))
    assert done.exit_code == 1
    assert re.search(re.escape(path) + r": .*judged against cutoff 2025-05-01, unreleased .* which does not resolve it", done.output), done.output


def test_a_commitment_revealed_before_its_cutoff_resolves_is_named(ideas_rolled, tmp_path):
    root = copy_of(ideas_rolled, tmp_path)
    episodes = [json.loads(line)["episode_id"] for line in (root / "archive/benchmark/cutoffs/2025-08-01/episodes.jsonl").read_text().splitlines()]
    preds = "".join(json.dumps({"episode_id": e, "condition": "direct", "rank": None, "status": "empty"}) + "\n" for e in episodes).encode()
    commitment = {"model_id": "recent-titles", "origin": "2025-08-01",
                  "files": {"predictions.jsonl": sha256_bytes(preds), "traces.jsonl": None}, "kit": "rapgen test"}
    reseal(root, "archive/commitments/2025-08-01/recent-titles.json", (json.dumps(commitment, indent=2) + "\n").encode())
    done = run("release", "cut", "--root", str(root), "--kind", "models", "--date", "2025-08-10")
    assert done.exit_code == 0, done.output
    reseal(root, "archive/models/recent-titles/origins/2025-08-01/predictions.jsonl", preds)
    done = run("release", "cut", "--root", str(root), "--kind", "models", "--date", "2025-08-20")
    assert done.exit_code == 1, done.output
    assert "reveals a sealed entry for 2025-08-01 before the origin is resolved" in done.output, done.output
    assert not (root / "archive/releases/0017.json").exists()
    live = run("release", "live", "--root", str(root))
    assert "2025-08-01 recent-titles" in live.output and "on time" in live.output, live.output


@pytest.fixture(scope="module")
def inspire_started(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inspire") / "inspire"
    shutil.copytree(REPO / "benchmarks/inspire", root)
    done = run("release", "start", "--root", str(root), "--date", "2025-07-01")
    assert done.exit_code == 0 and "release 1 (initial, 2025-07-01): no time key" in done.output, done.output
    return root


def test_inspire_has_no_rolls(inspire_started, tmp_path):
    done = run("release", "roll", "--root", str(inspire_started), "--window", str(tmp_path))
    assert done.exit_code == 2
    assert "the inspire benchmark has none: its releases are initial, models and errata" in done.output, done.output


def test_inspire_errata_and_its_chain(inspire_started, tmp_path):
    root = copy_of(inspire_started, tmp_path)
    fixed = tmp_path / "model.json"
    info = json.loads((root / "archive/models/bm25-brief/model.json").read_text())
    info["notes"] = (info.get("notes") or "") + " (corrected)"
    fixed.write_text(json.dumps(info, indent=2) + "\n")
    done = run("release", "cut", "--root", str(root), "--kind", "errata", "--replace", f"archive/models/bm25-brief/model.json={fixed}",
               "--reason", "notes corrected", "--date", "2025-08-01")
    assert done.exit_code == 0 and "release 2 (errata, 2025-08-01): no time key" in done.output, done.output
    assert run("release", "verify", "--root", str(root)).exit_code == 0
    listing = run("release", "list", "--root", str(root)).output
    assert re.search(r"^   2 2025-08-01 errata   no time key ", listing, re.M), listing
    old = (root / "archive/releases/0001.SHA256SUMS").read_bytes()
    lines = old.decode().splitlines()
    reseal(root, "archive/releases/0001.SHA256SUMS", ("\n".join(lines[1:]) + "\n").encode())  # a line dropped under the chain
    done = run("release", "verify", "--root", str(root))
    assert done.exit_code == 1 and "parent_sha256 does not match releases/0001.SHA256SUMS" in done.output, done.output


def test_an_inspire_record_that_claims_an_origin_is_named(inspire_started, tmp_path):
    root = copy_of(inspire_started, tmp_path)
    path = "archive/releases/0001.json"
    record = json.loads((root / path).read_text())
    record["resolved_origins"] = ["2025-01-01"]
    text = json.dumps(record, indent=2) + "\n"
    reseal(root, path, text.encode())
    done = run("release", "verify", "--root", str(root))
    line = next(i for i, s in enumerate(text.splitlines(), 1) if '"resolved_origins"' in s)
    assert done.exit_code == 1
    assert f"{path}:{line}: " in done.output and "must be [] in a benchmark without a time key" in done.output, done.output
