"""The Ideas files and their invariants: one mutation per test, one finding naming file, line and problem."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest

from rapgen.archive import Category
from rapgen.archive.verify import format_finding
from rapgen.kinds.ideas.archive.check import check_archive
from rapgen.kinds.ideas.archive.evaluation import CANDIDATE_COLUMNS, JUDGMENT_COLUMNS
from rapgen.kinds.ideas.archive.assignment import ASSIGNMENT_COLUMNS
from rapgen.kinds.ideas.archive.writers import parquet_bytes

RT = "archive/models/recent-titles"
RS = "archive/models/rising-terms"
PRED = f"{RT}/predictions.jsonl"
JUDG = f"{RT}/eval/lexical-a/judgments.parquet"
CAND = f"{RT}/eval/lexical-a/candidates.parquet"


def lines(files, path):
    return [json.loads(x) for x in files[path].decode().splitlines()]


def put_lines(files, path, rows):
    files[path] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def rows(files, path):
    return pq.read_table(io.BytesIO(files[path])).to_pylist()


def put_rows(files, path, columns, table):
    files[path] = parquet_bytes(columns, [[r[c] for c, _ in columns] for r in table])


def problems(files):
    """The findings that are not NOT-EVALUATED (those follow from a broken input)."""
    _, found = check_archive(files)
    return [f for f in found if f.category != Category.NOT_EVALUATED]


def one(files, path, line, category, text):
    found = problems(files)
    assert len(found) == 1, [format_finding(f) for f in found]
    f = found[0]
    assert (f.path, f.line, f.category) == (path, line, category), format_finding(f)
    assert text in f.detail, format_finding(f)
    return f


def test_the_tiny_archive_checks_clean(ideas_files):
    archive, found = check_archive(ideas_files)
    assert found == []
    assert len(archive.pools.episodes) == 6 and set(archive.models) == {"recent-titles", "rising-terms"}
    assert set(archive.models["rising-terms"].evals) == {"lexical-a", "lexical-b"}


# ---------------------------------------------------------------- predictions.jsonl
def _unknown_key(rows_):
    rows_[0]["score"] = 1


def _over_top_k(rows_):
    rows_[4]["rank"] = 6


def _duplicate_rank(rows_):
    rows_.append(dict(rows_[0]))


def _missing_episode(rows_):
    rows_[:] = [r for r in rows_ if r["episode_id"] != "gnn@2024-07-01"]


def _unknown_episode(rows_):
    rows_.append(dict(rows_[0], episode_id="gnn@2024-05-01"))


def _empty_title(rows_):
    rows_[0]["title"] = "  "


def _empty_with_rank(rows_):
    eid = rows_[0]["episode_id"]
    rows_[:] = [r for r in rows_ if r["episode_id"] != eid] + [{"episode_id": eid, "condition": "direct", "rank": 1, "status": "empty"}]


def _empty_beside_ideas(rows_):
    rows_.append({"episode_id": rows_[0]["episode_id"], "condition": "direct", "rank": None, "status": "empty"})


def _rank_gap(rows_):
    del rows_[1]


@pytest.mark.parametrize("mutate, line, text", [
    (_unknown_key, 1, "unknown key 'score'"),
    (_over_top_k, 5, "rank 6: more than top_k = 5 ideas for diffusion@2024-06-01 direct"),
    (_duplicate_rank, 31, "diffusion@2024-06-01 direct rank 1 is there twice (first on line 1)"),
    (_missing_episode, None, "condition direct misses episode gnn@2024-07-01"),
    (_unknown_episode, 31, "episode_id \"gnn@2024-05-01\" is not an episode of this file's cutoffs"),
    (_empty_title, 1, "'title' must not be empty"),
    (_empty_with_rank, 26, "an empty episode's line has \"rank\": null"),
    (_empty_beside_ideas, 31, "an empty line beside another line of the episode (line 1)"),
    (_rank_gap, 4, "diffusion@2024-06-01 direct: ranks 1, 3, 4, 5 skip rank 2"),
], ids=lambda v: getattr(v, "__name__", None))
def test_malformed_predictions(ideas_files, mutate, line, text):
    table = lines(ideas_files, PRED)
    mutate(table)
    put_lines(ideas_files, PRED, table)
    f = one(ideas_files, PRED, line, Category.MALFORMED, text)
    assert format_finding(f).startswith(f"MALFORMED {PRED}" + (f":{line}: " if line else ": "))


def test_a_broken_predictions_file_leaves_its_evaluator_files_not_evaluated(ideas_files):
    table = lines(ideas_files, PRED)
    _unknown_key(table)
    put_lines(ideas_files, PRED, table)
    _, found = check_archive(ideas_files)
    skipped = sorted(f.path for f in found if f.category == Category.NOT_EVALUATED)
    assert skipped == [f"{RT}/eval/lexical-a/candidates.parquet", f"{RT}/eval/lexical-a/judgments.parquet",
                       f"{RT}/eval/lexical-b/candidates.parquet", f"{RT}/eval/lexical-b/judgments.parquet", f"{RT}/features.parquet"]


def test_an_empty_episode_is_valid_and_scores_zero(ideas_files):
    from rapgen.kinds.ideas.archive.check import check_archive as check

    table = [r for r in lines(ideas_files, PRED) if r["episode_id"] != "gnn@2024-07-01"]
    table.append({"episode_id": "gnn@2024-07-01", "condition": "direct", "rank": None, "status": "empty"})
    put_lines(ideas_files, PRED, table)
    for name in ("lexical-a", "lexical-b"):  # drop the episode's evaluator rows, as the evaluator would
        for path, cols in ((f"{RT}/eval/{name}/candidates.parquet", CANDIDATE_COLUMNS), (f"{RT}/eval/{name}/judgments.parquet", JUDGMENT_COLUMNS)):
            put_rows(ideas_files, path, cols, [r for r in rows(ideas_files, path) if r["episode_id"] != "gnn@2024-07-01"])
    feats = [r for r in rows(ideas_files, f"{RT}/features.parquet") if r["episode_id"] != "gnn@2024-07-01"]
    from rapgen.kinds.ideas.archive.evaluation import FEATURE_COLUMNS
    put_rows(ideas_files, f"{RT}/features.parquet", FEATURE_COLUMNS, feats)
    archive, found = check(ideas_files)
    assert found == []
    assert archive.models["recent-titles"].predictions.empty == {("gnn@2024-07-01", "direct"): 26}


def test_duplicate_titles_and_repeats_are_reported_not_removed(ideas_files):
    table = lines(ideas_files, PRED)
    table[1]["title"] = table[0]["title"].upper()  # the same title after norm
    put_lines(ideas_files, PRED, table)
    archive, _ = check_archive(ideas_files)
    p = archive.models["recent-titles"].predictions
    assert ("diffusion@2024-06-01", "direct", table[0]["title"].upper()) in p.duplicate_titles
    assert len(p.ideas[("diffusion@2024-06-01", "direct")]) == 5
    # recent-titles restates the newest history titles: some survive into the next cutoff's five.
    assert all(e.endswith("2024-07-01") for e, _, _ in p.repeats)


# ---------------------------------------------------------------- raw.jsonl and the adapter
def test_a_raw_line_that_no_longer_hashes_to_raw_sha256(ideas_files):
    path = f"{RS}/raw.jsonl"
    table = lines(ideas_files, path)
    table[2]["innovation_gap"] += "!"
    put_lines(ideas_files, path, table)
    f = one(ideas_files, path, 3, Category.INVARIANT, "H(raw) differs from the prediction's raw_sha256")
    assert f.expected == lines(ideas_files, f"{RS}/predictions.jsonl")[2]["raw_sha256"]


def test_a_prediction_the_adapter_would_not_make(ideas_files):
    path = f"{RS}/predictions.jsonl"
    table = lines(ideas_files, path)
    table[0]["approach"] = "something else"
    put_lines(ideas_files, path, table)
    found = problems(ideas_files)
    adapter = [f for f in found if f.path == path]
    assert len(adapter) == 1 and adapter[0].line == 1 and "approach is not what adapter v1 makes of its raw line" in adapter[0].detail
    # the idea changed, so its cached judgments (10 candidates x 2 judges) are stale too
    assert sum("stale cache_key" in f.detail for f in found) == 20  # 10 candidates x 2 judges


def test_a_raw_sha256_without_raw_jsonl(ideas_files):
    del ideas_files[f"{RS}/raw.jsonl"]
    found = problems(ideas_files)
    n_ideas = len(lines(ideas_files, f"{RS}/predictions.jsonl"))
    assert n_ideas == 20 and len(found) == n_ideas and all("has a raw_sha256 but there is no" in f.detail for f in found)


# ---------------------------------------------------------------- evaluator files
def test_a_stale_cache_key(ideas_files):
    table = rows(ideas_files, JUDG)
    table[7]["cache_key"] = "0" * 64
    put_rows(ideas_files, JUDG, JUDGMENT_COLUMNS, table)
    f = one(ideas_files, JUDG, 8, Category.INVARIANT, "stale cache_key")
    assert f.actual == "0" * 64 and len(f.expected) == 64


def test_an_edited_idea_makes_its_cached_judgments_stale(ideas_files):
    table = lines(ideas_files, PRED)
    table[0]["rationale"] += " Edited."
    put_lines(ideas_files, PRED, table)
    found = problems(ideas_files)
    # ten candidates under each of the two judges
    assert len(found) == 20 and all(f.category == Category.INVARIANT and "stale cache_key" in f.detail for f in found)
    assert {f.detail.split(":")[0] for f in found} == {f"diffusion@2024-06-01 direct 1 cand_rank {k}" for k in range(1, 11)}


def test_a_changed_judge_line_makes_every_key_of_that_judge_stale(ideas_files):
    path = "archive/provenance/judges.jsonl"
    first, second = ideas_files[path].split(b"\n")[:2]
    ideas_files[path] = first.replace(b'"temperature": 0', b'"temperature": 0.0') + b"\n" + second + b"\n"
    found = problems(ideas_files)
    n_a = len(rows(ideas_files, JUDG)) + len(rows(ideas_files, f"{RS}/eval/lexical-a/judgments.parquet"))
    assert len(found) == n_a and all("stale cache_key" in f.detail and "/lexical-a/" in f.path for f in found)


def test_a_judgment_of_a_paper_outside_the_future(ideas_files):
    table = rows(ideas_files, JUDG)
    history_paper = sorted(p["arxiv_id"] for p in rows(ideas_files, "archive/benchmark/assignments.parquet")
                           if p["topic_id"] == "diffusion" and str(p["first_submitted"]) < "2024-06-01")[0]
    table[0]["arxiv_id"] = history_paper
    put_rows(ideas_files, JUDG, JUDGMENT_COLUMNS, table)
    one(ideas_files, JUDG, 1, Category.INVARIANT, f"{history_paper} is outside the episode's future")


def test_a_candidate_outside_the_future_and_a_missing_candidate(ideas_files):
    table = rows(ideas_files, CAND)
    table[0]["arxiv_id"] = "2405.99999"
    put_rows(ideas_files, CAND, CANDIDATE_COLUMNS, table)
    found = problems(ideas_files)
    assert [(f.path, f.line) for f in found if f.path == CAND] == [(CAND, 1)]
    assert "candidate 2405.99999 is not in the episode's future" in found[0].detail
    table = rows(ideas_files, CAND)[1:]  # drop cand_rank 1 of the first idea
    ideas_files.update({CAND: parquet_bytes(CANDIDATE_COLUMNS, [[r[c] for c, _ in CANDIDATE_COLUMNS] for r in table])})
    found = [f for f in problems(ideas_files) if f.path == CAND]
    assert len(found) == 1 and "cand_rank 2, 3, 4, 5, 6, 7, 8, 9, 10, expected 1 … 10 (min(10, |F| = 12))" in found[0].detail


def test_candidates_out_of_order(ideas_files):
    table = rows(ideas_files, CAND)
    table[0]["cosine"], table[1]["cosine"] = table[1]["cosine"] - 1e-6, table[1]["cosine"]
    put_rows(ideas_files, CAND, CANDIDATE_COLUMNS, table)
    one(ideas_files, CAND, 2, Category.INVARIANT, "cand_rank 2 breaks the order")


@pytest.mark.parametrize("change, text", [
    ({"status": "failed"}, "a 'failed' judgment has P, M and S null"),
    ({"P": 4}, "P, M and S of an 'ok' judgment are integers 0–3"),
    ({"status": "maybe"}, "status 'maybe' is not one of ok, failed"),
])
def test_malformed_judgment_rows(ideas_files, change, text):
    table = rows(ideas_files, JUDG)
    table[3].update(change)
    put_rows(ideas_files, JUDG, JUDGMENT_COLUMNS, table)
    found = problems(ideas_files)
    assert [(f.path, f.line, f.category) for f in found if f.path == JUDG and text in f.detail] == [(JUDG, 4, Category.MALFORMED)]


def test_a_judge_folder_not_in_judges_jsonl(ideas_files):
    for name in ("candidates", "judgments"):
        ideas_files[f"{RT}/eval/gpt-x/{name}.parquet"] = ideas_files[f"{RT}/eval/lexical-a/{name}.parquet"]
    one(ideas_files, f"{RT}/eval/gpt-x", None, Category.INVARIANT, "judge 'gpt-x' is not in archive/provenance/judges.jsonl")


# ---------------------------------------------------------------- benchmark files
def test_the_assignment_is_rebuilt_exactly(ideas_files):
    path = "archive/benchmark/assignments.parquet"
    original = ideas_files[path]
    table = rows(ideas_files, path)
    table[0]["matched_term"] = "DDPM"
    put_rows(ideas_files, path, ASSIGNMENT_COLUMNS, table)
    one(ideas_files, path, 1, Category.INVARIANT, f"{table[0]['arxiv_id']} → diffusion: matched_term 'DDPM', phrase-v1 gives")
    ideas_files[path] = original
    table = rows(ideas_files, path)
    table.append(dict(table[0], topic_id="gnn", matched_term="GNN"))
    put_rows(ideas_files, path, ASSIGNMENT_COLUMNS, table)
    found = [f for f in problems(ideas_files) if f.path == path]
    assert len(found) == 1 and "matches none of gnn's terms under phrase-v1" in found[0].detail


def test_a_missing_assignment_row(ideas_files):
    path = "archive/benchmark/assignments.parquet"
    table = rows(ideas_files, path)
    gone = table.pop(5)
    put_rows(ideas_files, path, ASSIGNMENT_COLUMNS, table)
    found = [f for f in problems(ideas_files) if f.path == path]
    assert len(found) == 1 and found[0].line is None
    assert f"{gone['arxiv_id']} → {gone['topic_id']} (matched {gone['matched_term']!r}) is missing" in found[0].detail


def test_episodes_and_futures_are_rebuilt(ideas_files):
    path = "archive/benchmark/episodes.jsonl"
    table = lines(ideas_files, path)
    table[2]["n_history"] += 1
    put_lines(ideas_files, path, table)
    f = one(ideas_files, path, 3, Category.INVARIANT, "rlhf@2024-06-01: n_history does not match the rebuilt an episode")
    assert (f.expected, f.actual) == ("12", "13")
    path = "archive/benchmark/futures.jsonl"
    table = lines(ideas_files, path)
    table[0]["future_to"] = "2024-07-01"  # e(2024-06-01) = 2024-07-31 with a one-month horizon
    put_lines(ideas_files, path, table)
    found = [f for f in problems(ideas_files) if f.path == path]
    assert len(found) == 1 and found[0].expected == "2024-07-31"


def test_a_cutoff_is_the_start_of_its_day():
    """A paper dated exactly t is in F(t), not in H(t)."""
    from datetime import date

    from rapgen.kinds.ideas.archive.assignment import Assignment
    from rapgen.kinds.ideas.archive.config import Config, future_end
    from rapgen.kinds.ideas.archive.episodes import build_pools

    t = date(2024, 7, 1)
    config = Config(date(2024, 4, 1), t, (t,), 3, 5, 1, t)
    rows_ = [Assignment("x", "a", date(2024, 6, 30), "x"), Assignment("x", "b", t, "x"), Assignment("x", "c", date(2024, 10, 31), "x"),
             Assignment("x", "d", date(2024, 11, 1), "x")]
    pools = build_pools(rows_, ["x"], config, (t,), (t,))
    assert pools.history["x@2024-07-01"] == ("a",) and pools.future["x@2024-07-01"] == ("b", "c")
    assert future_end(t, 3) == date(2024, 10, 31) and future_end(date(2024, 12, 1), 2) == date(2025, 2, 28)


@pytest.mark.parametrize("path, edit, line, text", [
    ("archive/benchmark/config.json", lambda o: o.update(end_month="2025-09"), None, "unknown key 'end_month'"),
    ("archive/benchmark/config.json", lambda o: o.update(cutoffs=["2024-07-01", "2024-06-01"]), None, "'cutoffs' must be strictly ascending"),
    ("archive/benchmark/config.json", lambda o: o.update(cutoffs=["2024-06-15"]), None, "'cutoffs' 2024-06-15 is not the first of a month"),
    ("archive/provenance/LEDGER.json", lambda o: o["gates"].pop("strict"), None, "'gates' must be an object with exactly default, strict"),
    ("archive/provenance/LEDGER.json", lambda o: o["bootstrap"].update(level=1.5), None, "level must lie strictly between 0 and 1"),
])
def test_malformed_documents(ideas_files, path, edit, line, text):
    obj = json.loads(ideas_files[path])
    edit(obj)
    ideas_files[path] = json.dumps(obj).encode()
    found = [f for f in problems(ideas_files) if f.path == path]
    assert len(found) == 1 and found[0].line == line and text in found[0].detail and found[0].category == Category.MALFORMED


@pytest.mark.parametrize("edit, line, text", [
    (lambda t: t.append(dict(t[0])), 4, "topic_id 'diffusion' is there twice (first on line 1)"),
    (lambda t: t[1].update(topic_id="RLHF"), 2, "does not match"),
    (lambda t: t[2].update(keywords=["—"]), 3, "has no letter or digit left after normalisation"),
    (lambda t: t[0].update(aliases="RLHF"), 1, "'aliases' must be a list of strings"),
])
def test_malformed_topics(ideas_files, edit, line, text):
    path = "archive/benchmark/topics.jsonl"
    table = lines(ideas_files, path)
    edit(table)
    put_lines(ideas_files, path, table)
    found = [f for f in problems(ideas_files) if f.path == path]
    assert len(found) == 1 and found[0].line == line and text in found[0].detail


def test_the_only_rules_implemented_are_checked(ideas_files):
    path = "archive/provenance/LEDGER.json"
    obj = json.loads(ideas_files[path])
    obj["assignment"]["name"] = "phrase-v2"
    ideas_files[path] = json.dumps(obj).encode()
    one(ideas_files, path, None, Category.INVARIANT, "assignment 'phrase-v2': this rapgen implements phrase-v1 only")


def test_missing_required_file(ideas_files):
    del ideas_files["archive/benchmark/futures.jsonl"]
    _, found = check_archive(ideas_files)
    assert [(f.path, f.category) for f in found if f.category == Category.MISSING] == [("archive/benchmark/futures.jsonl", Category.MISSING)]


def test_not_json_and_bad_utf8_lines(ideas_files):
    ideas_files[PRED] = ideas_files[PRED] + b'{"episode_id": NaN}\n'
    f = one(ideas_files, PRED, 31, Category.MALFORMED, "NaN")
    ideas_files[PRED] = b"\xff\n"
    f = [x for x in problems(ideas_files) if x.path == PRED]
    assert "not valid UTF-8 at byte 0" in f[0].detail


def test_a_later_cutoff_lives_in_origins(ideas_files):
    """Units of a cutoff after config.cutoffs go in origins/<t>/ with their own evaluator files."""
    from datetime import date

    obj = json.loads(ideas_files["archive/benchmark/config.json"])
    obj["cutoffs"] = ["2024-06-01"]
    ideas_files["archive/benchmark/config.json"] = json.dumps(obj).encode()
    later = "2024-07-01"
    table = lines(ideas_files, PRED)
    for model in (RT, RS):
        for name in ("predictions.jsonl", "raw.jsonl"):
            if f"{model}/{name}" in ideas_files:
                every = lines(ideas_files, f"{model}/{name}")
                put_lines(ideas_files, f"{model}/{name}", [r for r in every if not r["episode_id"].endswith(later)])
                put_lines(ideas_files, f"{model}/origins/{later}/{name}", [r for r in every if r["episode_id"].endswith(later)])
        for name, cols in (("candidates", CANDIDATE_COLUMNS), ("judgments", JUDGMENT_COLUMNS)):
            for judge in ("lexical-a", "lexical-b"):
                path = f"{model}/eval/{judge}/{name}.parquet"
                every = rows(ideas_files, path)
                put_rows(ideas_files, path, cols, [r for r in every if not r["episode_id"].endswith(later)])
                put_rows(ideas_files, f"{model}/origins/{later}/eval/{judge}/{name}.parquet", cols,
                         [r for r in every if r["episode_id"].endswith(later)])
        del ideas_files[f"{model}/features.parquet"]
    resolved = [date(2024, 6, 1), date(2024, 7, 1)]
    archive, found = check_archive(ideas_files, resolved=resolved)
    assert found == []
    mf = archive.models["recent-titles"]
    assert len(mf.predictions.ideas) == 6 and len(mf.evals["lexical-a"][1]) == 300 and mf.features is None
    # a later cutoff's units may not sit in predictions.jsonl
    put_lines(ideas_files, PRED, table)
    _, found = check_archive(ideas_files, resolved=resolved)
    assert any(f.path == PRED and "is not an episode of this file's cutoffs" in f.detail for f in found)
    # nor in an origins folder of a config cutoff
    put_lines(ideas_files, PRED, [r for r in table if not r["episode_id"].endswith(later)])
    ideas_files[f"{RT}/origins/2024-06-01/predictions.jsonl"] = b""
    _, found = check_archive(ideas_files, resolved=resolved)
    assert any(f.path == f"{RT}/origins/2024-06-01" and "its units belong in predictions.jsonl" in f.detail for f in found)


@pytest.mark.parametrize("edit, text", [
    (lambda t: t.append(dict(t[0])), "judge_id 'lexical-a' is there twice (first on line 1)"),
    (lambda t: t[1]["rule"].update(problem=[0, 0, 0]), "'prompt_sha256' of a judge with a 'rule' is H(rule)"),
    (lambda t: t[0].update(judge="x"), "unknown key 'judge'"),
])
def test_malformed_judges(ideas_files, edit, text):
    path = "archive/provenance/judges.jsonl"
    table = lines(ideas_files, path)
    edit(table)
    put_lines(ideas_files, path, table)
    _, found = check_archive(ideas_files)
    assert [f for f in found if f.path == path and text in f.detail and f.category == Category.MALFORMED]
