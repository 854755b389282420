"""The prompt of an Ideas episode (IDEAS.md): a topic, a monthly cutoff and what the agent returns.

An episode ``<topic_id>@<cutoff>`` shows the agent the topic (name, aliases, keywords), the
cutoff and the topic's papers first posted before it (the history H), and asks for at most
``top_k`` (5) ranked research ideas that papers of the following months will realise. The answer
is one call of ``submit_ideas``: ``ideas``, best first, each ``{"title", "rationale", "approach",
"key_terms"}`` — the fields of a ``predictions.jsonl`` line, whose ``rank`` is the position.

Decisions where IDEAS.md is silent: the history is listed newest first (ties by arXiv id) with
its dates and titles, at most :data:`HISTORY_SHOWN` of them (the message says how many there are
in all); ``rationale`` is asked for in at most 500 characters (adapter v1's cut); no search tool
(the history is the whole context). ``prompt_sha256`` identifies exactly what is sent (messages
and tools, canonical JSON), ``template_sha256`` the prompt version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from rapgen.errors import UsageProblem
from rapgen.kit import Messages, canonical_sha256

from rapgen.kinds.ideas.archive.config import future_end

SUBMIT_TOOL = "submit_ideas"
HISTORY_SHOWN = 200
MAX_RATIONALE = 500
EPISODE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*@\d{4}-\d{2}-\d{2}$")
SYSTEM = (
    "You forecast what researchers will study next. The topic is {name}{also}. Today is {cutoff}: you know the topic's "
    "papers first posted before that day, and nothing later.\n\n"
    "Propose at most {top_k} concrete research ideas that papers first posted from {cutoff} to {future_to} (inclusive) "
    "are likely to realise, the most likely first. Each idea has a one-line title, a rationale (the gap it closes "
    "and why now, at most {max_rationale} characters), an approach (how it would be done, e.g. \"combine: X with Y\") "
    "and a few key terms.\n\n"
    "Answer by calling {submit} once with the ranked list."
)
USER = "Topic: {name}\nCutoff: {cutoff}\nPapers of the topic before the cutoff: {n_history}{shown}\n\n{papers}"


def submit_schema(top_k: int) -> dict:
    idea = {"type": "object", "properties": {
        "title": {"type": "string", "minLength": 1, "description": "The idea in one line."},
        "rationale": {"type": "string", "maxLength": MAX_RATIONALE, "description": "The gap and why now."},
        "approach": {"type": "string", "description": "How it would be done."},
        "key_terms": {"type": "array", "items": {"type": "string"}, "description": "A few key terms."},
    }, "required": ["title", "rationale", "approach", "key_terms"], "additionalProperties": False}
    return {"type": "function", "function": {
        "name": SUBMIT_TOOL,
        "description": f"Submit at most {top_k} ranked research ideas, the most likely first; ends the episode.",
        "parameters": {"type": "object", "properties": {"ideas": {"type": "array", "items": idea, "maxItems": top_k}},
                       "required": ["ideas"], "additionalProperties": False},
    }}


def template_sha256(top_k: int = 5) -> str:
    """The prompt version: the two texts, the history rule and the tool schema."""
    return canonical_sha256({"system": SYSTEM, "user": USER, "history_shown": HISTORY_SHOWN, "tools": [submit_schema(top_k)]})


@dataclass(frozen=True)
class IdeasPrompt(Messages):
    """Everything a harness sends for one episode."""

    episode_id: str
    topic_id: str
    cutoff: date
    future_to: date
    top_k: int
    n_history: int
    system: str
    user: str
    tools: list[dict]

    @property
    def template_sha256(self) -> str:
        return template_sha256(self.top_k)

    def to_dict(self) -> dict:
        return {"episode_id": self.episode_id, "topic_id": self.topic_id, "cutoff": self.cutoff.isoformat(),
                "future_to": self.future_to.isoformat(), "top_k": self.top_k, "n_history": self.n_history,
                "prompt_sha256": self.prompt_sha256, "template_sha256": self.template_sha256,
                "messages": self.messages, "tools": self.tools}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_prompt(archive, episode_id: str) -> IdeasPrompt:
    """The prompt of ``episode_id`` in ``archive`` (an ``IdeasArchive``); a usage error naming examples
    for an id that is malformed or names no episode."""
    episodes = {e.episode_id: e for e in (archive.pools.episodes if archive.pools is not None else ())}
    if episode_id not in episodes:
        shape = "" if EPISODE_ID.match(episode_id) else " (an episode id is TOPIC@YYYY-MM-DD)"
        raise UsageProblem(f"episode {episode_id!r} is not an episode of this archive{shape}; "
                           f"e.g. {', '.join(sorted(episodes)[:3]) or 'none'}")
    episode = episodes[episode_id]
    topic = next(t for t in archive.topics if t.topic_id == episode.topic_id)
    config = archive.config
    papers = sorted((archive.papers[i] for i in archive.pools.history[episode_id]), key=lambda p: p.arxiv_id)
    papers.sort(key=lambda p: p.first_submitted, reverse=True)  # newest first, ties by id (stable)
    shown = papers[:HISTORY_SHOWN]
    others = [*topic.aliases, *topic.keywords]
    to = future_end(episode.cutoff, config.horizon_months)
    system = SYSTEM.format(name=topic.name, also=f" (also: {', '.join(others)})" if others else "",
                           cutoff=episode.cutoff.isoformat(), top_k=config.top_k, future_to=to.isoformat(),
                           max_rationale=MAX_RATIONALE, submit=SUBMIT_TOOL)
    listing = "\n".join(f"- {p.first_submitted.isoformat()} {_one_line(p.title)}" for p in shown)
    user = USER.format(name=topic.name, cutoff=episode.cutoff.isoformat(), n_history=len(papers),
                       shown=f" (the newest {len(shown)}, newest first)" if len(shown) < len(papers) else " (newest first)",
                       papers=listing)
    return IdeasPrompt(episode_id, topic.topic_id, episode.cutoff, to, config.top_k, len(papers), system, user,
                       [submit_schema(config.top_k)])


def prompt(root, *, release, episode_id: str | None = None) -> IdeasPrompt:
    """``rapgen prompt --benchmark ideas --episode ID``."""
    opened = release()
    if episode_id is None:
        episodes = sorted(e.episode_id for e in (opened.archive.pools.episodes if opened.archive.pools else ()))
        raise UsageProblem(f"an Ideas prompt names an episode: give --episode TOPIC@YYYY-MM-DD (e.g. {', '.join(episodes[:3])})")
    return build_prompt(opened.archive, episode_id)
