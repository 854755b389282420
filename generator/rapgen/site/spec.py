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
    page loop for a kind whose pages share one model (RAP), None for the plain loop over ``pages``.

    With ``catalogues`` (a folder holding ``i18n/<lang>.yml``, the kind's labels under its own
    namespace) the plain loop renders every page in every language of the site, with the
    engine's catalogue merged with the kind's; ``entity_pages(release, scores_dir)`` adds the
    pages reached by links only (one per topic, model …); ``files(release, scores_dir)`` gives
    further files to write (path -> bytes: the downloads); ``assets`` are files of the packaged
    templates folder copied beside the pages. ``nav`` ((label key, page) pairs), ``not_in_nav``
    (mkdocs patterns) and ``name_key`` (the label of the site's name) shape the built site.
    ``card(release, scores_dir)`` is the leader a portal shows for the benchmark (name, value,
    ci_low, ci_high and the headline cell's description, in the current language), or None."""

    pages: tuple[PageSpec, ...] = ()
    render: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    templates: str | None = None  # a folder of the kind's own templates (None: the packaged ones)
    catalogues: str | None = None
    entity_pages: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    files: Callable[..., Mapping[str, bytes]] | None = field(default=None, repr=False, compare=False)  # downloads
    assets: tuple[str, ...] = ()
    nav: tuple[tuple[str, str], ...] = ()
    not_in_nav: tuple[str, ...] = ()
    name_key: str | None = None
    card: Callable[..., Mapping[str, Any] | None] | None = field(default=None, repr=False, compare=False)
