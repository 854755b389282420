"""``lineage-v1``: the declared instrument that labels the sample's antecedents (INSPIRE.md §6).

No citation graph ships with the committed papers, so labels come from two
rules over the papers alone, for a target P first posted at t_P with cutoff D:

* **named** — an earlier paper whose title opens with a coined name
  (``"LoRA: …"``: one token of letters, digits, ``-`` or ``.`` with at least
  one capital, before the first colon) that is unique (no other title holds it
  as a whole token) and that P's abstract contains as a token or as a
  hyphen/dot-joined part of one (``LoRA-based`` names LoRA). Dated in
  [shift(t_P, −48), D) it is judged **T3**; dated in [D, t_P) it is a
  concurrent reference.
* **neighbours** — the :data:`BIBLIOGRAPHY` closest papers by TF-IDF cosine
  (>= :data:`MIN_COSINE`) dated in [shift(t_P, −48), t_P), named ones and P
  excluded. Those dated before D fill the labels up to ``max_graded``: the first
  three **T2**, the rest **T1**; later pre-cutoff ones are judged **T0**; those
  dated on or after D are concurrent references.

A label's role is infrastructural when its title says dataset, benchmark,
corpus or toolkit (singular or plural), else conceptual. Nobody votes: every
judgement records ``n_votes`` 0 and a rationale naming the rule.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Iterable, Mapping, Sequence

import numpy as np

from rapgen.kinds.inspire.archive import cutoff_of, recency_floor
from rapgen.kinds.inspire.sample.papers import SourcePaper

INSTRUMENT = "lineage-v1"
BIBLIOGRAPHY = 15  # neighbour candidates per target
MIN_COSINE = 0.2
N_T2 = 3
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*")
_NAME = re.compile(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*")
_SEP = re.compile(r"[-.]")
_INFRA = re.compile(r"\b(datasets?|benchmarks?|corpus|corpora|toolkits?)\b", re.IGNORECASE)
MAX_PARTS = 4  # a name joins at most this many separated parts


def spans(text: str) -> set[str]:
    """Every run of 1..MAX_PARTS consecutive parts of each token (``GPT-4-based`` ->
    ``GPT``, ``GPT-4``, ``GPT-4-based``, ``4``, ``4-based``, ``based``): what a name can match."""
    out: set[str] = set()
    for tok in _TOKEN.findall(text):
        parts = _SEP.split(tok)
        seps = _SEP.findall(tok)
        for i in range(len(parts)):
            s = parts[i]
            out.add(s)
            for j in range(i + 1, min(len(parts), i + MAX_PARTS)):
                s += seps[j - 1] + parts[j]
                out.add(s)
    return out


def coined_name(title: str) -> str | None:
    """The name a title opens with (``"LoRA: …"`` -> ``LoRA``), or None."""
    head, colon, _ = title.partition(":")
    head = head.strip()
    if not colon or len(head) < 2 or _NAME.fullmatch(head) is None or not any(ch.isupper() for ch in head):
        return None
    return head


def unique_names(papers: Sequence[SourcePaper]) -> dict[str, int]:
    """Coined name -> index of the one paper whose title it opens and that no other title
    holds as a whole token (``LoRA-based`` in another title is another token)."""
    in_titles: Counter = Counter()
    for p in papers:
        in_titles.update(set(_TOKEN.findall(p.title)))
    out = {}
    for k, p in enumerate(papers):
        name = coined_name(p.title)
        if name is not None and in_titles[name] == 1:
            out[name] = k
    return out


def role_of(title: str) -> str:
    return "infrastructural" if _INFRA.search(title) else "conceptual"


@dataclass(frozen=True)
class Candidate:
    """A reference the instrument proposes, with its judged tier (None: not judged)."""

    index: int  # into the source papers
    tier: str | None
    role: str | None
    rationale: str
    name: str | None = None  # the coined name, for a named antecedent


def named_antecedents(target: int, papers: Sequence[SourcePaper], names: Mapping[str, int]) -> list[tuple[str, int]]:
    """(name, paper index) of every unique coined name in the target's abstract of a paper
    posted before the target, by name."""
    t_p = papers[target].first_submitted
    found = [(n, names[n]) for n in spans(papers[target].abstract) if n in names]
    return sorted((n, k) for n, k in found if k != target and papers[k].first_submitted < t_p)


def lineage(target: int, papers: Sequence[SourcePaper], names: Mapping[str, int], cosine: np.ndarray, *, max_graded: int,
            days: np.ndarray) -> list[Candidate]:
    """The target's references under lineage-v1. ``cosine``: the target's TF-IDF cosine
    with every paper; ``days``: each paper's date as an ordinal (for the windows)."""
    t_p = papers[target].first_submitted
    cutoff, floor = cutoff_of(t_p), recency_floor(t_p)
    out: list[Candidate] = []
    named = named_antecedents(target, papers, names)
    for name, k in named:
        d = papers[k].first_submitted
        if floor <= d < cutoff:
            out.append(Candidate(k, "T3", role_of(papers[k].title), f"{INSTRUMENT}: the target's abstract names {name}", name))
        else:  # concurrent (on or after the cutoff) or older than the recency floor: not judged
            out.append(Candidate(k, None, None, f"{INSTRUMENT}: the target's abstract names {name} (not judged: outside the window)", name))
    taken = {k for _, k in named} | {target}
    window = (days >= floor.toordinal()) & (days < t_p.toordinal()) & (cosine >= MIN_COSINE)
    pool = [k for k in np.flatnonzero(window).tolist() if k not in taken]
    ranked = sorted(pool, key=lambda k: (-cosine[k], papers[k].arxiv_id))[:BIBLIOGRAPHY]
    room = max_graded - sum(1 for c in out if c.tier == "T3")
    rank = 0
    for k in ranked:
        why = f"{INSTRUMENT}: TF-IDF neighbour, cosine {cosine[k]:.6f}"
        if papers[k].first_submitted >= cutoff:
            out.append(Candidate(k, None, None, why))
            continue
        rank += 1
        tier = ("T2" if rank <= N_T2 else "T1") if rank <= room else "T0"
        out.append(Candidate(k, tier, role_of(papers[k].title), f"{why}, rank {rank}"))
    return out


def names_of(candidates: Iterable[Candidate]) -> list[str]:
    """The coined names of the judged (T3) named antecedents."""
    return sorted({c.name for c in candidates if c.name and c.tier == "T3"})


def days_of(papers: Sequence[SourcePaper]) -> np.ndarray:
    return np.array([p.first_submitted.toordinal() for p in papers], dtype=np.int64)


def in_half(d: date, year: int, half: int) -> bool:
    """Whether ``d`` lies in the given half-year (1: Jan–Jun, 2: Jul–Dec)."""
    return d.year == year and (d.month <= 6) == (half == 1)
