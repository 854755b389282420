"""The Ideas kind (IDEAS.md): idea forecasting, scored from the archived evaluator files.

In an episode (topic, monthly cutoff) a model proposes at most five ranked
ideas from the topic's papers dated before the cutoff; an evaluator retrieves
each idea's ten nearest future papers of the topic and judges them; rapgen
re-derives gates, greedy credits and the metrics (Hit@5 primary) from the
files, with topic-clustered intervals.

- :mod:`~rapgen.kinds.ideas.archive` — the files and their invariants, the ``ideas-archive`` format;
- :mod:`~rapgen.kinds.ideas.scores` — gates, credit, metrics, the six score files;
- :mod:`~rapgen.kinds.ideas.kit` — the evaluator (retrieval, judges, cache; ``rapgen evaluate``) and an episode's prompt;
- :mod:`~rapgen.kinds.ideas.site` — the pages, in English and Chinese;
- :mod:`~rapgen.kinds.ideas.review` — what the pull-request check reads of a model folder;
- :mod:`~rapgen.kinds.ideas.sample` — the sample archive built from the committed cs.CL papers, and a
  synthetic archive at the benchmark's size or a small one (``synth``).

:data:`KIND` declares it to the engine (:mod:`rapgen.kinds.base`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rapgen.kinds.base import BenchmarkKind, KitCommand, KitSpec
from rapgen.kinds.ideas.archive.config import GATE_NAMES
from rapgen.kinds.ideas.archive.history import IDEAS_HISTORY, window_folder
from rapgen.kinds.ideas.archive.kind import ARCHIVE, IdeasRelease
from rapgen.kinds.ideas.review import REVIEW
from rapgen.kinds.ideas.kit.prompt import prompt as episode_prompt
from rapgen.kinds.ideas.kit.run import evaluate
from rapgen.kinds.ideas.sample.build import sample as sample_step
from rapgen.kinds.ideas.sample.synth import synth
from rapgen.kinds.ideas.scores.kind import AXES, CLUSTERS, FILES, PRIMARY, TRACKS, IdeasScores, score, summary, write_scores
from rapgen.kinds.ideas.scores.metrics import METRICS
from rapgen.kinds.ideas.scores.units import SPLIT
from rapgen.kinds.ideas.site import SITE


@dataclass(frozen=True)
class Vocabulary:
    """Ideas' words as data: the one split, the gates, the score files."""

    split: str
    gates: tuple[str, ...]
    score_files: tuple[str, ...]


VOCABULARY = Vocabulary(SPLIT, GATE_NAMES, FILES)

KIND = BenchmarkKind(
    name="ideas", archive=ARCHIVE, unit=("episode_id", "condition"), item="episode_id",
    metrics=METRICS, primary=PRIMARY, tracks=TRACKS, axes=AXES, clusters=CLUSTERS,
    score=score, write_scores=write_scores, summary=summary, sample=sample_step, synth=synth, evaluate=evaluate, site=SITE,
    review=REVIEW, vocabulary=VOCABULARY, kit=KitSpec(prompt=KitCommand(episode_prompt, ("episode_id",))),
)

__all__ = ["IDEAS_HISTORY", "KIND", "VOCABULARY", "IdeasRelease", "IdeasScores", "window_folder"]
