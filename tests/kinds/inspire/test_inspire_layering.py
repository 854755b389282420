"""KINDS.md §9 for the Inspire kind: each subpackage imports only its stages and the engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KIND = Path(__file__).resolve().parents[3] / "generator" / "rapgen" / "kinds" / "inspire"
# subpackage -> rapgen stages it may import, and the kind's own subpackages it may import
ALLOWED = {
    "archive": ({"archive"}, {"archive"}),
    "scores": ({"archive", "scores"}, {"archive", "scores"}),
    "search": ({"archive", "search", "kit"}, {"archive", "search"}),
    "kit": ({"archive", "search", "kit"}, {"archive", "search", "kit"}),
    "sample": ({"archive", "search"}, {"archive", "scores", "search", "sample"}),
    "site": ({"archive", "scores", "site"}, {"archive", "scores", "site"}),
    # review.py, what the pull-request check reads of a model folder: a module beside the declaration,
    # held to the declaration's rule (the contract and the kind's archive and scores)
    "review": ({"archive", "scores"}, {"archive", "scores"}),
}
SHARED = {"errors", "io", "text", "resources"}


def _imports(path: Path) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
    return out


@pytest.mark.parametrize("path", sorted(KIND.rglob("*.py")), ids=lambda p: str(p.relative_to(KIND)))
def test_inspire_subpackages_keep_their_lane(path):
    rel = path.relative_to(KIND).parts
    if len(rel) == 1:  # the kind's declaration: the contract and the kind's own parts
        for module, line in _imports(path):
            parts = module.split(".")
            if parts[0] == "rapgen":
                assert parts[1] == "kinds" and (parts[2] == "base" or parts[2] == "inspire" and parts[3] in ALLOWED), \
                    f"{path}:{line} imports {module}"
        return
    stages, own = ALLOWED[rel[0]]
    for module, line in _imports(path):
        parts = module.split(".")
        if parts[0] != "rapgen":
            continue
        if parts[1] == "kinds":
            assert parts[2] == "inspire" and parts[3] in own, f"{path}:{line} imports {module}"
        else:
            assert parts[1] in stages | SHARED, f"{path}:{line} imports {module}"
