"""``benchmark/topics.jsonl`` and ``provenance/judges.jsonl`` (IDEAS.md §1).

A topic's terms are its name, then its aliases, then its keywords, in file
order: the order the ``phrase-v1`` assignment tries them (§2). A judge's line,
byte for byte, is part of every cache key made with it (§4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapgen.archive import Finding, canonical_hash
from rapgen.kinds.ideas.archive.lines import Bad, digest, keys, number, read_lines, string, strings, unique
from rapgen.kinds.ideas.archive.normalise import norm

TOPIC_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
JUDGE_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
TOPIC_KEYS = ("topic_id", "name", "aliases", "keywords")
JUDGE_KEYS = ("judge_id", "serving_model", "alias", "prompt_sha256", "temperature", "server_version")
JUDGE_OPTIONAL = ("rule",)  # a lexical judge's thresholds, recorded in its line (so in its cache keys)


@dataclass(frozen=True)
class Topic:
    topic_id: str
    name: str
    aliases: tuple[str, ...]
    keywords: tuple[str, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        return (self.name, *self.aliases, *self.keywords)


def _topic(obj: dict, line: int) -> Topic:
    keys(obj, TOPIC_KEYS)
    topic = Topic(string(obj, "topic_id", pattern=TOPIC_ID), string(obj, "name", nonempty=True),
                  strings(obj, "aliases", nonempty=True), strings(obj, "keywords", nonempty=True))
    for term in topic.terms:
        if not norm(term):
            raise Bad(f"term {term!r} has no letter or digit left after normalisation (it would match nothing)")
    return topic


def parse_topics(path: str, data: bytes) -> tuple[list[Topic], list[Finding]]:
    """Topics in file order; ids unique; every term non-empty after ``norm``."""
    findings: list[Finding] = []
    rows = unique(path, read_lines(path, data, findings, _topic), lambda t: t.topic_id, lambda t: f"topic_id {t.topic_id!r}", findings)
    return [t for _, t in rows], findings


@dataclass(frozen=True)
class Judge:
    judge_id: str
    serving_model: str
    alias: str
    prompt_sha256: str
    temperature: float
    server_version: str
    line: bytes  # the line's bytes without its newline: hashed into cache keys
    rule: dict | None = None


def _judge(obj: dict, raw: bytes) -> Judge:
    keys(obj, JUDGE_KEYS, JUDGE_OPTIONAL)
    rule = obj.get("rule")
    if rule is not None and not isinstance(rule, dict):
        raise Bad("'rule' must be an object")
    if rule is not None and obj.get("prompt_sha256") != canonical_hash(rule):
        raise Bad("'prompt_sha256' of a judge with a 'rule' is H(rule), the rule's canonical JSON hash")
    return Judge(string(obj, "judge_id", pattern=JUDGE_ID), string(obj, "serving_model", nonempty=True), string(obj, "alias"),
                 digest(obj, "prompt_sha256"), number(obj, "temperature"), string(obj, "server_version"), raw, rule)


def parse_judges(path: str, data: bytes) -> tuple[list[Judge], list[Finding]]:
    """Judges in file order, each with its exact line bytes; ids unique."""
    findings: list[Finding] = []
    raw_lines = data.split(b"\n")
    rows = unique(path, read_lines(path, data, findings, lambda obj, n: _judge(obj, raw_lines[n - 1])),
                  lambda j: j.judge_id, lambda j: f"judge_id {j.judge_id!r}", findings)
    return [j for _, j in rows], findings
