"""The scores -> site contract: what ``rapgen score`` writes, declared once.

Everything a reader of a score folder needs to know without guessing lives
here: the schema version, every file's columns, the metric registry's public
facts (label, direction, description), the tracks and policies, the headline
choice, and the layout of ``diagnostics.json`` as sections of titled tables.
The writer (``outputs.py`` and the diagnostics) and the site both import it,
so the two cannot drift apart.

:func:`diagnostic_tables` turns a ``diagnostics.json`` body into plain
sections of plain tables following that declaration; it formats nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, NamedTuple

from rapgen.archive import (
    CLOSED_FORECAST, DEV_SPLIT, EXPANDING_FORECAST, EXPANDING_STATE, FIXED_FORECAST, FIXED_STATE, FORECAST_CONDITIONS,
    ORACLE_CONDITIONS, ORACLE_HISTORY, ORACLE_RECENT, ORACLE_SEARCH, STATE_CONDITIONS, TEST_SPLIT,
)
from rapgen.scores.metrics import JSD, REGISTRY, SPEARMAN, MetricSpec
from rapgen.scores.spec import Primary

SCHEMA_VERSION = 1

# ---------------------------------------------------------------- vocabulary
# The one place a track's or a counting policy's name is spelt; the scorer and the site read these.
# All-Origin scores every origin; Forecast-Strict only the strict origin, for models whose cut-off precedes it.
ALL_ORIGIN_TRACK = "all_origin"
FORECAST_STRICT_TRACK = "forecast_strict"
TRACKS: tuple[str, ...] = (ALL_ORIGIN_TRACK, FORECAST_STRICT_TRACK)
# The Live track (RELEASES.md "Tracks"): scored only in an archive with a release history
# in which an origin was open for sealed or open submissions; releases.csv uses all three.
LIVE_TRACK = "live"
HISTORY_TRACKS: tuple[str, ...] = TRACKS + (LIVE_TRACK,)
# Each track's name in English (the site's words in each language are its catalogues' track.* labels).
TRACK_TITLES: dict[str, str] = {ALL_ORIGIN_TRACK: "All-Origin", FORECAST_STRICT_TRACK: "Forecast-Strict", LIVE_TRACK: "Live"}
# The counting policies (SCORING.md §1), in output order; canonical is the headline's.
CANONICAL_POLICY = "canonical"
SPLIT_POLICY = "split"
SINGLE_POLICY = "single"
FLIP_POLICY = "flip"
POLICIES: tuple[str, ...] = (CANONICAL_POLICY, SPLIT_POLICY, SINGLE_POLICY, FLIP_POLICY)
# The ``condition`` of a baseline's rows (a model's rows carry its condition, A0…A4).
BASELINE_CONDITION = "BASE"
# contrasts.csv: a model's own condition pairs (left - right, SCORING.md §4), then each forecast
# condition against the EWMA baseline; in this order everywhere they are listed.
CONDITION_CONTRASTS: tuple[tuple[str, str], ...] = (
    (FIXED_FORECAST, CLOSED_FORECAST), (EXPANDING_FORECAST, FIXED_FORECAST),
    (FIXED_STATE, FIXED_FORECAST), (EXPANDING_STATE, EXPANDING_FORECAST),
)
EWMA_CONTRAST_CONDITIONS: tuple[str, ...] = FORECAST_CONDITIONS  # Ak-ewma, k in A0 A1 A3
CONTRASTS: tuple[str, ...] = tuple(f"{a}-{b}" for a, b in CONDITION_CONTRASTS) + tuple(f"{k}-ewma" for k in EWMA_CONTRAST_CONDITIONS)
STATE_CONTRASTS: tuple[str, ...] = tuple(f"{a}-{b}" for a, b in CONDITION_CONTRASTS if a in STATE_CONDITIONS)  # A2-A1, A4-A3
# The exact-history contrasts (INTERVENTIONS.md §2) in output order: each O condition against each
# baseline, then against the model's own Search conditions, and O3 - O2 (the effect of reopening Search).
ORACLE_BASELINES: tuple[str, ...] = ("ewma", "recent")
ORACLE_MODEL_CONTRASTS: tuple[tuple[str, str], ...] = (
    (ORACLE_RECENT, FIXED_FORECAST), (ORACLE_HISTORY, EXPANDING_FORECAST), (ORACLE_SEARCH, EXPANDING_FORECAST),
    (ORACLE_SEARCH, ORACLE_HISTORY),
)
ORACLE_CONTRASTS: tuple[str, ...] = tuple(f"{c}-{b}" for b in ORACLE_BASELINES for c in ORACLE_CONDITIONS) + tuple(
    f"{a}-{b}" for a, b in ORACLE_MODEL_CONTRASTS)

# The metric registry's entries, in output order (name, label, higher_is_better
# True/False or None for a descriptive metric, description). One registry:
# these are the very objects of ``rapgen.scores.metrics.REGISTRY``.
METRICS: tuple[MetricSpec, ...] = tuple(REGISTRY.values())
METRIC_NAMES: tuple[str, ...] = tuple(REGISTRY)


class RapPrimary(Primary):
    """RAP's headline: this metric, under this counting policy, on this track, for this condition."""

    @property
    def policy(self) -> str:
        return self.axis("policy")


PRIMARY = RapPrimary(metric=SPEARMAN, track=ALL_ORIGIN_TRACK, axes=(("policy", CANONICAL_POLICY),), condition=EXPANDING_FORECAST)

# ---------------------------------------------------------------- score files
SLOT_NAMES: tuple[str, ...] = tuple(f"D{i}" for i in range(8))
LEADERBOARD_COLUMNS = (
    "track", "split", "policy", "entry", "kind", "condition", "metric",
    "estimate", "ci_low", "ci_high", "n_fields", "n_episodes", "n_valid", "n_invalid",
)
CONTRASTS_COLUMNS = ("track", "split", "policy", "entry", "contrast", "metric", "estimate", "ci_low", "ci_high", "n_fields")
RANKS_COLUMNS = ("track", "split", "policy", "condition", "metric", "entry", "estimate", "rank", "p_first")
# Every pair of entries of a rank group (models with one condition and the baselines; baseline
# pairs under BASE): estimate = a - b, paired within each field over the origins both define.
PAIRS_COLUMNS = (
    "track", "split", "policy", "condition", "metric", "entry_a", "kind_a", "entry_b", "kind_b",
    "estimate", "ci_low", "ci_high", "n_fields",
)
# The Live track of the release scored: a model over its on-time origins (``origins``, space-separated,
# and their count), a baseline over every live origin and over each models' origin set; ranks compare
# rows with the same policy, condition, metric and origins (baselines ranked in the A3 groups).
LIVE_COLUMNS = (
    "split", "policy", "entry", "kind", "condition", "metric", "origins", "n_origins",
    "estimate", "ci_low", "ci_high", "n_fields", "rank",
)
# One block of headline rows per release, each computed from the files that release listed.
RELEASES_COLUMNS = (
    "release", "date", "track", "split", "policy", "entry", "condition", "metric", "estimate", "ci_low", "ci_high", "rank",
)
FIELD_CLUSTERED_COLUMNS = ("table", "track", "split", "policy", "entry", "condition", "metric", "estimate", "ci_low", "ci_high")
FIELD_SCORES_COLUMNS = ("track", "split", "policy", "entry", "kind", "condition", "metric", "field_id", "estimate", "n_origins")
ORIGIN_SCORES_COLUMNS = ("split", "policy", "entry", "kind", "condition", "metric", "origin", "estimate", "n_fields")
COMPOSITIONS_COLUMNS = ("field_id", "policy", "window_start", "window_end", "n_total") + SLOT_NAMES
# units.parquet: identity, validity, the metric values, the prediction, then the
# per-unit residual-alignment values (canonical policy only; null elsewhere).
UNIT_KEY_COLUMNS = ("policy", "entry", "kind", "condition", "field_id", "origin", "split", "valid", "reason")
UNIT_DIAGNOSTIC_COLUMNS: tuple[str, ...] = (
    "direct_cos", "direct_cos_null", "direct_cos_corrected",
    "direct_spearman", "direct_spearman_null", "direct_spearman_corrected",
    "partial_residual", "partial_residual_null", "partial_residual_corrected",
)
UNITS_COLUMNS: tuple[str, ...] = UNIT_KEY_COLUMNS + METRIC_NAMES + tuple(f"p_{s}" for s in SLOT_NAMES) + UNIT_DIAGNOSTIC_COLUMNS
# Arrow types of units.parquet ("string", "date32", "bool", "float64").
UNITS_TYPES: dict[str, str] = {
    **{c: "string" for c in UNIT_KEY_COLUMNS}, "origin": "date32", "valid": "bool",
    **{c: "float64" for c in UNITS_COLUMNS if c not in UNIT_KEY_COLUMNS},
}

# INTERVENTIONS.md §8: DIR/interventions/<name>. "R", the interval row: block (ci_*) and
# field-clustered (fc_*) intervals of the split's draws. Written only for an archive whose
# models carry intervention records (docs/interventions.md, Output).
INTERVENTIONS_DIR = "interventions"
INTERVAL_COLUMNS: tuple[str, ...] = ("estimate", "ci_low", "ci_high", "fc_low", "fc_high", "n_fields")
INTERVENTION_FILES: dict[str, tuple[str, ...]] = {
    "cells.csv": ("analysis", "track", "split", "entry", "subset", "cell", "metric", *INTERVAL_COLUMNS, "n_units", "n_valid", "n_invalid"),
    "contrasts.csv": ("analysis", "track", "split", "entry", "subset", "contrast", "metric", *INTERVAL_COLUMNS),
    "fidelity.csv": ("split", "entry", "readout", "metric", *INTERVAL_COLUMNS, "n_units"),
    "signature.csv": ("split", "entry", "regime", "side", "metric", *INTERVAL_COLUMNS, "n_units"),
    "strict_masks.csv": ("entry", "origin", "forecast_strict", "joint_strict", "forecast_boundary", "joint_boundary"),
    "exposure.csv": ("split", "entry", "mask", "contrast", "metric", "stratum", *INTERVAL_COLUMNS, "n_origins"),
    "option_counterfactual.csv": ("split", "entry", "regime", "budget", "side", "arm", "metric", *INTERVAL_COLUMNS, "n_units"),
}

# File name -> columns, for every tabular file of a score folder.
SCORE_FILES: dict[str, tuple[str, ...]] = {
    "leaderboard.csv": LEADERBOARD_COLUMNS,
    "contrasts.csv": CONTRASTS_COLUMNS,
    "ranks.csv": RANKS_COLUMNS,
    "pairs.csv": PAIRS_COLUMNS,
    "releases.csv": RELEASES_COLUMNS,
    "live.csv": LIVE_COLUMNS,
    "field_clustered.csv": FIELD_CLUSTERED_COLUMNS,
    "field_scores.csv": FIELD_SCORES_COLUMNS,
    "origin_scores.csv": ORIGIN_SCORES_COLUMNS,
    "compositions.csv": COMPOSITIONS_COLUMNS,
    "units.parquet": UNITS_COLUMNS,
}
# Files a score folder holds only for some archives (the interventions), same contract.
OPTIONAL_SCORE_FILES: dict[str, tuple[str, ...]] = {
    f"{INTERVENTIONS_DIR}/{name}": columns for name, columns in INTERVENTION_FILES.items()
}
JSON_FILES: tuple[str, ...] = ("scores.json", "diagnostics.json")
# CSV columns written as floats (shortest round-trip repr); the rest are text or integers.
FLOAT_COLUMNS = frozenset({"estimate", "ci_low", "ci_high", "fc_low", "fc_high", "p_first", "n_total"} | set(SLOT_NAMES))


# ---------------------------------------------------------------- diagnostics.json layout
@dataclass(frozen=True)
class ColumnSpec:
    """One column of a declared table. ``key`` is a dotted path inside a row
    (``estimates.canonical``). An ``interval`` column is a point estimate whose
    bounds are the row's ``ci_low``/``ci_high`` keys named here."""

    key: str
    label: str
    ci_low: str | None = None
    ci_high: str | None = None

    @property
    def interval(self) -> bool:
        return self.ci_low is not None


@dataclass(frozen=True)
class TableSpec:
    """Where a table's rows are and what to show of them.

    ``rows`` is the path of keys from the top of diagnostics.json to a list of
    row objects, or, with ``keyed_by``, to an object of row objects whose keys
    become the column ``keyed_by``. ``where`` keeps rows whose values equal the
    given ones; ``split_by`` makes one table per distinct value of those keys
    (in first-seen order, the values appended to the title). ``per_episode``
    marks lists with one row per episode (long at full scale).
    """

    title: str
    rows: tuple[str, ...]
    columns: tuple[ColumnSpec, ...]
    keyed_by: str | None = None
    where: tuple[tuple[str, Any], ...] = ()
    split_by: tuple[str, ...] = ()
    per_episode: bool = False
    flatten: bool = False  # rows are the leaves of the object at ``rows``: (dotted key, value)
    optional: bool = False  # only some archives have it (the interventions' additions): skipped when absent


@dataclass(frozen=True)
class SectionSpec:
    """A diagnostics.json section: its top-level ``key``, a title, an intro and its tables."""

    key: str
    title: str
    intro: str
    tables: tuple[TableSpec, ...]


def _c(key: str, label: str | None = None) -> ColumnSpec:
    return ColumnSpec(key, label or key)


def _est(key: str = "estimate", label: str = "estimate") -> ColumnSpec:
    """A point estimate with its interval (``estimate`` pairs with ``ci_low``/``ci_high``, X with ``X_ci_low``...)."""
    low, high = ("ci_low", "ci_high") if key == "estimate" else (f"{key}_ci_low", f"{key}_ci_high")
    return ColumnSpec(key, label, low, high)


# A row's entry as shown: its condition tells a baseline (BASE) from a model (A0…A4), so the
# rows' ``kind`` is not repeated in every table (it stays in diagnostics.json).
_ENTRY = (_c("split"), _c("entry"), _c("condition"))
# INTERVENTIONS.md §6, written when the archive's models carry intervention records.
INTERVENTION_SPLITS: tuple[str, ...] = (DEV_SPLIT, TEST_SPLIT, "all")
POSTERIOR_TABLE = TableSpec(
    "Posterior-predictive ceiling by split", ("reliability", "posterior"), (
        _c("split"), _est("estimate", "repeatability"), _est("ceiling", "ceiling"), _est("ewma_gap", "ceiling − EWMA"),
        _c("n_fields"), _c("n_episodes"), _c("n_defined"),
    ), keyed_by="split", optional=True,
)
# Each All-Origin entry's spearman (canonical) minus that ceiling, paired on the split's draws:
# the headline strip's "gap to the ceiling". Rows also carry track, policy and metric
# (all_origin, canonical, spearman: the only ones the ceiling is defined for) and fc_low/fc_high.
CEILING_GAP_TABLE = TableSpec(
    "Gap to the posterior-predictive ceiling (Spearman, All-Origin)", ("reliability", "ceiling_gap"), (
        *_ENTRY, _est("estimate", "entry − ceiling"), _c("n_fields"),
    ), optional=True,
)
REVISION_TABLES: tuple[TableSpec, ...] = tuple(
    TableSpec(f"Revision-target reliability: {split}", ("reliability", "revision", split), (
        _c("horizon", "horizon (months)"), _est("estimate", "reliability"), _c("n_fields"), _c("n_pairs"), _c("n_defined"),
    ), optional=True)
    for split in INTERVENTION_SPLITS
)

# Top-level keys that are not sections: the file's identity and the policy and track
# every section was computed under (``policy_sensitivity`` spans all policies).
DIAGNOSTICS_META: tuple[str, ...] = ("schema_version", "manifest_sha256", "diagnostics_version", "policy", "track")
DIAGNOSTIC_SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec(
        "reliability", "Reliability and ceiling",
        "Split-half reliability of the realised target compositions (Spearman–Brown corrected) and its square root, "
        "shown beside the posterior-predictive repeatability whose square root is the score ceiling: no forecast can "
        "be expected to correlate with a noisy target beyond it.",
        (
            TableSpec("Reliability by split", ("reliability", "splits"), (
                _c("split"), _est("estimate", "reliability"), _est("ceiling", "√reliability (split-half)"),
                _c("n_fields"), _c("n_episodes"), _c("n_defined"),
            ), keyed_by="split"),
            TableSpec("Reliability by episode", ("reliability", "episodes"), (
                _c("field_id"), _c("origin"), _c("split"), _c("n_papers"), _c("r_bar"), _c("n_splits_defined"), _c("reliability"),
            ), per_episode=True),
            POSTERIOR_TABLE, CEILING_GAP_TABLE, *REVISION_TABLES,
        ),
    ),
    SectionSpec(
        "change_rich", "Change-rich subset",
        "Episodes whose future composition differs from the recent one beyond sampling noise and is itself repeatable; "
        "chosen without looking at any model output.",
        (
            TableSpec("Change-rich episodes by split", ("change_rich", "splits"), (
                _c("split"), _c("n_episodes"), _c("n_defined"), _c("n_change_rich"), _c("n_fields"),
            ), keyed_by="split"),
            TableSpec("Change-rich tests by episode", ("change_rich", "episodes"), (
                _c("field_id"), _c("origin"), _c("split"), _c(JSD), _c("p_value"), _c("repeatability"), _c("change_rich"),
            ), per_episode=True),
            TableSpec("Spearman on the change-rich subset", ("change_rich", "scores"), (
                *_ENTRY, _est(), _c("n_fields"), _c("n_units"), _c("n_defined"),
            ), where=(("metric", PRIMARY.metric),)),
        ),
    ),
    SectionSpec(
        "residual_alignment", "Residual alignment",
        "Whether a prediction's departure from the EWMA forecast points the same way as the truth's departure, "
        "corrected by the median over relabelled predictions.",
        (
            TableSpec("Residual alignment", ("residual_alignment", "rows"), (
                *_ENTRY, _est(), _c("raw"), _c("null"), _c("n_fields"), _c("n_units"), _c("n_valid"), _c("n_defined"),
            ), split_by=("statistic",)),
            # The paper's two other cuts (§3.3, §4.2, D.3), on its statistic there (the corrected residual cosine);
            # every statistic is in the file.
            TableSpec("Residual cosine on the change-rich subset (corrected)", ("residual_alignment", "subsets"), (
                *_ENTRY, _est(), _c("n_fields"), _c("n_units"), _c("n_defined"),
            ), where=(("subset", "change_rich"), ("statistic", "direct_cosine")), optional=True),
            TableSpec("Residual cosine at the latest origin (corrected)", ("residual_alignment", "subsets"), (
                *_ENTRY, _c("origin"), _est(), _c("n_fields"), _c("n_units"), _c("n_defined"),
            ), where=(("subset", "latest_origin"), ("statistic", "direct_cosine")), optional=True),
            # Table 14: the retrieval contrasts on the partial-residual endpoint (positive: the left condition aligns better).
            TableSpec("Retrieval contrasts on the partial-residual endpoint", ("residual_alignment", "contrasts"), (
                _c("split"), _c("entry"), _c("contrast"), _est(), _c("n_fields"),
            ), where=(("statistic", "partial_residual"),), optional=True),
        ),
    ),
    SectionSpec(
        "revision_alignment", "Revision alignment",
        "Whether predictions revised between origins move with the realised compositions, and how stable both are.",
        (
            TableSpec("Revision alignment", ("revision_alignment", "rows"), (
                *_ENTRY, _est(), _c("n_fields"), _c("n_pairs"), _c("n_defined"),
            ), split_by=("statistic", "horizon")),
            TableSpec("Truth stability", ("revision_alignment", "truth_stability"), (
                _c("split"), _c("horizon"), _est(), _c("n_fields"), _c("n_pairs"), _c("n_defined"),
            )),
        ),
    ),
    SectionSpec(
        "policy_sensitivity", "Counting-policy sensitivity",
        "Headline scores under the four counting policies (canonical, split, single, flip), the largest change of each "
        "from its canonical value, whether each model keeps its canonical ordering of conditions, and the signs of the "
        "structural contrasts under every policy.",
        (
            TableSpec("Spearman by counting policy", ("policy_sensitivity", "rows"), (
                *_ENTRY, *(_c(f"estimates.{p}", p) for p in POLICIES), _c("max_change", "largest change from canonical"),
            ), where=(("metric", PRIMARY.metric),)),
            TableSpec("Ordering of conditions by counting policy", ("policy_sensitivity", "orderings"), (
                _c("split"), _c("entry"), _c("canonical_order", "canonical order"), _c("order_stable", "policies keeping it"),
                _c("n_policies", "policies"), _c("changed_policies", "policies changing it"),
                _c("max_change", "largest change from canonical"),
            ), optional=True),
            TableSpec("Structural contrasts by counting policy (Spearman)", ("policy_sensitivity", "contrast_signs"), (
                _c("split"), _c("entry"), _c("contrast"), *(_c(f"estimates.{p}", p) for p in POLICIES),
                _c("sign_kept", "sign kept"),
            ), optional=True),
        ),
    ),
    SectionSpec(
        "sampling_frame", "Sampling-frame sensitivity",
        "Headline scores restricted to fields eligible before 2024.",
        (
            TableSpec("Eligible fields by split", ("sampling_frame", "fields"), (
                _c("split"), _c("n_fields"), _c("n_eligible"),
            ), keyed_by="split"),
            TableSpec("Spearman on the eligible fields (canonical)", ("sampling_frame", "rows"), (
                *_ENTRY, _est(), _c("estimate_all_fields", "estimate, all fields"), _c("n_fields"),
            ), where=(("policy", PRIMARY.policy), ("metric", PRIMARY.metric))),
        ),
    ),
    SectionSpec(
        "search_evidence", "Search evidence",
        "What the recorded Search calls returned: the share of returned papers from the recent window, and how the "
        "directions of the papers a unit found agree with the recent and the future window (mean spearman over units).",
        (
            TableSpec("Search evidence by model and condition", ("search_evidence", "rows"), (
                _c("entry"), _c("condition"), _c("calls"), _c("units"), _c("recent_share", "all-call recent share"),
                _c("spearman_recent", "spearman vs recent"), _c("spearman_units", "units (recent)"),
                _c("spearman_future", "spearman vs future"), _c("spearman_future_units", "units (future)"),
                _c("called_units", "units with calls"), _c("calls_per_unit_mean", "calls per unit"),
                _c("calls_per_unit_max", "most calls in a unit"),
            )),
        ),
    ),
    SectionSpec(
        "unit_provenance", "Unit provenance",
        "What each model's unit files record about the endpoint (INTERVENTIONS.md §7): the reported model, request "
        "attempts, unit reruns, token usage and the output cap. Shown, never scored.",
        (
            TableSpec("Unit provenance by model and file", ("unit_provenance", "rows"), (
                _c("entry"), _c("file"), _c("units"), _c("response_models", "response model"),
                _c("attempts_max", "most attempts"), _c("retried", "units retried"),
                _c("unit_attempt_max", "most unit attempts"), _c("rerun", "units rerun"),
                _c("with_usage", "units with usage"), _c("input_tokens", "input tokens"), _c("output_tokens", "output tokens"),
                _c("reasoning_tokens", "reasoning tokens"), _c("max_output_tokens", "output cap"),
            )),
        ),
    ),
    SectionSpec(
        "parameters", "Parameters", "The constants the diagnostics were computed with.",
        (TableSpec("Parameters", ("parameters",), (_c("key", "parameter"), _c("value")), flatten=True),),
    ),
)


# ---------------------------------------------------------------- reading diagnostics.json by the layout
class Interval(NamedTuple):
    """A point estimate and its interval bounds (any may be None)."""

    estimate: Any
    ci_low: Any
    ci_high: Any


@dataclass(frozen=True)
class Table:
    """A declared table filled from diagnostics.json. Cells are the JSON values
    (an :class:`Interval` for an interval column); nothing is formatted."""

    title: str
    columns: tuple[ColumnSpec, ...]
    rows: tuple[tuple[Any, ...], ...]
    per_episode: bool = False


@dataclass(frozen=True)
class Section:
    """A declared section (its key, title and intro) with its tables filled from diagnostics.json."""

    spec: SectionSpec
    tables: tuple[Table, ...]
    present: bool  # False when diagnostics.json has no such section

    @property
    def key(self) -> str:
        return self.spec.key


def _lookup(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, Mapping) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _leaves(obj: Any, prefix: str = "") -> Iterator[dict[str, Any]]:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{name}.")
        else:
            yield {"key": name, "value": value}


def table_records(spec: TableSpec, diagnostics: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The row objects a declared table reads from a diagnostics.json body (before grouping)."""
    found = _lookup(diagnostics, spec.rows)
    if spec.flatten:
        return list(_leaves(found)) if isinstance(found, Mapping) else []
    if spec.keyed_by is not None:
        if not isinstance(found, Mapping):
            return []
        return [{spec.keyed_by: key, **value} for key, value in found.items() if isinstance(value, Mapping)]
    if not isinstance(found, list):
        return []
    return [r for r in found if isinstance(r, Mapping) and all(r.get(k) == v for k, v in spec.where)]


def _cell(record: Mapping[str, Any], column: ColumnSpec) -> Any:
    value = _lookup(record, tuple(column.key.split(".")))
    if column.interval:
        return Interval(value, record.get(column.ci_low), record.get(column.ci_high))  # type: ignore[arg-type]
    return value


def _groups(spec: TableSpec, records: list[Mapping[str, Any]]) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    if not spec.split_by:
        yield spec.title, records
        return
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(tuple(record.get(k) for k in spec.split_by), []).append(record)
    for values, members in groups.items():
        label = ", ".join(f"{k} {v}" if k == "horizon" else str(v) for k, v in zip(spec.split_by, values))
        yield f"{spec.title}: {label}", members


def diagnostic_tables(diagnostics: Mapping[str, Any]) -> list[Section]:
    """Every declared section of a diagnostics.json body, with its tables filled
    in declaration order (rows in file order). A section the file lacks comes
    back with ``present=False`` and no tables."""
    sections = []
    for spec in DIAGNOSTIC_SECTIONS:
        present = isinstance(diagnostics.get(spec.key), Mapping)
        tables: list[Table] = []
        for table in spec.tables if present else ():
            if table.optional and _lookup(diagnostics, table.rows) is None:
                continue
            for title, records in _groups(table, table_records(table, diagnostics)):
                rows = tuple(tuple(_cell(r, c) for c in table.columns) for r in records)
                tables.append(Table(title, table.columns, rows, table.per_episode))
        sections.append(Section(spec, tuple(tables), present))
    return sections
