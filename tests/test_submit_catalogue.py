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
