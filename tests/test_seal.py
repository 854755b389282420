"""``rapgen seal``: canonical SHA256SUMS, append-only for new model folders, refusals."""

from __future__ import annotations

import shutil
import subprocess

from click.testing import CliRunner

from rapgen.cli import cli


def run(root, *args):
    return CliRunner().invoke(cli, ["seal", "--root", str(root), *args])


def test_seal_writes_canonical_sums_that_verify(tiny_archive):
    sums = tiny_archive.root / "SHA256SUMS"
    before = sums.read_bytes()
    sums.unlink()
    result = run(tiny_archive.root)
    assert result.exit_code == 0, result.output
    assert result.stdout == "Wrote SHA256SUMS listing 15 files.\n"
    assert sums.read_bytes() == before  # canonical form is unique
    lines = before.decode().splitlines()
    assert lines == sorted(lines, key=lambda l: l[66:].encode())
    assert all(len(l.split("  ", 1)[0]) == 64 for l in lines)
    assert subprocess.run(["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=tiny_archive.root).returncode == 0


def test_seal_appends_a_new_model_folder_only(tiny_archive):
    models = tiny_archive.root / "archive" / "models"
    before = (tiny_archive.root / "SHA256SUMS").read_text().splitlines()
    shutil.copytree(models / "model-b", models / "model-c")
    meta = models / "model-c" / "model.json"
    meta.write_text(meta.read_text().replace('"model-b"', '"model-c"'))
    result = run(tiny_archive.root)
    assert result.exit_code == 0, result.output
    assert "added archive/models/model-c/model.json" in result.stdout
    assert "Appended 2 lines" in result.stdout
    after = (tiny_archive.root / "SHA256SUMS").read_text().splitlines()
    assert set(before) < set(after) and len(after) == len(before) + 2
    again = run(tiny_archive.root)
    assert again.exit_code == 0 and "Nothing to add" in again.stdout


def test_seal_refuses_to_change_a_frozen_line(tiny_archive):
    target = tiny_archive.root / "archive" / "benchmark" / "fields.jsonl"
    target.write_text(target.read_text() + "\n")
    sums_before = (tiny_archive.root / "SHA256SUMS").read_bytes()
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "refusing to change the existing SHA256SUMS line for archive/benchmark/fields.jsonl" in result.stderr
    assert (tiny_archive.root / "SHA256SUMS").read_bytes() == sums_before


def test_seal_names_every_changed_line(tiny_archive):
    for name in ("fields.jsonl", "blocks.jsonl"):
        target = tiny_archive.root / "archive" / "benchmark" / name
        target.write_text(target.read_text() + "\n")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "lines for archive/benchmark/blocks.jsonl, archive/benchmark/fields.jsonl" in result.stderr


def test_seal_refuses_a_malformed_new_model(tiny_archive):
    models = tiny_archive.root / "archive" / "models"
    before = (tiny_archive.root / "SHA256SUMS").read_bytes()
    (models / "Bad_ID").mkdir()
    (models / "Bad_ID" / "model.json").write_text("{}")
    (models / "Bad_ID" / "predictions.jsonl").write_text("")
    result = run(tiny_archive.root)
    assert result.exit_code == 1 and "model id 'Bad_ID' does not match" in result.stderr
    shutil.rmtree(models / "Bad_ID")
    (models / "new-model").mkdir()
    (models / "new-model" / "model.json").write_text("{}")
    (models / "new-model" / "predictions.jsonl").write_text("")
    result = run(tiny_archive.root)
    assert result.exit_code == 1 and "archive/models/new-model/model.json: missing key" in result.stderr
    assert (tiny_archive.root / "SHA256SUMS").read_bytes() == before


def test_seal_never_reads_through_a_link_or_blocks_on_a_fifo(tiny_archive):
    import os

    sums = tiny_archive.root / "SHA256SUMS"
    real = tiny_archive.root / "real-sums"
    sums.rename(real)
    sums.symlink_to(real)
    result = run(tiny_archive.root)
    assert result.exit_code == 1 and "not a link" in result.stderr
    assert sums.is_symlink()
    sums.unlink()
    os.mkfifo(sums)
    result = run(tiny_archive.root)
    assert result.exit_code == 1 and "not a regular file" in result.stderr


def test_seal_refuses_new_file_in_frozen_part(tiny_archive):
    (tiny_archive.root / "archive" / "benchmark" / "extra.json").write_text("{}")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "refusing to add archive/benchmark/extra.json" in result.stderr


def test_seal_refuses_new_file_in_sealed_model(tiny_archive):
    (tiny_archive.root / "archive" / "models" / "model-b" / "traces.jsonl").write_text("")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "model 'model-b' is already sealed" in result.stderr


def test_seal_refuses_symlinks(tiny_archive):
    (tiny_archive.root / "archive" / "link").symlink_to(tiny_archive.root / "SHA256SUMS")
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "archive/link is a symlink" in result.stderr


def test_seal_refuses_removed_file(tiny_archive):
    (tiny_archive.root / "archive" / "models" / "model-b" / "model.json").unlink()
    result = run(tiny_archive.root)
    assert result.exit_code == 1
    assert "may never be removed" in result.stderr


def test_seal_without_archive_folder(tmp_path):
    result = run(tmp_path)
    assert result.exit_code == 1
    assert "no archive/ folder" in result.stderr
    assert run(tmp_path / "missing").exit_code == 2


# ---------------------------------------------------------------- adversarial inputs: one line, exit 1/2, never a traceback
import os  # noqa: E402

import pytest  # noqa: E402

from rapgen.archive import seal_archive  # noqa: E402
from rapgen.errors import ArchiveError  # noqa: E402


def _one_error_line(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    return lines[0]


def _unsealed(tiny_archive):
    (tiny_archive.root / "SHA256SUMS").unlink()
    return tiny_archive.root


def test_a_file_name_that_is_not_utf8_is_refused(tiny_archive):
    root = _unsealed(tiny_archive)
    with open(os.path.join(os.fsencode(root / "archive"), b"bad\xff.json"), "wb") as handle:
        handle.write(b"{}")
    line = _one_error_line(run(root), 1)
    assert line == "Error: cannot seal: the name archive/bad\\xff.json is not valid UTF-8; rename the file"
    assert not (root / "SHA256SUMS").exists()


def test_a_bidi_override_in_a_name_is_refused_and_shown_escaped(tiny_archive):
    root = _unsealed(tiny_archive)
    (root / "archive" / "x\u202etxt.json").write_text("{}")
    line = _one_error_line(run(root), 1)
    assert "archive/x\\u202etxt.json holds a bidirectional override character" in line


def test_control_characters_in_a_new_model_folder_are_escaped(tiny_archive):
    folder = tiny_archive.root / "archive" / "models" / "evil\x1b[2J"
    folder.mkdir()
    (folder / "model.json").write_text("{}")
    line = _one_error_line(run(tiny_archive.root), 1)
    assert "refusing to add archive/models/evil\\x1b[2J" in line


def test_sha256sums_that_is_a_folder_or_a_link(tiny_archive):
    root = tiny_archive.root
    os.replace(root / "SHA256SUMS", root / "real-sums")
    os.symlink("real-sums", root / "SHA256SUMS")
    assert "not a link" in _one_error_line(run(root), 1)
    (root / "SHA256SUMS").unlink()
    (root / "SHA256SUMS").mkdir()
    assert _one_error_line(run(root), 1) == "Error: SHA256SUMS: is not a regular file"


def test_an_unwritable_sha256sums_is_an_error_not_a_traceback(tiny_archive, monkeypatch):
    root = _unsealed(tiny_archive)

    def refuse(*_args, **_kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("rapgen.archive.seal.atomic_write_bytes", refuse)
    with pytest.raises(ArchiveError, match=r"SHA256SUMS: cannot be written \(Permission denied\); nothing was changed"):
        seal_archive(root)
    line = _one_error_line(run(root), 1)
    assert line == "Error: SHA256SUMS: cannot be written (Permission denied); nothing was changed"


def test_a_file_that_vanishes_while_hashing_is_an_error(tiny_archive, monkeypatch):
    from rapgen.archive.walk import HashResult

    root = _unsealed(tiny_archive)
    monkeypatch.setattr("rapgen.archive.seal.hash_files", lambda r, paths, jobs=None: {p: HashResult(p, None, 0, "No such file or directory") for p in paths})
    line = _one_error_line(run(root), 1)
    assert line.startswith("Error: cannot seal: archive/") and line.endswith("cannot be read (No such file or directory)")


def test_an_unexpected_bug_is_one_line_exit_3_and_debug_shows_the_traceback(tiny_archive, monkeypatch):
    def boom(*_a, **_k):
        raise KeyError("bug")

    monkeypatch.setattr("rapgen.archive.seal.walk", boom)
    result = run(tiny_archive.root)
    assert result.exit_code == 3
    assert result.stderr.splitlines() == ["Error: internal error: KeyError: 'bug' (rerun with --debug for a traceback)"]
    result = run(tiny_archive.root, "--debug")
    assert result.exit_code == 3 and "Traceback" in result.stderr


def test_root_that_is_missing_is_a_usage_error(tmp_path):
    line = _one_error_line(run(tmp_path / "nope"), 2)
    assert line.endswith("nope: the root is not a directory")


def test_a_sealed_model_gains_origin_files_interventions_and_a_commitment(tiny_archive):
    root = tiny_archive.root
    before = (root / "SHA256SUMS").read_text().splitlines()
    model = root / "archive/models/model-b"
    (model / "origins/2025-07-01").mkdir(parents=True)
    (model / "origins/2025-07-01/predictions.jsonl").write_text("{}\n")
    (model / "replays.jsonl").write_text("")
    (root / "archive/commitments/2026-01-01").mkdir(parents=True)
    (root / "archive/commitments/2026-01-01/model-b.json").write_text("{}\n")
    result = run(root)
    assert result.exit_code == 0, result.output
    assert "Appended 3 lines" in result.stdout
    after = (root / "SHA256SUMS").read_text().splitlines()
    assert set(before) < set(after) and len(after) == len(before) + 3  # every listed line kept, byte for byte
    added = {line.split("  ", 1)[1] for line in set(after) - set(before)}
    assert added == {"archive/models/model-b/origins/2025-07-01/predictions.jsonl", "archive/models/model-b/replays.jsonl",
                     "archive/commitments/2026-01-01/model-b.json"}


def test_a_sealed_model_may_not_gain_its_format1_files(tiny_archive):
    root = tiny_archive.root
    before = (root / "SHA256SUMS").read_bytes()
    (root / "archive/models/model-b/traces.jsonl").write_text("")
    (root / "archive/models/model-b/oracle.jsonl").write_text("")
    result = run(root)
    assert result.exit_code == 1
    assert "refusing to add archive/models/model-b/traces.jsonl: model 'model-b' is already sealed" in result.output
    assert (root / "SHA256SUMS").read_bytes() == before  # nothing appended, not even the allowed oracle.jsonl


def test_a_new_model_may_enter_with_model_json_and_a_commitment(tiny_archive):
    root = tiny_archive.root
    models = root / "archive/models"
    (models / "model-c").mkdir()
    (models / "model-c/model.json").write_text((models / "model-b/model.json").read_text().replace('"model-b"', '"model-c"'))
    result = run(root)
    assert result.exit_code == 1 and "predictions.jsonl is missing" in result.output
    (root / "archive/commitments/2026-01-01").mkdir(parents=True)
    (root / "archive/commitments/2026-01-01/model-c.json").write_text("{}\n")
    result = run(root)
    assert result.exit_code == 0 and "Appended 2 lines" in result.stdout, result.output
