"""A tiny Ideas archive built by code (no binary fixture): three topics, two cutoffs, one month ahead.

Built with the sample's own assembly (:func:`rapgen.kinds.ideas.sample.build.archive_files`),
so the reference models, both lexical judges and every evaluator file are there.
"""

from __future__ import annotations

from datetime import date

from rapgen.kinds.ideas.archive.config import Config
from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.sample.build import archive_files
from rapgen.kinds.ideas.sample.models import TOP_K
from rapgen.kinds.ideas.archive.topics import Topic

TOPICS = [
    Topic("diffusion", "Diffusion models", ("score-based generative models",), ("denoising diffusion", "DDPM")),
    Topic("rlhf", "RL from human feedback", ("RLHF", "preference optimization"), ("reward model", "DPO")),
    Topic("gnn", "Graph neural networks", ("GNN", "message passing"), ("graph transformer",)),
]
CONFIG = Config(date(2024, 4, 1), date(2024, 6, 1), (date(2024, 6, 1), date(2024, 7, 1)), 1, TOP_K, 2, date(2024, 7, 1))
SUBJECTS = {
    "diffusion": ["Diffusion models for {x} synthesis", "Denoising diffusion with {x} guidance", "DDPM sampling for {x} images"],
    "rlhf": ["Preference optimization with {x} feedback", "Reward model ensembles for {x}", "RLHF under {x} noise"],
    "gnn": ["Message passing for {x} graphs", "Graph transformer layers for {x}", "GNN pooling on {x} networks"],
}
THINGS = ["molecular", "protein", "audio", "video", "text", "layout", "robot", "weather"]


def monthly_papers(first: int, last: int) -> dict[str, Paper]:
    """Two titles a month per topic and pattern, for months ``first`` … ``last`` counted from January 2024
    (13 is January 2025)."""
    out: dict[str, Paper] = {}
    n = 0
    for month in range(first, last + 1):
        y, m = 2024 + (month - 1) // 12, (month - 1) % 12 + 1
        for topic, patterns in SUBJECTS.items():
            for k, pattern in enumerate(patterns * 2):
                thing = THINGS[(month + k) % len(THINGS)]
                n += 1
                pid = f"{y % 100}{m:02d}.{n:05d}"
                title = pattern.format(x=thing)
                out[pid] = Paper(pid, title, f"We study {title.lower()}. Our {thing} method improves {topic} results.", (),
                                 date(y, m, 1 + (n % 27)))
    return out


def tiny_papers() -> dict[str, Paper]:
    """Papers dated April to August 2024 (two a month per topic and pattern), plus one unassigned paper."""
    out = monthly_papers(4, 8)
    out["2405.99999"] = Paper("2405.99999", "DDPMs as world models", "An unassigned paper.", (), date(2024, 5, 3))
    return out


def tiny_files() -> dict[str, bytes]:
    files, _ = archive_files(tiny_papers(), {}, TOPICS, CONFIG)
    return files
