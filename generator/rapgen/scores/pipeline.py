"""``compute_scores(archive) -> ScoreResult`` and ``write_scores(result, out_dir)``.

``compute_scores`` calls the named steps of :mod:`rapgen.scores.steps` in order
(frame -> count -> compose -> unit values -> tracks -> statistics -> intervals),
builds the score files with :mod:`rapgen.scores.tables`, then runs the §6
diagnostics, whose per-unit alignment columns join units.parquet on the
canonical rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import numpy as np

from rapgen.archive import RapRelease
from rapgen.errors import ScoringError
from rapgen.scores import outputs, ranking, schema, steps, tables
from rapgen.scores.bootstrap import reuse_intervals
from rapgen.scores.kernels import single_threaded_blas
from rapgen.scores.schema import CANONICAL_POLICY, TRACKS
from rapgen.scores.counts import POLICIES, Windows
from rapgen.scores.diagnostics import NOWHERE, ChangeRich, DrawStore, change_rich_draws, compute_diagnostics, compute_unit_diagnostics
from rapgen.scores.diagnostics.evidence import search_evidence
from rapgen.scores.diagnostics.provenance import unit_provenance
from rapgen.scores.history_tables import history_tables, history_tracks, release_meta, unit_options
from rapgen.scores.release_scopes import scored_release
from rapgen.scores.interventions.assemble import ConditionsAhead
from rapgen.scores.interventions.compute import CounterfactualInputs, compute_interventions, conditions_ahead
from rapgen.scores.interventions.extra import CORRECTED, unit_extras
from rapgen.scores.interventions.sources import counting_rules, effective_cutoffs, model_records, panel_models
from rapgen.scores.outputs import Table
from rapgen.scores.units import BASELINE, Entry


@dataclass
class DiagnosticsInputs:
    """What scoring hands to the §6 diagnostics (all arrays share the axis order
    policy P, field F, window W / origin O, slot 8; entries E as in ``entries``)."""

    archive: RapRelease  # the release scored
    field_ids: list[str]
    field_split: np.ndarray  # (F,) split name per field
    field_block: np.ndarray  # (F,) block id per field
    origins: tuple[date, ...]
    policies: tuple[str, ...]
    windows: Windows
    counts: np.ndarray  # (P, F, W, 8) exact direction counts
    target_counts: np.ndarray  # (P, F, O, 8)
    recent_counts: np.ndarray  # (P, F, O, 8)
    y: np.ndarray  # (P, F, O, 8) target compositions (NaN rows: missing)
    x: np.ndarray  # (P, F, O, 8) recent-window compositions
    ewma: np.ndarray  # (P, F, O, 8) EWMA baseline
    entries: list[Entry]
    predictions: np.ndarray  # (E, P, F, O, 8) unit prediction vectors (NaN rows: invalid / no baseline)
    values: np.ndarray  # (E, P, M, F, O) unit metric values, M in METRIC_NAMES order
    draws: dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray]]  # (split, unit kind) -> (unit ids, C (R, K))
    resamples: int
    seed: int
    level: float
    participates: dict[str, np.ndarray] | None = None  # track -> (E,) bool, as the leaderboard's rows (None: every entry)
    files: frozenset[str] | None = None  # the archive paths the release scored lists (None: every file on disk)
    keep: Callable[[str, date], bool] | None = None  # (model, origin) -> its units are the scored release's (None: all)
    strict_origin: date | None = None  # the scored strict origin (a history's release, not origins.json's)


@dataclass
class ScoreResult:
    meta: dict
    tables: dict[str, Table]  # file name -> table (CSV files)
    units: Table  # units.parquet
    unit_types: dict[str, str]
    diagnostics: dict
    inputs: DiagnosticsInputs | None = field(default=None, repr=False)
    files: dict[str, bytes] = field(default_factory=dict, repr=False)  # interventions/<name> -> CSV bytes
    # option_counterfactual.csv but the re-run ids (compute_scores(counterfactual=True)), or None
    counterfactual: CounterfactualInputs | None = field(default=None, repr=False)


def _ledger_bootstrap(ledger: dict, resamples: int | None) -> tuple[int, int, float]:
    boot = ledger["bootstrap"]
    n = int(boot["resamples"]) if resamples is None else int(resamples)
    if n < 1:
        raise ScoringError(f"the number of bootstrap resamples must be at least 1, found {n}")
    return n, int(boot["seed"]), float(boot["level"])


def compute_scores(release: RapRelease, resamples: int | None = None, *, diagnostics: bool = True,
                   malformed: Callable | None = None, reruns: Mapping | None = None,
                   every_release: bool = True, draws_cache: str | Path | DrawStore | None = None, counterfactual: bool = False,
                   _eras: bool = True) -> ScoreResult:
    """Every leaderboard number of SCORING.md §1-§5 and §7 of one release, recomputed from the
    records ``verify`` parsed from the bytes it hashed (``open_verified(root).release(n)``;
    ``release()`` is the archive as it stands, unreleased lines included).

    ``resamples`` overrides the ledger's bootstrap.resamples (seed and level
    always come from the ledger). ``diagnostics=False`` skips the §6
    diagnostics (diagnostics.json then says they were not computed).

    When a model carries intervention records (INTERVENTIONS.md), ``malformed``
    (the Search-call predicate, ``rapgen.search.call_is_malformed``) turns on the
    interventions: ``files`` gets every ``interventions/`` file and diagnostics.json
    ``reliability.posterior`` / ``reliability.revision``; ``reruns`` (from
    ``rapgen replay``'s option_reruns.json) fills option_counterfactual.csv. Panel
    models are left out of every leaderboard file; forecast_strict uses c_eff.
    A format-2 release is scored on its resolved origins and the files it listed, with
    releases.csv for releases 1..N; ``every_release=False`` limits releases.csv to the release
    scored (for timing). Every releases.csv block before an errata release is scored from the
    bytes its release listed (the view of that release, never a copy).
    A statistic met twice in the run (on the same draws) is bootstrapped once (:func:`reuse_intervals`).
    ``draws_cache``: a folder where the §6 draws that read the counts alone are kept between runs
    (:class:`~rapgen.scores.diagnostics.DrawStore`, or such a store itself; default: drawn every time).
    ``counterfactual``: when the interventions run, also ``ScoreResult.counterfactual``, the
    Search-option counterfactual's plan on this run's grid and draws (``rapgen build`` hands it to
    the replay, which adds the re-run ids; :func:`counterfactual_plan` makes the same alone).
    """
    with reuse_intervals():
        return _compute_scores(release, resamples, diagnostics, malformed, reruns, every_release,
                               draws_cache if isinstance(draws_cache, DrawStore) else DrawStore(draws_cache), _eras,
                               counterfactual)


def _compute_scores(archive: RapRelease, resamples: int | None, diagnostics: bool, malformed: Callable | None,
                    reruns: Mapping | None, every_release: bool, store: DrawStore, _eras: bool,
                    counterfactual: bool = False) -> ScoreResult:
    R, seed, level = _ledger_bootstrap(archive.ledger, resamples)
    records = model_records(archive)
    history, scope, fr, counted, composed, uv, tr = _unit_steps(archive, panel_models(records), effective_cutoffs(records), R, seed)
    inputs = DiagnosticsInputs(
        archive=archive, field_ids=fr.field_ids, field_split=fr.field_split, field_block=fr.field_block, origins=fr.origins,
        policies=POLICIES, windows=counted.windows, counts=counted.counts,
        target_counts=counted.counts[:, :, counted.windows.target], recent_counts=counted.counts[:, :, counted.windows.history[:, -1]],
        y=composed.y, x=composed.x, ewma=composed.ewma, entries=uv.entries, predictions=uv.predictions, values=uv.values,
        draws=counted.draws, resamples=R, seed=seed, level=level, participates=tr.participates,
        files=None if scope is None or scope.listed is None else frozenset(history.manifests[scope.number]),
        keep=unit_options(scope).get("keep"),
        strict_origin=fr.strict_origin,
    )
    # §6's change-rich draws read the counts alone, and the per-unit alignments the unit values
    # alone: they run beside the bootstrap and the tables (numpy's generators and kernels release
    # the GIL), the draws on their own generator as before. One BLAS thread throughout: the
    # alignments' products are small, and two threads' limits must not undo each other.
    # The interventions' condition values need the alignments and the compositions alone: they
    # start (two threads) as soon as the alignments are done, beside the tables and the sections.
    intervening = diagnostics and records is not None and malformed is not None
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=1) as early, ThreadPoolExecutor(max_workers=2) as ahead:
        drawn = early.submit(change_rich_draws, inputs, None, store) if diagnostics else None
        aligned = early.submit(compute_unit_diagnostics, inputs) if diagnostics else None
        started = ahead.submit(lambda: _start_interventions(inputs, records, aligned.result(), ahead)) if intervening else None
        st = steps.statistics(uv, tr)
        iv, plain = steps.intervals(fr, counted, st, level, meanwhile=lambda: _plain_tables(fr, counted, composed, uv, tr, st))
        score_tables = {**_interval_tables(fr, counted, uv, tr, st, iv), **plain}
        meta = _meta(archive, fr, counted, uv, tr, score_tables, R, seed, level)
        files: dict[str, bytes] = {}
        plan = None
        # pairs.csv and releases.csv (issues 16 and 14); scores.json counts the §7 tables only.
        score_tables.update(history_tables(archive, fr, counted, uv, tr, level, history, scope, every_release))
        if _eras and every_release and history is not None and scope is not None:
            score_tables["releases.csv"] = _before_errata(archive, history, scope.number, resamples, score_tables["releases.csv"])
        if scope is not None:
            meta["release"] = release_meta(history, scope, fr, counted, uv, score_tables["releases.csv"], archive.current)
        if diagnostics:
            section, unit_cols = compute_diagnostics_section(inputs, drawn.result, store, aligned.result)
            if intervening:
                files, plan = _interventions(inputs, section, records, malformed, reruns, started.result(), store, counterfactual)
        else:
            section, unit_cols = _diagnostics_head(inputs) | {"status": "not computed"}, None
    section["manifest_sha256"] = meta["manifest_sha256"]  # release N's manifest under --release N
    units, unit_types = tables.units_table(uv.entries, fr.field_ids, fr.field_split, fr.origins, uv.predictions, uv.values,
                                           counted.models.valid, counted.models.reasons, uv.baseline_ok, uv.n_models, unit_cols)
    return ScoreResult(meta, score_tables, units, unit_types, section, inputs, files, plan)


def _unit_steps(archive: RapRelease, panels: frozenset[str], cutoffs: Mapping, R: int, seed: int) -> tuple:
    """frame -> count -> compose -> unit values -> tracks of the release scored (``panels`` and
    ``cutoffs``: :func:`panel_models` and :func:`effective_cutoffs` of its records)."""
    history, scope = scored_release(archive)
    fr = steps.frame(archive) if scope is None else replace(steps.frame(archive), origins=scope.resolved,
                                                             strict_origin=scope.strict_origin)
    counted = steps.count(archive, fr, R, seed, panels, cutoffs, **unit_options(scope))
    composed = steps.compose(counted, archive.ledger)
    uv = steps.unit_values(counted.models, composed)
    tr = steps.tracks(fr, uv) if scope is None else history_tracks(steps.tracks(fr, uv), scope, fr, counted, uv)
    return history, scope, fr, counted, composed, uv, tr


def _releases_csv(release: RapRelease, resamples: int | None) -> Table:
    """releases.csv of ``compute_scores(release, resamples, _eras=False)``, alone."""
    R, seed, level = _ledger_bootstrap(release.ledger, resamples)
    history, scope, fr, counted, _, uv, tr = _unit_steps(release, *counting_rules(release), R, seed)
    return history_tables(release, fr, counted, uv, tr, level, history, scope, names=("releases.csv",))["releases.csv"]


def _before_errata(release: RapRelease, history, scored: int, resamples: int | None, table: Table) -> Table:
    """releases.csv with the blocks of releases before each errata release (up to ``scored``)
    computed from the bytes they listed: releases e..k-1 (e the previous errata release, or 1)
    are scored on the view of release k-1, where the files errata k replaced are the old ones."""
    errata = [k for k in sorted(history.records) if 1 < k <= scored and history.records[k].kind.value == "errata"]
    blocks: dict[int, list[tuple]] = {}
    for row in table.rows():
        blocks.setdefault(int(row[0]), []).append(row)
    for start, k in zip([1, *errata], errata):
        own: dict[int, list[tuple]] = {}
        for row in _releases_csv(release.verified.release(k - 1), resamples).rows():
            own.setdefault(int(row[0]), []).append(row)
        blocks.update({n: own.get(n, []) for n in range(start, k)})
    body = [row for n in sorted(blocks) for row in blocks[n]]
    return Table(table.columns, {c: [r[i] for r in body] for i, c in enumerate(table.columns)})


def _interventions(inputs: DiagnosticsInputs, section: dict, records: list, malformed: Callable, reruns: Mapping | None,
                   started: tuple[Callable, ConditionsAhead], store: DrawStore = NOWHERE,
                   counterfactual: bool = False) -> tuple[dict, CounterfactualInputs | None]:
    """The interventions' files and, with ``counterfactual``, the counterfactual's plan; their §6
    reliability additions go into ``section`` in place (``started``: :func:`_start_interventions`'
    result; ``store``: where the draws that read the counts alone are kept between runs)."""
    extras, ahead = started
    out = compute_interventions(inputs, section, records, malformed, extras, reruns, store, ahead, plan=counterfactual)
    section.setdefault("reliability", {}).update(out.reliability)
    return out.files, out.plan


def _start_interventions(inputs: DiagnosticsInputs, records: list, unit_cols: Mapping[str, np.ndarray],
                         pool: ThreadPoolExecutor) -> tuple[Callable, ConditionsAhead]:
    """The interventions' extra metrics (the corrected alignments, taken from the diagnostics'
    per-unit columns where a row is a scored entry's) and every model's condition values,
    started in ``pool``: they need the compositions and those columns, not the diagnostics' sections."""
    c = POLICIES.index(CANONICAL_POLICY)
    known = [(inputs.predictions[e, c], {name: unit_cols[name][e] for name in CORRECTED}) for e in range(len(inputs.entries))]
    extras = unit_extras(inputs.archive.ledger, inputs.y[c], inputs.ewma[c], inputs.origins, known)
    return extras, conditions_ahead(inputs, records, extras, pool)


def _plain_tables(fr: steps.Frame, counted: steps.Counted, composed: steps.Composed, uv: steps.UnitValues,
                  tr: steps.Tracks, st: steps.Statistics) -> dict[str, Table]:
    """The score files that need no interval (built while the bootstrap runs)."""
    return {
        "field_scores.csv": tables.field_scores_table(uv.entries, fr.field_ids, fr.field_split, st.field_scores, tr.participates,
                                                      tr.applicable),
        "origin_scores.csv": tables.origin_scores_table(uv.entries, fr.origins, fr.splits, fr.field_split, uv.values, tr.applicable),
        "compositions.csv": tables.compositions_table(fr.field_ids, counted.windows, counted.counts, composed.comps),
    }


def _interval_tables(fr: steps.Frame, counted: steps.Counted, uv: steps.UnitValues, tr: steps.Tracks,
                     st: steps.Statistics, iv: steps.Intervals) -> dict[str, Table]:
    lb, ct = st.leaderboard_keys, st.contrast_keys
    return {
        "leaderboard.csv": tables.leaderboard_table(uv.entries, lb, fr.splits, iv.estimate, iv.n_fields, iv.bounds, fr.field_split,
                                                    tr.origins, counted.models.valid, uv.baseline_ok, uv.n_models),
        "contrasts.csv": tables.contrasts_table(tr.contrasts, ct, st.n_leaderboard, fr.splits, iv.estimate, iv.n_fields, iv.bounds),
        "ranks.csv": ranking.ranks_table(uv.entries, lb, fr.splits, iv.estimate, iv.bounds, iv.replicates),
        "field_clustered.csv": tables.field_clustered_table(uv.entries, tr.contrasts, lb, ct, fr.splits, iv.estimate, iv.bounds),
    }


def _meta(archive: RapRelease, fr: steps.Frame, counted: steps.Counted, uv: steps.UnitValues, tr: steps.Tracks,
          score_tables: dict[str, Table], R: int, seed: int, level: float) -> dict:
    """scores.json: the archive's identity, the bootstrap settings, tracks and counts."""
    E, P, F, O = len(uv.entries), len(POLICIES), len(fr.field_ids), len(fr.origins)
    return {
        "schema_version": schema.SCHEMA_VERSION,
        "manifest_sha256": archive.manifest_sha256,
        "archive": {"name": archive.info.get("name"), "synthetic": archive.synthetic},
        "resamples": R,
        "seed": seed,
        "level": level,
        "policies": list(POLICIES),
        "tracks": {
            track: {
                "origins": [fr.origins[i].isoformat() for i in tr.origins[track]],
                "models": sorted({e.entry for e, ok in zip(uv.entries, tr.participates[track]) if ok and e.kind != BASELINE}),
            }
            for track in TRACKS
        },
        "counts": {
            "fields": {s: int((fr.field_split == s).sum()) for s in fr.splits},
            "blocks": {s: len(counted.draws[(s, "block")][0]) for s in fr.splits},
            "origins": O,
            "models": len({e.entry for e in counted.models.entries}),
            "entries": E,
            "units": E * P * F * O,
            **{name.rsplit(".", 1)[0] + "_rows": len(table) for name, table in score_tables.items()},
        },
    }


def compute_diagnostics_section(inputs: DiagnosticsInputs, change_rich: Callable[[], ChangeRich] | None = None,
                                store: DrawStore = NOWHERE, unit_diagnostics: Callable[[], dict[str, np.ndarray]] | None = None,
                                ) -> tuple[dict, dict[str, np.ndarray]]:
    """The single call site of the §6 diagnostics (``rapgen.scores.diagnostics``).

    Returns the diagnostics.json body (headed by the schema version and the
    archive's identity) and the per-unit alignment columns of units.parquet
    (``{name: (E, F, O) array}``, canonical policy), computed once and shared.
    ``change_rich``: the result of :func:`change_rich_draws` on ``inputs``, when it is being
    computed elsewhere (called when the change-rich section needs it); ``store``: where the draws
    that read the counts alone are kept between runs; ``unit_diagnostics``: the result of
    :func:`compute_unit_diagnostics` on ``inputs``, when it is being computed elsewhere.
    """
    # The per-unit alignments run in a thread beside the sections that draw random numbers
    # (both are numpy kernels that release the GIL); the alignment section waits for them.
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=1) as pool:
        units = pool.submit(compute_unit_diagnostics, inputs) if unit_diagnostics is None else None
        aligned = units.result if units is not None else unit_diagnostics
        body = compute_diagnostics(inputs, unit_diagnostics=aligned, change_rich=change_rich, store=store)
        unit_cols = aligned()
    body["search_evidence"] = search_evidence(inputs.archive)
    body["unit_provenance"] = unit_provenance(inputs.archive, inputs.origins, inputs.keep, inputs.files)
    return {**_diagnostics_head(inputs), **body}, unit_cols


def _diagnostics_head(inputs: DiagnosticsInputs) -> dict:
    return {"schema_version": schema.SCHEMA_VERSION, "manifest_sha256": inputs.archive.manifest_sha256}


def write_scores(result: ScoreResult, out_dir: str | Path) -> list[Path]:
    """Write every output file of ``rapgen score`` into ``out_dir``."""
    # Arrow encodes and compresses the parquet file outside the GIL, next to the CSV formatting.
    with ThreadPoolExecutor(max_workers=1) as pool:
        parquet = pool.submit(outputs.parquet_bytes, result.units, result.unit_types, "units.parquet")
        files = {name: outputs.csv_bytes(table, name) for name, table in result.tables.items()}
        files["units.parquet"] = parquet.result()
    files.update(result.files)
    files["scores.json"] = outputs.json_bytes(result.meta)
    files["diagnostics.json"] = outputs.json_bytes(result.diagnostics)
    return outputs.write_folder(out_dir, files)
