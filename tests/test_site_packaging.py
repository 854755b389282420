"""The wheel carries every template, asset and the mkdocs configuration, found at run time
through importlib.resources (the full install-and-build check is .ci/wheel-check).

The wheel is built offline from a copy of the packaging inputs with
``pip wheel --no-deps --no-build-isolation``, so setuptools and wheel must be
importable; the test is skipped only when they are not.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rapgen import resources

REPO = Path(__file__).resolve().parent.parent
PACKAGING_INPUTS = ("pyproject.toml", "setup.py", "README.md", "generator", "templates")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    if importlib.util.find_spec("setuptools") is None or importlib.util.find_spec("wheel") is None:
        pytest.skip("building a wheel offline needs setuptools and wheel in this environment")
    src = tmp_path_factory.mktemp("wheel-src")
    for name in PACKAGING_INPUTS:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("wheel-out")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                           str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("rapgen-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_wheel_has_every_template_asset_and_the_mkdocs_configuration(wheel_names):
    templates = REPO / "templates"
    expected = {f"rapgen/templates/{p.relative_to(templates).as_posix()}" for p in templates.rglob("*") if p.is_file()}
    assert {"rapgen/templates/mkdocs.base.yml", "rapgen/templates/overrides/main.html",
            "rapgen/templates/assets/javascripts/charts.js", "rapgen/templates/pages/leaderboard.md.j2"} <= expected
    assert sorted(expected - wheel_names) == []


def test_wheel_has_every_module_and_nothing_from_outside_the_package(wheel_names):
    code = REPO / "generator" / "rapgen"
    modules = {f"rapgen/{p.relative_to(code).as_posix()}" for p in code.rglob("*.py")}
    assert sorted(modules - wheel_names) == []
    top = {name.split("/")[0] for name in wheel_names}
    assert top == {"rapgen", "rapgen-0.1.0.dist-info"}, top


def test_the_checkout_falls_back_to_its_own_templates():
    # Run from the source tree (PYTHONPATH or an editable install): the repository's folder.
    assert resources.templates_dir() == REPO / "templates"
    assert resources.mkdocs_base_config().is_file()


def test_packaged_templates_win_over_the_checkout(tmp_path, monkeypatch):
    """In an installed wheel the package's own templates/ folder is used."""
    fake = tmp_path / "rapgen"
    (fake / "templates").mkdir(parents=True)
    monkeypatch.setattr(resources.resources, "files", lambda name: fake)
    assert resources.templates_dir() == fake / "templates"
