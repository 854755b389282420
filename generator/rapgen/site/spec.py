"""The site side of a benchmark kind (KINDS.md §3, §8): :class:`PageSpec` and :class:`SiteSpec`.

A page is a path in the docs folder, a Jinja2 template and ``build(release, outputs) ->
context`` (the template's variables, from the release shown and its score folder).
``nav_key`` is the catalogue key of its navigation label; ``in_nav=False`` pages (one
per entity: a field, a model, a topic) are reached by links only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PageSpec:
    path: str  # in the docs folder, e.g. "leaderboard.md"
    template: str  # under the templates folder, e.g. "pages/leaderboard.md.j2"
    build: Callable[..., Mapping[str, Any]] = field(repr=False, compare=False)
    nav_key: str | None = None
    in_nav: bool = True


@dataclass(frozen=True)
class SiteSpec:
    """A kind's pages; ``render(release, scores_dir, docs_dir, **options)`` replaces the engine's
    page loop for a kind whose pages share one model (RAP), None for the plain loop over ``pages``."""

    pages: tuple[PageSpec, ...] = ()
    render: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    templates: str | None = None  # a folder of the kind's own templates (None: the packaged ones)
