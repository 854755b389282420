"""Stages import one way: archive -> {search, scores} -> site; only rapgen.cli imports click."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "generator" / "rapgen"
# stage -> stages it may import (besides itself and the shared modules errors/__init__)
ALLOWED = {
    "archive": set(),
    "search": {"archive"},
    "scores": {"archive"},
    "sample": {"archive", "search"},
    "kit": {"archive", "search"},
    "agents": {"archive", "search", "kit"},
    "site": {"archive", "scores", "search"},
    "pipeline": {"archive", "scores", "search", "site"},
    "submit": {"archive", "scores", "search", "site", "agents", "pipeline", "kit"},
    "cli": {"archive", "scores", "search", "site", "sample", "agents", "pipeline", "submit", "kit"},
}
SHARED = {"errors", "__init__", "__main__"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        yield (rel.parts[0] if len(rel.parts) > 1 else rel.stem), path


@pytest.mark.parametrize("stage,path", list(_modules()), ids=lambda v: str(v).split("rapgen/")[-1])
def test_imports_flow_one_way(stage, path):
    if stage in SHARED:
        return
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "click":
            assert stage == "cli", f"{path}: only rapgen.cli may import click"
        if parts[0] != "rapgen" or len(parts) < 2:
            continue
        target = parts[1]
        if target in SHARED or target == stage:
            continue
        assert target in ALLOWED.get(stage, set()), f"{path}: stage {stage!r} must not import rapgen.{target}"
