"""Search behaviour from traces (INTERVENTIONS.md §5): the matched-call signature
and the Search-option counterfactual's arithmetic.

A *pair* is an episode with both a Forecast and a State unit of one regime
(A3/A4 on the Expanding shard, A1/A2 on the Fixed one). Both sides are
truncated to k = min(n_Forecast, n_State) calls (the k smallest call indices),
so the comparison is at equal effort. *Slots* are every returned id, repeats
counted. A malformed call counts in k and in no numerator.

Everything here is pure: the re-execution of calls for the counterfactual is
the Search stage's; :func:`counterfactual_values` takes its returned ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from rapgen.scores.interventions.core import Statistic, field_values
from rapgen.scores.kernels import spearman

SIDE_METRICS: tuple[str, ...] = (
    "recent_share", "distinct", "duplicate_share", "sort_date", "bounded", "recent_bounded", "align_recent", "align_future",
)
PAIR_METRICS: tuple[str, ...] = ("jaccard", "matched_calls")
SIDES: tuple[str, ...] = ("forecast", "state", "delta", "pair")
COUNTERFACTUAL_METRICS: tuple[str, ...] = ("align_recent", "align_future", "recent_share", "distinct")
ARMS: tuple[str, ...] = ("native", "common", "gain")
BUDGETS: tuple[str, ...] = ("matched", "all")
NAN = float("nan")


@dataclass(frozen=True)
class Call:
    """What the signature needs of one recorded call."""

    call_index: int
    sort: str
    date_from: date | None  # parsed bound (None: null, or the call is malformed)
    date_to: date | None
    returned_ids: tuple[str, ...]
    malformed: bool = False


def truncate(calls: Sequence[Call], k: int | None) -> list[Call]:
    ordered = sorted(calls, key=lambda c: c.call_index)
    return ordered if k is None else ordered[:k]


def _ratio(num: float, den: float) -> float:
    return num / den if den else NAN


def _counts(ids: set[str], labels: Mapping[str, int]) -> np.ndarray | None:
    """Primary-direction counts of the distinct ids that are field members (labels: id ->
    slot of a counted primary); None when Σc = 0 (the alignments are then undefined)."""
    counts = [0] * 8
    for slot in map(labels.get, ids):
        if slot is not None:
            counts[slot] += 1
    return np.array(counts, dtype=np.float64) if any(counts) else None


def _side(calls: Sequence[Call], recent_start: date, origin: date, first_submitted: Mapping[str, date],
          labels: Mapping[str, int]) -> tuple[dict[str, float], np.ndarray | None]:
    """The side metrics but the alignments, and the counts the alignments need."""
    k = len(calls)
    ok = [c for c in calls if not c.malformed]
    slots = [pid for c in ok for pid in c.returned_ids]
    distinct = set(slots)
    recent = len([day for day in map(first_submitted.__getitem__, slots) if recent_start <= day < origin])
    values = {
        "recent_share": _ratio(recent, len(slots)),
        "distinct": float(len(distinct)) if slots else NAN,
        "duplicate_share": 1.0 - len(distinct) / len(slots) if slots else NAN,
        "sort_date": _ratio(len([c for c in ok if c.sort == "date"]), k),
        "bounded": _ratio(len([c for c in ok if c.date_from is not None or c.date_to is not None]), k),
        "recent_bounded": _ratio(len([c for c in ok if c.date_from is not None and c.date_from >= recent_start]), k),
        "align_recent": NAN,
        "align_future": NAN,
    }
    return values, _counts(distinct, labels)


def _fill_alignments(items: Sequence[tuple[dict[str, float], np.ndarray | None, np.ndarray | None, np.ndarray | None]]) -> None:
    """Set ``align_recent`` = spearman(c, x) and ``align_future`` = spearman(c, y) for many
    sides at once (one vectorised §2 spearman over all rows)."""
    rows = [(values, c, target, key) for values, c, x, y in items for key, target in (("align_recent", x), ("align_future", y))
            if c is not None and target is not None]
    if not rows:
        return
    result = spearman(np.stack([r[1] for r in rows]), np.stack([np.asarray(r[2], dtype=np.float64) for r in rows]))
    for (values, _, _, key), value in zip(rows, result.tolist()):
        values[key] = value


def side_signature(
    calls: Sequence[Call], recent_start: date, origin: date, first_submitted: Mapping[str, date],
    labels: Mapping[str, int], x: np.ndarray | None, y: np.ndarray | None,
) -> dict[str, float]:
    """The §5 side metrics of one side's kept calls (empty evidence is undefined)."""
    values, counts = _side(calls, recent_start, origin, first_submitted, labels)
    _fill_alignments([(values, counts, x, y)])
    return values


@dataclass(frozen=True)
class PairSignature:
    forecast: dict[str, float]
    state: dict[str, float]
    pair: dict[str, float]

    @property
    def delta(self) -> dict[str, float]:
        """State − Forecast, per side metric."""
        return {m: self.state[m] - self.forecast[m] for m in self.forecast}


def _distinct(calls: Sequence[Call]) -> set[str]:
    return {pid for c in calls if not c.malformed for pid in c.returned_ids}


@dataclass(frozen=True)
class PairInput:
    """One pair's calls and episode context, for :func:`pair_signatures`."""

    forecast_calls: Sequence[Call]
    state_calls: Sequence[Call]
    recent_start: date
    origin: date
    first_submitted: Mapping[str, date]
    labels: Mapping[str, int]
    x: np.ndarray | None
    y: np.ndarray | None
    matched: bool = True


def pair_signatures(pairs: Sequence[PairInput]) -> list[PairSignature]:
    """Both sides of every pair, truncated to k = min(n_F, n_S) (or each side whole when
    not ``matched``); the alignments of all pairs in one vectorised pass."""
    out, pending = [], []
    for p in pairs:
        k = min(len(p.forecast_calls), len(p.state_calls))
        f = truncate(p.forecast_calls, k if p.matched else None)
        s = truncate(p.state_calls, k if p.matched else None)
        fs, ss = _distinct(f), _distinct(s)
        pair = {"jaccard": _ratio(len(fs & ss), len(fs | ss)), "matched_calls": float(k)}
        (fv, fc), (sv, sc) = (_side(side, p.recent_start, p.origin, p.first_submitted, p.labels) for side in (f, s))
        pending += [(fv, fc, p.x, p.y), (sv, sc, p.x, p.y)]
        out.append(PairSignature(fv, sv, pair))
    _fill_alignments(pending)
    return out


def pair_signature(
    forecast_calls: Sequence[Call], state_calls: Sequence[Call], recent_start: date, origin: date,
    first_submitted: Mapping[str, date], labels: Mapping[str, int], x: np.ndarray | None, y: np.ndarray | None,
    *, matched: bool = True,
) -> PairSignature:
    """One pair's signature (see :func:`pair_signatures`)."""
    return pair_signatures([PairInput(forecast_calls, state_calls, recent_start, origin, first_submitted, labels, x, y, matched)])[0]


def side_values(sig: PairSignature) -> dict[str, dict[str, float]]:
    """side -> metric -> value (``pair`` holds jaccard and matched_calls)."""
    return {"forecast": sig.forecast, "state": sig.state, "delta": sig.delta, "pair": sig.pair}


def signature_statistics(
    entry: str, regime: str, pairs: Mapping[tuple[int, int], PairSignature], shape: tuple[int, int]
) -> list[Statistic]:
    """signature.csv statistics of one model and regime; ``pairs`` maps (field index,
    origin index) -> its signature; ``n_units`` counts the pairs of each field."""
    F, O = shape
    present = np.zeros((F, O), dtype=bool)
    grids: dict[tuple[str, str], np.ndarray] = {}
    for (fi, oi), sig in pairs.items():
        present[fi, oi] = True
        for side, values in side_values(sig).items():
            for metric, value in values.items():
                grids.setdefault((side, metric), np.full((F, O), np.nan))[fi, oi] = value
    counts = {"n_units": present.sum(axis=1)}
    out = []
    for side in SIDES:
        for metric in (PAIR_METRICS if side == "pair" else SIDE_METRICS):
            if (side, metric) in grids:
                key = {"entry": entry, "regime": regime, "side": side, "metric": metric}
                out.append(Statistic(key, field_values(grids[(side, metric)]), counts))
    return out


def with_rerun_ids(calls: Sequence[Call], rerun: Mapping[int, Sequence[str]]) -> list[Call]:
    """The ``common`` arm: each non-malformed call with the ids its re-run returned
    (``rerun``: call_index -> ids, under sort relevance and bounds [T−6mo, T))."""
    return [c if c.malformed else Call(c.call_index, c.sort, c.date_from, c.date_to, tuple(rerun[c.call_index]), c.malformed)
            for c in calls]


@dataclass(frozen=True)
class CounterfactualInput:
    """One pair of the Search-option counterfactual: its recorded calls and episode context
    (``pair.matched`` is not read: both budgets are computed) and each side's re-run ids."""

    pair: PairInput
    forecast_rerun: Mapping[int, Sequence[str]]
    state_rerun: Mapping[int, Sequence[str]]


def counterfactual_values(
    forecast_calls: Sequence[Call], state_calls: Sequence[Call],
    forecast_rerun: Mapping[int, Sequence[str]], state_rerun: Mapping[int, Sequence[str]],
    recent_start: date, origin: date, first_submitted: Mapping[str, date], labels: Mapping[str, int],
    x: np.ndarray | None, y: np.ndarray | None,
) -> dict[tuple[str, str, str, str], float]:
    """(budget, side, arm, metric) -> value for one pair: arms ``native`` (recorded ids),
    ``common`` (re-run ids) and ``gain`` (common − native); sides forecast, state, delta."""
    pair = PairInput(forecast_calls, state_calls, recent_start, origin, first_submitted, labels, x, y)
    return counterfactual_values_many([CounterfactualInput(pair, forecast_rerun, state_rerun)])[0]


def native_signatures(pairs: Sequence[PairInput]) -> list[tuple[PairSignature, ...]]:
    """The ``native`` arm of each pair (its recorded ids), one signature per budget of
    :data:`BUDGETS`: what :func:`counterfactual_values_many` reads besides the re-run ids."""
    sigs = pair_signatures([replace(p, matched=budget == "matched") for p in pairs for budget in BUDGETS])
    return [tuple(sigs[at:at + len(BUDGETS)]) for at in range(0, len(sigs), len(BUDGETS))]


def counterfactual_values_many(items: Sequence[CounterfactualInput],
                               native: Sequence[tuple[PairSignature, ...]] | None = None) -> list[dict[tuple[str, str, str, str], float]]:
    """:func:`counterfactual_values` of many pairs, their alignments in one vectorised pass per arm
    (each alignment is a function of its own row). ``native``: :func:`native_signatures` of the
    items' pairs, if made already."""
    if native is None:
        native = native_signatures([it.pair for it in items])
    inputs = []
    for it in items:
        p = it.pair
        common_f, common_s = with_rerun_ids(p.forecast_calls, it.forecast_rerun), with_rerun_ids(p.state_calls, it.state_rerun)
        inputs += [replace(p, forecast_calls=common_f, state_calls=common_s, matched=budget == "matched") for budget in BUDGETS]
    sigs = pair_signatures(inputs)
    out = []
    for n_sigs, at in zip(native, range(0, len(sigs), len(BUDGETS))):
        values: dict[tuple[str, str, str, str], float] = {}
        for b, budget in enumerate(BUDGETS):
            native_b, common = side_values(n_sigs[b]), side_values(sigs[at + b])
            for side in ("forecast", "state", "delta"):
                n, c = native_b[side], common[side]
                for metric in COUNTERFACTUAL_METRICS:
                    values[(budget, side, "native", metric)] = n[metric]
                    values[(budget, side, "common", metric)] = c[metric]
                    values[(budget, side, "gain", metric)] = c[metric] - n[metric]
        out.append(values)
    return out


def _grids(pairs: Mapping[tuple[int, int], Mapping], shape: tuple[int, int]) -> tuple[np.ndarray, dict]:
    """The pairs' cells and one (F, O) grid per key, NaN where a pair lacks the key (or no pair is):
    keys in first-seen order."""
    present = np.zeros(shape, dtype=bool)
    if not pairs:
        return present, {}
    fi, oi = (np.array(v, dtype=np.int64) for v in zip(*pairs))
    present[fi, oi] = True
    grids = {}
    for key in dict.fromkeys(k for values in pairs.values() for k in values):
        grid = np.full(shape, np.nan)
        grid[fi, oi] = [values.get(key, NAN) for values in pairs.values()]
        grids[key] = grid
    return present, grids


def counterfactual_statistics(
    entry: str, regime: str, pairs: Mapping[tuple[int, int], Mapping[tuple[str, str, str, str], float]], shape: tuple[int, int]
) -> list[Statistic]:
    """option_counterfactual.csv statistics of one model and regime."""
    present, grids = _grids(pairs, shape)
    counts = {"n_units": present.sum(axis=1)}
    return [
        Statistic({"entry": entry, "regime": regime, "budget": b, "side": s, "arm": a, "metric": m}, field_values(grid), counts)
        for (b, s, a, m), grid in grids.items()
    ]
