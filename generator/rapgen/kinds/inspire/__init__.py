"""The Inspire kind: literature search for open research problems (INSPIRE.md).

An instance is a solution-redacted research brief with a cutoff three calendar
months before its hidden target paper; an agent searches the corpus before the
cutoff and submits at most ten ranked arXiv ids, scored against the target's
graded antecedents (nDCG@10 primary) and, through its own Search traces, along
the exposure -> selection -> ranking funnel.

Subpackages, by the stage each feeds (KINDS.md §9):

* :mod:`.archive` — the files and their invariants, parsed from bytes into
  frozen records with findings (never an exception for bad input);
* :mod:`.scores` — the cleaned list, exposure, the fifteen metrics, gain maps,
  views and the per-cluster sums of the bootstrap;
* :mod:`.search` — the corpus shard of an instance, trace replay against any
  search callable, and the deterministic reference agents;
* :mod:`.sample` — the sample archive built from the committed cs.CL papers;
* :mod:`.site` — the pages under ``/inspire/``, in English and Chinese;
* :mod:`.review` — what the pull-request check reads of a model folder.

This module declares the kind (:data:`KIND`, KINDS.md §3) for the registry; the
entry points the commands call are its fields: ``KIND.archive.check`` (verify's
stage 5, chosen by ARCHIVE.json's ``format``), ``KIND.archive.open`` (a release
view), ``KIND.score`` / ``KIND.write_scores`` / ``KIND.summary``, ``KIND.replay``,
``KIND.kit`` (:data:`.kit.KIT`: the steps of the kit's commands over its prompt, session, servers, agent and reference runs),
``KIND.site`` (the pages).
"""

from __future__ import annotations

from dataclasses import dataclass

import rapgen.kinds.inspire.kit as kit
from rapgen.kinds.base import AxisSpec, BenchmarkKind, ClusterSpec, MetricSpec, Primary, SearchSpec, TrackSpec
from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.kind import INSPIRE_ARCHIVE, INSPIRE_HISTORY, InspireRelease, check_inspire
from rapgen.kinds.inspire.review import REVIEW
from rapgen.kinds.inspire.scores import METRICS, PRIMARY, view_mask
from rapgen.kinds.inspire.scores.columns import item_values
from rapgen.kinds.inspire.scores.score import HEADLINE, InspireScores, score, score_files, summary, write_scores
from rapgen.kinds.inspire.search import SEARCH_TOOL, shard_key
from rapgen.kinds.inspire.site import SITE


@dataclass(frozen=True)
class Vocabulary:
    """Inspire's words, each from its one home (:mod:`.archive.layout`)."""

    splits: tuple[str, ...] = layout.SPLITS
    conditions: tuple[str, ...] = layout.CONDITIONS
    views: tuple[str, ...] = layout.VIEWS
    gain_maps: tuple[str, ...] = layout.GAIN_MAPS
    clusters: tuple[str, ...] = layout.CLUSTERS
    statuses: tuple[str, ...] = layout.STATUSES
    tiers: tuple[str, ...] = layout.TIERS
    roles: tuple[str, ...] = layout.ROLES
    primary_split: str = layout.PRIMARY_SPLIT
    primary_condition: str = layout.PRIMARY_CONDITION


VOCABULARY = Vocabulary()
_VIEW_LABELS = {"clean": "Clean targets", "all": "All targets", "flagged": "Flagged targets"}


def _metric(m) -> MetricSpec:
    # fn: the per-target values (ItemArrays of one gain map -> one value per target, NaN where undefined;
    # a ratio metric's numerators, its denominators being item_values(...)[1])
    return MetricSpec(m.name, m.label, m.higher_is_better, m.form, m.missing, m.description,
                      lambda arrays, m=m: item_values(m, arrays)[0])


def _view(name: str) -> TrackSpec:
    return TrackSpec(name, _VIEW_LABELS[name], item_mask=lambda release, items, v=name: view_mask(items, release.targets, v))


def _sample(out, *, source=".", force: bool = False) -> dict:
    """``rapgen sample build --kind inspire``: the sample from the committed papers under ``source``."""
    from rapgen.kinds.inspire.sample import build_inspire_sample

    return build_inspire_sample(source, out, force=force)


def _synth(out, *, scale: str = "full", seed: int = 0, force: bool = False) -> dict:
    """``rapgen synth --kind inspire``: an entirely synthetic archive at full or test size, checked and
    replayed before it is moved into place."""
    from rapgen.kinds.inspire.sample import synth_step

    return synth_step(out, scale=scale, seed=seed, force=force)


def _replay(release, scores_dir=None, *, beside=None, **options):
    """``rapgen build``'s replay step (``scores_dir``: replay.json goes there) and ``rapgen replay``'s
    (``options``: ``models``, ``jobs``, ``cache_dir``, ``log``): False when no model has calls, else a
    ``ReplayOutcome`` (what the command prints, whether every call reproduced, the first that did not).
    ``beside``: the build's score step, run first (the corpus replay is short)."""
    from rapgen.kinds.inspire.search import replay_into

    if beside is not None:
        beside()
    return replay_into(release, scores_dir, **options)


SEARCH = SearchSpec(
    corpus_files=(layout.CORPUS_PARQUET,),
    groups_sql=f"SELECT '{layout.SEARCH_GROUP}' AS group_id",  # one group: the whole corpus
    manifest=(layout.MANIFEST_JSONL,),
    unit_key=("instance_id", "condition"),
    shard_of=shard_key,  # an instance -> (corpus, None, its cutoff)
    tools=(SEARCH_TOOL,),
)

KIND = BenchmarkKind(
    name="inspire", archive=INSPIRE_ARCHIVE, unit=("instance_id", "condition"), item="instance_id",
    metrics=tuple(_metric(m) for m in METRICS),
    primary=Primary(PRIMARY, HEADLINE["track"], (("gains", HEADLINE["gains"]), ("cluster", HEADLINE["cluster"])),
                    HEADLINE["condition"]),
    tracks=tuple(_view(v) for v in layout.VIEWS),
    axes=(AxisSpec("gains", layout.GAIN_MAPS, HEADLINE["gains"]), AxisSpec("cluster", layout.CLUSTERS, HEADLINE["cluster"])),
    clusters=(ClusterSpec("target", lambda target: target.instance_id, primary=True),
              ClusterSpec("topic", lambda target: target.topic)),
    score=score, write_scores=write_scores, summary=summary, replay=_replay, search=SEARCH, kit=kit.KIT, sample=_sample, synth=_synth,
    site=SITE, review=REVIEW, vocabulary=VOCABULARY,
)

__all__ = ["KIND", "SEARCH", "VOCABULARY", "Vocabulary", "INSPIRE_HISTORY", "InspireRelease", "InspireScores", "check_inspire",
           "score", "score_files", "summary", "write_scores"]
