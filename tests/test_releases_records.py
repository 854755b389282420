"""Strict parsing of release records and commitments (RELEASES.md): one broken key per case."""

from __future__ import annotations

import json
from datetime import date

import pytest

from rapgen.archive.history.records import (
    Commitment,
    OpenOrigin,
    ReleaseKind,
    ReleaseRecord,
    format_commitment,
    format_record,
    parse_commitment,
    parse_release_record,
    superseded_path,
)
from rapgen.archive.records import Category

PATH = "archive/releases/0002.json"
GOOD = {
    "release": 2, "date": "2024-07-15", "kind": "roll",
    "resolved_origins": ["2023-01-01", "2023-07-01", "2024-01-01"], "strict_origin": "2024-01-01",
    "open_origin": {"origin": "2024-07-01", "closes": "2024-07-15"},
    "parent_sha256": "ab" * 32, "replaced": [], "simulated": False, "notes": "window 2024-01-01 ingested",
}


def _doc(**changes) -> bytes:
    obj = dict(GOOD)
    for key, value in changes.items():
        if value is _DROP:
            obj.pop(key)
        else:
            obj[key] = value
    return (json.dumps(obj, indent=2) + "\n").encode()


_DROP = object()


def test_the_spec_example_parses_and_round_trips():
    record, findings = parse_release_record(PATH, _doc())
    assert findings == []
    assert record == ReleaseRecord(
        2, date(2024, 7, 15), ReleaseKind.ROLL, (date(2023, 1, 1), date(2023, 7, 1), date(2024, 1, 1)), date(2024, 1, 1),
        OpenOrigin(date(2024, 7, 1), date(2024, 7, 15)), "ab" * 32, (), False, "window 2024-01-01 ingested",
    )
    assert json.loads(format_record(record)) == GOOD
    again, _ = parse_release_record(PATH, format_record(record))
    assert again == record


def test_strict_origin_defaults_to_the_latest_resolved():
    record, findings = parse_release_record(PATH, _doc(strict_origin=_DROP))
    assert findings == [] and record.strict_origin == date(2024, 1, 1)
    record, _ = parse_release_record(PATH, _doc(strict_origin=None))
    assert record.strict_origin == date(2024, 1, 1)


# (changes, the key whose line the finding must give or None, message fragment)
CASES = [
    ({"release": 3}, "release", "'release' is 3 but the file is release 2's"),
    ({"release": True}, "release", "'release' must be a positive integer"),
    ({"date": "2024-7-15"}, "date", "'date' must be a YYYY-MM-DD date"),
    ({"date": "2024-02-30"}, "date", "'date' is not a calendar date"),
    ({"kind": "snapshot"}, "kind", "'kind' must be one of initial, roll, models, errata"),
    ({"kind": "initial"}, "kind", "only release 1 may be 'initial'"),
    ({"resolved_origins": []}, "resolved_origins", "'resolved_origins' must be a non-empty list"),
    ({"resolved_origins": ["2023-07-01", "2023-01-01"]}, "resolved_origins", "ascending without repeats"),
    ({"resolved_origins": ["2023-01-15"]}, "resolved_origins", "must be the first of a month"),
    ({"strict_origin": "2023-01-01", "resolved_origins": ["2023-07-01"]}, "strict_origin", "'strict_origin' 2023-01-01 is not one of resolved_origins"),
    ({"open_origin": {"origin": "2024-07-01"}}, "open_origin", "'open_origin' must be null or"),
    ({"open_origin": {"origin": "2024-01-01", "closes": "2024-01-15"}}, "open_origin", "must come after the last resolved origin"),
    ({"parent_sha256": None}, "parent_sha256", "'parent_sha256' must be 64 lower-case hex digits"),
    ({"parent_sha256": "AB" * 32}, "parent_sha256", "'parent_sha256' must be 64 lower-case hex digits"),
    ({"replaced": [{"path": "archive/x.json", "reason": "typo"}]}, None, "only an errata release replaces files"),
    ({"kind": "errata", "replaced": []}, None, "an errata release must name every replaced path"),
    ({"kind": "errata", "replaced": [{"path": "archive/../x", "reason": "r"}]}, None, "is not a replaceable archive path"),
    ({"kind": "errata", "replaced": [{"path": "archive/releases/0001.json", "reason": "r"}]}, None, "is not a replaceable archive path"),
    ({"kind": "errata", "replaced": [{"path": "archive/a.json", "reason": ""}]}, None, "'reason' must be a non-empty string"),
    ({"simulated": "yes"}, "simulated", "'simulated' must be true or false"),
    ({"notes": None}, "notes", "'notes' must be a string"),
    ({"extra": 1}, "extra", "unknown key 'extra'"),
    ({"kind": _DROP}, None, "missing key 'kind'"),
]


def _line_of(data: bytes, key: str) -> int:
    lines = data.decode().split("\n")
    return next(i for i, text in enumerate(lines, start=1) if text.strip().startswith(f'"{key}":'))


@pytest.mark.parametrize("changes,key,fragment", CASES, ids=[c[2][:40] for c in CASES])
def test_one_broken_key_is_one_malformed_finding(changes, key, fragment):
    data = _doc(**changes)
    record, findings = parse_release_record(PATH, data)
    assert record is None
    assert len(findings) == 1, findings
    (f,) = findings
    assert f.category is Category.MALFORMED and f.path == PATH
    assert fragment in f.detail, f.detail
    if key is not None:
        assert f.line == _line_of(data, key)


def test_not_json_and_duplicate_keys_give_their_line():
    data = b'{\n  "release": 2,\n  "release": 2\n}\n'
    _, findings = parse_release_record(PATH, data)
    assert [(f.line, f.detail) for f in findings] == [(2, "duplicate key 'release'")]
    _, findings = parse_release_record(PATH, b'{\n  "release": 2,\n}\n')
    assert findings[0].line == 3 and findings[0].detail.startswith("not JSON")
    _, findings = parse_release_record(PATH, b"\xff")
    assert findings[0].detail == "not valid UTF-8 at byte 0"
    _, findings = parse_release_record(PATH, b"[1]")
    assert findings[0].detail == "expected a JSON object, found list"


def test_release_one_must_be_initial_without_parent():
    path = "archive/releases/0001.json"
    _, findings = parse_release_record(path, _doc(release=1))
    assert "release 1 must be 'initial'" in findings[0].detail
    good, findings = parse_release_record(path, _doc(release=1, kind="initial", parent_sha256=None, open_origin=None))
    assert findings == [] and good.parent_sha256 is None
    _, findings = parse_release_record(path, _doc(release=1, kind="initial"))
    assert "'parent_sha256' must be null for the initial release" in findings[0].detail


COMMITMENT_PATH = "archive/commitments/2024-07-01/model-a.json"
COMMITMENT = {"model_id": "model-a", "origin": "2024-07-01", "files": {"predictions.jsonl": "cd" * 32, "traces.jsonl": None}, "kit": "0.1.0"}


def test_commitment_round_trips():
    c, findings = parse_commitment(COMMITMENT_PATH, json.dumps(COMMITMENT).encode())
    assert findings == []
    assert c == Commitment("model-a", date(2024, 7, 1), "cd" * 32, None, "0.1.0")
    assert parse_commitment(COMMITMENT_PATH, format_commitment(c))[0] == c


COMMITMENT_CASES = [
    ({"model_id": "model-b"}, "its path is for model-a at 2024-07-01"),
    ({"origin": "2025-01-01"}, "its path is for model-a at 2024-07-01"),
    ({"model_id": "Model A"}, "does not match"),
    ({"files": {"traces.jsonl": None}}, "must give the digest of predictions.jsonl"),
    ({"files": {"predictions.jsonl": "cd" * 32, "model.json": "cd" * 32}}, "unknown file 'model.json'"),
    ({"files": {"predictions.jsonl": "xyz"}}, "'predictions.jsonl' must be 64 lower-case hex digits"),
    ({"kit": ""}, "'kit' must be a non-empty string"),
    ({"when": "now"}, "unknown key 'when'"),
]


@pytest.mark.parametrize("changes,fragment", COMMITMENT_CASES, ids=[c[1][:30] for c in COMMITMENT_CASES])
def test_broken_commitments(changes, fragment):
    obj = {**COMMITMENT, **changes}
    c, findings = parse_commitment(COMMITMENT_PATH, json.dumps(obj, indent=2).encode())
    assert c is None and len(findings) == 1
    assert fragment in findings[0].detail, findings[0].detail


def test_superseded_copies_drop_the_archive_prefix():
    assert superseded_path(3, "archive/models/m/model.json") == "archive/releases/0003/superseded/models/m/model.json"
