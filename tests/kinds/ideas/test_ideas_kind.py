"""The Ideas kind through the commands: the committed sample verifies and scores, its six score files equal
an independent recomputation from the archive's files (to 1e-9), and every bad input of the issue is one
line naming file, line and problem, exit 1, nothing written.

The recomputation below reads the files with pyarrow and json only and restates IDEAS.md §5–§6 in a few
lines (greedy credit, the eight metrics, the topic bootstrap, CI-aware ranks, P(first), paired
differences); it imports nothing of the kind.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from rapgen.cli import cli

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "benchmarks" / "ideas"
RT = "archive/models/recent-titles"
PRED = f"{RT}/predictions.jsonl"
JUDG = f"{RT}/eval/lexical-a/judgments.parquet"
FILES = ["diagnostics.json", "leaderboard.csv", "pairs.csv", "releases.csv", "scores.json", "units.parquet"]


# ---------------------------------------------------------------- the independent recomputation
def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines()]


def _episode_values(ideas: dict[int, dict], judged: dict[int, list[dict]], gate: dict, clusters: dict | None,
                    features: dict | None, k: int = 5) -> dict[str, float]:
    taken: set[str] = set()
    c, credited, passing = [0] * k, [], []
    for r in range(1, k + 1):
        if r not in ideas:
            continue
        ok = [j for j in sorted(judged.get(r, []), key=lambda j: j["cand_rank"]) if j["status"] == "ok"
              and j["P"] + j["M"] >= gate["problem_method_min"] and j["S"] >= gate["realisation_min"]]
        passing.append(len(ok))
        first = next((j for j in ok if j["arxiv_id"] not in taken), None)
        if first is not None:
            c[r - 1] = 1
            taken.add(first["arxiv_id"])
            credited.append(first)
    n = len(ideas)
    return {
        "hit@5": float(sum(c) >= 1), "p@5": sum(c) / k, "mrr": next((1 / r for r, v in enumerate(c, 1) if v), 0.0),
        "soft": sum((j["P"] + j["M"] + j["S"]) / 9 for j in credited) / len(credited) if credited else 0.0,
        "coverage": np.nan if clusters is None else len({clusters[j["arxiv_id"]] for j in credited}) / 5,
        "novelty": np.nan if features is None else (sum(features[r] for r in sorted(ideas)) / n if n else 0.0),
        "budget": n / k, "multiplicity": sum(passing) / n if n else np.nan,
    }


def _bootstrap(values: np.ndarray, topic_of: np.ndarray, C: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    K = C.shape[1]
    ok = ~np.isnan(values)
    A = np.bincount(topic_of[ok], weights=values[ok], minlength=K)
    B = np.bincount(topic_of[ok], minlength=K).astype(float)
    num, den = C @ A, C @ B
    reps = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    if not ok.any():  # undefined everywhere (coverage of cutoffs the clustering does not hold): an empty cell
        return np.nan, np.nan, np.nan, reps
    lo, hi = np.percentile(reps[den > 0], [2.5, 97.5])
    return A.sum() / B.sum(), lo, hi, reps


def _sums(path: Path) -> set[str]:
    return {line.split("  ", 1)[1] for line in path.read_text().splitlines()}


def _history(a: Path) -> tuple[list[str] | None, dict[str, set[str]]]:
    """(the latest release's resolved cutoffs or None for format 1, model -> its on-time Live cutoffs), from the
    release records and manifests: an entry (a commitment, else the open predictions file) counts when the
    first release listing it is dated by the deadline of the release that opened its cutoff, the cutoff is
    resolved and a sealed entry is revealed."""
    records = [json.loads(p.read_text()) for p in sorted((a / "releases").glob("[0-9][0-9][0-9][0-9].json"))]
    if not records:
        return None, {}
    listed = {r["release"]: _sums(a / f"releases/{r['release']:04d}.SHA256SUMS") for r in records}
    opened: dict[str, tuple[int, str]] = {}
    for r in records:
        if r["open_origin"] and r["open_origin"]["origin"] not in opened:
            opened[r["open_origin"]["origin"]] = (r["release"], r["open_origin"]["closes"])
    resolved = records[-1]["resolved_origins"]
    live: dict[str, set[str]] = defaultdict(set)
    for folder in sorted((a / "models").iterdir()):
        for t, (opener, closes) in opened.items():
            revealed = f"archive/models/{folder.name}/origins/{t}/predictions.jsonl"
            sealed = f"archive/commitments/{t}/{folder.name}.json"
            path = sealed if (a.parent / sealed).exists() else revealed
            receipt = next((r for r in records if path in listed[r["release"]]), None)
            if (t in resolved and (a.parent / revealed).exists() and receipt is not None and receipt["release"] >= opener
                    and receipt["date"] <= closes):
                live[folder.name].add(t)
    return resolved, live


def recompute(root: Path) -> tuple[dict, dict]:
    """(leaderboard key -> (estimate, ci_low, ci_high, rank, p_first, n_items), pairs key -> (estimate, ci_low, ci_high)).
    A model's units are its folder's files and each ``origins/<t>/`` folder's; the episodes are those of every
    resolved cutoff (base episodes.jsonl and each ``cutoffs/<t>/episodes.jsonl``)."""
    a = root / "archive"
    config = json.loads((a / "benchmark/config.json").read_text())
    ledger = json.loads((a / "provenance/LEDGER.json").read_text())
    judges = [json.loads(x)["judge_id"] for x in (a / "provenance/judges.jsonl").read_text().splitlines()]
    resolved, live = _history(a)
    resolved = config["cutoffs"] if resolved is None else resolved
    listed = [a / "benchmark/episodes.jsonl", *sorted((a / "benchmark/cutoffs").glob("*/episodes.jsonl"))]
    episodes = [e for path in listed for e in _jsonl(path) if e["cutoff"] in resolved]
    topics = sorted({e["topic_id"] for e in episodes}, key=lambda t: t.encode())
    topic_of = np.array([topics.index(e["topic_id"]) for e in episodes])
    rng = np.random.default_rng(ledger["bootstrap"]["seed"])
    draws = rng.integers(0, len(topics), size=(ledger["bootstrap"]["resamples"], len(topics)))
    C = np.stack([np.bincount(row, minlength=len(topics)) for row in draws]).astype(float)
    clusters: dict = defaultdict(dict)
    for row in pq.read_table(a / "benchmark/future_clusters.parquet").to_pylist():
        clusters[row["episode_id"]][row["arxiv_id"]] = row["cluster"]
    strict = np.array([e["cutoff"] >= config["strict_cutoff"] for e in episodes])
    values = {}  # (track, judge, gate, model, condition, metric) -> per-episode values
    for folder in sorted((a / "models").iterdir()):
        model = folder.name
        groups = [folder, *sorted((folder / "origins").glob("*"))]
        lines = [x for g in groups for x in _jsonl(g / "predictions.jsonl")]
        by_unit: dict = defaultdict(dict)
        for x in lines:
            if x.get("status") != "empty":
                by_unit[(x["episode_id"], x["condition"])][x["rank"]] = x
            else:
                by_unit.setdefault((x["episode_id"], x["condition"]), {})
        conditions = list(dict.fromkeys(x["condition"] for x in lines))
        feats = defaultdict(dict)
        for row in (r for g in groups for r in pq.read_table(g / "features.parquet").to_pylist()):
            feats[(row["episode_id"], row["condition"])][row["rank"]] = row["nn_distance"]
        cutoff = json.loads((folder / "model.json").read_text())["knowledge_cutoff"]
        mine = np.array([e["cutoff"] in live.get(model, ()) for e in episodes])
        for judge in judges:
            judged: dict = defaultdict(lambda: defaultdict(list))
            for row in (r for g in groups for r in pq.read_table(g / f"eval/{judge}/judgments.parquet").to_pylist()):
                judged[(row["episode_id"], row["condition"])][row["rank"]].append(row)
            for gate_name, gate in ledger["gates"].items():
                for cond in conditions:
                    per = [_episode_values(by_unit.get((e["episode_id"], cond), {}), judged[(e["episode_id"], cond)], gate,
                                           clusters.get(e["episode_id"]), feats[(e["episode_id"], cond)]) for e in episodes]
                    for metric in per[0]:
                        v = np.array([p[metric] for p in per])
                        values[("all_cutoff", judge, gate_name, model, cond, metric)] = v
                        if cutoff is not None and cutoff < config["strict_cutoff"]:
                            values[("forecast_strict", judge, gate_name, model, cond, metric)] = np.where(strict, v, np.nan)
                        if mine.any():
                            values[("live", judge, gate_name, model, cond, metric)] = np.where(mine, v, np.nan)
    board, reps = {}, {}
    for key, v in values.items():
        est, lo, hi, r = _bootstrap(v, topic_of, C)
        board[key], reps[key] = [est, lo, hi, None, None, int((~np.isnan(v)).sum())], r
    ranked = ("hit@5", "p@5", "mrr")
    groups = defaultdict(list)
    for key in values:
        if key[-1] in ranked:
            groups[(key[0], key[1], key[2], key[-1])].append(key)
    pairs = {}
    for members in groups.values():
        for i in members:  # rank = 1 + #{j: ci_low_j > ci_high_i}; P(first) over the replicates, ties split
            board[i][3] = 1 + sum(board[j][1] > board[i][2] for j in members)
        stack = np.stack([reps[m] for m in members], axis=1)
        best = stack.max(axis=1, keepdims=True)
        win = stack >= best - 1e-12
        share = (win / win.sum(axis=1, keepdims=True)).mean(axis=0)
        for m, s in zip(members, share):
            board[m][4] = s
        for x, i in enumerate(members):
            for j in members[x + 1:]:
                est, lo, hi, _ = _bootstrap(values[i] - values[j], topic_of, C)
                pairs[(*i[:3], i[-1], i[3], i[4], j[3], j[4])] = (est, lo, hi)
    return board, pairs


def _float(cell: str) -> float | None:
    return float(cell) if cell else None


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ideas-scores") / "scores"
    result = CliRunner().invoke(cli, ["score", "--root", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Scored 2 models (2 entries) on 108 episodes of 12 topics under 2 judges × 2 gates (10000 resamples, seed 0)." in result.output
    return out


def test_the_committed_sample_verifies_through_the_command():
    result = CliRunner().invoke(cli, ["verify", "--root", str(SAMPLE)])
    assert result.exit_code == 0 and result.output.startswith("OK: 176 files,"), result.output


def test_the_scores_equal_an_independent_recomputation(scored):
    board, pairs = recompute(SAMPLE)
    rows = list(csv.DictReader(io.StringIO((scored / "leaderboard.csv").read_text())))
    assert len(rows) == len(board) == 3 * 2 * 2 * 2 * 8  # tracks (all_cutoff, forecast_strict, live) x judges x gates x models x metrics
    for row in rows:
        want = board[(row["track"], row["judge"], row["gate"], row["entry"], row["condition"], row["metric"])]
        for name, w in zip(("estimate", "ci_low", "ci_high"), want[:3]):
            assert (row[name] == "") if np.isnan(w) else _float(row[name]) == pytest.approx(w, abs=1e-9), (row, name)
        if row["metric"] in ("hit@5", "p@5", "mrr"):
            assert int(row["rank"]) == want[3] and _float(row["p_first"]) == pytest.approx(want[4], abs=1e-9), row
        else:
            assert row["rank"] == row["p_first"] == "", row
        assert int(row["n_items"]) == want[5]
    got = list(csv.DictReader(io.StringIO((scored / "pairs.csv").read_text())))
    assert len(got) == len(pairs) == 3 * 2 * 2 * 3
    for row in got:
        want = pairs[(row["track"], row["judge"], row["gate"], row["metric"], row["entry_a"], row["condition_a"],
                      row["entry_b"], row["condition_b"])]
        assert [_float(row[c]) for c in ("estimate", "ci_low", "ci_high")] == pytest.approx(list(want), abs=1e-9), row


def test_the_other_score_files(scored):
    assert sorted(p.name for p in scored.iterdir()) == FILES
    meta = json.loads((scored / "scores.json").read_text())
    lead = [r for r in csv.DictReader(io.StringIO((scored / "leaderboard.csv").read_text()))
            if (r["track"], r["judge"], r["gate"], r["metric"]) == ("all_cutoff", "lexical-a", "default", "hit@5")]
    best = max(lead, key=lambda r: float(r["estimate"]))
    assert meta["kind"] == "ideas" and meta["synthetic"] is True and meta["release"]["number"] == 14
    assert meta["manifest_sha256"] == hashlib.sha256((SAMPLE / "SHA256SUMS").read_bytes()).hexdigest()
    assert meta["primary"] == {"metric": "hit@5", "track": "all_cutoff", "judge": "lexical-a", "gate": "default"}
    assert meta["headline"]["entry"] == best["entry"] and meta["headline"]["estimate"] == float(best["estimate"])
    assert meta["axes"] == {"judge": ["lexical-a", "lexical-b"], "gate": ["default", "strict"]}
    assert meta["models"]["rising-terms"]["raw"] is True and meta["models"]["rising-terms"]["empty_key_terms"] == 540
    units = pq.read_table(scored / "units.parquet")
    assert units.num_rows == 2 * 2 * 2 * 108 and units.column_names[:10] == [
        "entry", "kind", "condition", "judge", "gate", "episode_id", "topic_id", "cutoff", "status", "n_ideas"]
    u = units.to_pylist()
    mine = [r["hit@5"] for r in u if (r["entry"], r["judge"], r["gate"]) == (best["entry"], "lexical-a", "default")]
    assert sum(mine) / len(mine) == pytest.approx(float(best["estimate"]), abs=1e-12)
    releases = list(csv.DictReader(io.StringIO((scored / "releases.csv").read_text())))
    assert [int(r["release"]) for r in releases] == sorted(int(r["release"]) for r in releases)
    # All cutoffs: one block per release with a complete entry, release 1 and each models release (2, 4, ..., 14).
    # A roll (3, 5, ..., 13) resolves a cutoff whose evaluator files come only with the next models release, so
    # there every entry is partial (that cutoff awaits evaluation) and, being unranked, has no row. Live instead
    # scores the on-time cutoffs already evaluated, so once it has one (release 10) the rolls after it have rows.
    by_track = {t: {int(r["release"]) for r in releases if r["track"] == t} for t in ("all_cutoff", "forecast_strict", "live")}
    assert by_track["all_cutoff"] == {1, *range(2, 15, 2)} and by_track["forecast_strict"] == {10, 12, 14}
    assert by_track["live"] == set(range(10, 15))
    assert meta["partial"] == [] or all(p["last_complete_release"] for p in meta["partial"])
    last = [r for r in releases if r["release"] == "14"]
    assert len(last) == 3 * 2 * 2 * 2 * 3  # the ranked rows: tracks x judges x gates x models x ranked metrics
    board = {(r["track"], r["judge"], r["gate"], r["entry"], r["metric"]): r["estimate"]
             for r in csv.DictReader(io.StringIO((scored / "leaderboard.csv").read_text()))}
    assert all(board[(r["track"], r["judge"], r["gate"], r["entry"], r["metric"])] == r["estimate"] for r in last)
    diag = json.loads((scored / "diagnostics.json").read_text())
    agreement = {(r["gate"]): r for r in diag["judge_agreement"]}
    assert agreement["default"]["n_pairs"] == 2 * 108 * 5 * 10 and agreement["default"]["pass_b"] <= agreement["default"]["pass_a"]
    sens = [r for r in diag["gate_sensitivity"] if (r["track"], r["judge"], r["metric"]) == ("all_cutoff", "lexical-a", "hit@5")]
    assert all(r["difference"] == pytest.approx(r["default"] - r["strict"], abs=1e-12) for r in sens) and len(sens) == 2


def test_scoring_twice_gives_the_same_bytes(scored, tmp_path):
    again = tmp_path / "again"
    assert CliRunner().invoke(cli, ["score", "--root", str(SAMPLE), "--out", str(again)]).exit_code == 0
    assert all((again / n).read_bytes() == (scored / n).read_bytes() for n in FILES)


# ---------------------------------------------------------------- bad input, through the commands
def _tiny_root(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "ideas"
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    _seal(root)
    return root


def _seal(root: Path) -> None:
    listed = sorted(p.relative_to(root).as_posix() for p in (root / "archive").rglob("*") if p.is_file())
    (root / "SHA256SUMS").write_text("".join(f"{hashlib.sha256((root / p).read_bytes()).hexdigest()}  {p}\n" for p in listed))


def _edit_lines(root: Path, path: str, edit) -> None:
    rows = _jsonl(root / path)
    edit(rows)
    (root / path).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _edit_judgments(root: Path, edit) -> None:
    table = pq.read_table(root / JUDG)
    rows = table.to_pylist()
    edit(root, rows)
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), root / JUDG)


def _missing_episode(root):
    _edit_lines(root, PRED, lambda rows: rows.__setitem__(slice(None), [r for r in rows if r["episode_id"] != "gnn@2024-07-01"]))


def _history_paper(root, rows):
    assigned = pq.read_table(root / "archive/benchmark/assignments.parquet").to_pylist()
    rows[0]["arxiv_id"] = sorted(p["arxiv_id"] for p in assigned if p["topic_id"] == "diffusion" and str(p["first_submitted"]) < "2024-06-01")[0]


BAD = [
    ("missing episode", _missing_episode, f"MALFORMED {PRED}: condition direct misses episode gnn@2024-07-01"),
    ("more than five ideas", lambda root: _edit_lines(root, PRED, lambda rows: rows[4].update(rank=6)),
     f"MALFORMED {PRED}:5: rank 6: more than top_k = 5 ideas for diffusion@2024-06-01 direct"),
    ("duplicate rank", lambda root: _edit_lines(root, PRED, lambda rows: rows.append(dict(rows[0]))),
     f"MALFORMED {PRED}:31: diffusion@2024-06-01 direct rank 1 is there twice (first on line 1)"),
    ("unknown key", lambda root: _edit_lines(root, PRED, lambda rows: rows[0].update(score=1)),
     f"MALFORMED {PRED}:1: unknown key 'score'"),
    ("stale cache key", lambda root: _edit_judgments(root, lambda _root, rows: rows[7].update(cache_key="0" * 64)),
     f"INVARIANT {JUDG}:8: diffusion@2024-06-01 direct 1 cand_rank 8: stale cache_key"),
    ("paper outside the future", lambda root: _edit_judgments(root, _history_paper),
     f"INVARIANT {JUDG}:1: diffusion@2024-06-01 direct 1 cand_rank 1: 2404."),
]


@pytest.mark.parametrize("name, mutate, line", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line_exit_1_and_nothing_written(tmp_path, _tiny_ideas, name, mutate, line):
    root = _tiny_root(tmp_path, {p: b for p, b in _tiny_ideas.items() if p != "SHA256SUMS"})
    run = CliRunner().invoke
    assert run(cli, ["verify", "--root", str(root)]).exit_code == 0
    mutate(root)
    _seal(root)
    verified = run(cli, ["verify", "--root", str(root)])
    assert verified.exit_code == 1, verified.output
    causes = [x for x in verified.stdout.splitlines() if not x.startswith("NOT-EVALUATED")]
    assert len(causes) == 1 and causes[0].startswith(line), verified.stdout
    if name == "paper outside the future":
        assert "is outside the episode's future; a judgment is only for a paper of F" in causes[0]
    out = tmp_path / "scores"
    scored = run(cli, ["score", "--root", str(root), "--out", str(out)])
    assert scored.exit_code == 1 and not out.exists()
    assert scored.stderr.count("\n") == 1 and f"the first: {causes[0]};" in scored.stderr and "Traceback" not in scored.output, scored.stderr
