"""rapgen.scores.selection: the bracketed order statistics give the bits of a whole-row partition."""

from __future__ import annotations

import numpy as np
import pytest

from rapgen.scores import selection
from rapgen.scores.selection import MIN_LENGTH, one_partition, order_statistics, successive_partitions


def _rows(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    x = rng.random((24, n))
    if kind == "ties":
        x = np.round(rng.normal(size=(24, n)), 1)  # few distinct values, zeros of both signs below
        x[:, ::5] *= -0.0
    elif kind == "signed-zeros":
        x = np.where(rng.random((24, n)) < 0.5, 0.0, -0.0)
        x[:, :50] = rng.random((24, 50))
    elif kind == "nan-inf":
        x[::3, ::7] = np.nan
        x[1::4, ::11] = np.inf
        x[2::4, ::13] = -np.inf
    elif kind == "mostly-nan":
        x[:, : n // 3] = np.nan
    elif kind == "constant":
        x[:] = 0.3
    elif kind == "sorted":
        x.sort(axis=1)
    elif kind == "reversed":
        x = np.ascontiguousarray(np.sort(x, axis=1)[:, ::-1])
    return x


def _ks(n: int) -> list[list[int]]:
    tail = int(0.025 * (n - 1))
    top = int(0.975 * (n - 1))
    return [[tail, tail + 1, top, min(top + 1, n - 1)], [n // 2 - 1, n // 2], [0], [n - 1], [0, n - 1],
            [5, n // 3, n - 6], [top, tail]]


KINDS = ["random", "ties", "signed-zeros", "nan-inf", "mostly-nan", "constant", "sorted", "reversed"]


@pytest.mark.parametrize("n", [MIN_LENGTH - 1, MIN_LENGTH, 3001, 10000])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("whole", [successive_partitions, one_partition], ids=["successive", "one-partition"])
def test_order_statistics_are_the_whole_partitions_bits(kind, n, whole):
    values = _rows(kind, n)
    before = values.copy()
    for ks in _ks(n):
        got = order_statistics(values, ks, whole)
        expected = whole(values, ks)
        assert got.shape == (len(ks), values.shape[0])
        assert np.array_equal(got.view(np.int64), expected.view(np.int64)), (kind, n, ks)
    assert np.array_equal(values.view(np.int64), before.view(np.int64))  # not modified


def test_long_rows_are_not_partitioned_whole(monkeypatch):
    """The bracket answers a row of random values itself; ``whole`` sees only the rows it
    cannot answer (here: a row whose answer is a zero)."""
    values = _rows("random", 10000)
    values[3, :300] = 0.0  # its 249th value is a zero: handed to `whole`
    seen: list[int] = []

    def whole(rows: np.ndarray, ks: list[int]) -> np.ndarray:
        seen.append(rows.shape[0])
        return successive_partitions(rows, ks)

    ks = [249, 250, 9749, 9750]
    got = order_statistics(values, ks, whole)
    assert seen == [1]
    assert np.array_equal(got, successive_partitions(values, ks))
    seen.clear()
    order_statistics(values[:, :MIN_LENGTH], [MIN_LENGTH // 2 - 1, MIN_LENGTH // 2], whole)
    assert seen == [values.shape[0]]  # a short row's median: the bracket would be wide, so whole rows


def test_a_bracket_that_misses_falls_back(monkeypatch):
    """A spread of zero standard deviations makes the bracket miss in many rows; every
    answer is still the partition's."""
    monkeypatch.setattr(selection, "SPREAD", 0.0)
    values = _rows("random", 5000)
    ks = [124, 125, 4873, 4874]
    seen: list[int] = []

    def whole(rows: np.ndarray, ks: list[int]) -> np.ndarray:
        seen.append(rows.shape[0])
        return successive_partitions(rows, ks)

    assert np.array_equal(order_statistics(values, ks, whole), successive_partitions(values, ks))
    assert seen and 0 < seen[0] < values.shape[0]


@pytest.mark.parametrize(
    "row, ks, expected",
    [
        # hand-checked: the sorted row is 0, 1, ..., n-1 in some order
        (np.arange(MIN_LENGTH, dtype=float)[::-1], [0, 1, MIN_LENGTH - 1], [0.0, 1.0, MIN_LENGTH - 1.0]),
        (np.r_[np.full(MIN_LENGTH, 2.0), [1.0]], [0, 1, MIN_LENGTH], [1.0, 2.0, 2.0]),
        (np.r_[[np.nan], np.arange(MIN_LENGTH, dtype=float)], [MIN_LENGTH - 1, MIN_LENGTH], [MIN_LENGTH - 1.0, np.nan]),
    ],
)
def test_order_statistics_table(row, ks, expected):
    got = order_statistics(row[None, :], ks)[:, 0]
    assert np.array_equal(got, np.array(expected), equal_nan=True)
