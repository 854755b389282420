"""RAP (Research Attention Prediction), the first benchmark kind.

A unit is (field, origin, condition): an agent's forecast of how a field's next six
months of papers split over its eight research directions. RAP's code is the engine's
first tenant and stays where it is (``rapgen.archive``, ``rapgen.scores``,
``rapgen.search``, ``rapgen.site``); this package is its declaration, read by the
orchestrating stages: the archive format and release rhythm, the unit and item, the
metrics and headline, tracks, the counting-policy axis, the bootstrap clusters, the
Search tool, the site and the replay step. Every word of RAP's vocabulary has one home
in those modules; :data:`VOCABULARY` gathers them as data.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, ORACLE_CONDITIONS, SEARCH_CONDITIONS, SLOTS, SPLITS, STATE_CONDITIONS
from rapgen.kinds.base import BenchmarkKind, KitCommand, KitSpec
from rapgen.kinds.rap.archive import ARCHIVE
from rapgen.kinds.rap.agents import reference_list, reference_run
from rapgen.kinds.rap.replay import intervention_records, replay, write_counterfactual
from rapgen.kinds.rap.scores import AXES, CLUSTERS, METRICS, PRIMARY, TRACKS, score, summary, write
from rapgen.kinds.rap.search import SEARCH
from rapgen.kinds.rap.site import SITE
from rapgen.kit import PROMPT_OPTIONS, RUN_OPTIONS, SERVE_OPTIONS, rap_prompt, rap_run, rap_serve
from rapgen.scores import BASELINE_CONDITION, CONTRASTS, HISTORY_TRACKS, POLICIES


@dataclass(frozen=True)
class Vocabulary:
    """RAP's words, each from its one home: the conditions a unit may have (and which of them
    forecast, answer the State question or use Search), the splits, the eight direction slots,
    the counting policies, the baselines' condition and the contrasts the scorer writes; the
    exact-history conditions of the intervention records and every track a release is scored on."""

    conditions: tuple[str, ...]
    forecast_conditions: tuple[str, ...]
    state_conditions: tuple[str, ...]
    search_conditions: tuple[str, ...]
    splits: tuple[str, ...]
    slots: tuple[str, ...]
    policies: tuple[str, ...]
    baseline_condition: str
    contrasts: tuple[str, ...]
    oracle_conditions: tuple[str, ...]
    tracks: tuple[str, ...]


VOCABULARY = Vocabulary(CONDITIONS, FORECAST_CONDITIONS, STATE_CONDITIONS, SEARCH_CONDITIONS, SPLITS, SLOTS, POLICIES,
                        BASELINE_CONDITION, CONTRASTS, ORACLE_CONDITIONS, HISTORY_TRACKS)

# The kit's commands for a RAP root: the kit stage's RAP steps and the reference agents.
KIT = KitSpec(prompt=KitCommand(rap_prompt, PROMPT_OPTIONS), serve=KitCommand(rap_serve, SERVE_OPTIONS),
              run=KitCommand(rap_run, RUN_OPTIONS), reference_list=reference_list, reference_run=reference_run)

__all__ = ["KIND", "KIT", "VOCABULARY", "Vocabulary", "intervention_records", "write_counterfactual"]

KIND = BenchmarkKind(
    name="rap", archive=ARCHIVE, unit=("field_id", "origin", "condition"), item="field_id",
    metrics=METRICS, primary=PRIMARY, tracks=TRACKS, axes=AXES, clusters=CLUSTERS,
    score=score, write_scores=write, summary=summary, replay=replay,
    search=SEARCH, kit=KIT, site=SITE, vocabulary=VOCABULARY,
)
