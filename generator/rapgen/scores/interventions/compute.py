"""The scorer's entry point for the interventions: from what ``compute_scores``
already holds to the files of ``DIR/interventions/`` and the §6 additions.

``compute_interventions(inputs, diagnostics, records, malformed)`` takes the
scoring stage's ``DiagnosticsInputs`` (read by attribute only), the
``diagnostics.json`` body (for the change-rich episodes and their
repeatability: no new draws), each model's parsed intervention records, and
the Search-call validator. Everything is on the canonical policy and on the
scorer's own count matrices, so every interval shares the leaderboard's draws.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from rapgen.archive import SLOTS, TraceCall
from rapgen.scores.diagnostics.memo import NOWHERE, DrawStore
from rapgen.scores.interventions.assemble import (
    CounterfactualPlan, ConditionsAhead, Grid, ModelRecords, Reruns, assemble_rows,
)
from rapgen.scores.interventions.core import ALL_SPLITS, SplitDraws, draws_from_scorer, split_draws
from rapgen.scores.interventions.reliability import GAP_TRACK, ceiling_gaps, posterior_ceiling, revision_reliability, revision_section
from rapgen.scores.interventions.tables import FOLDER, build_table, intervention_files
from rapgen.scores.metrics import METRIC_NAMES, SPEARMAN
from rapgen.scores.schema import CANONICAL_POLICY

LABELS_SQL = 'SELECT field_id, arxiv_id, "primary" FROM assignments'
PAPER_DATES_SQL = "SELECT arxiv_id, first_submitted FROM papers"


@dataclass(frozen=True)
class InterventionOutput:
    files: dict[str, bytes]  # "interventions/<name>" -> CSV bytes
    reliability: dict  # {"posterior": {split: …}, "revision": {split: […]}, "ceiling_gap": […]} for diagnostics.json
    plan: CounterfactualInputs | None = None  # option_counterfactual.csv but the re-run ids, when asked for


def ledger_lookups(archive: Any) -> tuple[dict[str, date], dict[str, dict[str, int]]]:
    """Every paper's ``first_submitted`` and, per field, each member's counted canonical primary slot
    (the columns read as arrays: no row tuples)."""
    slot = {s: i for i, s in enumerate(SLOTS)}
    con = archive.connect()
    try:
        papers = con.execute(PAPER_DATES_SQL).fetchnumpy()
        days = papers["first_submitted"]
        if np.ma.isMaskedArray(days) or days.dtype.kind != "M":  # a missing date: the rows as DuckDB gives them
            dates = {pid: day for pid, day in con.execute(PAPER_DATES_SQL).fetchall()}
        else:
            dates = dict(zip(papers["arxiv_id"].tolist(), days.astype("datetime64[D]").astype(object).tolist()))
        rows = con.execute(LABELS_SQL).fetchnumpy()
    finally:
        con.close()
    labels: dict[str, dict[str, int]] = defaultdict(dict)
    for field_id, pid, at in zip(rows["field_id"].tolist(), rows["arxiv_id"].tolist(), map(slot.get, rows["primary"].tolist())):
        if at is not None:  # "other" never counts
            labels[field_id][pid] = at
    return dates, dict(labels)


def episode_grid(diagnostics: Mapping, field_ids: list[str], origins: tuple[date, ...], key: str) -> np.ndarray:
    """An (F, O) array of one per-episode value of ``change_rich.episodes`` (NaN / False where absent)."""
    fi = {f: i for i, f in enumerate(field_ids)}
    oi = {o.isoformat(): j for j, o in enumerate(origins)}
    boolean = key == "change_rich"
    out = np.zeros((len(field_ids), len(origins)), dtype=bool) if boolean else np.full((len(field_ids), len(origins)), np.nan)
    for ep in diagnostics.get("change_rich", {}).get("episodes", []):
        value = ep.get(key)
        if value is not None and ep["field_id"] in fi and ep["origin"] in oi:
            out[fi[ep["field_id"]], oi[ep["origin"]]] = value
    return out


def _baseline(inputs: Any, c: int, name: str) -> np.ndarray:
    for e, entry in enumerate(inputs.entries):
        if entry.kind == "baseline" and entry.entry == name:
            return np.asarray(inputs.predictions[e, c])
    raise KeyError(f"no {name} baseline among the scorer's entries")


def grid_from_score_inputs(inputs: Any, diagnostics: Mapping, first_submitted: Mapping[str, date],
                           labels: Mapping[str, Mapping[str, int]]) -> Grid:
    """The episode grid of :mod:`assemble`, on the canonical policy and the scorer's draws."""
    field_ids, origins = list(inputs.field_ids), tuple(inputs.origins)
    draws: Mapping[str, SplitDraws] = draws_from_scorer(inputs.draws, field_ids, inputs.field_split, inputs.field_block, inputs.level)
    return _grid(inputs, episode_grid(diagnostics, field_ids, origins, "change_rich"), first_submitted, labels, draws)


def _grid(inputs: Any, change_rich: np.ndarray, first_submitted: Mapping[str, date], labels: Mapping[str, Mapping[str, int]],
          draws: Mapping[str, SplitDraws]) -> Grid:
    c = list(inputs.policies).index(CANONICAL_POLICY)
    archive_origins = inputs.archive.origins
    return Grid(
        list(inputs.field_ids), list(inputs.field_split), list(inputs.field_block), tuple(inputs.origins),
        int(archive_origins.window_months), getattr(inputs, "strict_origin", None) or archive_origins.strict_origin,
        np.asarray(inputs.y[c]), np.asarray(inputs.x[c]), np.asarray(inputs.ewma[c]), _baseline(inputs, c, "recent"),
        change_rich, first_submitted, labels, draws,
    )


def conditions_ahead(inputs: Any, records: list[ModelRecords], extra_metrics: Callable | None,
                     pool: ThreadPoolExecutor) -> ConditionsAhead:
    """Start every model's condition values in ``pool`` (what :func:`compute_interventions` with
    ``ahead`` takes): they read the compositions and the records alone, so they can run while the
    diagnostics that the rest of the episode grid needs are still being computed."""
    from rapgen.scores.interventions.sources import on_origins

    F, O = len(inputs.field_ids), len(inputs.origins)
    grid = _grid(inputs, np.zeros((F, O), dtype=bool), {}, {}, {})  # compositions and axes only
    return ConditionsAhead(grid, on_origins(records, grid.origins), extra_metrics, pool)


def reliability_additions(inputs: Any, diagnostics: Mapping, grid: Grid, store: DrawStore = NOWHERE) -> dict:
    """``reliability.posterior`` and ``reliability.revision`` for dev, test and ``all``;
    ``reliability.ceiling_gap`` for dev and test (the leaderboard's splits). ``store``: where the
    revision pairs' draws (the counts alone) are kept between runs."""
    c = list(inputs.policies).index(CANONICAL_POLICY)
    draws = dict(grid.draws)
    fresh = split_draws(grid.field_ids, grid.field_split, grid.field_block, inputs.resamples, inputs.seed, inputs.level, with_all=True)
    draws[ALL_SPLITS] = fresh[ALL_SPLITS]
    ewma_index = next(e for e, entry in enumerate(inputs.entries) if entry.kind == "baseline" and entry.entry == "ewma")
    spearman_index = list(METRIC_NAMES).index(SPEARMAN)
    repeatability = episode_grid(diagnostics, grid.field_ids, grid.origins, "repeatability")
    posterior = posterior_ceiling(repeatability, np.asarray(inputs.values[ewma_index, c, spearman_index]), draws)
    par = inputs.archive.ledger["reliability"]
    pairs = revision_reliability(np.asarray(inputs.target_counts[c]), grid.field_ids, grid.origins, int(par["splits"]), int(par["seed"]),
                                 store=store)
    # Every All-Origin leaderboard entry against the ceiling, on the leaderboard's own draws (dev, test).
    takes_part = getattr(inputs, "participates", None)  # None: every entry takes part
    chosen = [e for e in range(len(inputs.entries)) if takes_part is None or takes_part[GAP_TRACK][e]]
    gaps = ceiling_gaps(repeatability, np.asarray(inputs.values[chosen, c, spearman_index]),
                        [(inputs.entries[e].entry, inputs.entries[e].kind, inputs.entries[e].condition) for e in chosen], grid.draws)
    return {"posterior": posterior, "revision": revision_section(pairs, len(grid.field_ids), draws), "ceiling_gap": gaps}


def compute_interventions(
    inputs: Any,
    diagnostics: Mapping,
    records: list[ModelRecords],
    malformed: Callable[[TraceCall], bool],
    extra_metrics: Callable | None = None,
    reruns: Mapping | None = None,
    store: DrawStore = NOWHERE,
    ahead: ConditionsAhead | None = None,
    plan: bool = False,
) -> InterventionOutput:
    """Every ``DIR/interventions/`` file (option_counterfactual.csv holds only its header
    unless ``reruns`` from ``rapgen replay`` are given) and the §6 reliability additions
    (``store``: where the draws that read the counts alone are kept between runs; ``ahead``:
    :func:`conditions_ahead` of the same inputs, records and extra metrics, if started).
    ``plan``: also the counterfactual's plan (what :func:`counterfactual_plan` of the same
    archive, records, validator and resamples makes), from this grid and these records."""
    from rapgen.scores.interventions.sources import on_origins

    first_submitted, labels = ledger_lookups(inputs.archive)
    grid = grid_from_score_inputs(inputs, diagnostics, first_submitted, labels)
    made: list[CounterfactualPlan] | None = [] if plan else None
    scored = ahead.models if ahead is not None else on_origins(records, grid.origins)  # ahead's: already on them
    rows = assemble_rows(grid, scored, malformed, extra_metrics, reruns, ahead, plan_into=made)
    return InterventionOutput(intervention_files(rows), reliability_additions(inputs, diagnostics, grid, store),
                              CounterfactualInputs(made[0]) if made else None)


# ---------------------------------------------------------------- the Search-option counterfactual
# The hand-off from ``rapgen replay`` (search may not import scores): ``DIR/option_reruns.json`` =
# {"schema_version": 1, "manifest_sha256", "options", "calls": [[model_id, field_id, origin, condition,
# call_index, [returned ids]], …]}, one row per re-run call.
OPTION_RERUNS_JSON = "option_reruns.json"
COUNTERFACTUAL_CSV = "option_counterfactual.csv"


def parse_reruns(data: Mapping, manifest_sha256: str, source: str = OPTION_RERUNS_JSON) -> Reruns | None:
    """The re-run ids of an option_reruns.json body; None for one made from another archive."""
    from rapgen.errors import ScoringError

    if not isinstance(data, Mapping):
        raise ScoringError(f"{source}: not a re-run file of 'rapgen replay' (not a JSON object)")
    if data.get("manifest_sha256") != manifest_sha256:
        return None
    try:
        return {(m, f, date.fromisoformat(o), c, int(i)): tuple(ids) for m, f, o, c, i, ids in data["calls"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ScoringError(f"{source}: not a re-run file of 'rapgen replay' ({exc})") from None


def read_reruns(folder: str | Path, manifest_sha256: str) -> Reruns | None:
    """``folder/option_reruns.json`` if it is there and was made from this archive, else None."""
    import json

    from rapgen.errors import ScoringError

    path = Path(folder) / OPTION_RERUNS_JSON
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ScoringError(f"{path}: cannot read the re-run file ({exc})") from None
    return parse_reruns(data, manifest_sha256, str(path))


def counterfactual_file(archive: Any, records: list[ModelRecords], malformed: Callable[[TraceCall], bool], reruns: Reruns,
                        resamples: int | None = None) -> dict[str, bytes]:
    """``interventions/option_counterfactual.csv`` alone, on the scorer's episode grid and draws
    (what ``rapgen replay --out`` writes next to a score folder)."""
    return counterfactual_plan(archive, records, malformed, resamples).file(reruns)


@dataclass
class CounterfactualInputs:
    """:func:`counterfactual_file` but the re-run ids (see :func:`counterfactual_plan`)."""

    plan: CounterfactualPlan

    def file(self, reruns: Reruns) -> dict[str, bytes]:
        from rapgen.scores.outputs import csv_bytes

        return {f"{FOLDER}/{COUNTERFACTUAL_CSV}": csv_bytes(build_table(COUNTERFACTUAL_CSV, self.plan.rows(reruns)))}


def counterfactual_plan(archive: Any, records: list[ModelRecords], malformed: Callable[[TraceCall], bool],
                        resamples: int | None = None) -> CounterfactualInputs:
    """Everything :func:`counterfactual_file` computes before it reads the re-run ids (the
    episode grid, the draws, each pair's recorded calls): replay makes it while the calls run."""
    from dataclasses import replace

    from rapgen.scores.baselines import BASELINES
    from rapgen.scores.interventions.sources import effective_cutoffs, on_origins, panel_models
    from rapgen.scores.history_tables import unit_options
    from rapgen.scores.release_scopes import scored_release
    from rapgen.scores.steps import compose, count, frame

    boot = archive.ledger["bootstrap"]
    R, seed, level = int(boot["resamples"]) if resamples is None else int(resamples), int(boot["seed"]), float(boot["level"])
    _history, scope = scored_release(archive)  # the frame rapgen score scores (a history: its resolved origins)
    fr = frame(archive) if scope is None else replace(frame(archive), origins=scope.resolved, strict_origin=scope.strict_origin)
    counted = count(archive, fr, R, seed, panel_models(records), effective_cutoffs(records), **unit_options(scope))
    composed = compose(counted, archive.ledger)
    c = 0  # canonical is the first policy
    first_submitted, labels = ledger_lookups(archive)
    draws = draws_from_scorer(counted.draws, fr.field_ids, fr.field_split, fr.field_block, level)
    grid = Grid(fr.field_ids, list(fr.field_split), list(fr.field_block), fr.origins, fr.window_months, fr.strict_origin,
                composed.y[c], composed.x[c], composed.ewma[c], composed.baselines[BASELINES.index("recent"), c],
                np.zeros((len(fr.field_ids), len(fr.origins)), dtype=bool), first_submitted, labels, draws)
    return CounterfactualInputs(CounterfactualPlan(grid, on_origins(records, grid.origins), malformed))
