"""From parsed records to the rows of every ``DIR/interventions/`` file.

:func:`assemble_rows` is the one function the scorer calls: it takes the
episode grid (:class:`Grid`: targets, recent windows, baselines, the
change-rich mask, paper dates and labels, the split's draws) and each model's
records (:class:`ModelRecords`, as parsed by :mod:`rapgen.archive`) and
returns ``{file name: rows}`` ready for :func:`rapgen.scores.interventions.tables.intervention_files`.

Whether a recorded call is malformed is the Search validator's decision; the
caller passes it as ``malformed`` (scores may not import search). The
corrected alignments and ``adapt_h`` come from the diagnostics; the caller
passes them as ``extra_metrics`` (p -> {metric: (F, O)}), or they are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from rapgen.archive import (
    EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST, FIXED_STATE, ORACLE_CONDITIONS, STATE_CONDITIONS, add_months, OracleUnit,
    Panel, Readout, TraceCall, Unit,
)
from rapgen.scores.schema import (
    ALL_ORIGIN_TRACK, CONDITION_CONTRASTS, EWMA_CONTRAST_CONDITIONS, FORECAST_STRICT_TRACK, ORACLE_MODEL_CONTRASTS,
)
from rapgen.scores.interventions.conditions import UnitValues, oracle_statistics, panel_statistics
from rapgen.scores.interventions.core import SplitDraws, Statistic, paired_values, summarise
from rapgen.scores.interventions.exposure import (
    exposure_statistics,
    forecast_strict,
    effective_cutoff,
    masks_of,
    strict_mask_rows,
)
from rapgen.scores.interventions.replay import CONTRASTS, CellUnits, fidelity_statistics, readout_values, replay_statistics
from rapgen.scores.interventions.signature import (
    BUDGETS,
    Call,
    CounterfactualInput,
    PairInput,
    counterfactual_statistics,
    counterfactual_values_many,
    native_signatures,
    pair_signatures,
    signature_statistics,
)
from rapgen.scores.interventions.tables import mask_rows
from rapgen.scores.kernels import single_threaded_blas
from rapgen.scores.metrics import STATE_RECENT, unit_metric_values

REGIME_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("expanding", EXPANDING_FORECAST, EXPANDING_STATE), ("fixed", FIXED_FORECAST, FIXED_STATE),
)
MODEL_CONTRASTS: tuple[tuple[str, str], ...] = CONDITION_CONTRASTS  # the leaderboard's own (scores.schema)
ExtraMetrics = Callable[[np.ndarray, bool], Mapping[str, np.ndarray]]
# (model, field, origin, condition, call_index) -> the ids the call returned when re-run with the
# common options (sort relevance, bounds [T − 6 months, T)); made by ``rapgen replay``.
Reruns = Mapping[tuple[str, str, date, str, int], Sequence[str]]


@dataclass(frozen=True)
class Grid:
    """The archive's episode grid, canonical policy (axes: field F, origin O, slot 8)."""

    field_ids: Sequence[str]
    field_split: Sequence[str]
    field_block: Sequence[str]
    origins: Sequence[date]
    window_months: int
    strict_origin: date
    y: np.ndarray  # target compositions (NaN rows: missing)
    x: np.ndarray  # recent-window compositions
    ewma: np.ndarray  # the EWMA baseline
    recent: np.ndarray  # the recent baseline
    change_rich: np.ndarray  # (F, O) bool
    first_submitted: Mapping[str, date]  # every paper of papers.parquet
    labels: Mapping[str, Mapping[str, int]]  # field -> member id -> slot of its counted canonical primary
    draws: Mapping[str, SplitDraws]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.field_ids), len(self.origins)


@dataclass(frozen=True)
class ModelRecords:
    """One model's parsed files and model.json facts."""

    model_id: str
    units: Sequence[Unit]
    traces: Sequence[TraceCall] = ()
    readouts: Sequence[Readout] = ()
    oracle: Sequence[OracleUnit] = ()
    oracle_traces: Sequence[TraceCall] = ()
    knowledge_cutoff: date | None = None
    release_date: date | None = None
    cutoff_precision: str = "day"
    panel: Panel | None = None
    panel_cells: frozenset[tuple[str, date]] | None = None
    base_model: str | None = None
    extra: dict = field(default_factory=dict, compare=False)


class _Model:
    """A model's records on the grid, with its per-condition arrays built once."""

    def __init__(self, grid: Grid, records: ModelRecords, extra_metrics: ExtraMetrics | None):
        self.grid, self.records, self.extra_metrics = grid, records, extra_metrics
        self.fi = {f: i for i, f in enumerate(grid.field_ids)}
        self.oi = {o: j for j, o in enumerate(grid.origins)}
        self.calls: dict[tuple[str, date, str], list[TraceCall]] = {}
        for call in list(records.traces) + list(records.oracle_traces):
            self.calls.setdefault((call.field_id, call.origin, call.condition), []).append(call)
        self._values: dict[str, UnitValues | None] = {}
        self._ahead: dict[str, Future] = {}  # condition -> its UnitValues, being computed in another thread
        self._calls: dict[tuple[str, date, str], list[Call]] = {}

    def arrays(self, records: Sequence[Unit | OracleUnit | Readout]) -> tuple[np.ndarray, np.ndarray]:
        F, O = self.grid.shape
        p, present = np.full((F, O, 8), np.nan), np.zeros((F, O), dtype=bool)
        for r in records:
            i, j = self.fi[r.field_id], self.oi[r.origin]
            present[i, j] = True
            if r.valid and r.weights is not None:
                p[i, j] = r.weights
        return p, present

    def condition(self, condition: str) -> UnitValues | None:
        """UnitValues of one of the model's conditions (A0–A4 or O1–O3), None if it has none."""
        if condition not in self._values:
            ahead = self._ahead.pop(condition, None)
            self._values[condition] = ahead.result() if ahead is not None else self._condition_values(condition)
        return self._values[condition]

    def compute_ahead(self, pool: ThreadPoolExecutor) -> None:
        """Start every condition's UnitValues in ``pool`` (the extra metrics are numpy kernels,
        made while the signatures, pure Python, are worked out); :meth:`condition` takes them.
        Each is a function of the condition's own records, whichever thread computes it."""
        held = {u.condition for u in self.records.units} | {u.condition for u in self.records.oracle}
        for condition in sorted(held):
            if condition not in self._values and condition not in self._ahead:
                self._ahead[condition] = pool.submit(self._condition_values, condition)

    def _condition_values(self, condition: str) -> UnitValues | None:
        source = self.records.oracle if condition in ORACLE_CONDITIONS else self.records.units
        chosen = [u for u in source if u.condition == condition]
        if not chosen:
            return None
        p, present = self.arrays(chosen)
        return self.values_of(p, present, condition in STATE_CONDITIONS)

    def values_of(self, p: np.ndarray, present: np.ndarray | None, is_state: bool) -> UnitValues:
        g = self.grid
        values = dict(unit_metric_values(p, g.y, g.x, g.ewma, is_state=is_state))
        if self.extra_metrics is not None:
            values.update(self.extra_metrics(p, is_state))
        valid = None if present is None else present & ~np.isnan(p).any(axis=-1)
        return UnitValues(values, present, valid)

    def panel_condition(self, condition: str) -> UnitValues | None:
        """:meth:`condition` plus ``calls_per_unit`` (trace lines per unit; 0 for A0 or no calls)."""
        units = self.condition(condition)
        if units is None:
            return None
        calls = np.where(units.present, 0.0, np.nan)
        for (f, o, c), recorded in self.calls.items():
            if c == condition and units.present[self.fi[f], self.oi[o]]:
                calls[self.fi[f], self.oi[o]] = len(recorded)
        return UnitValues({**units.values, "calls_per_unit": calls}, units.present, units.valid)

    def search_calls(self, fid: str, origin: date, condition: str, malformed: Callable[[TraceCall], bool]) -> list[Call]:
        """The unit's calls as the signature reads them (made once per unit; ``malformed`` is
        the one Search-call validator, the same for every call of a scoring run)."""
        key = (fid, origin, condition)
        out = self._calls.get(key)
        if out is None:
            out = self._calls[key] = []
            for c in self.calls.get(key, []):
                bad = malformed(c)
                bounds = (None, None) if bad else tuple(date.fromisoformat(v) if v else None for v in (c.date_from, c.date_to))
                out.append(Call(c.call_index, c.sort, bounds[0], bounds[1], () if bad else c.returned_ids, bad))
        return list(out)


def _subsets(grid: Grid) -> dict[str, np.ndarray]:
    F, O = grid.shape
    return {"all": np.ones((F, O), dtype=bool), "change_rich": np.asarray(grid.change_rich, dtype=bool)}


def _replay(m: _Model) -> tuple[list[Statistic], list[Statistic], list[Statistic], dict[str, dict]]:
    by_cell: dict[str, list[Readout]] = {}
    for r in m.records.readouts:
        by_cell.setdefault(r.cell, []).append(r)
    cells = {}
    for name, records in by_cell.items():
        p, present = m.arrays(records)
        cells[name] = CellUnits(p, present)
    a3, _ = m.arrays([u for u in m.records.units if u.condition == EXPANDING_FORECAST])
    a4, _ = m.arrays([u for u in m.records.units if u.condition == EXPANDING_STATE])
    values = readout_values(cells, a3, a4, m.grid.y)
    cell_stats, contrast_stats = replay_statistics(m.records.model_id, values, cells, _subsets(m.grid))
    diffs = {name: {k: paired_values(values[left][k], values[right][k], k) for k in values[left]}
             for name, left, right in CONTRASTS if left in values and right in values}
    return cell_stats, contrast_stats, fidelity_statistics(m.records.model_id, cells, a3, a4), diffs


def _shared_metrics(left: UnitValues, right: UnitValues) -> list[str]:
    return [k for k in left.values if k in right.values and k != STATE_RECENT]


def _model_diffs(m: _Model, baselines: Mapping[str, UnitValues]) -> dict[str, dict[str, np.ndarray]]:
    """Per-unit differences of the SCORING.md §4 contrasts and the §2 O contrasts (for exposure)."""
    pairs = [(f"{a}-{b}", m.condition(a), m.condition(b)) for a, b in MODEL_CONTRASTS]
    pairs += [(f"{k}-ewma", m.condition(k), baselines.get("ewma")) for k in (*EWMA_CONTRAST_CONDITIONS, *ORACLE_CONDITIONS)]
    pairs += [(f"{k}-recent", m.condition(k), baselines.get("recent")) for k in ORACLE_CONDITIONS]
    pairs += [(f"{a}-{b}", m.condition(a), m.condition(b)) for a, b in ORACLE_MODEL_CONTRASTS]
    return {name: {k: paired_values(left.values[k], right.values[k], k) for k in _shared_metrics(left, right)}
            for name, left, right in pairs if left is not None and right is not None}


def _pairs(m: _Model, fc: str, sc: str) -> list[tuple[str, date]]:
    have = {(u.field_id, u.origin) for u in m.records.units if u.condition == fc}
    return sorted(have & {(u.field_id, u.origin) for u in m.records.units if u.condition == sc})


def _episode_context(m: _Model, fid: str, origin: date) -> tuple:
    g = m.grid
    i, j = m.fi[fid], m.oi[origin]
    x = None if np.isnan(g.x[i, j]).any() else g.x[i, j]
    y = None if np.isnan(g.y[i, j]).any() else g.y[i, j]
    return add_months(origin, -g.window_months), origin, g.first_submitted, g.labels.get(fid, {}), x, y


def _signature(m: _Model, malformed: Callable[[TraceCall], bool], sides: list[tuple[str, list[tuple]]] | None = None) -> list[Statistic]:
    """signature.csv statistics of one model; ``sides``: :func:`_counterfactual_sides` of ``m``,
    whose native signatures of the matched budget are these pairs' signatures (each pair's
    signature reads its own calls alone), if made."""
    if sides is not None:
        at = BUDGETS.index("matched")
        out = []
        for regime, episodes in sides:
            pairs = {(m.fi[fid], m.oi[origin]): native[at] for fid, origin, _, _, _, native in episodes}
            if pairs:
                out += signature_statistics(m.records.model_id, regime, pairs, m.grid.shape)
        return out
    out = []
    for regime, fc, sc in REGIME_PAIRS:
        episodes = _pairs(m, fc, sc)
        sigs = pair_signatures([
            PairInput(m.search_calls(fid, origin, fc, malformed), m.search_calls(fid, origin, sc, malformed), *_episode_context(m, fid, origin))
            for fid, origin in episodes
        ])
        pairs = {(m.fi[fid], m.oi[origin]): sig for (fid, origin), sig in zip(episodes, sigs)}
        if pairs:
            out += signature_statistics(m.records.model_id, regime, pairs, m.grid.shape)
    return out


def _counterfactual_sides(m: _Model, malformed: Callable[[TraceCall], bool]) -> list[tuple[str, list[tuple]]]:
    """Each regime's pairs: (field, origin, both sides' recorded calls, the pair's input, its
    native signatures): what the counterfactual reads besides the re-runs."""
    out = []
    for regime, fc, sc in REGIME_PAIRS:
        episodes = []
        for fid, origin in _pairs(m, fc, sc):
            calls_of = [m.search_calls(fid, origin, c, malformed) for c in (fc, sc)]
            episodes.append((fid, origin, calls_of, (fc, sc), PairInput(calls_of[0], calls_of[1], *_episode_context(m, fid, origin))))
        native = native_signatures([e[4] for e in episodes])
        out.append((regime, [(*e, n) for e, n in zip(episodes, native)]))
    return out


def _counterfactual(m: _Model, malformed: Callable[[TraceCall], bool], reruns: Reruns,
                    sides: list[tuple[str, list[tuple]]] | None = None) -> list[Statistic]:
    """option_counterfactual.csv statistics; a pair enters when every well-formed call was re-run.
    ``sides``: :func:`_counterfactual_sides` of ``m``, if already made."""
    mid, out = m.records.model_id, []
    for regime, episodes in (sides if sides is not None else _counterfactual_sides(m, malformed)):
        cells, items, native = [], [], []
        for fid, origin, calls_of, conditions, pair, native_sigs in episodes:
            ids = [{c.call_index: reruns.get((mid, fid, origin, cond, c.call_index)) for c in calls if not c.malformed}
                   for cond, calls in zip(conditions, calls_of)]
            if any(v is None for side in ids for v in side.values()):
                continue
            cells.append((m.fi[fid], m.oi[origin]))
            items.append(CounterfactualInput(pair, ids[0], ids[1]))
            native.append(native_sigs)
        pairs = dict(zip(cells, counterfactual_values_many(items, native)))
        if pairs:
            out += counterfactual_statistics(mid, regime, pairs, m.grid.shape)
    return out


class CounterfactualPlan:
    """option_counterfactual.csv's inputs but the re-runs: the grid and each model's pairs with
    their recorded calls and native signatures (made while the calls replay); :meth:`rows` adds
    the re-run ids."""

    def __init__(self, grid: Grid, models: Sequence[ModelRecords], malformed: Callable[[TraceCall], bool],
                 made: tuple[Sequence[_Model], Sequence[list[tuple[str, list[tuple]]]]] | None = None):
        self.grid, self.malformed = grid, malformed
        if made is not None:  # the scorer's own models and sides (assemble_rows with the plan)
            self.models, self.sides = list(made[0]), list(made[1])
            return
        self.models = [_Model(grid, records, None) for records in models]
        self.sides = [_counterfactual_sides(m, malformed) for m in self.models]

    def rows(self, reruns: Reruns) -> list[dict]:
        stats: list[Statistic] = []
        for m, sides in zip(self.models, self.sides):
            stats += _counterfactual(m, self.malformed, reruns, sides)
        return summarise(stats, self.grid.draws)


def counterfactual_rows(grid: Grid, models: Sequence[ModelRecords], malformed: Callable[[TraceCall], bool],
                        reruns: Reruns) -> list[dict]:
    """option_counterfactual.csv rows alone (what ``rapgen replay`` writes)."""
    return CounterfactualPlan(grid, models, malformed).rows(reruns)


class ConditionsAhead:
    """Every model's condition UnitValues (:meth:`_Model.condition`), submitted to ``pool`` as soon
    as the grid's compositions and the extra metrics are known, before the rest of the episode grid
    (the change-rich mask, paper dates, draws) exists; :func:`assemble_rows` takes them. Each is a
    function of the condition's own records, whichever thread computes it and whenever."""

    def __init__(self, grid: Grid, models: Sequence[ModelRecords], extra_metrics: ExtraMetrics | None, pool: ThreadPoolExecutor):
        self.models = list(models)  # the records they were started from
        self.futures: dict[str, dict[str, Future]] = {}
        for records in models:
            m = _Model(grid, records, extra_metrics)
            m.compute_ahead(pool)
            self.futures[records.model_id] = m._ahead

    def take(self, m: _Model) -> None:
        """Hand ``m`` the futures of its model's conditions."""
        m._ahead.update(self.futures.pop(m.records.model_id, {}))


def assemble_rows(
    grid: Grid,
    models: Sequence[ModelRecords],
    malformed: Callable[[TraceCall], bool],
    extra_metrics: ExtraMetrics | None = None,
    reruns: Reruns | None = None,
    ahead: ConditionsAhead | None = None,
    *,
    plan_into: list | None = None,
) -> dict[str, list[dict]]:
    """Rows of every §8 file; option_counterfactual.csv only when ``reruns`` (from
    ``rapgen replay``) are given. ``ahead``: the models' condition values, already under way
    (made on a grid with the same fields, origins and compositions, and the same extra metrics).
    ``plan_into``: a list that gets the :class:`CounterfactualPlan` of the same grid and records
    (what ``rapgen replay`` completes with the re-run ids); each pair's native signatures are
    then made once, for both, and signature.csv reads the matched budget's."""
    baseline_model = _Model(grid, ModelRecords("", ()), extra_metrics)
    baselines = {"ewma": baseline_model.values_of(grid.ewma, None, False),
                 "recent": baseline_model.values_of(grid.recent, None, False)}
    wrapped = {r.model_id: _Model(grid, r, extra_metrics) for r in models}
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=2) as pool:
        if ahead is not None:
            for m in wrapped.values():
                ahead.take(m)
        if extra_metrics is not None:
            for m in wrapped.values():
                m.compute_ahead(pool)
        sides: dict[str, list] | None = {} if plan_into is not None else None
        out = _assembled(grid, wrapped, baselines, malformed, reruns, sides)
    if plan_into is not None:
        plan_into.append(CounterfactualPlan(grid, models, malformed, made=(list(wrapped.values()), [sides[mid] for mid in wrapped])))
    return out


def _assembled(grid: Grid, wrapped: Mapping[str, _Model], baselines: Mapping[str, UnitValues],
               malformed: Callable[[TraceCall], bool], reruns: Reruns | None,
               sides_of: dict[str, list] | None = None) -> dict[str, list[dict]]:
    """The rows; ``sides_of``, when given, gets each model's :func:`_counterfactual_sides`."""
    names = ("cells.csv", "contrasts.csv", "fidelity.csv", "signature.csv", "exposure.csv", "option_counterfactual.csv")
    stats: dict[str, list[Statistic]] = {k: [] for k in names}
    masks_out: list[dict] = []
    for mid, m in wrapped.items():
        r = m.records
        diffs: dict[str, dict[str, np.ndarray]] = {}
        if r.readouts:
            c, k, f, replay_diffs = _replay(m)
            stats["cells.csv"] += c
            stats["contrasts.csv"] += k
            stats["fidelity.csv"] += f
            diffs.update(replay_diffs)
        c_eff = effective_cutoff(r.knowledge_cutoff, r.release_date, r.cutoff_precision)
        if r.oracle:
            tracks = {ALL_ORIGIN_TRACK: np.ones(len(grid.origins), dtype=bool)}
            if forecast_strict(grid.strict_origin, c_eff):
                tracks[FORECAST_STRICT_TRACK] = np.array([o == grid.strict_origin for o in grid.origins])
            o_units = {c: v for c in ORACLE_CONDITIONS if (v := m.condition(c)) is not None}
            a_units = {c: v for c in (FIXED_FORECAST, EXPANDING_FORECAST) if (v := m.condition(c)) is not None}
            c, k = oracle_statistics(mid, o_units, a_units, baselines, _subsets(grid), tracks)
            stats["cells.csv"] += c
            stats["contrasts.csv"] += k
        if r.base_model is not None and r.panel is not None and r.base_model in wrapped:
            base = wrapped[r.base_model]
            mask = np.zeros(grid.shape, dtype=bool)
            for fid, origin in r.panel_cells or ():
                mask[m.fi[fid], m.oi[origin]] = True
            mine = {c: v for c in r.panel.conditions if (v := m.panel_condition(c)) is not None}
            theirs = {c: v for c in r.panel.conditions if (v := base.panel_condition(c)) is not None}
            c, k = panel_statistics(mid, mine, theirs, mask, _subsets(grid))
            stats["cells.csv"] += c
            stats["contrasts.csv"] += k
        sides = None
        if sides_of is not None:
            sides = sides_of[mid] = _counterfactual_sides(m, malformed)
        stats["signature.csv"] += _signature(m, malformed, sides)
        if reruns is not None:
            stats["option_counterfactual.csv"] += _counterfactual(m, malformed, reruns, sides)
        rows = strict_mask_rows(mid, r.knowledge_cutoff, r.release_date, r.cutoff_precision, grid.origins, grid.window_months)
        masks_out += mask_rows(rows)
        if rows:
            diffs.update(_model_diffs(m, baselines))
            stats["exposure.csv"] += exposure_statistics(mid, diffs, masks_of(rows))
    out = {name: summarise(s, grid.draws) for name, s in stats.items()}
    out["strict_masks.csv"] = masks_out
    return out
