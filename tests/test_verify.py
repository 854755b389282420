"""``rapgen verify``: one tampering per test, each asserting exit code, keyword and path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from factory import reseal
from rapgen.archive import write_assignments
from rapgen.cli import cli

FIELDS = "archive/benchmark/fields.jsonl"
PAPERS = "archive/benchmark/papers.parquet"
ASSIGN = "archive/benchmark/assignments.parquet"
CODEBOOKS = "archive/benchmark/codebooks.jsonl"
BLOCKS = "archive/benchmark/blocks.jsonl"
FIXED = "archive/search/manifest_fixed.jsonl"
LEDGER = "archive/provenance/FINAL_PARAMETER_LEDGER_V1.json"
PRED_A = "archive/models/model-a/predictions.jsonl"
TRACES_A = "archive/models/model-a/traces.jsonl"


def run(root: Path, *args: str):
    return CliRunner().invoke(cli, ["verify", "--root", str(root), *args])


def findings(root: Path, *args: str) -> tuple[int, list[dict]]:
    result = run(root, "--json", *args)
    return result.exit_code, json.loads(result.stdout)["findings"]


def assert_finding(root: Path, category: str, path: str, *, line: int | None = None, detail: str = "", args: tuple = ()) -> dict:
    code, found = findings(root, *args)
    assert code == 1, found
    matches = [f for f in found if f["category"] == category and f["path"] == path and (line is None or f["line"] == line)]
    assert matches, f"no {category} for {path} in {found}"
    if detail:
        assert any(detail in f["detail"] for f in matches), matches
    return matches[0]


def sums_lines(root: Path) -> list[bytes]:
    return (root / "SHA256SUMS").read_bytes().split(b"\n")[:-1]


def write_sums(root: Path, lines: list[bytes], *, trailing: bytes = b"\n") -> None:
    (root / "SHA256SUMS").write_bytes(b"\n".join(lines) + trailing)


def line_no(root: Path, path: str) -> int:
    for i, line in enumerate(sums_lines(root), start=1):
        if line.endswith(b"  " + path.encode()):
            return i
    raise AssertionError(path)


def edit_jsonl(root: Path, rel: str, edit) -> None:
    path = root / rel
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows = edit(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reseal(root)


# ------------------------------------------------------------------ good archive
def test_good_archive_verifies_and_sha256sum_agrees(tiny_archive):
    result = run(tiny_archive.root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("OK: 15 files")
    assert "structural invariants hold" in result.stdout
    check = subprocess.run(["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=tiny_archive.root, capture_output=True)
    assert check.returncode == 0, check.stderr


def test_json_report_on_success(tiny_archive):
    result = run(tiny_archive.root, "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["files_verified"] == 15 and report["findings"] == []
    assert report["bytes_verified"] == sum(p.stat().st_size for p in (tiny_archive.root / "archive").rglob("*") if p.is_file())


def test_quiet_prints_nothing_on_success(tiny_archive):
    result = run(tiny_archive.root, "--quiet")
    assert result.exit_code == 0 and result.output == ""


# ------------------------------------------------------------------ bytes
def test_flipped_byte_is_failed_with_expected_and_actual(tiny_archive):
    path = tiny_archive.root / FIELDS
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))
    f = assert_finding(tiny_archive.root, "FAILED", FIELDS, line=line_no(tiny_archive.root, FIELDS))
    assert f["expected"] != f["actual"] and len(f["actual"]) == 64
    # the invariants that read fields.jsonl are not evaluated, and say so
    assert_finding(tiny_archive.root, "NOT-EVALUATED", CODEBOOKS)


def test_truncated_parquet_is_failed(tiny_archive):
    path = tiny_archive.root / PAPERS
    path.write_bytes(path.read_bytes()[:100])
    assert_finding(tiny_archive.root, "FAILED", PAPERS)
    assert_finding(tiny_archive.root, "NOT-EVALUATED", FIXED)


def test_changed_digest_line_is_failed(tiny_archive):
    lines = sums_lines(tiny_archive.root)
    lines[0] = b"0" * 64 + lines[0][64:]
    write_sums(tiny_archive.root, lines)
    assert_finding(tiny_archive.root, "FAILED", lines[0][66:].decode(), line=1)


def test_text_output_names_keyword_and_path(tiny_archive):
    (tiny_archive.root / FIELDS).write_text("{}\n")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert f"FAILED {FIELDS}:" in result.stdout
    assert "FAILED: " in result.stderr and "finding" in result.stderr


# ------------------------------------------------------------------ completeness
def test_missing_file(tiny_archive):
    (tiny_archive.root / BLOCKS).unlink()
    assert_finding(tiny_archive.root, "MISSING", BLOCKS, line=line_no(tiny_archive.root, BLOCKS))


def test_unlisted_file(tiny_archive):
    (tiny_archive.root / "archive" / "benchmark" / "notes.txt").write_text("hello")
    assert_finding(tiny_archive.root, "UNLISTED", "archive/benchmark/notes.txt")


def test_unlisted_hidden_file(tiny_archive):
    (tiny_archive.root / "archive" / ".DS_Store").write_bytes(b"\0")
    assert_finding(tiny_archive.root, "UNLISTED", "archive/.DS_Store")


def test_missing_sha256sums(tiny_archive):
    (tiny_archive.root / "SHA256SUMS").unlink()
    assert_finding(tiny_archive.root, "MISSING", "SHA256SUMS")


def test_every_problem_is_reported_not_just_the_first(tiny_archive):
    (tiny_archive.root / BLOCKS).unlink()
    (tiny_archive.root / "archive" / "extra.bin").write_bytes(b"x")
    (tiny_archive.root / LEDGER).write_text("{}")
    code, found = findings(tiny_archive.root)
    assert code == 1
    assert {f["category"] for f in found} >= {"MISSING", "UNLISTED", "FAILED"}
    paths = [f["path"].encode() for f in found]
    assert paths == sorted(paths)


# ------------------------------------------------------------------ grammar
@pytest.mark.parametrize(
    "mangle, detail",
    [
        (lambda l: l[:64] + b" " + l[66:], "single space"),
        (lambda l: l[:64] + b"\t" + l[66:], "tab"),
        (lambda l: l[:60] + l[64:], "64 hex digits"),
        (lambda l: b"z" + l[1:], "not hexadecimal"),
        (lambda l: l[:66], "empty file name"),
    ],
    ids=["single-space", "tab", "short-digest", "non-hex", "empty-name"],
)
def test_malformed_lines(tiny_archive, mangle, detail):
    lines = sums_lines(tiny_archive.root)
    lines[2] = mangle(lines[2])
    write_sums(tiny_archive.root, lines)
    assert_finding(tiny_archive.root, "MALFORMED", "SHA256SUMS", line=3, detail=detail)


@pytest.mark.parametrize(
    "mangle",
    [
        lambda ls: [ls[0][:64].upper() + ls[0][64:]] + ls[1:],
        lambda ls: [ls[0][:64] + b" *" + ls[0][66:]] + ls[1:],
        lambda ls: [l + b"\r" for l in ls],
        lambda ls: [b"\xef\xbb\xbf" + ls[0]] + ls[1:],
        lambda ls: [b"# made by hand", b""] + ls,
        lambda ls: [b"SHA256 (" + ls[0][66:] + b") = " + ls[0][:64]] + ls[1:],
        lambda ls: [ls[0][:66] + b"./" + ls[0][66:]] + ls[1:],
    ],
    ids=["upper-hex", "binary-marker", "crlf", "bom", "comment-blank", "bsd", "dot-slash"],
)
def test_accepted_forms_warn_and_fail_under_strict(tiny_archive, mangle):
    write_sums(tiny_archive.root, mangle(sums_lines(tiny_archive.root)))
    lenient = run(tiny_archive.root)
    assert lenient.exit_code == 0, lenient.output
    assert "WARNING SHA256SUMS" in lenient.stderr
    strict = run(tiny_archive.root, "--strict")
    assert strict.exit_code == 1
    assert "MALFORMED SHA256SUMS" in strict.stdout and "--strict" in strict.stdout


def test_non_utf8_line(tiny_archive):
    lines = sums_lines(tiny_archive.root)
    lines.append(b"0" * 64 + b"  archive/\xff\xfe")
    write_sums(tiny_archive.root, lines)
    assert_finding(tiny_archive.root, "MALFORMED", "SHA256SUMS", line=len(lines), detail="UTF-8")


# ------------------------------------------------------------------ paths
@pytest.mark.parametrize(
    "path, detail",
    [
        (b"archive/../../etc/passwd", "'..'"),
        (b"/etc/passwd", "absolute"),
        (b"README.md", "outside archive/"),
        (b"archive//x", "empty path component"),
        (b"archive/./x", "'.' component"),
        (b"archive\\x", "backslash"),
        (b"SHA256SUMS", "itself"),
    ],
    ids=["dotdot", "absolute", "outside", "empty-component", "dot", "backslash", "self"],
)
def test_unsafe_paths_are_never_touched(tiny_archive, path, detail):
    lines = sums_lines(tiny_archive.root) + [b"0" * 64 + b"  " + path]
    write_sums(tiny_archive.root, sorted(lines, key=lambda l: l[66:]))
    code, found = findings(tiny_archive.root)
    assert code == 1
    unsafe = [f for f in found if f["category"] == "UNSAFE"]
    assert len(unsafe) == 1 and detail in unsafe[0]["detail"], found
    assert not any(f["category"] == "FAILED" for f in found)


def test_control_character_is_escaped(tiny_archive):
    lines = sums_lines(tiny_archive.root) + [b"0" * 64 + b"  archive/bad\x1bname"]
    write_sums(tiny_archive.root, lines)
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "UNSAFE archive/bad\\x1bname" in result.stdout
    assert "\x1b" not in result.output


def test_duplicate_line(tiny_archive):
    lines = sums_lines(tiny_archive.root)
    write_sums(tiny_archive.root, lines[:3] + [lines[2]] + lines[3:])
    f = assert_finding(tiny_archive.root, "DUPLICATE", lines[2][66:].decode(), line=4)
    assert "first on line 3" in f["detail"]


def test_case_collision_is_a_conflict(tiny_archive):
    lines = sums_lines(tiny_archive.root)
    first = lines[0][66:]
    write_sums(tiny_archive.root, lines + [lines[0][:66] + first.upper().replace(b"ARCHIVE/", b"archive/")])
    assert_finding(tiny_archive.root, "CONFLICT", first.upper().replace(b"ARCHIVE/", b"archive/").decode())


def test_file_that_is_also_a_folder_is_a_conflict(tiny_archive):
    lines = sums_lines(tiny_archive.root) + [b"0" * 64 + b"  archive/benchmark"]
    write_sums(tiny_archive.root, lines)
    assert_finding(tiny_archive.root, "CONFLICT", "archive/benchmark")


# ------------------------------------------------------------------ file types
def test_listed_file_replaced_by_symlink(tiny_archive):
    target = tiny_archive.root / BLOCKS
    saved = target.read_bytes()
    target.unlink()
    outside = tiny_archive.root / "outside.jsonl"
    outside.write_bytes(saved)
    target.symlink_to(outside)
    f = assert_finding(tiny_archive.root, "SYMLINK", BLOCKS)
    assert "not followed" in f["detail"]


def test_unlisted_symlink_and_loop(tiny_archive):
    loop = tiny_archive.root / "archive" / "loop"
    loop.symlink_to(loop)
    assert_finding(tiny_archive.root, "SYMLINK", "archive/loop")


def test_symlinked_folder_is_not_followed(tiny_archive):
    models = tiny_archive.root / "archive" / "models"
    shutil.move(models, tiny_archive.root / "elsewhere")
    models.symlink_to(tiny_archive.root / "elsewhere")
    f = assert_finding(tiny_archive.root, "SYMLINK", "archive/models/model-a/model.json")
    assert "inside symbolic link archive/models" in f["detail"]


def test_fifo_never_blocks(tiny_archive):
    os.mkfifo(tiny_archive.root / "archive" / "pipe")
    assert_finding(tiny_archive.root, "NOT-REGULAR", "archive/pipe", detail="FIFO")


def test_listed_fifo_never_blocks(tiny_archive):
    target = tiny_archive.root / BLOCKS
    target.unlink()
    os.mkfifo(target)
    assert_finding(tiny_archive.root, "NOT-REGULAR", BLOCKS)


def test_folder_where_a_file_is_listed(tiny_archive):
    target = tiny_archive.root / BLOCKS
    target.unlink()
    target.mkdir()
    assert_finding(tiny_archive.root, "NOT-REGULAR", BLOCKS, detail="folder")


def test_non_utf8_file_name_is_escaped(tiny_archive):
    name = os.fsencode(tiny_archive.root / "archive") + b"/bad\xffname"
    with open(name, "wb") as handle:
        handle.write(b"x")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "UNLISTED archive/bad\\xffname" in result.stdout


# ------------------------------------------------------------------ invariants
def test_codebook_with_seven_directions(tiny_archive):
    edit_jsonl(tiny_archive.root, CODEBOOKS, lambda rows: [dict(r, directions=r["directions"][:7]) if i == 1 else r for i, r in enumerate(rows)])
    assert_finding(tiny_archive.root, "INVARIANT", CODEBOOKS, line=2, detail="exactly eight directions")


def test_codebook_slots_out_of_order(tiny_archive):
    def swap(rows):
        d = rows[0]["directions"]
        d[0], d[1] = d[1], d[0]
        return rows
    edit_jsonl(tiny_archive.root, CODEBOOKS, swap)
    assert_finding(tiny_archive.root, "INVARIANT", CODEBOOKS, line=1, detail="slot D0")


def test_field_in_no_block(tiny_archive):
    edit_jsonl(tiny_archive.root, BLOCKS, lambda rows: [dict(r, fields=[f for f in r["fields"] if f != "gamma"]) if "gamma" in r["fields"] and len(r["fields"]) > 1 else r for r in rows if r["fields"] != ["gamma"]])
    assert_finding(tiny_archive.root, "INVARIANT", BLOCKS, detail="'gamma' is in no block")


def test_block_split_differs_from_field_split(tiny_archive):
    edit_jsonl(tiny_archive.root, BLOCKS, lambda rows: [dict(r, split="dev") if r["block_id"] == "b2" else r for r in rows])
    assert_finding(tiny_archive.root, "INVARIANT", BLOCKS, detail="'gamma' is test but its block 'b2' is dev")


def _edit_ledger(root: Path, edit) -> None:
    table = pq.read_table(root / ASSIGN).to_pydict()
    edit(table)
    write_assignments(root / ASSIGN, table)
    reseal(root)


def test_duplicate_membership(tiny_archive):
    def dup(t):
        for k in t:
            t[k].append(t[k][0])
    _edit_ledger(tiny_archive.root, dup)
    assert_finding(tiny_archive.root, "INVARIANT", ASSIGN, detail="(arxiv_id, field_id) is not unique")


def test_membership_of_an_unknown_or_missing_field(tiny_archive):
    def bad(t):
        t["field_id"][0] = "nope"
        t["field_id"][1] = None
    _edit_ledger(tiny_archive.root, bad)
    code, found = findings(tiny_archive.root)
    details = [f["detail"] for f in found if f["path"] == ASSIGN and "not a field of fields.jsonl" in f["detail"]]
    assert code == 1 and len(details) == 1
    assert details[0].startswith("field_id is not a field of fields.jsonl: 2 rows (e.g. ")
    assert "nope" in details[0] and "<null>" in details[0]


def test_secondary_on_a_single_row(tiny_archive):
    def bad(t):
        i = t["assignment_type"].index("single")
        t["secondary"][i] = "D7" if t["primary"][i] != "D7" else "D6"
    _edit_ledger(tiny_archive.root, bad)
    assert_finding(tiny_archive.root, "INVARIANT", ASSIGN, detail="only present for boundary and bridge")


def test_other_row_with_a_direction(tiny_archive):
    def bad(t):
        i = t["assignment_type"].index("other")
        t["primary"][i] = "D1"
    _edit_ledger(tiny_archive.root, bad)
    assert_finding(tiny_archive.root, "INVARIANT", ASSIGN, detail="an 'other' row must have primary 'other'")


def test_manifest_count_and_hash_rebuilt_from_ledger(tiny_archive):
    edit_jsonl(tiny_archive.root, FIXED, lambda rows: [dict(r, n_papers=r["n_papers"] + 1, ids_sha256="0" * 64) if i == 0 else r for i, r in enumerate(rows)])
    code, found = findings(tiny_archive.root)
    details = [f["detail"] for f in found if f["path"] == FIXED]
    assert code == 1
    assert any("n_papers" in d for d in details) and any("ids_sha256" in d for d in details)


def test_manifest_paper_on_origin(tiny_archive):
    edit_jsonl(tiny_archive.root, FIXED, lambda rows: [dict(r, max_date=r["origin"]) if i == 0 else r for i, r in enumerate(rows)])
    assert_finding(tiny_archive.root, "INVARIANT", FIXED, detail="on or after its origin")


def test_manifest_missing_episode(tiny_archive):
    edit_jsonl(tiny_archive.root, FIXED, lambda rows: rows[1:])
    assert_finding(tiny_archive.root, "INVARIANT", FIXED, detail="has no line")


def test_prediction_for_unknown_field(tiny_archive):
    edit_jsonl(tiny_archive.root, PRED_A, lambda rows: [dict(r, field_id="nope") if i == 4 else r for i, r in enumerate(rows)])
    assert_finding(tiny_archive.root, "INVARIANT", PRED_A, line=5, detail="not a field of this archive")


def test_trace_beyond_the_call_cap(tiny_archive):
    edit_jsonl(tiny_archive.root, TRACES_A, lambda rows: [dict(r, call_index=20) if i == 1 else r for i, r in enumerate(rows)])
    assert_finding(tiny_archive.root, "INVARIANT", TRACES_A, line=2, detail="beyond the cap of 20")


def test_trace_returning_a_paper_from_after_the_origin(tiny_archive):
    table = pq.read_table(tiny_archive.root / ASSIGN).to_pydict()
    late = next(a for a, f, d in zip(table["arxiv_id"], table["field_id"], table["first_submitted"]) if f == "alpha" and d.isoformat() >= "2023-01-01")
    edit_jsonl(tiny_archive.root, TRACES_A, lambda rows: [dict(r, returned_ids=[late] + r["returned_ids"][1:]) if i == 0 else r for i, r in enumerate(rows)])
    assert_finding(tiny_archive.root, "INVARIANT", TRACES_A, line=1, detail=late)


def test_bad_model_folder_name_and_stray_file(tiny_archive):
    models = tiny_archive.root / "archive" / "models"
    shutil.copytree(models / "model-b", models / "Bad_Model")
    (models / "model-a" / "notes.txt").write_text("x")
    reseal(tiny_archive.root)
    assert_finding(tiny_archive.root, "INVARIANT", "archive/models/Bad_Model", detail="does not match")
    assert_finding(tiny_archive.root, "INVARIANT", "archive/models/model-a/notes.txt", detail="unexpected file")


def test_ledger_constant_missing(tiny_archive):
    path = tiny_archive.root / LEDGER
    ledger = json.loads(path.read_text())
    del ledger["holt"]["beta"]
    path.write_text(json.dumps(ledger))
    reseal(tiny_archive.root)
    assert_finding(tiny_archive.root, "INVARIANT", LEDGER, detail="holt.beta")


def test_required_file_absent_from_archive(tiny_archive):
    (tiny_archive.root / BLOCKS).unlink()
    reseal(tiny_archive.root)
    assert_finding(tiny_archive.root, "INVARIANT", BLOCKS, detail="required file")


# ------------------------------------------------------------------ usage and internal errors
def test_root_not_a_directory_is_usage_error(tmp_path):
    result = run(tmp_path / "nope")
    assert result.exit_code == 2
    assert "not a directory" in result.stderr


def test_internal_error_is_one_line_exit_3(tiny_archive, monkeypatch):
    import rapgen.archive.rap_release as rap

    monkeypatch.setattr(rap, "check_invariants", lambda *a: 1 / 0)
    result = run(tiny_archive.root)
    assert result.exit_code == 3
    assert result.stderr.strip().count("\n") == 0
    assert "internal error: ZeroDivisionError" in result.stderr and "Traceback" not in result.stderr
    debug = run(tiny_archive.root, "--debug")
    assert debug.exit_code == 3 and "Traceback" in debug.stderr


def test_empty_folders_are_unlisted(tiny_archive):
    (tiny_archive.root / "archive" / "junk").mkdir()
    (tiny_archive.root / "archive" / "models" / "empty-model").mkdir()
    assert_finding(tiny_archive.root, "UNLISTED", "archive/junk", detail="empty folder")
    assert_finding(tiny_archive.root, "UNLISTED", "archive/models/empty-model", detail="empty folder")


def test_a_malformed_line_is_not_also_a_missing_file(tiny_archive):
    lines = sums_lines(tiny_archive.root)
    n = line_no(tiny_archive.root, BLOCKS)
    lines[n - 1] = lines[n - 1][:64] + b" " + lines[n - 1][66:]
    write_sums(tiny_archive.root, lines)
    code, found = findings(tiny_archive.root)
    assert code == 1
    assert not any("required file" in f["detail"] for f in found), found
    assert_finding(tiny_archive.root, "UNLISTED", BLOCKS)


def test_a_short_codebook_is_one_finding(tiny_archive):
    edit_jsonl(tiny_archive.root, CODEBOOKS, lambda rows: [dict(r, directions=r["directions"][:7]) if i == 0 else r for i, r in enumerate(rows)])
    code, found = findings(tiny_archive.root)
    assert [f["detail"] for f in found if f["path"] == CODEBOOKS] == [
        "field 'alpha' must have exactly eight directions D0–D7, found 7"
    ]


@pytest.mark.parametrize(
    "weight, reason",
    [("1" + "0" * 400, "not finite"), ("-1" + "0" * 400, "not finite")],
    ids=["huge-int", "huge-negative-int"],
)
def test_huge_integer_weight_is_an_invalid_unit_not_a_crash(tiny_archive, weight, reason):
    from rapgen.archive import Archive

    path = tiny_archive.root / PRED_A
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    lines[0] = json.dumps(row).replace(f'"D0": {row["weights"]["D0"]}', f'"D0": {weight}')
    path.write_text("\n".join(lines) + "\n")
    reseal(tiny_archive.root)
    assert run(tiny_archive.root).exit_code == 0
    unit = Archive(tiny_archive.root).predictions("model-a")[0]
    assert not unit.valid and reason in unit.reason


@pytest.mark.parametrize(
    "text, detail",
    [("[" * 100000 + "]" * 100000, "nested too deeply"), ('{"a": ' + "1" * 5000 + "}", "4300 digits")],
    ids=["deep-nesting", "5000-digit-int"],
)
def test_unparseable_json_is_malformed_not_a_crash(tiny_archive, text, detail):
    path = tiny_archive.root / PRED_A
    path.write_text(path.read_text() + text + "\n")
    reseal(tiny_archive.root)
    code, found = findings(tiny_archive.root)
    assert code == 1
    assert any(f["path"] == PRED_A and detail in f["detail"] for f in found), found


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_option_gives_the_same_report(tiny_archive, jobs):
    (tiny_archive.root / FIELDS).write_text("{}\n")
    code, found = findings(tiny_archive.root, "--jobs", jobs)
    assert code == 1 and sorted(f["category"] for f in found if f["path"] == FIELDS) == ["FAILED", "NOT-EVALUATED"]


def test_jobs_option_rejects_zero(tiny_archive):
    result = run(tiny_archive.root, "--jobs", "0")
    assert result.exit_code == 2 and "--jobs" in result.output


# ---------------------------------------------------------------- the verified archive
from rapgen.archive import (  # noqa: E402
    Archive,
    ProblemKind,
    RapRelease,
    VerifiedRoot,
    in_shard,
    open_verified,
    shard_ids_sha256,
    sha256_file,
    verify_archive,
)
from rapgen.archive import sums_lines as classify_sums  # noqa: E402


def test_verify_builds_the_verified_root_from_what_it_hashed(tiny_archive):
    report = verify_archive(tiny_archive.root)
    root = report.verified
    assert report.ok and isinstance(root, VerifiedRoot) and root.format == "rap-archive"
    assert root.manifest_sha256 == sha256_file(tiny_archive.root / "SHA256SUMS")
    assert root.digests[FIELDS] == sha256_file(tiny_archive.root / FIELDS)
    assert set(root.digests) == {line.path for line in classify_sums((tiny_archive.root / "SHA256SUMS").read_bytes())}
    archive = root.release()
    assert isinstance(archive, RapRelease) and archive.current and root.release(1) is archive  # format 1: one release
    assert archive.manifest_sha256 == root.manifest_sha256 and archive.files == root.digests
    plain = Archive(tiny_archive.root)
    for name in ("info", "origins", "ledger", "fields", "field_map", "codebooks", "blocks", "model_ids", "models", "synthetic"):
        assert getattr(archive, name) == getattr(plain, name), name
    for regime in ("fixed", "expanding"):
        assert archive.manifest(regime) == plain.manifest(regime)
    for mid in archive.model_ids:
        assert archive.predictions(mid) == plain.predictions(mid)
        assert archive.has_traces(mid) == plain.has_traces(mid)
        assert archive.traces(mid) == plain.traces(mid)


def test_verified_archive_never_rereads_a_document(tiny_archive, monkeypatch):
    archive = open_verified(tiny_archive.root).release()
    (tiny_archive.root / FIELDS).write_text("tampered after verification\n")
    monkeypatch.setattr(Archive, "read_bytes", lambda self, rel: pytest.fail(f"read {rel} again"))
    assert len(archive.fields) == len(tiny_archive.field_ids)
    assert archive.predictions("model-a")


def test_a_failed_verification_has_no_archive(tiny_archive):
    (tiny_archive.root / FIELDS).write_text("x")
    report = verify_archive(tiny_archive.root)
    assert not report.ok and report.verified is None
    with pytest.raises(Exception, match="failed verification with"):
        open_verified(tiny_archive.root)


def test_invariant_findings_keep_the_parser_kind(tiny_archive):
    path = tiny_archive.root / PRED_A
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0], *lines]))  # the first unit twice
    reseal(tiny_archive.root)
    report = verify_archive(tiny_archive.root)
    dup = [f for f in report.errors if f.kind is ProblemKind.DUPLICATE_UNIT]
    assert len(dup) == 1 and dup[0].path == PRED_A and dup[0].line == 2


# ---------------------------------------------------------------- SHA256SUMS lines for the PR check
@pytest.mark.parametrize(
    "raw, canonical, notes, error",
    [
        (b"a" * 64 + b"  archive/x.json", True, (), ""),
        (b"A" * 64 + b"  archive/x.json", False, ("upper-case hex digest",), ""),
        (b"a" * 64 + b" *archive/x.json", False, ("binary marker ' *'",), ""),
        (b"a" * 64 + b"  ./archive/x.json", False, ("leading './' on path",), ""),
        (b"a" * 64 + b"  archive/x y.json", False, (), ""),  # parses, but not the canonical character set
        (b"SHA256 (archive/x.json) = " + b"a" * 64, False, ("BSD-style 'SHA256 (path) = hex' line",), ""),
        (b"# note", False, ("comment line",), ""),
        (b"a" * 63 + b"  archive/x.json", False, (), "digest must be 64 hex digits, found 63 characters"),
        (b"a" * 64 + b" archive/x.json", False, (), "single space between digest and path (expected two spaces)"),
    ],
)
def test_sums_lines_classify_every_form(raw, canonical, notes, error):
    (line,) = classify_sums(raw + b"\n")
    assert (line.canonical, line.notes, line.error) == (canonical, notes, error)
    assert line.digest in (None, "a" * 64)


def test_sums_lines_crlf_and_bom_are_notes_on_their_line():
    first, second = classify_sums(b"\xef\xbb\xbf" + b"a" * 64 + b"  archive/a\r\n" + b"b" * 64 + b"  archive/b\n")
    assert first.notes == ("leading byte-order mark", "CRLF line ending") and first.path == "archive/a"
    assert second.canonical and second.line == 2


# ---------------------------------------------------------------- the shard rule
def test_shard_rule():
    from datetime import date

    origin, start = date(2024, 1, 1), date(2023, 7, 1)
    assert in_shard(date(2023, 7, 1), origin, start) and in_shard(date(2023, 12, 31), origin, start)
    assert not in_shard(date(2024, 1, 1), origin, start) and not in_shard(date(2023, 6, 30), origin, start)
    assert in_shard(date(1990, 1, 1), origin, None)
    # ids sorted by bytes ("B" < "a"), joined by "\n", no trailing newline; the empty shard hashes ""
    import hashlib

    assert shard_ids_sha256(["a", "B"]) == hashlib.sha256(b"B\na").hexdigest()
    assert shard_ids_sha256([]) == hashlib.sha256(b"").hexdigest()


# ---------------------------------------------------------------- adversarial: a finding or a usage error, never exit 3
def _edit_json(root: Path, rel: str, change) -> None:
    path = root / rel
    obj = json.loads(path.read_text())
    change(obj)
    path.write_text(json.dumps(obj))
    reseal(root)


@pytest.mark.parametrize(
    "change, detail",
    [
        (lambda o: o.update(window_months=10**6), "must be at most 1200 months"),
        (lambda o: o.update(window_months=10**400), "must be at most 1200 months"),
        (lambda o: o.update(history_windows=10**9), "must be at most 1200 months"),
        (lambda o: o.update(origins=["0001-01-01"], strict_origin="0001-01-01"), "outside years 1–9999"),
        (lambda o: o.update(origins=["9999-12-01"], strict_origin="9999-12-01"), "outside years 1–9999"),
    ],
)
def test_origins_that_would_leave_the_calendar_are_findings(tiny_archive, change, detail):
    ORIGINS_REL = "archive/benchmark/origins.json"
    _edit_json(tiny_archive.root, ORIGINS_REL, change)
    assert_finding(tiny_archive.root, "INVARIANT", ORIGINS_REL, detail=detail)


def test_largest_finite_weights_verify(tiny_archive):
    path = tiny_archive.root / PRED_A
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if row["weights"] is not None:
            row["weights"] = {k: 1.7e308 for k in row["weights"]}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reseal(tiny_archive.root)
    result = run(tiny_archive.root)
    assert result.exit_code == 0, result.output
    units = open_verified(tiny_archive.root).release().predictions("model-a")
    assert all(u.weights == (0.125,) * 8 for u in units if u.valid)


@pytest.mark.parametrize("name", ["x\u202eevil.json", "x\x1b[2J.json", "x\x9b31m.json", "x\rfake OK.json"])
def test_hostile_file_names_are_escaped_in_every_output(tiny_archive, name):
    (tiny_archive.root / "archive" / "models" / "model-a" / name).write_text("{}")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    for bad in ("\u202e", "\x1b", "\x9b", "\r"):
        assert bad not in result.output
    assert "UNLISTED archive/models/model-a/x\\" in result.stdout


def test_hostile_text_in_a_document_is_escaped(tiny_archive):
    _edit_json(tiny_archive.root, "archive/models/model-a/model.json", lambda o: o.update({"k\x1b[31m\u202e": 1}))
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "unknown key 'k\\x1b[31m\\u202e'" in result.stdout
    assert "\x1b" not in result.output and "\u202e" not in result.output


def test_corrupt_parquet_is_a_finding(tiny_archive):
    (tiny_archive.root / PAPERS).write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    reseal(tiny_archive.root)
    assert_finding(tiny_archive.root, "INVARIANT", PAPERS, detail="not a readable parquet file")


def test_verify_internal_error_is_one_line_and_debug_shows_traceback(tiny_archive, monkeypatch):
    def boom(*_a, **_k):
        raise RuntimeError("bug")

    monkeypatch.setattr("rapgen.archive.verify.walk", boom)
    result = run(tiny_archive.root)
    assert result.exit_code == 3
    assert result.stderr.splitlines() == ["Error: internal error: RuntimeError: bug (rerun with --debug for a traceback)"]
    assert "Traceback" in run(tiny_archive.root, "--debug").stderr


def test_verify_missing_root_is_a_usage_error(tmp_path):
    result = run(tmp_path / "nope")
    assert result.exit_code == 2 and result.stderr.strip().endswith("nope: the root is not a directory")


# ---------------------------------------------------------------- parse once per build
DOCUMENT_PARSERS = (
    "parse_archive_json", "parse_origins", "parse_ledger", "parse_fields", "parse_codebooks", "parse_blocks",
    "parse_manifest", "parse_model_json", "parse_predictions", "parse_traces",
)


def test_a_build_parses_every_document_exactly_once(tiny_archive, tmp_path, monkeypatch):
    """Instrumented run_build: every archive document goes through its parser once
    (while being verified), and no document is read from disk again afterwards."""
    import collections

    import rapgen.archive.parse as parse_module
    import rapgen.archive.parse_child as parse_child
    from rapgen.pipeline import run_build

    monkeypatch.setattr(parse_child, "ENABLED", False)  # count this process's parses (no child parsing ahead)

    parsed: collections.Counter = collections.Counter()
    for name in DOCUMENT_PARSERS:
        real = getattr(parse_module, name)

        def counting(path, data, *args, _real=real, **kwargs):
            parsed[path] += 1
            return _real(path, data, *args, **kwargs)

        monkeypatch.setattr(parse_module, name, counting)
    reread: collections.Counter = collections.Counter()
    real_read = Archive.read_bytes
    monkeypatch.setattr(Archive, "read_bytes", lambda self, rel: (reread.update([rel]), real_read(self, rel))[1])

    run_build(tiny_archive.root, tmp_path / "site", resamples=20, work_dir=tmp_path / "work")
    documents = [line.path for line in classify_sums((tiny_archive.root / "SHA256SUMS").read_bytes()) if not line.path.endswith(".parquet")]
    assert sorted(parsed) == sorted(documents)
    assert set(parsed.values()) == {1}, parsed
    assert not set(reread) & set(documents), reread


# ------------------------------------------------------------------ the DuckDB checks on their own thread
@pytest.mark.parametrize("ledger_sound", [True, False])
def test_ledger_checks_on_their_thread_leave_every_finding_in_its_place(tiny_archive, monkeypatch, ledger_sound):
    """The papers, membership, manifest and returned-paper checks run on a thread beside the model
    files' checks; the structural findings (order and kind included) and what was kept are those
    of running every check in turn."""
    from rapgen.archive import invariants, rap_release, verify_archive

    root = tiny_archive.root
    table = pq.read_table(root / ASSIGN).to_pydict()
    late = next(a for a, f, d in zip(table["arxiv_id"], table["field_id"], table["first_submitted"])
                if f == "alpha" and d.isoformat() >= "2023-01-01")
    edit_jsonl(root, TRACES_A, lambda rows: [dict(r, returned_ids=[late] + r["returned_ids"][1:]) if i == 0 else r
                                             for i, r in enumerate(rows)])
    edit_jsonl(root, FIXED, lambda rows: [dict(r, n_papers=r["n_papers"] + 1) if i == 0 else r for i, r in enumerate(rows)])
    edit_jsonl(root, PRED_A, lambda rows: [dict(r, field_id="nope") if i == 4 else r for i, r in enumerate(rows)])
    (root / "archive" / "models" / "model-b" / "notes.txt").write_text("x")
    if not ledger_sound:
        _edit_ledger(root, lambda t: t["field_id"].__setitem__(0, "nope"))
    reseal(root)
    seen = []
    real = rap_release.check_invariants

    def spy(*args, **kwargs):
        report = real(*args, **kwargs)
        seen.append(([(f, f.kind) for f in report.findings], list(report.parsed.traces), list(report.parsed.manifests)))
        return report

    monkeypatch.setattr(rap_release, "check_invariants", spy)
    threaded = verify_archive(root).to_dict()
    monkeypatch.setattr(invariants, "THREADED", False)
    in_turn = verify_archive(root).to_dict()
    assert seen[0] == seen[1] and threaded == in_turn
    details = [f.detail for f, _ in seen[0][0]]
    assert any("not a field of this archive" in d for d in details)
    assert any("n_papers" in d for d in details) == any(late in d for d in details) == ledger_sound
    assert any("not a field of fields.jsonl" in d for d in details) != ledger_sound
