"""Unit metrics (SCORING.md §2): hand-computed tables and the edge-case matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rapgen.errors import ScoringError
from rapgen.scores.kernels import spearman
from rapgen.scores.metrics import REGISTRY, MetricSpec, UnitInputs, get_metric, jsd, register, tv, unit_metric_values

NAN8 = [math.nan] * 8
UNIFORM = [1 / 8] * 8
# SCORING.md §8: target counts and prediction weights.
Y8 = [c / 30 for c in (16, 2, 7, 1, 1, 2, 0, 1)]
P8 = [w / 100 for w in (40, 10, 20, 5, 5, 10, 0, 10)]
ONE_TO_EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # identical orderings -> 1; reversed -> -1
        (ONE_TO_EIGHT, ONE_TO_EIGHT, 1.0),
        (ONE_TO_EIGHT, ONE_TO_EIGHT[::-1], -1.0),
        # §8 worked example
        (P8, Y8, 0.936709),
        # ties: ranks a = 1.5,1.5,3.5,3.5,5.5,5.5,7.5,7.5; b = 1..8; centred dot 40,
        # sums of squares 40 and 42 -> 40 / sqrt(1680) = 0.975900
        ([1, 1, 2, 2, 3, 3, 4, 4], ONE_TO_EIGHT, 40 / math.sqrt(40 * 42)),
        # a constant (uniform prediction) -> 0, whatever b is
        (UNIFORM, Y8, 0.0),
        (UNIFORM, UNIFORM, 0.0),
        # "constant" is max - min <= 1e-12: still 0
        ([0.125 + 1e-13] + [0.125] * 7, Y8, 0.0),
        # just above the tolerance the ordering counts: one top slot, seven tied
        # (worked by hand in test_spearman_single_top_slot_by_hand): 14 / sqrt(14 * 42)
        ([0.125 + 1e-11] + [0.125] * 7, ONE_TO_EIGHT[::-1], 14 / math.sqrt(14 * 42)),
        # b constant (and a not) -> undefined
        (P8, UNIFORM, math.nan),
        # a missing composition on either side -> undefined, even for a uniform a
        (NAN8, Y8, math.nan),
        (UNIFORM, NAN8, math.nan),
    ],
)
def test_spearman_table(a, b, expected):
    value = float(spearman(np.array(a, dtype=float), np.array(b, dtype=float)))
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=5e-7)


def test_spearman_single_top_slot_by_hand():
    # a = [x, c, c, ..., c] with x > c: ranks [8, 4, 4, 4, 4, 4, 4, 4] (mean 4.5),
    # centred [3.5, -0.5 x7]; b = 8..1 centred [3.5, 2.5, ..., -3.5].
    # dot = 3.5*3.5 - 0.5*(2.5+1.5+0.5-0.5-1.5-2.5-3.5) = 12.25 + 1.75 = 14
    # ss_a = 12.25 + 7*0.25 = 14; ss_b = 42 -> 14 / sqrt(14*42) = 0.577350
    a = np.array([0.2] + [0.1] * 7)
    b = np.array(ONE_TO_EIGHT[::-1], dtype=float)
    assert float(spearman(a, b)) == pytest.approx(14 / math.sqrt(14 * 42), abs=1e-12)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (Y8, Y8, 0.0),
        ([1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0], 1.0),
        # |p - y| = 4/30, 1/30, 1/30, 1/60, 1/60, 1/30, 0, 2/30 -> sum 1/3 -> tv 1/6
        (P8, Y8, 1 / 6),
        ([0.5, 0.5, 0, 0, 0, 0, 0, 0], [0.25] * 4 + [0] * 4, 0.5),
    ],
)
def test_tv_table(a, b, expected):
    assert float(tv(np.array(a, dtype=float), np.array(b, dtype=float))) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (Y8, Y8, 0.0),
        # disjoint supports: each KL to the midpoint is ln 2 -> jsd ln 2
        ([1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0], math.log(2)),
        # m = [.5, .25, .25, 0...]; KL(a||m) = .5 ln 2 = KL(b||m) -> .5 ln 2
        ([0.5, 0.5, 0, 0, 0, 0, 0, 0], [0.5, 0, 0.5, 0, 0, 0, 0, 0], 0.5 * math.log(2)),
        # §8 worked example
        (P8, Y8, 0.019175),
        (NAN8, Y8, math.nan),
    ],
)
def test_jsd_table(a, b, expected):
    value = float(jsd(np.array(a, dtype=float), np.array(b, dtype=float)))
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=5e-7)


# ---------------------------------------------------------------- the production registry
# x: a recent window ranked 1..8; e: the uniform EWMA.
X8 = [k / 36 for k in ONE_TO_EIGHT]
# pred_recent(P8, X8) by hand: ranks of P8 = [8, 5, 7, 2.5, 2.5, 5, 1, 5] (mean 4.5),
# centred [3.5, .5, 2.5, -2, -2, .5, -3.5, .5]; X8 centred [-3.5 ... 3.5] step 1.
# dot -23.5, sums of squares 39.5 and 42.
RHO_PX = -23.5 / math.sqrt(39.5 * 42)
# tv(U, Y8): |3.75 - c| / 30 over c = 16,2,7,1,1,2,0,1 -> 31/30, halved -> 31/60.
TV_UY = 31 / 60
# jsd(U, Y8) = 1/2 KL(U||m) + 1/2 KL(Y8||m), m = (U + Y8)/2 (D6 only in U's sum).
JSD_UY = 0.171224
NAN = math.nan

# Each row: (case, p, y, x, e, is_state, expected {metric: value}); metrics left out do not apply.
REGISTRY_TABLE = [
    ("worked example", P8, Y8, X8, UNIFORM, False,
     {"spearman": 0.936709, "tv": 1 / 6, "jsd": 0.019175, "pred_recent": RHO_PX, "tv_gain": TV_UY - 1 / 6}),
    ("state answer", P8, Y8, X8, UNIFORM, True,
     {"spearman": 0.936709, "tv": 1 / 6, "jsd": 0.019175, "state_recent": RHO_PX, "tv_gain": TV_UY - 1 / 6}),
    ("all ties (uniform p)", UNIFORM, Y8, X8, UNIFORM, False,
     {"spearman": 0.0, "tv": TV_UY, "jsd": JSD_UY, "pred_recent": 0.0, "tv_gain": 0.0}),
    ("p missing", NAN8, Y8, X8, UNIFORM, False, {"spearman": NAN, "tv": NAN, "jsd": NAN, "pred_recent": NAN, "tv_gain": NAN}),
    ("NaN in one slot of p", [NAN] + P8[1:], Y8, X8, UNIFORM, True,
     {"spearman": NAN, "tv": NAN, "jsd": NAN, "state_recent": NAN, "tv_gain": NAN}),
    ("episode without y", P8, NAN8, X8, UNIFORM, False, {"spearman": NAN, "tv": NAN, "jsd": NAN, "pred_recent": NAN, "tv_gain": NAN}),
    ("episode without y, State", UNIFORM, NAN8, X8, UNIFORM, True,
     {"spearman": NAN, "tv": NAN, "jsd": NAN, "state_recent": NAN, "tv_gain": NAN}),
    ("recent window missing", P8, Y8, NAN8, UNIFORM, False,
     {"spearman": 0.936709, "tv": 1 / 6, "jsd": 0.019175, "pred_recent": NAN, "tv_gain": TV_UY - 1 / 6}),
    ("recent window constant", P8, Y8, UNIFORM, UNIFORM, False,
     {"spearman": 0.936709, "tv": 1 / 6, "jsd": 0.019175, "pred_recent": NAN, "tv_gain": TV_UY - 1 / 6}),
    ("no EWMA", P8, Y8, X8, NAN8, False, {"spearman": 0.936709, "tv": 1 / 6, "jsd": 0.019175, "pred_recent": RHO_PX, "tv_gain": NAN}),
    ("target constant", P8, UNIFORM, X8, UNIFORM, False,
     {"spearman": NAN, "tv": 0.5 * sum(abs(v - 0.125) for v in P8), "jsd": float(jsd(np.array(P8), np.array(UNIFORM))),
      "pred_recent": RHO_PX, "tv_gain": -0.5 * sum(abs(v - 0.125) for v in P8)}),
]


def _close(value: float, expected: float) -> bool:
    return math.isnan(value) if math.isnan(expected) else value == pytest.approx(expected, abs=5e-7)


@pytest.mark.parametrize("case, p, y, x, e, is_state, expected", REGISTRY_TABLE, ids=[r[0] for r in REGISTRY_TABLE])
def test_registry_values_by_hand(case, p, y, x, e, is_state, expected):
    out = unit_metric_values(*(np.array(v, dtype=float) for v in (p, y, x, e)), is_state=is_state)
    assert set(out) == set(expected)
    for name, value in expected.items():
        assert _close(float(out[name]), value), (case, name, float(out[name]), value)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_edge_case_matrix_over_the_production_registry(name):
    spec = REGISTRY[name]
    is_state = spec.scope == "state"
    # Empty input: an empty result, no error.
    empty = np.zeros((0, 8))
    assert spec.fn(UnitInputs(empty, empty, empty, empty)).shape == (0,)
    # A batch gives what each single item gives (the rows of REGISTRY_TABLE that apply).
    rows = [r for r in REGISTRY_TABLE if r[5] == is_state and name in r[6]]
    assert rows, name
    batch = UnitInputs(*(np.array([r[i] for r in rows], dtype=float) for i in (1, 2, 3, 4)))
    values = spec.fn(batch)
    assert values.shape == (len(rows),)
    for row, value in zip(rows, values):
        assert _close(float(value), row[6][name]), (row[0], name)


def test_registry_declares_the_shipped_metrics_in_output_order():
    assert list(REGISTRY) == ["spearman", "tv", "jsd", "pred_recent", "state_recent", "tv_gain"]
    directions = {m.name: m.higher_is_better for m in REGISTRY.values()}
    # pred_recent / state_recent describe agreement with the present: no better direction.
    assert directions == {"spearman": True, "tv": False, "jsd": False, "pred_recent": None, "state_recent": None, "tv_gain": True}
    assert [m.scope for m in REGISTRY.values()] == ["all", "all", "all", "forecast", "state", "all"]
    assert all(m.label and m.description for m in REGISTRY.values())


def test_registry_refuses_duplicates_and_lists_known_names():
    with pytest.raises(ScoringError, match="already registered"):
        register(MetricSpec("tv", "TV", False, "mean", "exclude", "dup", lambda u: u.tv_py))
    with pytest.raises(ScoringError, match="unknown metric 'nope'; known metrics: jsd, pred_recent, spearman, state_recent, tv, tv_gain"):
        get_metric("nope")
    with pytest.raises(ScoringError, match="scope must be one of all, forecast, state"):
        register(MetricSpec("x", "X", None, "mean", "exclude", "bad", lambda u: u.recent, scope="sometimes"))


def test_ranks_equal_scipy_average_ranks():
    from scipy.stats import rankdata

    from rapgen.scores.kernels import ranks

    rng = np.random.default_rng(0)
    x = np.round(rng.random((500, 8)), 1)  # many ties
    x[:3] = 0.125
    assert np.array_equal(ranks(x), rankdata(x, method="average", axis=-1))
    # by hand: [0.3, 0.1, 0.3, 0.2] -> 0.1 is 1st, 0.2 2nd, the two 0.3 share 3.5
    assert ranks(np.array([0.3, 0.1, 0.3, 0.2])).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_the_package_has_one_ranks_and_one_spearman():
    import ast
    from pathlib import Path

    import rapgen

    defs: dict[str, list[str]] = {}
    for path in Path(rapgen.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in ("ranks", "average_ranks", "spearman", "spearman_rows"):
                defs.setdefault(node.name.lstrip("_"), []).append(path.name)
    assert defs == {"ranks": ["kernels.py"], "spearman": ["kernels.py"]}
