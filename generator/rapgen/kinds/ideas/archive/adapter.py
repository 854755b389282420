"""``raw.jsonl`` and adapter v1: a raw proposal becomes the structured idea (IDEAS.md §3).

Adapter v1, the paper's ``proposal_to_idea_prediction`` made exact:

1. delete every ``<think>…</think>`` span (an unclosed ``<think>`` runs to the end);
2. ``title`` = the first non-blank line, stripped of spaces and of leading ``#``;
3. ``rationale`` = (gap + " " + the other non-blank lines, each stripped, joined
   by " "), stripped, cut to 500 code points;
4. ``approach`` = operator + ": " + base_direction; ``key_terms`` = [].

``raw_sha256`` = H({"text", "innovation_gap", "operator", "base_direction"}),
H being INTERVENTIONS.md §0's canonical JSON hash. Verify re-runs the adapter
on every raw line and compares both the digest and the four fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rapgen.archive import Finding, canonical_hash
from rapgen.kinds.ideas.archive.lines import integer, invariant, keys, read_lines, string, unique
from rapgen.kinds.ideas.archive.predictions import CONDITION, Idea, Predictions

ADAPTER = "v1"
RAW_KEYS = ("episode_id", "condition", "rank", "text", "innovation_gap", "operator", "base_direction")
RAW_FIELDS = RAW_KEYS[3:]
MAX_RATIONALE = 500
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


@dataclass(frozen=True)
class RawIdea:
    episode_id: str
    condition: str
    rank: int
    text: str
    innovation_gap: str
    operator: str
    base_direction: str
    line: int = 0

    def fields(self) -> dict:
        return {k: getattr(self, k) for k in RAW_FIELDS}


def raw_sha256(raw: RawIdea) -> str:
    return canonical_hash(raw.fields())


def adapt(text: str, innovation_gap: str, operator: str, base_direction: str) -> dict:
    """Adapter v1: the idea fields (title, rationale, approach, key_terms) of one raw proposal."""
    lines = [line.strip() for line in _THINK.sub("", text).split("\n")]
    body = [line for line in lines if line]
    title = body[0].lstrip("#").strip() if body else ""
    rationale = (innovation_gap + " " + " ".join(body[1:])).strip()[:MAX_RATIONALE]
    return {"title": title, "rationale": rationale, "approach": f"{operator}: {base_direction}", "key_terms": []}


def _raw(obj: dict, n: int) -> RawIdea:
    keys(obj, RAW_KEYS)
    return RawIdea(string(obj, "episode_id"), string(obj, "condition", pattern=CONDITION), integer(obj, "rank", 1),
                   *(string(obj, k) for k in RAW_FIELDS), line=n)


def parse_raw(path: str, data: bytes) -> tuple[dict[tuple[str, str, int], RawIdea], list[Finding]]:
    findings: list[Finding] = []
    rows = unique(path, read_lines(path, data, findings, _raw), _raw_key, lambda r: " ".join(map(str, _raw_key(r))), findings)
    return {_raw_key(r): r for _, r in rows}, findings


def _raw_key(raw: RawIdea) -> tuple[str, str, int]:
    return (raw.episode_id, raw.condition, raw.rank)


def check_raw(pred_path: str, predictions: Predictions, raw_path: str, raws: Mapping[tuple[str, str, int], RawIdea] | None) -> list[Finding]:
    """Every idea with a ``raw_sha256`` has its raw line, the digest matches, and adapter v1
    gives the idea's fields; every raw line belongs to such an idea."""
    out: list[Finding] = []
    ideas: dict[tuple[str, str, int], Idea] = {i.key: i for i in predictions.all_ideas()}
    for key, idea in ideas.items():
        if idea.raw_sha256 is None:
            continue
        raw = (raws or {}).get(key)
        if raw is None:
            where = f"{raw_path} has no line for it" if raws is not None else f"there is no {raw_path}"
            out.append(invariant(pred_path, idea.line, f"{' '.join(map(str, key))} has a raw_sha256 but {where}"))
            continue
        if raw_sha256(raw) != idea.raw_sha256:
            out.append(invariant(raw_path, raw.line, f"{' '.join(map(str, key))}: H(raw) differs from the prediction's raw_sha256",
                                 expected=idea.raw_sha256, actual=raw_sha256(raw)))
            continue
        fields = adapt(raw.text, raw.innovation_gap, raw.operator, raw.base_direction)
        differ = [k for k, v in fields.items() if v != idea.fields()[k]]
        if differ:
            out.append(invariant(pred_path, idea.line, f"{' '.join(map(str, key))}: {differ[0]} is not what adapter {ADAPTER} makes of its raw line "
                                                      f"({raw_path} line {raw.line})", expected=repr(fields[differ[0]])[:80],
                                 actual=repr(idea.fields()[differ[0]])[:80]))
    for key, raw in (raws or {}).items():
        if key not in ideas or ideas[key].raw_sha256 is None:
            out.append(invariant(raw_path, raw.line, f"{' '.join(map(str, key))} is no idea of {pred_path} with a raw_sha256"))
    return out
