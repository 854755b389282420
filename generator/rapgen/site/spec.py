"""The site side of a benchmark kind (KINDS.md §3, §8): :class:`PageSpec` and :class:`SiteSpec`.

A page is a path in the docs folder, a Jinja2 template and ``build(release, outputs) ->
context`` (the template's variables, from the release shown and its score folder).
``nav_key`` is the catalogue key of its navigation label; ``in_nav=False`` pages (one
per entity: a field, a model, a topic) are reached by links only.

:func:`kind_site` is the SiteSpec of a kind whose templates and labels share one folder
(``templates/kinds/<name>/``) and whose navigation is its pages in order (Ideas, Inspire).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapgen.resources import templates_dir


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


# The assets every kind's table pages ship: sortable tables, the language switch and the stylesheet.
TABLE_SCRIPTS = ("assets/javascripts/tablesort.min.js", "assets/javascripts/tablesort.number.min.js", "assets/javascripts/tables.js")
TABLE_TAIL = ("assets/javascripts/alternate.js", "assets/stylesheets/rap.css")


def nav_pages(kind: str, pages: Iterable[tuple[str, str, Callable[..., Mapping[str, Any]]]]) -> tuple[PageSpec, ...]:
    """A kind's navigation, in order: each (path, name, build) is the page at ``path`` rendered from
    ``pages/<name>.md.j2`` and labelled by the catalogue key ``<kind>.nav.<name>``."""
    return tuple(PageSpec(path, f"pages/{name}.md.j2", build, f"{kind}.nav.{name}") for path, name, build in pages)


def kind_site(kind: str, pages: tuple[PageSpec, ...], *, scripts: tuple[str, ...] = (), **options: Any) -> SiteSpec:
    """The SiteSpec of a kind whose templates and labels (under ``<kind>.``) live in ``templates/kinds/<kind>/``:
    its pages in navigation order, the table assets with the kind's own ``scripts``, its site's name
    under ``<kind>.site.name``; ``options`` are the other SiteSpec fields (entity pages, files, card …)."""
    folder = str(templates_dir() / "kinds" / kind)
    return SiteSpec(pages=pages, templates=folder, catalogues=folder, assets=TABLE_SCRIPTS + scripts + TABLE_TAIL,
                    nav=tuple((page.nav_key, page.path) for page in pages if page.nav_key), name_key=f"{kind}.site.name",
                    **options)
