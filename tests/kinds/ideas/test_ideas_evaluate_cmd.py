"""``rapgen evaluate`` through the command line: the committed sample rebuilt byte for byte, a rerun that
costs nothing, an interrupted run that resumes, a fake OpenAI-compatible endpoint, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from rapgen.archive import format_sums, sha256_bytes
from rapgen.cli import cli
from rapgen.kinds.ideas.archive.check import check_archive
from rapgen.kinds.ideas.kit.judges import ChatJudge, judge_line
from rapgen.kit import ChatClient
from test_ideas_evaluator import FakeEndpoint

REPO = Path(__file__).resolve().parents[3]
FILES = ("features.parquet", "eval/lexical-a/candidates.parquet", "eval/lexical-a/judgments.parquet",
         "eval/lexical-b/candidates.parquet", "eval/lexical-b/judgments.parquet")
LEDGER = "archive/provenance/LEDGER.json"
JUDGES = "archive/provenance/judges.jsonl"


class NotJson(FakeEndpoint):
    """Answers every chat request with a body that is not JSON."""

    def judge(self, body: dict):
        return b"<html>not json</html>"


def run(*args: str):
    return CliRunner().invoke(cli, ["evaluate", *args])


def write_root(root: Path, files: dict[str, bytes]) -> Path:
    files = {p: b for p, b in files.items() if p != "SHA256SUMS"}
    files["SHA256SUMS"] = format_sums({p: sha256_bytes(b) for p, b in files.items()})
    for p, b in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_bytes(b)
    return root


def endpoint_archive(files: dict[str, bytes], tmp_path: Path) -> Path:
    """The tiny archive awaiting evaluation by an endpoint: the ledger's embedding served, a chat judge recorded,
    no evaluator files yet."""
    files = {p: b for p, b in files.items() if "/eval/" not in p and not p.endswith("features.parquet")}
    ledger = json.loads(files[LEDGER])
    ledger["embedding"] = {"name": "fake-embed", "dimensions": 16}
    files[LEDGER] = json.dumps(ledger).encode()
    judge = ChatJudge("gpt-fake", ChatClient("http://127.0.0.1:1/v1", None, 1, 0), "fake-judge-1", server_version="fake 1.0")
    files[JUDGES] = files[JUDGES] + judge_line(judge.record()) + b"\n"
    return write_root(tmp_path / "root", files)


def test_the_committed_sample_is_rebuilt_row_for_row(tmp_path):
    out = tmp_path / "recent-titles"
    result = run("--root", str(REPO / "benchmarks/ideas"), "--model", "recent-titles", "--judge", "lexical-a", "--judge", "lexical-b",
                 "--out", str(out), "--no-cache", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert {j: r["judged"] for j, r in summary["judges"].items()} == {"lexical-a": 5400, "lexical-b": 5400}
    model = REPO / "benchmarks/ideas/archive/models/recent-titles"
    # The folder's first cutoff at its top, each later cutoff under origins/<t>/ (seal's ModelFolder rules):
    # evaluate writes the same groups the sample holds, and each group's files row for row.
    groups = ["", *sorted(f"origins/{g.name}/" for g in (model / "origins").iterdir())]
    assert summary["cutoff_groups"] == ["predictions.jsonl", *(g.rstrip("/") for g in groups[1:])]
    key = lambda r: tuple(str(v) for v in r.values())  # noqa: E731
    for g in groups:
        for name in FILES:
            committed = pq.read_table(model / g / name).to_pylist()
            assert sorted(pq.read_table(out / g / name).to_pylist(), key=key) == sorted(committed, key=key), g + name


def test_a_rerun_in_the_archive_writes_nothing_and_a_missing_judge_is_added(ideas_files, tmp_path):
    root = write_root(tmp_path / "root", ideas_files)
    result = run("--root", str(root), "--model", "recent-titles", "--judge", "lexical-a", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["written"] == [] and summary["judges"]["lexical-a"]["judged"] == 0
    kept = {p: b for p, b in ideas_files.items() if "recent-titles/eval/lexical-b" not in p}
    root2 = write_root(tmp_path / "root2", kept)
    result = run("--root", str(root2), "--model", "recent-titles", "--judge", "lexical-b")
    assert result.exit_code == 0, result.output
    assert "Wrote 2 files" in result.stdout and f"rapgen seal --root {root2}" in result.stdout
    assert "release cut" not in result.stdout  # format 1: no releases to cut
    for name in ("candidates.parquet", "judgments.parquet"):
        path = f"archive/models/recent-titles/eval/lexical-b/{name}"
        assert (root2 / path).read_bytes() == ideas_files[path]
    verified = CliRunner().invoke(cli, ["verify", "--root", str(root2)])
    assert verified.exit_code == 1 and verified.stdout.count("UNLISTED archive/models/recent-titles/eval/lexical-b/") == 2
    sealed = CliRunner().invoke(cli, ["seal", "--root", str(root2)])
    assert sealed.exit_code == 0 and "Appended 2 lines" in sealed.stdout, sealed.output
    assert CliRunner().invoke(cli, ["verify", "--root", str(root2)]).exit_code == 0


def test_an_endpoint_run_verifies_a_rerun_costs_nothing_and_an_interruption_resumes(ideas_files, tmp_path):
    root = endpoint_archive(ideas_files, tmp_path)
    cache = tmp_path / "cache"
    out = tmp_path / "recent-titles"
    args = ["--root", str(root), "--model", "recent-titles", "--judge", "gpt-fake", "--cache-dir", str(cache), "--retries", "0",
            "--out", str(out)]
    with FakeEndpoint(fail_after=25) as endpoint:
        result = run(*args, "--base-url", endpoint.base_url)
        assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "HTTP 500" in result.stderr
        assert endpoint.chat == 26
    assert not out.exists() or not any(out.iterdir())  # nothing half-written
    assert len((cache / "ideas/judgments/gpt-fake.jsonl").read_text().splitlines()) == 25
    with FakeEndpoint() as endpoint:
        result = run(*args, "--base-url", endpoint.base_url, "--json")
        assert result.exit_code == 0, result.output
        assert endpoint.chat == 275 and endpoint.embeddings == 0  # vectors came from the interrupted run's journal
        assert json.loads(result.stdout)["judges"]["gpt-fake"] == {"judged": 275, "reused": 25, "failed": 0}
        again = run(*args, "--base-url", endpoint.base_url, "--json")
        assert again.exit_code == 0 and endpoint.chat == 275 and endpoint.embeddings == 0
        assert json.loads(again.stdout)["written"] == []
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    files.update({f"archive/models/recent-titles/{p.relative_to(out).as_posix()}": p.read_bytes() for p in out.rglob("*") if p.is_file()})
    checked, found = check_archive(files)
    assert found == [] and set(checked.models["recent-titles"].evals) == {"gpt-fake"}


def test_garbled_verdicts_are_failed_judgments_and_a_garbled_reply_stops_the_run(ideas_files, tmp_path):
    root = endpoint_archive(ideas_files, tmp_path)
    args = ["--root", str(root), "--model", "recent-titles", "--judge", "gpt-fake", "--cache-dir", str(tmp_path / "c"), "--retries", "0"]
    with FakeEndpoint(garbled=True) as endpoint:
        result = run(*args, "--base-url", endpoint.base_url, "--out", str(tmp_path / "m"), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["judges"]["gpt-fake"]["failed"] == 300
    with NotJson() as endpoint:
        bad = run(*args, "--base-url", endpoint.base_url, "--out", str(tmp_path / "n"), "--cache-dir", str(tmp_path / "d"))
    assert bad.exit_code == 1 and "not JSON" in bad.stderr and bad.stderr.count("\n") == 1
    assert not (tmp_path / "n" / "eval").exists()


def test_bad_input_is_one_line(ideas_files, tmp_path):
    root = write_root(tmp_path / "root", ideas_files)
    cases = [
        (["--model", "nobody", "--judge", "lexical-a"], 2, "no such model"),
        (["--model", "recent-titles", "--judge", "gpt-9"], 2, "lists no such judge"),
        (["--model", "recent-titles", "--judge", "lexical-a", "--base-url", "http://127.0.0.1:9/v1"], 2, "nothing here calls an endpoint"),
    ]
    for extra, code, text in cases:
        result = run("--root", str(root), *extra)
        assert result.exit_code == code and text in result.stderr and result.stderr.count("\n") == 1, (extra, result.output)
    chat_root = endpoint_archive(ideas_files, tmp_path / "e")
    result = run("--root", str(chat_root), "--model", "recent-titles", "--judge", "gpt-fake")
    assert result.exit_code == 2 and "give --base-url" in result.stderr
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "predictions.jsonl").write_text('{"episode_id": "x@2024-06-01"}\n')
    result = run("--root", str(root), "--model", "mine", "--judge", "lexical-a", "--out", str(folder))
    assert result.exit_code == 1 and "predictions.jsonl:1:" in result.stderr and not (folder / "eval").exists()
