"""One site, several benchmarks (KINDS.md §8): rapgen.toml and --benchmark SLUG on the commands.

Without --benchmark a command reads what it read before (the default benchmark is RAP at '.');
a benchmark whose kind is not installed is an error only when it is selected; every problem of
rapgen.toml is one line naming the file, the line and the problem (exit 2), and nothing is written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rapgen.cli import cli
from rapgen.cli.benchmarks import read_config

REPO = Path(__file__).resolve().parent.parent
IDEAS = REPO / "benchmarks" / "ideas"

TOML = """[site]
title = "Test site"
default = "ideas"

[[benchmark]]
slug = "ideas"
root = "ideas-root"
kind = "ideas"

[[benchmark]]
slug = "inspire"
root = "benchmarks/inspire"
kind = "not-installed"
"""


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_the_repository_lists_its_benchmarks():
    config = read_config(REPO)
    assert config.default == "rap" and [b.slug for b in config.benchmarks] == ["rap", "inspire", "ideas"]
    assert config.benchmark("rap").root == REPO and config.benchmark("ideas").root == IDEAS
    assert [b.kind for b in config.benchmarks] == ["rap", "inspire", "ideas"]


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """A folder with rapgen.toml, a copy of the Ideas sample as its default benchmark and an Inspire root not there."""
    (tmp_path / "rapgen.toml").write_text(TOML)
    for path in IDEAS.rglob("*"):
        if path.is_file():
            target = tmp_path / "ideas-root" / path.relative_to(IDEAS)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_benchmark_selects_a_root_and_the_default_needs_no_option(site):
    chosen = run("verify", "--benchmark", "ideas")
    assert chosen.exit_code == 0 and chosen.output.startswith("OK: 176 files,"), chosen.output
    default = run("verify")  # the [site] default
    assert default.exit_code == 0 and default.output == chosen.output
    scored = run("score", "--benchmark", "ideas", "--out", "out", "--resamples", "50", "--json")
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["kind"] == "ideas" and (site / "out" / "leaderboard.csv").is_file()
    listed = run("release", "list", "--benchmark", "ideas")
    lines = listed.output.splitlines()
    assert listed.exit_code == 0 and len(lines) == 14 and lines[0].startswith("   1 2025-01-01 initial  resolved 2024-09-01 "), listed.output
    checked = run("release", "verify", "--benchmark", "ideas")
    assert checked.exit_code == 0 and checked.output.startswith("OK: 176 files verified; history of 14 releases holds"), checked.output


def test_seal_takes_the_benchmark_too(site):
    """``seal --benchmark ideas`` lists a new Ideas model folder in that benchmark's SHA256SUMS, as --root would."""
    source = site / "ideas-root/archive/models/rising-terms"
    copy = site / "ideas-root/archive/models/rising-copy"
    shutil.copytree(source, copy)
    info = json.loads((copy / "model.json").read_bytes())
    info["model_id"] = "rising-copy"
    (copy / "model.json").write_text(json.dumps(info))
    n_files = sum(1 for p in copy.rglob("*") if p.is_file())
    before = (site / "ideas-root/SHA256SUMS").read_text()
    result = run("seal", "--benchmark", "ideas")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"Appended {n_files} lines; SHA256SUMS now lists {176 + n_files} files."
    after = (site / "ideas-root/SHA256SUMS").read_text()
    assert set(before.splitlines()) < set(after.splitlines()) and after.count("archive/models/rising-copy/") == n_files
    again = run("seal")  # the [site] default is the same benchmark
    assert again.exit_code == 0 and again.output == f"Nothing to add; SHA256SUMS lists {176 + n_files} files.\n"


@pytest.mark.parametrize("args, message", [
    (("verify", "--benchmark", "inspire"),
     "Error: benchmark 'inspire' is of kind 'not-installed', which this rapgen does not have (installed kinds: "),
    (("verify", "--benchmark", "nope"), "Error: --benchmark 'nope': rapgen.toml lists no such benchmark (listed: ideas, inspire)"),
    (("verify", "--benchmark", "ideas", "--root", "ideas-root"), "Error: give --root or --benchmark, not both"),
    (("score", "--benchmark", "inspire", "--out", "out"), "Error: benchmark 'inspire' is of kind 'not-installed'"),
    (("submit", "check", "--benchmark", "nope", "some-model"), "Error: --benchmark 'nope': rapgen.toml lists no such benchmark"),
    (("submit", "check", "--benchmark", "ideas", "ideas-root/archive/models/absent"),
     "Error: ideas-root/archive/models/absent: the model folder does not exist or is not a directory"),
    (("replay", "--benchmark", "ideas"), "Error: ideas-root: rapgen replay reads RAP archives only"),
])
def test_a_benchmark_that_cannot_be_selected_is_a_usage_error(site, args, message):
    result = run(*args)
    assert result.exit_code == 2 and result.stderr.startswith(message), result.output
    assert result.stderr.count("\n") == 1 and not (site / "out").exists()


def test_an_installed_kind_whose_root_is_missing(site):
    (site / "rapgen.toml").write_text(TOML.replace('root = "ideas-root"', 'root = "gone"'))
    result = run("verify", "--benchmark", "ideas")
    assert result.exit_code == 2 and result.stderr == f"Error: benchmark 'ideas': its root {Path('gone')} is not a folder\n"


def test_build_refuses_a_kind_without_a_site_before_writing(site, monkeypatch):
    from dataclasses import replace

    import rapgen.kinds
    from rapgen.kinds import Registry, registry

    without = Registry([replace(k, site=None) if k.name == "ideas" else k for k in registry().values()])
    monkeypatch.setattr(rapgen.kinds, "registry", lambda: without)
    result = run("build", "--benchmark", "ideas", "--resamples", "20", "--site-dir", "site")
    assert result.exit_code == 2 and "the ideas benchmark kind has no site to build" in result.stderr
    assert not (site / "build").exists() and not (site / "site").exists()


@pytest.mark.parametrize("text, message", [
    ("[site]\ndefault = \n", "rapgen.toml:2: not TOML: "),
    ("[site]\ncolour = 'red'\n[[benchmark]]\nslug = 'a'\nroot = '.'\n", "rapgen.toml:1: [site] takes default, title"),
    ("[[benchmark]]\nslug = 'a'\nroot = '.'\n\n[[benchmark]]\nslug = 'A b'\nroot = '.'\n",
     "rapgen.toml:5: benchmark 2: slug 'A b' does not match ^[a-z0-9][a-z0-9-]*$"),
    ("[[benchmark]]\nslug = 'a'\nroot = '.'\n[[benchmark]]\nslug = 'a'\nroot = 'b'\n", "rapgen.toml:4: benchmark 2: slug 'a' is listed twice"),
    ("[[benchmark]]\nslug = 'a'\nroot = '/abs'\n", "rapgen.toml:1: benchmark 'a': root '/abs' must be a relative path inside the repository"),
    ("[[benchmark]]\nslug = 'a'\n", "rapgen.toml:1: benchmark 1: missing key 'root'"),
    ("[[benchmark]]\nslug = 'a'\nroot = '.'\npath = 'x'\n", "rapgen.toml:1: benchmark 1: unknown key 'path'"),
    ("[site]\ndefault = 'b'\n[[benchmark]]\nslug = 'a'\nroot = '.'\n", "rapgen.toml:1: [site] default 'b' is not a listed benchmark"),
    ("[site]\ntitle = 'x'\n", "rapgen.toml: lists no [[benchmark]]"),
])
def test_a_malformed_rapgen_toml_is_one_line(site, text, message):
    (site / "rapgen.toml").write_text(text)
    result = run("verify")
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: {message}"), result.stderr
    assert result.stderr.count("\n") == 1


def test_without_rapgen_toml_the_root_is_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("verify", "--benchmark", "ideas")
    assert result.exit_code == 2 and "there is no rapgen.toml in the current folder" in result.stderr
    missing = run("verify")  # '.' holds no archive: the same findings as before rapgen.toml existed
    assert missing.exit_code == 1 and "MISSING SHA256SUMS: no SHA256SUMS at the root" in missing.output


def test_the_rap_commands_read_the_same_root_as_before(monkeypatch):
    """In the repository, no option still means RAP at '.', and --benchmark rap and --root . are the same root."""
    monkeypatch.chdir(REPO)
    outputs = [run("release", "list", *extra) for extra in ((), ("--benchmark", "rap"), ("--root", "."))]
    assert [r.exit_code for r in outputs] == [0, 0, 0] and len({r.output for r in outputs}) == 1
    assert outputs[0].output.startswith("   1 ")  # the committed sample is a release history
