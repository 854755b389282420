"""rapgen submit check / init: good submissions, the report, usage errors, git."""

from __future__ import annotations

import json
import os
from datetime import date

from click.testing import CliRunner

from rapgen.archive.parse import MODEL_KEYS, parse_model_json
from rapgen.cli import cli
from rapgen.submit import check_submission, render_report
from rapgen.submit.review import CheckResult, ConditionCount, StageStatus
from test_submit_support import NEW_ID, append_sums, git, git_init, tree_digest, write_submission


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_good_submission_in_archive_passes(tiny_archive) -> None:
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    append_sums(repo, NEW_ID)
    before = tree_digest(repo)
    result = invoke("submit", "check", "--no-scores", "--root", str(repo), str(folder))
    assert result.exit_code == 0, result.output
    assert tree_digest(repo) == before
    out = result.stdout
    assert out.startswith("<!-- rapgen-submit-check -->\n## ✅ Submission `newbie` passes")
    assert "| A0 | 20 | 20 | 20 | 0 | — |" in out
    assert "| Archive integrity | ✅ passed |" in out
    assert "| SHA256SUMS lines | ✅ passed |" in out
    assert f"archive/models/{NEW_ID}/traces.jsonl" in out
    assert result.stderr == ""


def test_full_check_runs_later_stages_on_an_overlay(tiny_archive) -> None:
    """Without --no-scores the scoring/replay/site stages run (or say they are unavailable); the repo is untouched."""
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo, traces=False)
    append_sums(repo, NEW_ID)
    before = tree_digest(repo)
    res = check_submission(repo, folder, resamples=100)
    assert tree_digest(repo) == before
    assert set(res.stages) == {"integrity", "submission", "checksums", "live", "scores", "replay", "site"}
    assert res.stages["live"].status == "skipped"  # a format-1 archive: no Live submission
    assert res.stages["replay"].status == "skipped"  # no traces
    for stage in ("scores", "site"):
        assert res.stages[stage].status in ("passed", "unavailable", "skipped"), (stage, res.stages[stage], res.problems)
    assert res.ok, [p.one_line() for p in res.problems]


def test_external_folder_is_checked_as_if_added(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    folder = write_submission(tmp_path / "work" / NEW_ID, repo)
    (folder / "README.md").write_text("scaffold notes\n")
    result = invoke("submit", "check", "--no-scores", "--root", str(repo), str(folder))
    assert result.exit_code == 0, result.output
    assert "SHA256SUMS lines `rapgen seal` will add" in result.stdout
    assert f"  archive/models/{NEW_ID}/predictions.jsonl" in result.stdout
    assert "README.md is ignored" in result.stdout
    assert not (repo / "archive" / "models" / NEW_ID).exists()


def test_external_folder_with_an_existing_id(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    folder = write_submission(tmp_path / "model-a", repo)
    result = invoke("submit", "check", "--no-scores", "--root", str(repo), str(folder))
    assert result.exit_code == 1
    assert f"`{folder}`: model 'model-a' already exists in archive/models/model-a/" in result.stdout
    assert "**EXISTS**" in result.stdout


def test_json_and_report_file(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    append_sums(repo, NEW_ID)
    (folder / "predictions.jsonl").write_text((folder / "predictions.jsonl").read_text() + "oops\n")
    report = tmp_path / "report.md"
    result = invoke("submit", "check", "--no-scores", "--json", "--report", str(report), "--root", str(repo), str(folder))
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["schema_version"] == 1
    kinds = {(p["keyword"], p["path"], p["line"]) for p in data["problems"]}
    assert ("MALFORMED", f"archive/models/{NEW_ID}/predictions.jsonl", 61) in kinds
    sums_line = next(i for i, l in enumerate((repo / "SHA256SUMS").read_text().splitlines(), 1) if l.endswith(f"{NEW_ID}/predictions.jsonl"))
    assert ("CHECKSUM", "SHA256SUMS", sums_line) in kinds
    assert data["validity"][0] == {"condition": "A0", "expected": 20, "present": 20, "valid": 20, "invalid": 0, "reasons": {}}
    text = report.read_text()
    assert text.startswith("<!-- rapgen-submit-check -->") and "predictions.jsonl:61" in text


def test_with_base_a_clean_pull_request_passes(tiny_archive) -> None:
    repo = tiny_archive.root
    git_init(repo)
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    append_sums(repo, NEW_ID)
    git(repo, "checkout", "-q", "-b", "pr")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add newbie")
    result = invoke("submit", "check", "--no-scores", "--base", "main", "--root", str(repo), str(folder))
    assert result.exit_code == 0, result.output
    assert "compared with `main`" in result.stdout


def test_usage_errors_exit_2(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    missing = invoke("submit", "check", "--root", str(repo), str(tmp_path / "nope"))
    assert missing.exit_code == 2
    assert missing.stderr.startswith("Error: ") and "does not exist" in missing.stderr
    folder = write_submission(tmp_path / NEW_ID, repo)
    no_archive = invoke("submit", "check", "--root", str(tmp_path), str(folder))
    assert no_archive.exit_code == 2 and "no archive/ folder" in no_archive.stderr
    bad_ref = invoke("submit", "check", "--base", "no-such-ref", "--root", str(repo), str(folder))
    assert bad_ref.exit_code == 2 and "--base no-such-ref: not a commit" in bad_ref.stderr


def test_report_shows_the_leaderboard_row_in_context(tmp_path) -> None:
    rows = []
    for i, (entry, cond, est) in enumerate([("m1", "A0", 0.9), ("m2", "A3", 0.7), ("ewma", "BASE", 0.6), ("newbie", "A3", 0.5),
                                             ("m3", "A1", 0.4), ("m4", "A0", 0.3), ("m5", "A0", 0.2), ("m6", "A0", 0.1)]):
        rows.append({"track": "all_origin", "split": "test", "policy": "canonical", "entry": entry, "kind": "model", "condition": cond,
                     "metric": "spearman", "estimate": str(est), "ci_low": str(est - 0.1), "ci_high": str(est + 0.1),
                     "n_fields": "3", "n_episodes": "15", "n_valid": "15", "n_invalid": "0"})
    rows.append(dict(rows[3], condition="A0", estimate="", ci_low="", ci_high=""))
    result = CheckResult(root=tmp_path, model_dir=tmp_path, model_id="newbie", in_archive=True, leaderboard=rows)
    result.stages = {"scores": StageStatus("passed", "3 rows")}
    result.accounting = [ConditionCount("A3", 15, 15, 14, 1, (("a weight is negative", 1),))]
    text = render_report(result)
    table = text[text.index("**test** split"):]
    assert "| 4 | **newbie** | A3 | **0.500** | [0.400, 0.600] | 3 | 15 / 15 |" in table
    assert "| 2 | m2 | A3 | 0.700 |" in table and "| 6 | m4 | A0 | 0.300 |" in table
    assert "| 1 | m1 |" not in table and "| 7 | m5 |" not in table
    assert "Undefined for A0" in table
    assert "| A3 | 15 | 15 | 14 | 1 | a weight is negative ×1 |" in text
    assert render_report(result) == text  # deterministic


def test_report_caps_the_problem_list(tmp_path) -> None:
    result = CheckResult(root=tmp_path, model_dir=tmp_path, model_id="x", in_archive=False)
    for i in range(250):
        result.add("submission", "MALFORMED", "x/predictions.jsonl", i + 1, "not JSON")
    text = render_report(result)
    assert "### Problems (250)" in text and "… and 50 more" in text
    assert "`x/predictions.jsonl:200`" in text and "`x/predictions.jsonl:201`" not in text


# ---------------------------------------------------------------- submit init
def test_init_writes_a_template_and_refuses_to_overwrite(tmp_path) -> None:
    folder = tmp_path / "my-model.v2"
    result = invoke("submit", "init", str(folder))
    assert result.exit_code == 0, result.output
    data = (folder / "model.json").read_bytes()
    assert list(json.loads(data)) == list(MODEL_KEYS)
    info, findings = parse_model_json("model.json", data, folder="my-model.v2")
    assert findings == [] and info.model_id == "my-model.v2"
    assert "rapgen agent run" in (folder / "README.md").read_text()
    again = invoke("submit", "init", str(folder))
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert (folder / "model.json").read_bytes() == data


def test_init_rejects_a_bad_model_id(tmp_path) -> None:
    result = invoke("submit", "init", str(tmp_path / "My Model"))
    assert result.exit_code == 2 and "not a valid model id" in result.stderr
    assert not (tmp_path / "My Model").exists()


def test_template_placeholders_fail_the_check(tiny_archive, tmp_path) -> None:
    from rapgen.kit import init_submission

    folder = tmp_path / NEW_ID
    write_submission(folder, tiny_archive.root)
    (folder / "model.json").unlink()
    init_submission(folder, today=date(2026, 11, 29))
    res = check_submission(tiny_archive.root, folder, run_scores=False, run_replay=False, run_site=False)
    assert sorted({p.keyword for p in res.problems}) == ["PLACEHOLDER"]
    assert {p.line for p in res.problems} == {3, 4, 8, 11}


def test_a_folder_name_that_is_no_model_id(tiny_archive, tmp_path) -> None:
    folder = write_submission(tmp_path / "My_Model", tiny_archive.root, model_id="my_model")
    result = invoke("submit", "check", "--no-scores", "--root", str(tiny_archive.root), str(folder))
    assert result.exit_code == 1
    assert "**FOLDER**" in result.stdout and f"`{folder}`: folder name 'My_Model' is not a valid model id" in result.stdout


# ---------------------------------------------------------------- escaping submission text
import pytest

from rapgen.submit.review.report import md_fence
from rapgen.text import escape_markdown as md_text
from rapgen.text import escape_terminal as visible
from rapgen.text import markdown_code as md_code


@pytest.mark.parametrize("text,shown", [
    ("plain words 2023-01-01", "plain words 2023-01-01"),
    ("a\nb\tc\r", "a\\x0ab\\x09c\\x0d"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("\x7f\x85\x9b", "\\x7f\\x85\\x9b"),
    ("ab\u202ecd\u2066", "ab\\u202ecd\\u2066"),
    ("bad \udcff byte", "bad \\xff byte"),
    ("Modèle 模型 ✅", "Modèle 模型 ✅"),
])
def test_visible(text, shown) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize("text,shown", [
    ("field_id call_index", "field_id call_index"),  # intraword underscores cannot be emphasis
    ("_em_ *b* **s**", "\\_em\\_ \\*b\\* \\*\\*s\\*\\*"),
    ("## h", "\\#\\# h"),
    ("<script>&amp;", "&lt;script&gt;&amp;amp;"),
    ("[a](b) ![i](u)", "\\[a\\](b) \\!\\[i\\](u)"),
    ("a | b", "a \\| b"),
    ("`c` ~~s~~ $m$ @u", "\\`c\\` \\~\\~s\\~\\~ \\$m\\$ \\@u"),
    ("https://x.example www.y.example", "https\\://x.example www\\.y.example"),
    ("back\\slash", "back\\\\slash"),
    ("line\n## two", "line\\\\x0a\\#\\# two"),
])
def test_md_text(text, shown) -> None:
    assert md_text(text) == shown


@pytest.mark.parametrize("text,kwargs,shown", [
    ("archive/models/x/a.json", {}, "`archive/models/x/a.json`"),
    ("a`b", {}, "``a`b``"),
    ("``` x", {}, "```` ``` x ````"),
    ("x`", {}, "`` x` ``"),
    (" a ", {}, "`  a  `"),
    ("", {}, "` `"),
    ("a|b", {"in_table": True}, "`a\\|b`"),
    ("a\nb", {}, "`a\\x0ab`"),
])
def test_md_code(text, kwargs, shown) -> None:
    assert md_code(text, **kwargs) == shown


def test_md_fence_cannot_be_closed_from_inside() -> None:
    assert md_fence(["abc", "````", "x\x1b"]) == ["`````", "abc", "````", "x\\x1b", "`````"]


# ---------------------------------------------------------------- structure
def test_keywords_come_from_the_finding_kind_not_its_wording(tiny_archive, monkeypatch) -> None:
    """Reworded parser messages keep their keywords: the check reads Finding.kind."""
    from rapgen.archive import Category, Finding, ProblemKind
    from rapgen.submit.review import files

    real = files.parse_predictions

    def reworded(path, data, fields, origins, **options):
        units, findings = real(path, data, fields, origins, **options)
        return units, findings + [Finding(path, None, Category.MALFORMED, "gap in the episodes", kind=ProblemKind.COVERAGE),
                                  Finding(path, 7, Category.MALFORMED, "seen before", kind=ProblemKind.DUPLICATE_UNIT),
                                  Finding(path, 8, Category.MALFORMED, "does not cover every episode (wording only)", kind=ProblemKind.SCHEMA)]

    monkeypatch.setattr(files, "parse_predictions", reworded)
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    append_sums(repo, NEW_ID)
    res = check_submission(repo, folder, run_scores=False, run_replay=False, run_site=False)
    got = {(p.keyword, p.detail) for p in res.problems}
    assert got == {("COVERAGE", "gap in the episodes"), ("DUPLICATE", "seen before"), ("MALFORMED", "does not cover every episode (wording only)")}


def test_review_package_shape() -> None:
    """No importlib, no private names from another module, modules <= 600 lines, functions <= 80."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "generator" / "rapgen" / "submit" / "review"
    for path in sorted(package.glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 600, path
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names]
                assert "importlib" not in names and getattr(node, "module", None) != "importlib", path
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rapgen."):
                    assert not any(n.startswith("_") for n in names), (path, names)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 80, (path, node.name)


def test_an_unwritable_report_path_is_a_usage_error(tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    append_sums(repo, NEW_ID)
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "file" / "r.md", tmp_path / "ro" / "r.md"):
        if target.parent.name == "ro":
            target.parent.mkdir()
            target.parent.chmod(0o500)
        result = invoke("submit", "check", "--no-scores", "--report", str(target), "--root", str(repo), str(folder))
        target.parent.chmod(0o700) if target.parent.name == "ro" else None
        if os.geteuid() == 0 and target.parent.name == "ro":
            continue  # root writes anywhere
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"Error: --report {target}: ") and "Traceback" not in result.output


def test_replay_beside_the_scores_reports_what_the_replay_in_process_reports(tiny_archive, monkeypatch) -> None:
    """The replay runs in a forked child while the scores are computed: the report (text and --json) is
    the same bytes as with the replay run in the checking process after the scores."""
    from rapgen.submit.review import overlay

    import shutil

    repo = tiny_archive.root
    models = repo / "archive" / "models"
    source = next(m for m in tiny_archive.model_ids if (models / m / "traces.jsonl").is_file())
    folder = models / NEW_ID
    folder.mkdir()
    for name in ("predictions.jsonl", "traces.jsonl"):
        shutil.copyfile(models / source / name, folder / name)
    (folder / "model.json").write_text((models / source / "model.json").read_text().replace(f'"{source}"', f'"{NEW_ID}"'))
    append_sums(repo, NEW_ID)
    args = ("submit", "check", "--resamples", "20", "--root", str(repo), str(folder))
    beside = [invoke(*args), invoke(*args, "--json")]
    monkeypatch.setattr(overlay, "in_child", lambda work: work)
    here = [invoke(*args), invoke(*args, "--json")]
    assert "**REPLAY** (Trace replay)" in beside[0].stdout  # the tiny archive's traces do not reproduce: differences reported
    assert [(r.exit_code, r.stdout) for r in beside] == [(r.exit_code, r.stdout) for r in here]


def test_in_child_gives_the_result_or_the_same_exception() -> None:
    import pytest

    from rapgen.errors import ScoringError
    from rapgen.submit.review.overlay import in_child

    assert in_child(lambda: {"calls": 3, "differences": []})() == {"calls": 3, "differences": []}

    def fails(exc: Exception):
        def work():
            raise exc
        return work

    with pytest.raises(Exception) as caught:
        in_child(fails(ScoringError("no index")))()
    assert caught.type.__name__ == "RapgenError" and str(caught.value) == "no index"
    with pytest.raises(Exception) as caught:
        in_child(fails(KeyError("field")))()
    assert caught.type.__name__ == "KeyError" and str(caught.value) == "'field'"
    parent = os.getpid()

    def only_here():
        if os.getpid() != parent:
            raise SystemExit  # the child ends without an outcome
        return "here"

    assert in_child(only_here)() == "here"
