"""``rapgen synth --kind ideas|inspire``: the kinds' synthetic archives through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", ["ideas", "inspire"])
def test_a_small_synthetic_archive_verifies_and_a_seed_gives_the_same_bytes(kind, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for out, seed in ((a, "3"), (b, "3"), (c, "4")):
        result = invoke("synth", "--kind", kind, "--scale", "small", "--seed", seed, "--out", str(out))
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"Wrote synthetic {kind} archive")
    verified = invoke("verify", "--root", str(a))
    assert verified.exit_code == 0, verified.output
    assert tree(a) == tree(b) and tree(a)["SHA256SUMS"] != tree(c)["SHA256SUMS"]
    again = invoke("synth", "--kind", kind, "--scale", "small", "--seed", "3", "--out", str(a))
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = invoke("synth", "--kind", kind, "--scale", "small", "--seed", "4", "--out", str(a), "--force")
    assert forced.exit_code == 0 and tree(a) == tree(c)


@pytest.mark.parametrize("args, message", [
    (["--kind", "ideas", "--no-traces"], "--no-traces is an option of RAP's synthetic archive"),
    (["--kind", "inspire", "--no-history"], "--no-history is an option of RAP's synthetic archive"),
    (["--kind", "nope"], "no installed benchmark kind of that name writes a synthetic archive"),
])
def test_usage_errors(args, message, tmp_path):
    result = invoke("synth", *args, "--scale", "small", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "x").exists()
