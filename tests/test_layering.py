"""The package's import rules, checked on the source.

1. Stages import one way: archive -> {search, scores} -> site; only rapgen.cli
   imports click; the shared modules (errors, io, text, resources) may be imported by any stage.
   Benchmark kinds (rapgen.kinds) sit above the engine stages and below pipeline, submit and
   cli, the only stages that import them (KINDS.md §9); inside a kind, its ``archive`` part
   reads the archive stage only, ``scores`` archive and scores, ``search``/``kit`` archive,
   search and kit, ``site`` archive, scores and site; no kind imports another.
2. No import circle anywhere in the package, counting imports inside functions too.
3. No module imports another stage's private (underscore) names.
4. Another stage is imported through its face only (``from rapgen.archive import …``, never
   ``rapgen.archive.history.ops``); a kind's face is ``rapgen.kinds.<kind>`` (and the
   contract ``rapgen.kinds.base``).
5. No module is over 600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "generator" / "rapgen"
# stage -> stages it may import (besides itself and the shared modules)
ALLOWED = {
    "archive": set(),
    "search": {"archive"},
    "scores": {"archive"},
    "sample": {"archive", "search"},
    "kit": {"archive", "search"},
    "agents": {"archive", "search", "kit"},
    "site": {"archive", "scores", "search"},
    "kinds": {"archive", "scores", "search", "kit", "site", "sample", "agents"},
    "pipeline": {"archive", "scores", "search", "site", "kinds"},
    "submit": {"archive", "scores", "search", "site", "agents", "pipeline", "kit", "kinds"},
    "cli": {"archive", "scores", "search", "site", "sample", "agents", "pipeline", "submit", "kit", "kinds"},
    "__main__": {"cli"},
}
# Modules every stage may import; they import nothing of rapgen but each other.
SHARED = {"errors", "io", "text", "resources", "__init__"}
SHARED_MAY_IMPORT = {"errors", "io", "text"}


# ---------------------------------------------------------------- the import graph
def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(importer: str, module: str | None, level: int) -> str | None:
    if level == 0:
        return module
    base = importer.split(".") if _is_package(importer) else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _imports(name: str) -> list[tuple[str, tuple[str, ...], int]]:
    """(target module, names imported from it, line) for every import in a module,
    at any depth (imports inside functions count: they are edges too)."""
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, (), node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, node.module, node.level)
            if target:
                out.append((target, tuple(a.name for a in node.names), node.lineno))
    return out


def _edges(name: str) -> dict[str, int]:
    """rapgen modules ``name`` imports -> first line. ``from pkg import sub`` with
    ``sub`` a module is an edge to ``pkg.sub`` (as import-linter counts it); with
    any other name it is an edge to ``pkg`` itself."""
    out: dict[str, int] = {}
    for target, names, line in _imports(name):
        if target not in MODULES:
            continue
        submodules = [n for n in names if f"{target}.{n}" in MODULES]
        for n in submodules:
            out.setdefault(f"{target}.{n}", line)
        if len(submodules) < len(names) or not names:
            out.setdefault(target, line)
    out.pop(name, None)
    return out


GRAPH = {name: _edges(name) for name in MODULES}


def _stage(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _report(problems: list[tuple[list[str], str]], what: str) -> None:
    """Fail, naming every problem, when there is any."""
    if problems:
        pytest.fail(f"{what}:\n" + "\n".join(msg for _, msg in problems))


# ---------------------------------------------------------------- 1. layering
@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda v: v)
def test_imports_flow_one_way(name):
    stage = _stage(name)
    path = MODULES[name]
    for target, _names, _line in _imports(name):
        parts = target.split(".")
        if parts[0] == "click":
            assert stage == "cli", f"{path}: only rapgen.cli may import click"
        if parts[0] != "rapgen" or len(parts) < 2:
            continue
        other = parts[1]
        if stage in SHARED:
            assert other in SHARED_MAY_IMPORT, f"{path}: shared module rapgen.{stage} must not import rapgen.{other}"
            continue
        if other in SHARED or other == stage:
            continue
        assert other in ALLOWED.get(stage, set()), f"{path}: stage {stage!r} must not import rapgen.{other}"


# A kind's parts (rapgen.kinds.<kind>.<part>) -> the stages that part may import (KINDS.md §9).
KIND_PARTS = {
    "archive": {"archive"},
    "scores": {"archive", "scores"},
    "search": {"archive", "search", "kit"},
    "kit": {"archive", "search", "kit"},
    "site": {"archive", "scores", "site"},
}
KIND_SHARED = {"base"}  # rapgen.kinds.base: the contract every kind imports


def _kind_rule(name: str, target: str) -> str | None:
    """Why module ``name`` (inside rapgen.kinds) may not import ``target``, or None."""
    parts, other = name.split("."), target.split(".")
    if len(parts) < 3 or parts[2] in KIND_SHARED:
        return None  # the registry and the contract
    kind = parts[2]
    if other[:2] == ["rapgen", "kinds"] and len(other) > 2 and other[2] not in KIND_SHARED and other[2] != kind:
        return f"kind {kind!r} must not import another kind ({target})"
    part = parts[3] if len(parts) > 3 else None
    if part in KIND_PARTS and other[0] == "rapgen" and len(other) > 1 and other[1] not in SHARED | {"kinds"}:
        if other[1] not in KIND_PARTS[part]:
            return f"the {part} part of kind {kind!r} must not import rapgen.{other[1]}"
    return None


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("rapgen.kinds.")), ids=lambda v: v)
def test_kinds_keep_to_their_parts(name):
    problems = [why for target, _n, _l in _imports(name) if (why := _kind_rule(name, target))]
    assert not problems, f"{MODULES[name]}: " + "; ".join(problems)


def test_kind_rule_refuses_crossings():
    assert _kind_rule("rapgen.kinds.ideas.scores", "rapgen.site.cells") == "the scores part of kind 'ideas' must not import rapgen.site"
    assert _kind_rule("rapgen.kinds.ideas", "rapgen.kinds.rap.scores") == "kind 'ideas' must not import another kind (rapgen.kinds.rap.scores)"
    assert _kind_rule("rapgen.kinds.ideas.site", "rapgen.scores.schema") is None
    assert _kind_rule("rapgen.kinds.ideas.archive", "rapgen.kinds.base") is None


def _face_of(target: str) -> str:
    """The module another stage must import ``target``'s names from."""
    parts = target.split(".")
    if parts[1] == "kinds" and len(parts) > 2:
        return ".".join(parts[:3])  # rapgen.kinds.<kind> (or rapgen.kinds.base)
    return ".".join(parts[:2])


@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda v: v)
def test_other_stages_are_imported_through_their_face(name):
    stage = _stage(name)
    problems = []
    for target, _names, line in _imports(name):
        parts = target.split(".")
        if parts[0] != "rapgen" or len(parts) < 3 or parts[1] in SHARED or parts[1] == stage:
            continue
        if target != _face_of(target):
            problems.append(f"line {line}: imports {target}; import from {_face_of(target)} instead")
    assert not problems, f"{MODULES[name]}: " + "; ".join(problems)


# ---------------------------------------------------------------- 2. no circles
def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _one_cycle(graph: dict[str, dict[str, int]], comp: list[str]) -> list[str]:
    """A shortest closed path inside a component, for the message."""
    members = set(comp)
    start = comp[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return comp


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(cycle, cycle[1:])]
    return "circle: " + "; ".join(steps)


def test_cycle_finder_finds_a_planted_circle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    comps = _cycles(graph)
    assert comps == [["a", "b", "c"]]
    assert _describe(graph, _one_cycle(graph, comps[0])) == "circle: a (line 1) -> b; b (line 2) -> c; c (line 3) -> a"


def test_no_import_circle_anywhere():
    problems = []
    for comp in _cycles(GRAPH):
        problems.append((comp, _describe(GRAPH, _one_cycle(GRAPH, comp)) + f"  [component: {', '.join(comp)}]"))
    _report(problems, "import circles")


def test_no_import_circle_in_archive():
    """Circle 1 of the review (reader <-> verify <-> invariants) is gone for good."""
    sub = {m: {t: l for t, l in e.items() if t.startswith("rapgen.archive")} for m, e in GRAPH.items() if m.startswith("rapgen.archive")}
    assert _cycles(sub) == []


# ---------------------------------------------------------------- 3. private names
def _private_uses(name: str, source: str | None = None) -> list[str]:
    """``from rapgen.<other stage>.x import _name`` and ``module._name`` on a module
    of another stage, in module ``name`` (or in ``source`` read as that module)."""
    stage = _stage(name)
    shown = str(MODULES[name].relative_to(PACKAGE)) if name in MODULES else name
    tree = ast.parse(source if source is not None else MODULES[name].read_text())
    out = []
    aliases: dict[str, str] = {}  # local name -> rapgen module of another stage
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(name, node.module, node.level) or ""
            if target not in MODULES or _stage(target) == stage:
                continue
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{shown}:{node.lineno}: imports {target}.{a.name}")
                if f"{target}.{a.name}" in MODULES:
                    aliases[a.asname or a.name] = f"{target}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES and _stage(a.name) != stage and a.asname:
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
            and node.attr.startswith("_") and not node.attr.startswith("__")
        ):
            out.append(f"{shown}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}")
    return out


def test_no_private_names_across_stages():
    problems = []
    for name in sorted(MODULES):
        for use in _private_uses(name):
            target = use.rsplit(" ", 1)[1].rsplit(".", 1)[0]
            problems.append(([name, target], use))
    _report(problems, "private names used across stage boundaries")


def test_private_name_finder_sees_both_forms():
    src = "from rapgen.archive.parse import _Bad, loads_strict\nfrom rapgen.archive import parse\nparse._guard\nparse.loads_strict\n"
    assert _private_uses("rapgen.scores.planted", src) == [
        "rapgen.scores.planted:1: imports rapgen.archive.parse._Bad",
        "rapgen.scores.planted:3: uses rapgen.archive.parse._guard",
    ]
    assert _private_uses("rapgen.archive.planted", src) == []  # inside its own stage a module may


def test_face_of_names_the_package_face():
    assert _face_of("rapgen.archive.history.ops") == "rapgen.archive"
    assert _face_of("rapgen.kinds.rap.replay") == "rapgen.kinds.rap"
    assert _face_of("rapgen.kinds.base") == "rapgen.kinds.base"


# ---------------------------------------------------------------- 5. small modules
MAX_MODULE_LINES = 600


def test_no_module_is_over_six_hundred_lines():
    long = {str(path.relative_to(PACKAGE)): n for path in MODULES.values() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_long_files_handed_out_first_are_test_files_of_this_suite():
    """tests/conftest.py's LONG_FILES order the run; a renamed or removed file there would silently stop counting."""
    root = Path(__file__).resolve().parent.parent
    module = ast.parse((root / "tests" / "conftest.py").read_text(encoding="utf-8"))
    LONG_FILES = next(ast.literal_eval(node.value) for node in module.body
                      if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["LONG_FILES"])
    assert len(set(LONG_FILES)) == len(LONG_FILES)
    assert [name for name in LONG_FILES if not (root / name).is_file()] == []
