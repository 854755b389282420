"""RAP's vocabulary is spelt once, in its declaration modules, and read everywhere else.

A condition's name (A0–A4, O1–O3) and a split's are spelt only in ``rapgen.archive.records``;
a track's, a counting policy's and the baselines' condition in ``rapgen.scores.schema``; a metric's
(``spearman``, ``tv``, ``jsd`` and the registry's other names) in ``rapgen.scores.metrics``. Every other
module of the package reads them by name (``EXPANDING_FORECAST``, ``PRIMARY.track``,
``CANONICAL_POLICY``, ``SPEARMAN`` …), so a renamed condition or a second benchmark kind cannot leave a
stray copy behind. The test counts string literals in the source: a literal that *is* one
of these words, or an identifier-like literal holding a condition or a metric as a token
(``"A3-A1"``, ``"O2/spearman"``, ``"model:A1"``, ``"ewma/tv"``; not ``"spearman_strict"``). Prose (any literal with a space: docstrings, messages,
SQL, prompt text) and ``__all__`` lists are not counted. Other benchmark kinds
(``rapgen.kinds.<kind>`` other than ``rap``) declare their own words and are not scanned.

``split``, ``single`` and ``live`` are not counted: besides a policy or a track they are the
split column, an assignment type and a stage or document key, and a literal cannot say which.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "generator" / "rapgen"
CONDITION_WORDS = ("A0", "A1", "A2", "A3", "A4", "O1", "O2", "O3")
SPLIT_WORDS = ("dev", "test")
SCORER_WORDS = ("all_origin", "forecast_strict", "canonical", "flip", "BASE")
METRIC_WORDS = ("spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain")
CONDITION_TOKEN = re.compile(r"(?<![A-Za-z0-9_])(A[0-4]|O[1-3])(?![A-Za-z0-9_])")
METRIC_TOKEN = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(METRIC_WORDS) + r")(?![A-Za-z0-9_])")
IDENTIFIER_LIKE = re.compile(r"^[A-Za-z0-9_.:>/\-]+$")
OTHER_KINDS = {p.name for p in (PACKAGE / "kinds").iterdir() if p.is_dir() and p.name not in ("rap", "__pycache__")}

# (module, word) -> how many literals spell it. The homes spell each of their words once; the
# other rows are the deliberate exceptions.
EXPECTED: dict[tuple[str, str], int] = {
    **{("archive/records.py", w): 1 for w in CONDITION_WORDS + SPLIT_WORDS},
    **{("scores/schema.py", w): 1 for w in SCORER_WORDS},
    **{("scores/metrics.py", w): 1 for w in METRIC_WORDS},
    # strict_masks.csv's column (INTERVENTIONS.md §4, Table 10) names the Forecast-Strict *mask*:
    # declared with the file's columns, written by mask_rows and shown under that name.
    ("scores/schema.py", "forecast_strict"): 2,
    ("scores/interventions/tables.py", "forecast_strict"): 1,
    ("site/pages/paper_tables.py", "forecast_strict"): 1,
    # The exact-history windows shown per O condition; archive/evidence.py is edited in another
    # change (the vectorised record checks) and keeps its table until then.
    **{("archive/evidence.py", w): 1 for w in ("O1", "O2", "O3")},
}


def _all_names(tree: ast.AST) -> set[int]:
    """ids of the string constants inside ``__all__ = [...]`` (names of functions, not words)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                out |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return out


def vocabulary_literals(source: str) -> list[tuple[int, str, str]]:
    """(line, word, literal) for every literal of ``source`` that spells a vocabulary word, in source order."""
    tree = ast.parse(source)
    skip = _all_names(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
            continue
        value = node.value
        if value in SCORER_WORDS or value in SPLIT_WORDS or value in METRIC_WORDS:
            out.append((node.lineno, node.col_offset, 0, value, value))
        elif IDENTIFIER_LIKE.match(value):
            words = sorted([(m.start(), m.group()) for m in CONDITION_TOKEN.finditer(value)]
                           + [(m.start(), m.group()) for m in METRIC_TOKEN.finditer(value)])
            out += [(node.lineno, node.col_offset, i, word, value) for i, (_at, word) in enumerate(words)]
    return [(line, word, value) for line, _col, _i, word, value in sorted(out)]


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if not (p.relative_to(PACKAGE).parts[:1] == ("kinds",) and p.relative_to(PACKAGE).parts[1] in OTHER_KINDS)]


def test_scanner_finds_words_and_skips_prose():
    src = ('"""A3 and A4 in a docstring."""\n'
           '__all__ = ["canonical"]\n'
           'X = ("A3", "A3-A1", "O2/spearman", "model:A1", "all_origin", "BASE", "test")\n'
           'Y = ("A3 is prose", "lb.among_a3", "A30", "fA3", "canonical_order", "test_fields", "SELECT \'canonical\' AS policy")\n'
           'Z = ("spearman", "tv", "jsd", "ewma/tv", "cell/tv_gain", "metric.spearman")\n'
           'W = ("spearman_strict", "direct_spearman_corrected", "tv(p, y)", "tvx", "jsd_mean")\n')
    assert [(w, v) for _, w, v in vocabulary_literals(src)] == [
        ("A3", "A3"), ("A3", "A3-A1"), ("A1", "A3-A1"), ("O2", "O2/spearman"), ("spearman", "O2/spearman"),
        ("A1", "model:A1"), ("all_origin", "all_origin"), ("BASE", "BASE"), ("test", "test"),
        ("spearman", "spearman"), ("tv", "tv"), ("jsd", "jsd"), ("tv", "ewma/tv"), ("tv_gain", "cell/tv_gain"),
        ("spearman", "metric.spearman"),
    ]


def test_each_word_is_spelt_in_its_declaration_only():
    found: dict[tuple[str, str], list[str]] = {}
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        for line, word, value in vocabulary_literals(path.read_text(encoding="utf-8")):
            found.setdefault((rel, word), []).append(f"{rel}:{line}: {value!r}")
    counts = Counter({key: len(v) for key, v in found.items()})
    wrong = sorted(key for key in set(counts) | set(EXPECTED) if counts[key] != EXPECTED.get(key, 0))
    if wrong:
        lines = [f"{rel}: {word!r} spelt {counts[(rel, word)]} times, expected {EXPECTED.get((rel, word), 0)}"
                 + "".join(f"\n    {where}" for where in found.get((rel, word), ())) for rel, word in wrong]
        pytest.fail("RAP's words are spelt outside their declarations (read the names from rapgen.archive "
                    "(records.py) or rapgen.scores (schema.py, metrics.py) instead):\n" + "\n".join(lines))


def test_the_declarations_hold_the_words():
    from rapgen.archive import CONDITIONS, ORACLE_CONDITIONS, SPLITS
    from rapgen.scores import BASELINE_CONDITION, METRIC_NAMES, POLICIES, PRIMARY, SPEARMAN, TRACKS

    assert set(CONDITIONS) | set(ORACLE_CONDITIONS) == set(CONDITION_WORDS)
    assert SPLITS == SPLIT_WORDS
    assert {*TRACKS, BASELINE_CONDITION} | {POLICIES[0], POLICIES[-1]} == set(SCORER_WORDS)
    assert (PRIMARY.track, PRIMARY.policy, PRIMARY.condition) == ("all_origin", "canonical", "A3")
    assert set(METRIC_NAMES) == set(METRIC_WORDS) and PRIMARY.metric == SPEARMAN == "spearman"
