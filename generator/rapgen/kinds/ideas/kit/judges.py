"""Judges of (idea, candidate paper) pairs: P (problem), M (method), S (realisation), each 0–3.

- :class:`LexicalJudge` — the sample's: each score is the number of its three
  thresholds that a token-overlap share reaches (tokens as ``tfidf-sample-v1``
  makes them; the candidate is its title and abstract):
  P = share of the idea's title and rationale tokens found in the candidate,
  M = the same for its approach and key terms, S = for its title alone.
  The rule is the judge's ``rule`` in judges.jsonl and its hash the
  ``prompt_sha256``, so a changed threshold changes every cache key.
- :class:`ChatJudge` — an OpenAI-compatible chat endpoint at the recorded
  temperature (0 unless judges.jsonl says otherwise) with the recorded
  :data:`PROMPT` (its SHA-256 is the ``prompt_sha256``);
  the reply must be a JSON object with integer P, M, S in 0–3, or the
  judgment is ``failed`` (null scores, counted, passing no gate). An endpoint
  that cannot be reached raises :class:`~rapgen.kit.EndpointError`: that is
  no judgment, and the run stops so a rerun can resume.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from rapgen.archive import canonical_hash
from rapgen.io import dumps_line
from rapgen.kinds.ideas.kit.embedding import tokens
from rapgen.kit import ChatClient, ReplyProblem, decode_json, read_turn

LEXICAL = "lexical-overlap-v1"
LEXICAL_SERVER = "rapgen-ideas-lexical-1"
SCORE_KEYS = ("P", "M", "S")


@dataclass(frozen=True)
class Verdict:
    P: int | None
    M: int | None
    S: int | None

    @property
    def status(self) -> str:
        return "failed" if self.P is None else "ok"


FAILED = Verdict(None, None, None)


class Judge(Protocol):
    judge_id: str

    def record(self) -> dict: ...

    def judge(self, idea: Mapping, title: str, abstract: str) -> Verdict: ...


def judge_line(record: Mapping) -> bytes:
    """The judges.jsonl line of a judge (canonical JSONL, without the newline)."""
    return dumps_line(dict(record)).encode("utf-8")


def _share(words: set[str], target: set[str]) -> float:
    return len(words & target) / len(words) if words else 0.0


def _level(share: float, thresholds) -> int:
    return sum(1 for t in thresholds if share >= t)


@dataclass(frozen=True)
class LexicalJudge:
    judge_id: str
    problem: tuple[float, float, float]
    method: tuple[float, float, float]
    realisation: tuple[float, float, float]

    def rule(self) -> dict:
        return {"name": LEXICAL, "problem": list(self.problem), "method": list(self.method), "realisation": list(self.realisation)}

    def record(self) -> dict:
        return {"judge_id": self.judge_id, "serving_model": LEXICAL, "alias": self.judge_id, "prompt_sha256": canonical_hash(self.rule()),
                "temperature": 0, "server_version": LEXICAL_SERVER, "rule": self.rule()}

    def judge(self, idea: Mapping, title: str, abstract: str) -> Verdict:
        target = set(tokens(f"{title}\n{abstract}"))
        problem = set(tokens(f"{idea['title']}\n{idea['rationale']}"))
        method = set(tokens("\n".join([idea["approach"], *idea["key_terms"]])))
        realisation = set(tokens(idea["title"]))
        return Verdict(_level(_share(problem, target), self.problem), _level(_share(method, target), self.method),
                       _level(_share(realisation, target), self.realisation))


def lexical_from_rule(judge_id: str, rule: Mapping) -> LexicalJudge:
    """The lexical judge a judges.jsonl ``rule`` records (ValueError if it is not one)."""
    if rule.get("name") != LEXICAL:
        raise ValueError(f"judge {judge_id}: rule {rule.get('name')!r} is not {LEXICAL}")
    parts = []
    for key in ("problem", "method", "realisation"):
        value = rule.get(key)
        if not isinstance(value, list) or len(value) != 3 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise ValueError(f"judge {judge_id}: rule {key} must be three numbers")
        parts.append(tuple(float(v) for v in value))
    return LexicalJudge(judge_id, *parts)


PROMPT = """You judge whether a published paper realises a forecast research idea.
Score three dimensions, each an integer from 0 to 3:
P (problem): 0 unrelated problem; 1 same broad area; 2 same task; 3 the same task and failure mode.
M (method): 0 no shared mechanism; 1 loosely related; 2 the same kind of method; 3 the same method.
S (realisation): 0 the paper does not realise the idea; 1 partially; 2 the core idea with different details; 3 a close realisation.
Topical similarity alone is not agreement on method. Answer with one JSON object and nothing else:
{"P": <0-3>, "M": <0-3>, "S": <0-3>}"""
PROMPT_SHA256 = hashlib.sha256(PROMPT.encode("utf-8")).hexdigest()


def _user_message(idea: Mapping, title: str, abstract: str) -> str:
    shown = {"title": idea["title"], "rationale": idea["rationale"], "approach": idea["approach"], "key_terms": list(idea["key_terms"])}
    return f"Forecast idea:\n{json.dumps(shown, ensure_ascii=False)}\n\nCandidate paper:\nTitle: {title}\nAbstract: {abstract}"


def read_verdict(content: str | None) -> Verdict:
    """P, M, S from a reply's text: one JSON object (optionally fenced) with integers 0–3, else FAILED."""
    if not content:
        return FAILED
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        obj = decode_json(text)
    except ValueError:
        return FAILED
    if not isinstance(obj, dict) or set(obj) != set(SCORE_KEYS):
        return FAILED
    values = [obj[k] for k in SCORE_KEYS]
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 3 for v in values):
        return FAILED
    return Verdict(*values)


@dataclass
class ChatJudge:
    """A judge served by an OpenAI-compatible chat endpoint (``serving_model``: the model name sent)."""

    judge_id: str
    client: ChatClient
    serving_model: str
    server_version: str = ""
    alias: str = ""
    temperature: float = 0
    calls: int = 0

    def record(self) -> dict:
        return {"judge_id": self.judge_id, "serving_model": self.serving_model, "alias": self.alias or self.serving_model,
                "prompt_sha256": PROMPT_SHA256, "temperature": self.temperature, "server_version": self.server_version}

    def judge(self, idea: Mapping, title: str, abstract: str) -> Verdict:
        payload = {"model": self.serving_model, "temperature": self.temperature,
                   "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": _user_message(idea, title, abstract)}]}
        self.calls += 1
        reply = self.client.complete(payload)  # EndpointError stops the run; the journal keeps what was paid for
        try:
            return read_verdict(read_turn(reply, 0).content)
        except ReplyProblem:
            return FAILED
