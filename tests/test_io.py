"""rapgen.io: whole files or nothing, folders swapped whole, appended lines complete and durable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rapgen.errors import OutputError
from rapgen.io import append_jsonl, atomic_path, atomic_write_bytes, atomic_write_text, staged_dir, swap_dir, write_folder, write_json, write_jsonl


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "a.txt"
    atomic_write_bytes(target, b"one")
    atomic_write_text(target, "twö", fsync=True)
    assert target.read_bytes() == "twö".encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.txt"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode


def test_a_failing_writer_leaves_the_old_bytes(tmp_path):
    target = tmp_path / "a.txt"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_canonical_json_and_jsonl(tmp_path):
    write_json(tmp_path / "d.json", {"b": 1, "a": "é"})
    write_jsonl(tmp_path / "l.jsonl", [{"x": 1}, {"y": [1, 2]}])
    assert (tmp_path / "d.json").read_text("utf-8") == '{\n  "b": 1,\n  "a": "é"\n}\n'
    assert (tmp_path / "l.jsonl").read_text("utf-8") == '{"x": 1}\n{"y": [1, 2]}\n'
    with pytest.raises(ValueError):
        write_json(tmp_path / "nan.json", {"x": float("nan")})
    assert not (tmp_path / "nan.json").exists()


def test_append_jsonl_adds_one_whole_line_per_call(tmp_path, monkeypatch):
    path = tmp_path / "run" / "predictions.jsonl"
    writes, syncs = [], []
    real_write, real_fsync = os.write, os.fsync
    monkeypatch.setattr(os, "write", lambda fd, data: (writes.append(bytes(data)), real_write(fd, data))[1])
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real_fsync(fd))[1])
    append_jsonl(path, {"unit": 1})
    append_jsonl(path, {"unit": 2, "text": "a\nb"})
    assert path.read_text("utf-8").splitlines() == ['{"unit": 1}', '{"unit": 2, "text": "a\\nb"}']
    assert writes == [b'{"unit": 1}\n', b'{"unit": 2, "text": "a\\nb"}\n']  # one write() per line, the full line
    assert len(syncs) >= 2  # each line fsync'd before returning


def test_append_after_a_torn_line_starts_a_new_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"unit": 1}\n{"unit": 2, "wei')  # a crash mid-line
    append_jsonl(path, {"unit": 3})
    lines = path.read_bytes().split(b"\n")
    assert lines[-2:] == [b'{"unit": 3}', b""]
    assert json.loads(lines[-2]) == {"unit": 3}


def test_append_rejects_nan_without_writing(tmp_path):
    path = tmp_path / "p.jsonl"
    with pytest.raises(ValueError):
        append_jsonl(path, {"x": float("inf")})
    assert not path.exists() or path.read_bytes() == b""


def test_staged_dir_swaps_whole_or_not_at_all(tmp_path):
    target = tmp_path / "docs"
    target.mkdir()
    (target / "old.md").write_text("old")
    with pytest.raises(RuntimeError):
        with staged_dir(target) as tmp:
            (tmp / "new.md").write_text("new")
            raise RuntimeError
    assert [p.name for p in target.iterdir()] == ["old.md"]
    with staged_dir(target) as tmp:
        (tmp / "new.md").write_text("new")
    assert [p.name for p in target.iterdir()] == ["new.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_swap_dir_refuses_a_file(tmp_path):
    (tmp_path / "new").mkdir()
    (tmp_path / "target").write_text("x")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        swap_dir(tmp_path / "new", tmp_path / "target")


def test_write_folder_keeps_other_files(tmp_path):
    out = tmp_path / "scores"
    out.mkdir()
    (out / "keep.txt").write_text("k")
    paths = write_folder(out, {"a.csv": b"1\n", "b.json": b"{}\n"})
    assert [p.name for p in paths] == ["a.csv", "b.json"]
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "b.json", "keep.txt"]
    with pytest.raises(OutputError):
        write_folder(tmp_path / "scores" / "a.csv", {"x": b""})
