"""The sample's two reference models and its two lexical judges (IDEAS.md §8).

Both models are mechanical and see only an episode's history (papers dated
before the cutoff), under the strategy ``direct``:

- ``recent-titles``: the five newest history papers (``first_submitted`` ↓,
  then ``arxiv_id`` ↓), each restated as an idea: its title, the first
  sentence of its abstract as rationale, ``"revisit: " + title`` as approach,
  its first five title tokens as key terms.
- ``rising-terms``: the five title bigrams that grew most in the last month of
  history against the months before (growth = (last + 1) / (mean earlier + 1),
  at least two titles last month; ties by count ↓, then the bigram ↑), each
  written as a raw proposal and turned into its idea by adapter v1, so the
  sample carries ``raw.jsonl`` and exercises the adapter check.

The judges differ only in their thresholds: ``lexical-a`` (primary) and the
stricter ``lexical-b``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date

from rapgen.archive import add_months
from rapgen.kinds.ideas.archive.adapter import RawIdea, adapt, raw_sha256
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.kit.embedding import tokens
from rapgen.kinds.ideas.kit.judges import LexicalJudge

CONDITION = "direct"
TOP_K = 5
JUDGES = (
    LexicalJudge("lexical-a", problem=(0.25, 0.4, 0.55), method=(0.25, 0.45, 0.65), realisation=(0.35, 0.6, 0.8)),
    LexicalJudge("lexical-b", problem=(0.3, 0.45, 0.6), method=(0.3, 0.5, 0.7), realisation=(0.4, 0.65, 0.85)),
)
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def _idea(eid: str, rank: int, fields: Mapping, raw_sha256: str | None = None) -> dict:
    return {"episode_id": eid, "condition": CONDITION, "rank": rank, **fields, "raw_sha256": raw_sha256}


def empty_line(eid: str) -> dict:
    return {"episode_id": eid, "condition": CONDITION, "rank": None, "status": "empty"}


def recent_titles(eid: str, history: Sequence[Paper]) -> list[dict]:
    newest = sorted(history, key=lambda p: (p.first_submitted, p.arxiv_id.encode("utf-8")), reverse=True)[:TOP_K]
    out = []
    for rank, p in enumerate(newest, start=1):
        first = _SENTENCE.split(p.abstract.strip(), maxsplit=1)[0] if p.abstract.strip() else ""
        out.append(_idea(eid, rank, {"title": p.title, "rationale": first[:500], "approach": f"revisit: {p.title}",
                                     "key_terms": list(dict.fromkeys(tokens(p.title)))[:5]}))
    return out or [empty_line(eid)]


def _bigrams(title: str) -> set[str]:
    words = tokens(title)
    return {f"{a} {b}" for a, b in zip(words, words[1:])}


def rising_bigrams(history: Sequence[Paper], cutoff: date, start: date) -> list[tuple[str, int, float]]:
    """(bigram, titles last month, mean titles per earlier month) of the five fastest-growing bigrams."""
    last_from = add_months(cutoff, -1)
    earlier_months = max(1, (last_from.year - start.year) * 12 + last_from.month - start.month)
    last, earlier = Counter(), Counter()
    for p in history:
        (last if p.first_submitted >= last_from else earlier).update(_bigrams(p.title))
    scored = [(b, n, earlier[b] / earlier_months) for b, n in last.items() if n >= 2]
    scored.sort(key=lambda x: (-(x[1] + 1) / (x[2] + 1), -x[1], x[0]))
    return scored[:TOP_K]


def rising_terms(eid: str, topic_name: str, history: Sequence[Paper], cutoff: date, start: date) -> tuple[list[dict], list[dict]]:
    """(predictions lines, raw.jsonl lines) of one episode."""
    lines, raws = [], []
    for rank, (bigram, n, mean) in enumerate(rising_bigrams(history, cutoff, start), start=1):
        raw = RawIdea(eid, CONDITION, rank,
                      text=f"## {bigram} for {topic_name}\nBuild on the {n} recent titles that use {bigram}.",
                      innovation_gap=f"'{bigram}' rose to {n} titles last month from {mean:.2f} a month before.",
                      operator="extend", base_direction=f"{bigram} in {topic_name}")
        fields = adapt(raw.text, raw.innovation_gap, raw.operator, raw.base_direction)
        lines.append(_idea(eid, rank, fields, raw_sha256(raw)))
        raws.append({"episode_id": eid, "condition": CONDITION, "rank": rank, **raw.fields()})
    return (lines or [empty_line(eid)]), raws


KNOWLEDGE_CUTOFF = "2024-03-31"  # the day before the sample's first paper: a mechanical model knows nothing else


def model_json(model_id: str, display_name: str, notes: str) -> dict:
    """ARCHIVE.md's model.json for a mechanical reference model: it was trained on nothing, so its
    knowledge ends before the sample's first paper and it takes part in ``forecast_strict``."""
    return {"model_id": model_id, "display_name": display_name, "provider": "rapgen (reference model)", "proprietary": False,
            "knowledge_cutoff": KNOWLEDGE_CUTOFF, "release_date": None,
            "cutoff_source": "mechanical: reads only the episode's history, no pretrained knowledge",
            "diagnostic": False, "submitted": "2025-07-01", "contact": "maintainers", "notes": notes}
