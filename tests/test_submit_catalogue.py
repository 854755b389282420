"""The catalogue of bad submissions: each case changes one thing in a good
submission and asserts the exit code, the keyword, the reported file and line,
and that nothing under the repository root was written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from test_submit_support import (
    NEW_ID,
    append_sums,
    git_init,
    good_traces,
    model_json,
    read_jsonl,
    tree_digest,
    write_submission,
)

PRED = f"archive/models/{NEW_ID}/predictions.jsonl"
TRACES = f"archive/models/{NEW_ID}/traces.jsonl"
MODEL = f"archive/models/{NEW_ID}/model.json"


@dataclass(frozen=True)
class Case:
    id: str
    keyword: str  # expected keyword in the report ("" for a passing case)
    where: str  # expected "path:line" (or path) in the report
    text: str  # expected words of the message
    pre: Callable | None = None  # (folder, root) -> None, before SHA256SUMS lines are added
    post: Callable | None = None  # (folder, root) -> None, after
    exit: int = 1
    base: bool = False  # run with --base main (a git repo at the base commit)


# ---------------------------------------------------------------- mutators
def lines_of(folder: Path, name: str = "predictions.jsonl") -> list[str]:
    return (folder / name).read_text().split("\n")[:-1]


def write_lines(folder: Path, lines: list[str], name: str = "predictions.jsonl") -> None:
    (folder / name).write_text("".join(l + "\n" for l in lines))


def set_raw(n: int, text: str, name: str = "predictions.jsonl"):
    def mutate(folder: Path, root: Path) -> None:
        lines = lines_of(folder, name)
        lines[n - 1] = text
        write_lines(folder, lines, name)
    return mutate


def edit(n: int, fn: Callable[[dict], None], name: str = "predictions.jsonl"):
    def mutate(folder: Path, root: Path) -> None:
        lines = lines_of(folder, name)
        obj = json.loads(lines[n - 1])
        fn(obj)
        lines[n - 1] = json.dumps(obj)
        write_lines(folder, lines, name)
    return mutate


def weight_literal(n: int, literal: str):
    """Line n with D0 written as the raw JSON text ``literal``."""
    def mutate(folder: Path, root: Path) -> None:
        lines = lines_of(folder)
        obj = json.loads(lines[n - 1])
        obj["weights"]["D0"] = "__X__"
        lines[n - 1] = json.dumps(obj).replace('"__X__"', literal)
        write_lines(folder, lines)
    return mutate


def drop_lines(pred: Callable[[dict], bool]):
    def mutate(folder: Path, root: Path) -> None:
        write_lines(folder, [l for l in lines_of(folder) if not pred(json.loads(l))])
    return mutate


def append_line(obj_or_text, name: str = "predictions.jsonl"):
    def mutate(folder: Path, root: Path) -> None:
        lines = lines_of(folder, name)
        lines.append(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
        write_lines(folder, lines, name)
    return mutate


def model(**changes):
    def mutate(folder: Path, root: Path) -> None:
        (folder / "model.json").write_text(json.dumps(model_json(**changes), indent=2) + "\n")
    return mutate


def model_raw(text: str):
    def mutate(folder: Path, root: Path) -> None:
        (folder / "model.json").write_text(text)
    return mutate


def remove(name: str):
    def mutate(folder: Path, root: Path) -> None:
        (folder / name).unlink()
    return mutate


def add_state_units(folder: Path, root: Path) -> None:
    lines = lines_of(folder)
    for l in list(lines):
        obj = json.loads(l)
        if obj["condition"] == "A1":
            obj["condition"] = "A2"
            lines.append(json.dumps(obj))
    write_lines(folder, lines)


def trace_edit(n: int, fn: Callable[[dict], None]):
    return edit(n, fn, "traces.jsonl")


def trace_append(obj: dict):
    return append_line(obj, "traces.jsonl")


def beyond_cap(folder: Path, root: Path) -> None:
    first = read_jsonl(folder / "traces.jsonl")[0]
    extra = [dict(first, call_index=k) for k in range(2, 21)]
    (folder / "traces.jsonl").write_text("".join(json.dumps(o) + "\n" for o in read_jsonl(folder / "traces.jsonl") + extra))


def future_paper(folder: Path, root: Path) -> None:
    """Line 1 (alpha, 2023-01-01, A1) returns a paper first submitted after its origin."""
    later = good_traces(root)[4]["returned_ids"][0]  # a paper of the 2023-07-01 fixed shard
    lines = lines_of(folder, "traces.jsonl")
    obj = json.loads(lines[0])
    obj["returned_ids"] = obj["returned_ids"][:7] + [later]
    lines[0] = json.dumps(obj)
    write_lines(folder, lines, "traces.jsonl")


def other_field_paper(folder: Path, root: Path) -> None:
    from test_submit_support import shard_papers

    alpha = {a for a, _ in shard_papers(root, "alpha", "2023-01-01", "fixed")}
    gamma = [a for a, _ in shard_papers(root, "gamma", "2023-01-01", "fixed") if a not in alpha]
    trace_edit(1, lambda o: o.update(returned_ids=o["returned_ids"][:7] + [gamma[0]]))(folder, root)


def old_paper_in_fixed(folder: Path, root: Path) -> None:
    from test_submit_support import shard_papers

    old = shard_papers(root, "alpha", "2023-07-01", "expanding")[-1][0]  # oldest paper, long before the window
    trace_edit(5, lambda o: o.update(returned_ids=o["returned_ids"][:7] + [old]))(folder, root)


def symlink_traces(folder: Path, root: Path) -> None:
    real = root.parent / "elsewhere.jsonl"
    (folder / "traces.jsonl").rename(real)
    (folder / "traces.jsonl").symlink_to(real)


def flip_sums_digest(path_suffix: str):
    def mutate(folder: Path, root: Path) -> None:
        sums = root / "SHA256SUMS"
        out = []
        for line in sums.read_text().splitlines():
            if line.endswith(path_suffix):
                line = ("0" if line[0] != "0" else "1") + line[1:]
            out.append(line)
        sums.write_text("".join(l + "\n" for l in out))
    return mutate


def sums_transform(fn: Callable[[list[str]], list[str]]):
    def mutate(folder: Path, root: Path) -> None:
        sums = root / "SHA256SUMS"
        sums.write_text("".join(l + "\n" for l in fn(sums.read_text().splitlines())))
    return mutate


def after_seal_edit(folder: Path, root: Path) -> None:
    with open(folder / "predictions.jsonl", "a") as handle:
        handle.write("")
    text = (folder / "model.json").read_text().replace("Newbie 1", "Newbie 2")
    (folder / "model.json").write_text(text)


def touch_outside(folder: Path, root: Path) -> None:
    (root / "README.md").write_text("changed\n")


def flip_frozen(folder: Path, root: Path) -> None:
    p = root / "archive" / "benchmark" / "fields.jsonl"
    data = bytearray(p.read_bytes())
    data[5] ^= 0x01
    p.write_bytes(bytes(data))


def stray_model_line(folder: Path, root: Path) -> None:
    other = root / "archive" / "models" / "zzz-other"
    other.mkdir()
    (other / "model.json").write_text("{}\n")
    append_sums(root, "zzz-other")


L1 = {"field_id": "alpha", "origin": "2023-01-01", "condition": "A0"}

CASES = [
    # ---- predictions.jsonl: malformed file (the whole submission is rejected)
    Case("not-json", "MALFORMED", f"{PRED}:3", "not JSON", pre=set_raw(3, '{"field_id": "alpha", "origin": ')),
    Case("array-line", "MALFORMED", f"{PRED}:4", "expected a JSON object", pre=set_raw(4, "[1, 2, 3]")),
    Case("unknown-key", "MALFORMED", f"{PRED}:2", "unknown key 'confidence'", pre=edit(2, lambda o: o.update(confidence=0.9))),
    Case("missing-key", "MALFORMED", f"{PRED}:5", "missing key 'weights'", pre=edit(5, lambda o: o.pop("weights"))),
    Case("unknown-field", "MALFORMED", f"{PRED}:6", "not a field", pre=edit(6, lambda o: o.update(field_id="omega"))),
    Case("unknown-origin", "MALFORMED", f"{PRED}:7", "not an origin", pre=edit(7, lambda o: o.update(origin="2023-02-01"))),
    Case("bad-condition", "MALFORMED", f"{PRED}:8", "'condition' must be one of", pre=edit(8, lambda o: o.update(condition="A5"))),
    Case("duplicate-unit", "DUPLICATE", f"{PRED}:61", "duplicate unit alpha 2023-01-01 A0", pre=append_line({**L1, "weights": {f"D{k}": 1 for k in range(8)}})),
    Case("coverage-gap", "COVERAGE", PRED, "condition A1 does not cover every episode: 1 missing",
         pre=drop_lines(lambda o: o["condition"] == "A1" and o["field_id"] == "gamma" and o["origin"] == "2024-07-01")),
    Case("missing-condition", "COVERAGE", PRED, "condition A3 is missing", pre=drop_lines(lambda o: o["condition"] == "A3")),
    Case("weights-list", "MALFORMED", f"{PRED}:9", "'weights' must be an object or null", pre=edit(9, lambda o: o.update(weights=[1, 2, 3, 4, 5, 6, 7, 8]))),
    Case("nan-literal", "MALFORMED", f"{PRED}:10", "NaN is not a JSON number", pre=weight_literal(10, "NaN")),
    Case("infinity-literal", "MALFORMED", f"{PRED}:11", "Infinity is not a JSON number", pre=weight_literal(11, "Infinity")),
    Case("string-number", "MALFORMED", f"{PRED}:12", "weight 'D0' is not a JSON number", pre=weight_literal(12, '"30"')),
    Case("bool-weight", "MALFORMED", f"{PRED}:13", "weight 'D0' is not a JSON number", pre=weight_literal(13, "true")),
    Case("invalid-with-weights", "MALFORMED", f"{PRED}:14", 'status "invalid" must have weights null', pre=edit(14, lambda o: o.update(status="invalid"))),
    Case("bad-status", "MALFORMED", f"{PRED}:15", "'status' must be", pre=edit(15, lambda o: o.update(status="maybe"))),
    Case("duplicate-json-key", "MALFORMED", f"{PRED}:16", "duplicate key 'condition'", pre=set_raw(16, '{"field_id": "alpha", "origin": "2023-01-01", "condition": "A0", "condition": "A1", "weights": null}')),
    Case("blank-line", "MALFORMED", f"{PRED}:17", "blank line", pre=set_raw(17, "   ")),
    Case("not-utf8", "MALFORMED", PRED, "not valid UTF-8", pre=lambda f, r: (f / "predictions.jsonl").write_bytes(b"\xff\xfe" + (f / "predictions.jsonl").read_bytes())),
    Case("empty-predictions", "COVERAGE", PRED, "no units", pre=lambda f, r: (f / "predictions.jsonl").write_bytes(b"")),
    Case("state-not-diagnostic", "DIAGNOSTIC", MODEL, "'diagnostic' must be true", pre=add_state_units),
    Case("diagnostic-without-state", "DIAGNOSTIC", MODEL, "no A2 or A4 units", pre=model(diagnostic=True)),
    # ---- model.json and the folder
    Case("model-json-missing", "MISSING-FILE", MODEL, "model.json is missing", pre=remove("model.json")),
    Case("predictions-missing", "MISSING-FILE", PRED, "predictions.jsonl is missing", pre=remove("predictions.jsonl")),
    Case("model-json-not-json", "MODEL-JSON", f"{MODEL}:2", "not JSON", pre=model_raw('{"model_id": "newbie",\n')),
    Case("model-json-unknown-key", "MODEL-JSON", MODEL, "unknown key 'homepage'", pre=model(homepage="https://example.org")),
    Case("model-json-reference-agent", "MODEL-JSON", f"{MODEL}:", "the key 'reference_agent' is reserved for rapgen's own reference agents", pre=model(reference_agent=True)),
    Case("model-json-reference-agent-false", "MODEL-JSON", f"{MODEL}:", "remove it from a submission's model.json", pre=model(reference_agent=False)),
    Case("model-json-id-mismatch", "MODEL-JSON", MODEL, "differs from its folder name", pre=model(model_id="someone-else")),
    Case("model-json-bad-date", "MODEL-JSON", MODEL, "'knowledge_cutoff' must be a YYYY-MM-DD date", pre=model(knowledge_cutoff="Dec 2023")),
    Case("model-json-placeholder", "PLACEHOLDER", f"{MODEL}:3", "template placeholder", pre=model(display_name="TODO: the name")),
    Case("extra-file", "UNEXPECTED-FILE", f"archive/models/{NEW_ID}/notes.txt", "unexpected file", pre=lambda f, r: (f / "notes.txt").write_text("hi\n")),
    Case("symlinked-file", "UNEXPECTED-FILE", f"archive/models/{NEW_ID}/traces.jsonl", "unexpected symbolic link", pre=symlink_traces),
    Case("model-exists-on-base", "EXISTS", "archive/models/model-b", "already exists on main",
         post=lambda f, r: None, base=True),  # special-cased below: the submission rewrites model-b
    # ---- traces.jsonl
    Case("trace-beyond-cap", "CALL-CAP", f"{TRACES}:9", "call_index 20 is beyond the cap of 20", pre=trace_append({"field_id": "beta", "origin": "2023-01-01", "condition": "A1", "call_index": 20, "query": "q", "sort": "date", "date_from": None, "date_to": None, "total_hits": 0, "returned_ids": []})),
    Case("trace-21st-call", "CALL-CAP", f"{TRACES}:27", "call_index 20 is beyond the cap of 20", pre=beyond_cap),
    Case("trace-future-paper", "LEAK", f"{TRACES}:1", "on or after the origin 2023-01-01", pre=future_paper),
    Case("trace-condition-a0", "MALFORMED", f"{TRACES}:2", "'condition' must be one of A1", pre=trace_edit(2, lambda o: o.update(condition="A0"))),
    Case("trace-condition-not-predicted", "TRACE", f"{TRACES}:3", "condition A2, which predictions.jsonl does not contain", pre=trace_edit(3, lambda o: o.update(condition="A2"))),
    Case("trace-unknown-paper", "TRACE", f"{TRACES}:4", "9999.99999 is not in the archive's papers", pre=trace_edit(4, lambda o: o.update(returned_ids=["9999.99999"]))),
    Case("trace-other-field", "TRACE", f"{TRACES}:1", "is not in field 'alpha'", pre=other_field_paper),
    Case("trace-before-window", "TRACE", f"{TRACES}:5", "before the A1 shard's window", pre=old_paper_in_fixed),
    Case("trace-index-gap", "TRACE", f"{TRACES}:2", "call_index 2 of alpha 2023-01-01 A1 follows no call 1", pre=trace_edit(2, lambda o: o.update(call_index=2))),
    Case("trace-over-top-k", "TRACE", f"{TRACES}:6", "more than top_k = 8", pre=trace_edit(6, lambda o: o.update(returned_ids=o["returned_ids"] + o["returned_ids"][:1]))),
    Case("trace-duplicate-call", "TRACE", f"{TRACES}:9", "duplicate call 0 for alpha", pre=lambda f, r: trace_append(read_jsonl(f / "traces.jsonl")[0])(f, r)),
    Case("trace-hits-too-small", "TRACE", f"{TRACES}:7", "total_hits 3 is smaller", pre=trace_edit(7, lambda o: o.update(total_hits=3))),
    Case("trace-unknown-key", "MALFORMED", f"{TRACES}:8", "unknown key 'score'", pre=trace_edit(8, lambda o: o.update(score=1.0))),
    Case("trace-malformed-call-with-results", "TRACE", f"{TRACES}:2", "malformed call", pre=trace_edit(2, lambda o: o.update(sort="popularity"))),
    # ---- SHA256SUMS and integrity
    Case("sums-missing-lines", "CHECKSUM", "SHA256SUMS", "no line for archive/models/newbie/predictions.jsonl", post=sums_transform(lambda ls: [l for l in ls if not l.endswith("newbie/predictions.jsonl")])),
    Case("sums-wrong-digest", "CHECKSUM", "SHA256SUMS:", "wrong digest for archive/models/newbie/traces.jsonl", post=flip_sums_digest("newbie/traces.jsonl")),
    Case("sums-changed-after-seal", "CHECKSUM", "SHA256SUMS:", "wrong digest for archive/models/newbie/model.json", post=after_seal_edit),
    Case("sums-not-canonical", "CHECKSUM", "SHA256SUMS:", "is not canonical", post=sums_transform(lambda ls: [l.replace("  archive/models/newbie/model.json", " *archive/models/newbie/model.json") for l in ls])),
    Case("sums-extra-line", "CHECKSUM", "SHA256SUMS:", "lists archive/models/newbie/extra.json, which is not a file", post=sums_transform(lambda ls: sorted(ls + ["0" * 64 + "  archive/models/newbie/extra.json"], key=lambda l: l[66:].encode()))),
    Case("sums-unsorted", "CHECKSUM", "SHA256SUMS:", "not sorted", post=sums_transform(lambda ls: list(reversed(ls)))),
    Case("sums-existing-line-changed", "CHECKSUM-CHANGED", "SHA256SUMS:", "the existing line for archive/models/model-b/model.json changed", post=flip_sums_digest("model-b/model.json"), base=True),
    Case("sums-existing-line-removed", "CHECKSUM-CHANGED", "SHA256SUMS", "the existing line for archive/models/model-b/traces.jsonl" if False else "was removed", post=sums_transform(lambda ls: [l for l in ls if not l.endswith("model-b/model.json")]), base=True),
    Case("sums-stray-line", "CHECKSUM-CHANGED", "SHA256SUMS:", "a new line outside archive/models/newbie/", post=stray_model_line, base=True),
    Case("touched-outside", "TOUCHED", "README.md", "changed since main", post=touch_outside, base=True),
    Case("frozen-file-changed", "INTEGRITY", "archive/benchmark/fields.jsonl", "FAILED", post=flip_frozen),
    # ---- invalid units are counted, not rejected (exit 0)
    Case("1e400-is-invalid-unit", "", "| A0 | 20 | 20 | 19 | 1 |", "a weight is not finite ×1", pre=weight_literal(1, "1e400"), exit=0),
    Case("negative-is-invalid-unit", "", "| A1 | 20 | 20 | 19 | 1 |", "a weight is negative ×1", pre=edit(21, lambda o: o["weights"].update(D3=-1)), exit=0),
    Case("zero-total-is-invalid-unit", "", "| A3 | 20 | 20 | 19 | 1 |", "the weights total zero ×1", pre=edit(41, lambda o: o.update(weights={f"D{k}": 0 for k in range(8)})), exit=0),
    Case("extra-slot-is-invalid-unit", "", "| A0 | 20 | 20 | 19 | 1 |", "unexpected D8", pre=edit(2, lambda o: o["weights"].update(D8=1)), exit=0),
    Case("null-weights-is-invalid-unit", "", "| A0 | 20 | 20 | 19 | 1 |", "timeout ×1", pre=edit(3, lambda o: o.update(weights=None, status="invalid", reason="timeout")), exit=0),
]


def _run_case(case: Case, repo: Path) -> tuple[object, str, str]:
    folder = repo / "archive" / "models" / NEW_ID
    if case.base:
        (repo / "README.md").write_text("rapgen test repo\n")
        git_init(repo)
    if case.id == "model-exists-on-base":
        folder = repo / "archive" / "models" / "model-b"
        (folder / "model.json").write_text((folder / "model.json").read_text().replace("Model B", "Model B2"))
        sums_transform(lambda ls: [l for l in ls if "/model-b/" not in l])(folder, repo)
        append_sums(repo, "model-b")
    else:
        write_submission(folder, repo)
        if case.pre:
            case.pre(folder, repo)
        append_sums(repo, NEW_ID)
        if case.post:
            case.post(folder, repo)
    before = tree_digest(repo)
    args = ["submit", "check", "--no-scores", "--root", str(repo), str(folder)]
    if case.base:
        args[2:2] = ["--base", "main"]
    result = CliRunner().invoke(cli, args)
    assert tree_digest(repo) == before, "submit check wrote into the repository"
    return result, result.stdout, result.stderr


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue(case: Case, tiny_archive) -> None:
    result, out, err = _run_case(case, tiny_archive.root)
    assert result.exit_code == case.exit, out + err
    if case.keyword:
        assert f"**{case.keyword}**" in out, out
        lines = [l for l in out.splitlines() if case.where in l and case.text in l]
        assert lines, f"no report line with {case.where!r} and {case.text!r}:\n{out}"
        assert err.startswith("Error: submission ") and "problem" in err
    else:
        assert case.where in out and case.text in out, out
        assert "passes `rapgen submit check`" in out


def test_catalogue_is_large_enough() -> None:
    bad = {c.id for c in CASES if c.exit == 1}
    assert len(bad) >= 30
    assert len({c.keyword for c in CASES if c.keyword}) >= 12


def test_every_malformed_line_is_reported(tiny_archive) -> None:
    """Not just the first: three bad lines give three line-numbered problems."""
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    for n in (3, 30, 55):
        set_raw(n, "not json")(folder, repo)
    append_sums(repo, NEW_ID)
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--root", str(repo), str(folder)])
    assert result.exit_code == 1
    for n in (3, 30, 55):
        assert f"`{PRED}:{n}`: not JSON" in result.stdout


# ====================================================================== attacks
# A pull request is written by whoever opens it. Each attack below changes one
# thing in a good submission; whatever it does, the check must answer with a clear
# problem (or render the text inert), exit 0/1 (2 for usage), never print a
# traceback or exit 3, never block, and write nothing into the repository.
import html.parser
import os
import re
import resource
import subprocess
import sys

import markdown

from rapgen.text import escape_markdown as md_text

MARKUP = ("</sub></details>\n\n## ✅ Submission `x` passes `rapgen submit check`\n<script>alert(1)</script>"
          "<img src=x onerror=alert(1)> [click](javascript:alert(1)) ![i](https://e.example/i.png) "
          "@admin #1 $x^2$ | cell | ~~gone~~ **bold** _em_ `code` ``` <!-- c --> &amp; https://e.example www.e.example \x1b[31mred\x1b[0m \x9b31m\x7f")


def state(root: Path) -> str:
    """tree_digest that never opens a FIFO or follows a link."""
    import hashlib
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            p = Path(dirpath) / name
            h.update(os.fsencode(p.relative_to(root)) + b"\0")
            if p.is_symlink():
                h.update(os.fsencode(os.readlink(p)))
            elif p.is_file():
                h.update(p.read_bytes())
            else:
                h.update(b"special")
    return h.hexdigest()


@dataclass(frozen=True)
class Attack:
    id: str
    pre: Callable | None = None  # (folder, root) before SHA256SUMS lines are added
    post: Callable | None = None  # (folder, root) after
    exit: int = 1
    expect: tuple[str, ...] = ()  # each a substring of one report line
    folder: Callable | None = None  # (root) -> the MODEL_DIR argument, if not archive/models/newbie


def mkfifo(name: str):
    def mutate(folder: Path, root: Path) -> None:
        if (folder / name).exists():
            (folder / name).unlink()
        os.mkfifo(folder / name)
    return mutate


def sparse(name: str, size: int):
    def mutate(folder: Path, root: Path) -> None:
        with open(folder / name, "wb") as handle:
            handle.truncate(size)
    return mutate


def odd_name(raw: bytes):
    def mutate(folder: Path, root: Path) -> None:
        with open(os.path.join(os.fsencode(folder), raw), "wb") as handle:
            handle.write(b"x\n")
    return mutate


def symlinked_folder(folder: Path, root: Path) -> None:
    elsewhere = root.parent / "elsewhere-newbie"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)


def link_to_frozen(folder: Path, root: Path) -> None:
    (folder / "predictions.jsonl").unlink()
    (folder / "predictions.jsonl").symlink_to("../model-a/predictions.jsonl")


def nested_folders(folder: Path, root: Path) -> None:
    deep = folder.joinpath(*["d"] * 300)
    deep.mkdir(parents=True)
    (deep / "x.json").write_text("{}\n")


def sums_line(text: str):
    return sums_transform(lambda ls: sorted(ls + [text], key=lambda l: l[66:].encode()))


def with_reason(reason: str, n: int = 3):
    return edit(n, lambda o: o.update(weights=None, status="invalid", reason=reason))


def deep_json(depth: int):
    return set_raw(5, "[" * depth + "]" * depth)


def whole_file(name: str, fn: Callable[[bytes], bytes]):
    def mutate(folder: Path, root: Path) -> None:
        (folder / name).write_bytes(fn((folder / name).read_bytes()))
    return mutate


def no_traces_for_a3(folder: Path, root: Path) -> None:
    write_lines(folder, [l for l in lines_of(folder, "traces.jsonl") if '"A3"' not in l], "traces.jsonl")


def trace_for_missing_unit(folder: Path, root: Path) -> None:
    drop_lines(lambda o: o["condition"] == "A1" and o["field_id"] == "alpha" and o["origin"] == "2023-01-01")(folder, root)


BIDI = "\u202e"
ATTACKS = [
    # ---- path and file-type tricks
    Attack("symlinked-model-folder", pre=symlinked_folder, expect=("**FOLDER**", "the model folder is a symbolic link")),
    Attack("symlink-to-a-frozen-file", pre=link_to_frozen, expect=(f"`{PRED}`: unexpected symbolic link", f"`{PRED}`: predictions.jsonl is missing")),
    Attack("dotdot-in-the-folder-argument", exit=0, folder=lambda r: r / "archive" / "models" / ".." / "models" / NEW_ID,
           expect=("| SHA256SUMS lines | ✅ passed |",)),
    Attack("dotdot-sums-line", post=sums_line("0" * 64 + f"  archive/models/{NEW_ID}/../model-a/model.json"), expect=("**CHECKSUM**", "which is not a file of the submission")),
    Attack("file-outside-the-folder", post=lambda f, r: (r / "archive" / "models" / "model-a" / "extra.json").write_text("{}\n"),
           expect=("**INTEGRITY**", "`archive/models/model-a/extra.json`")),
    Attack("case-collision-file", pre=lambda f, r: (f / "Model.json").write_text((f / "model.json").read_text()),
           expect=(f"`archive/models/{NEW_ID}/Model.json`: unexpected file",)),
    Attack("case-folder-name", folder=lambda r: r / "archive" / "models" / "Newbie", expect=("**FOLDER**", "folder name 'Newbie' is not a valid model id")),
    Attack("fifo-as-predictions", post=mkfifo("predictions.jsonl"), expect=(f"`{PRED}`: unexpected named pipe (FIFO)", "predictions.jsonl is missing")),
    Attack("fifo-extra-file", post=mkfifo("notes"), expect=(f"`archive/models/{NEW_ID}/notes`: unexpected named pipe (FIFO)",)),
    Attack("deep-folder-nesting", post=nested_folders, expect=(f"`archive/models/{NEW_ID}/d`: unexpected folder",)),
    Attack("huge-predictions", post=sparse("predictions.jsonl", 200 * 2**20), expect=("**TOO-LARGE**", f"`{PRED}`: predictions.jsonl is 209,715,200 bytes")),
    Attack("huge-model-json", pre=sparse("model.json", 2 * 2**20), expect=("**TOO-LARGE**", "a submission's model.json holds at most 1 MiB")),
    Attack("100mb-line", pre=whole_file("traces.jsonl", lambda b: b'{"query": "' + b"a" * (100 * 2**20) + b'"}\n' + b),
           expect=("**TOO-LARGE**", f"`{TRACES}:1`: the line is 104,857,613 bytes")),
    Attack("a-million-lines", pre=whole_file("predictions.jsonl", lambda b: b + b"{}\n" * 1_000_000),
           expect=(f"`{PRED}`: predictions.jsonl has 1,000,060 lines; it can hold at most 100",)),
    Attack("too-many-trace-lines", pre=whole_file("traces.jsonl", lambda b: b * 201), expect=(f"`{TRACES}`: traces.jsonl has 1,608 lines; it can hold at most 1,600",)),
    Attack("deep-json-nesting", pre=deep_json(100_000), expect=(f"`{PRED}:5`: not JSON: nested too deeply",)),
    Attack("deep-json-model", pre=model_raw("[" * 100_000 + "]" * 100_000), expect=("**MODEL-JSON**",)),
    Attack("non-utf8-model-json", pre=lambda f, r: (f / "model.json").write_bytes(b"\xff" + (f / "model.json").read_bytes()), expect=("**MODEL-JSON**", "not valid UTF-8")),
    Attack("bom-model-json", pre=whole_file("model.json", lambda b: b"\xef\xbb\xbf" + b), expect=("**MODEL-JSON**", "not JSON")),
    Attack("bom-predictions", pre=whole_file("predictions.jsonl", lambda b: b"\xef\xbb\xbf" + b), expect=(f"`{PRED}:1`: not JSON",)),
    Attack("crlf-line-ends-are-json-whitespace", exit=0, pre=whole_file("predictions.jsonl", lambda b: b.replace(b"\n", b"\r\n")),
           expect=("| A0 | 20 | 20 | 20 | 0 | — |",)),
    Attack("non-utf8-file-name", post=odd_name(b"\xff\xfe.json"), expect=(f"`archive/models/{NEW_ID}/\\xff\\xfe.json`: unexpected file",)),
    Attack("escape-sequence-file-name", post=odd_name(b"x\x1b[2J\x1b]0;owned\x07"), expect=(f"`archive/models/{NEW_ID}/x\\x1b[2J\\x1b]0;owned\\x07`: unexpected file",)),
    Attack("newline-heading-file-name", post=odd_name(b"a\n## \xe2\x9c\x85 passes"), expect=(f"`archive/models/{NEW_ID}/a\\x0a## ✅ passes`: unexpected file",)),
    Attack("backtick-file-name", post=odd_name(b"``` `x"), expect=(f"- ````archive/models/{NEW_ID}/``` `x````: unexpected file",)),
    # ---- markup and control characters in every text field
    Attack("markup-display-name", exit=0, pre=model(display_name=MARKUP)),
    Attack("markup-provider", exit=0, pre=model(provider=MARKUP)),
    Attack("markup-other-model-fields", exit=0, pre=model(cutoff_source=MARKUP, contact=MARKUP, notes=MARKUP)),
    Attack("markup-reason", exit=0, pre=with_reason(MARKUP), expect=("| A0 | 20 | 20 | 19 | 1 |",)),
    Attack("markup-rationale", exit=0, pre=edit(4, lambda o: o.update(rationale=MARKUP))),
    Attack("markup-trace-query", exit=0, pre=trace_edit(1, lambda o: o.update(query=MARKUP))),
    Attack("markup-unknown-key", pre=edit(2, lambda o: o.update({MARKUP: 1})), expect=(f"`{PRED}:2`: unknown key",)),
    Attack("markup-placeholder", pre=model(display_name="TODO " + MARKUP), expect=("**PLACEHOLDER**",)),
    Attack("markup-field-id", pre=edit(6, lambda o: o.update(field_id=MARKUP)), expect=(f"`{PRED}:6`: field_id '&lt;/sub&gt;",)),
    Attack("markup-weight-key", exit=0, pre=edit(7, lambda o: o["weights"].update({MARKUP: 1})), expect=("unexpected",)),
    Attack("markup-model-id", pre=model(model_id=MARKUP), expect=("**MODEL-JSON**",)),
    Attack("markup-folder-name", folder=lambda r: r / "archive" / "models" / "x` ## <b>y<b> [a](b)", expect=("**FOLDER**",)),
    # ---- bidirectional controls: a problem naming file, line and key
    Attack("bidi-display-name", pre=model(display_name=f"abc{BIDI}def"), expect=("**BIDI**", f"`{MODEL}:3`: key 'display_name' holds a bidirectional control character (U+202E)")),
    Attack("bidi-rationale", pre=edit(8, lambda o: o.update(rationale=f"x\u2066y")), expect=(f"`{PRED}:8`: key 'rationale' holds a bidirectional control character (U+2066)",)),
    Attack("bidi-reason", pre=with_reason(f"r{BIDI}", 9), expect=(f"`{PRED}:9`: key 'reason'",)),
    Attack("bidi-key-name", pre=edit(10, lambda o: o.update({f"k{BIDI}": 1})), expect=(f"`{PRED}:10`: key 'k\\\\u202e'",)),
    Attack("bidi-trace-query", pre=trace_edit(2, lambda o: o.update(query=f"q\u2069")), expect=(f"`{TRACES}:2`: key 'query'",)),
    Attack("bidi-in-a-broken-line", pre=set_raw(11, f'{{"rationale": "{BIDI}'), expect=(f"`{PRED}:11`: key '(text that is not a JSON value)'",)),
    # ---- Search conditions
    Attack("search-claimed-without-traces", exit=0, pre=remove("traces.jsonl"),
           expect=("**NO-SEARCH-CALLS**", f"`{TRACES}`: no Search calls recorded: predictions.jsonl claims A1, A3, but the folder has no traces.jsonl")),
    Attack("search-condition-without-calls", exit=0, pre=no_traces_for_a3, expect=("no Search calls recorded for A3",)),
    Attack("trace-for-an-unpredicted-unit", pre=trace_for_missing_unit,
           expect=(f"`{TRACES}:1`: a Search call for unit alpha 2023-01-01 A1, which predictions.jsonl does not contain",)),
    Attack("trace-for-a0", pre=trace_edit(1, lambda o: o.update(condition="A0")), expect=(f"`{TRACES}:1`: 'condition' must be one of A1",)),
]


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, tuple]] = []
        self.headings: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(attrs)))
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._in_heading = True
            self.headings.append("")

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._in_heading = False

    def handle_data(self, data):
        if self._in_heading:
            self.headings[-1] += data


OUR_TAGS = {"h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "ul", "li", "pre", "details", "summary", "sub"}
OUR_HEADINGS = re.compile(r"^(✅ Submission newbie passes rapgen submit check|❌ Submission .*: \d+ problems? found|Checks|Validity|Leaderboard.*"
                          r"|⚠️ Warnings \(\d+\)|Problems \(\d+\)|SHA256SUMS lines.*|Coverage per origin|Live)$")


def assert_inert(report: str) -> None:
    """The report, rendered as Markdown, holds only rapgen's own elements, headings and no raw control characters."""
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", report), "a raw control character reached the report"
    page = markdown.markdown(report, extensions=["tables", "fenced_code"])
    parser = _Tags()
    parser.feed(page)
    for tag, attrs in parser.tags:
        assert tag in OUR_TAGS, f"injected <{tag}> in {page}"
        assert all(k == "style" and v.startswith("text-align") for k, v in attrs), f"injected attributes {attrs} on <{tag}>"
    for heading in parser.headings:
        assert OUR_HEADINGS.match(heading.strip()), f"injected heading {heading!r}"
    assert sum(1 for h in parser.headings if "Submission" in h) == 1
    for line in report.splitlines():
        assert not line.startswith("#") or line.startswith(("## ✅ Submission `newbie`", "## ❌ Submission ", "### ")), line


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_attack(attack: Attack, tiny_archive, tmp_path) -> None:
    repo = tiny_archive.root
    folder = repo / "archive" / "models" / NEW_ID
    write_submission(folder, repo)
    if attack.pre:
        attack.pre(folder, repo)
    if folder.is_dir() and not folder.is_symlink():
        append_sums(repo, NEW_ID)
    if attack.post:
        attack.post(folder, repo)
    target = attack.folder(repo) if attack.folder else folder
    if attack.folder and not target.exists():
        folder.rename(target)
    before = state(repo)
    report_file = tmp_path / "report.md"
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--report", str(report_file), "--root", str(repo), str(target)])
    out, err = result.stdout, result.stderr
    assert result.exit_code == attack.exit, out + err
    assert "Traceback" not in out + err and "internal error" not in err
    assert state(repo) == before, "submit check wrote into the repository"
    assert report_file.read_text() == out  # written whole, the same bytes as printed
    assert_inert(out)
    assert "\x1b" not in err and "\u202e" not in err
    for expected in attack.expect:
        assert any(expected in line for line in out.splitlines()), f"no report line with {expected!r}:\n{out[-3000:]}"
    if attack.exit == 1:
        assert err.startswith("Error: submission ") and err.count("\n") == 1


def test_markup_in_every_field_is_inert_in_the_full_check(tiny_archive) -> None:
    """Scores, replay and the site render run with markup in every model.json text and every reason; the report stays inert."""
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo, traces=False)
    model(display_name=MARKUP, provider=MARKUP, cutoff_source=MARKUP, contact=MARKUP, notes=MARKUP)(folder, repo)
    with_reason(MARKUP)(folder, repo)
    append_sums(repo, NEW_ID)
    result = CliRunner().invoke(cli, ["submit", "check", "--resamples", "50", "--root", str(repo), str(folder)])
    assert result.exit_code == 0, result.output
    assert "| Scores with intervals | ✅ passed |" in result.stdout and "| Site dry-run render | ✅ passed |" in result.stdout
    assert_inert(result.stdout)
    assert md_text(MARKUP) in result.stdout  # shown, as text


def test_json_output_is_ascii(tiny_archive) -> None:
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    with_reason("\x1b[2J\u202e\x9b")(folder, repo)
    append_sums(repo, NEW_ID)
    odd_name(b"\xff")(folder, repo)
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", "--json", "--root", str(repo), str(folder)])
    assert result.exit_code == 1
    assert result.stdout.isascii()
    data = json.loads(result.stdout)
    assert any(p["keyword"] == "BIDI" and p["line"] == 3 for p in data["problems"])


def test_memory_stays_under_2_gib(tiny_archive) -> None:
    """A 100 MB line in traces.jsonl and 30 million one-byte lines in predictions.jsonl, checked in a child
    process: one problem each, peak RSS < 2 GiB (the archive's own verification never parses them either)."""
    repo = tiny_archive.root
    folder = write_submission(repo / "archive" / "models" / NEW_ID, repo)
    whole_file("traces.jsonl", lambda b: b'{"query": "' + b"\xe2\x80\x94" * (35 * 2**20) + b'"}\n' + b)(folder, repo)
    whole_file("predictions.jsonl", lambda b: b + b"1\n" * 30_000_000)(folder, repo)
    append_sums(repo, NEW_ID)
    # The peak is the child's own VmHWM, not ru_maxrss: Linux carries a process's ru_maxrss over
    # execve from the image it replaced, so a child of a large pytest worker would report the
    # worker's peak (the 2.11 GiB once seen inside the suite, against 0.40 GiB alone).
    script = ("import sys; from rapgen.cli import cli\n"
              "try:\n    cli(['submit', 'check', '--no-scores', '--json', '--root', sys.argv[1], sys.argv[2]])\n"
              "finally:\n    print('maxrss', next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')),"
              " file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "generator")}
    done = subprocess.run([sys.executable, "-c", script, str(repo), str(folder)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    peak_kib = int(re.search(r"maxrss (\d+)", done.stderr).group(1))
    assert peak_kib < 2 * 2**20, f"peak RSS {peak_kib / 2**20:.2f} GiB"
    problems = json.loads(done.stdout)["problems"]
    assert [(p["keyword"], p["path"], p["line"]) for p in problems] == [("TOO-LARGE", PRED, None), ("TOO-LARGE", TRACES, 1)]
    assert problems[0]["detail"] == "predictions.jsonl has 30,000,060 lines; it can hold at most 100 in this archive (one line per field × origin × condition)"


@pytest.mark.parametrize("make_args", [
    lambda repo, tmp: ["--root", str(tmp / "nope\x1b[2J"), str(repo / "archive" / "models" / "model-a")],  # no such root
    lambda repo, tmp: ["--root", str(repo), str(tmp / "gone\x1b]0;x\x07\u202e")],  # no such folder, controls in its name
    lambda repo, tmp: ["--root", str(repo), str(repo / "SHA256SUMS")],  # a file, not a folder
    lambda repo, tmp: ["--root", str(repo), "--base", "no-such-ref\x1b[31m", str(repo / "archive" / "models" / "model-a")],
], ids=["root-missing", "folder-missing-with-controls", "folder-is-a-file", "base-unknown"])
def test_usage_attacks_exit_2_on_one_inert_line(make_args, tiny_archive, tmp_path) -> None:
    result = CliRunner().invoke(cli, ["submit", "check", "--no-scores", *make_args(tiny_archive.root, tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr and "\x07" not in result.stderr
