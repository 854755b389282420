"""KINDS.md §9 inside the Ideas kind: its archive part imports only the archive stage; its scores part
the archive and scores stages; its kit (the evaluator) the archive, search and kit stages; the sample
builder the archive stage and the kind's own parts; its site the archive, scores and site stages. Shared modules (errors, io, text) are always allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KIND = Path(__file__).resolve().parents[3] / "generator" / "rapgen" / "kinds" / "ideas"
SHARED = {"errors", "io", "text", "resources"}
ALLOWED = {  # part -> (rapgen stages, parts of the kind) it may import
    "archive": ({"archive"}, {"archive"}),
    "scores": ({"archive", "scores"}, {"archive", "scores"}),
    "kit": ({"archive", "search", "kit"}, {"archive", "kit"}),
    "sample": ({"archive"}, {"archive", "kit", "sample"}),
    "site": ({"archive", "scores", "site"}, {"archive", "scores", "site"}),
}


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


@pytest.mark.parametrize("path", sorted(KIND.rglob("*.py")), ids=lambda p: str(p.relative_to(KIND)))
def test_the_kinds_parts_import_one_way(path):
    part = path.relative_to(KIND).parts[0]
    if part not in ALLOWED:
        return  # the package face
    stages, parts = ALLOWED[part]
    for target in _imports(path):
        bits = target.split(".")
        if bits[0] != "rapgen" or len(bits) < 2 or bits[1] in SHARED:
            continue
        if bits[1] == "kinds":
            assert bits[2] == "ideas" and bits[3] in parts, f"{path.name}: kinds.ideas.{part} must not import {target}"
        else:
            assert bits[1] in stages, f"{path.name}: kinds.ideas.{part} must not import {target}"
