"""The Inspire pages (INSPIRE.md §4): Home, Leaderboard (split, view and gain-map tabs, one table
per condition), Funnel, Targets (and a page per target), Models (and a page per model),
Diagnostics, Releases, Archive and Submit, in every language of the site.

The templates and labels live in ``templates/kinds/inspire/`` (labels under ``inspire.``);
the engine renders them (:func:`rapgen.site.render_release`) and builds the site with this
navigation. The figures are drawn by the local plotly.js the pages ship (no CDN).
"""

from __future__ import annotations

from pathlib import Path

from rapgen.resources import templates_dir
from rapgen.site import PageSpec, SiteSpec

from rapgen.kinds.inspire.archive.kind import InspireRelease
from rapgen.kinds.inspire.site import entities as e
from rapgen.kinds.inspire.site import pages as p

TEMPLATES = templates_dir() / "kinds" / "inspire"
ASSETS = ("assets/javascripts/tablesort.min.js", "assets/javascripts/tablesort.number.min.js", "assets/javascripts/tables.js",
          "assets/javascripts/charts.js", "assets/javascripts/alternate.js", "assets/stylesheets/rap.css")
PAGES = (
    PageSpec("index.md", "pages/home.md.j2", p.home, "inspire.nav.home"),
    PageSpec("leaderboard.md", "pages/leaderboard.md.j2", p.leaderboard, "inspire.nav.leaderboard"),
    PageSpec("funnel.md", "pages/funnel.md.j2", p.funnel, "inspire.nav.funnel"),
    PageSpec("targets/index.md", "pages/targets.md.j2", e.targets, "inspire.nav.targets"),
    PageSpec("models/index.md", "pages/models.md.j2", e.models, "inspire.nav.models"),
    PageSpec("diagnostics.md", "pages/diagnostics.md.j2", p.diagnostics, "inspire.nav.diagnostics"),
    PageSpec("releases.md", "pages/releases.md.j2", p.releases, "inspire.nav.releases"),
    PageSpec("archive.md", "pages/archive.md.j2", p.archive, "inspire.nav.archive"),
    PageSpec("submit.md", "pages/submit.md.j2", p.submit, "inspire.nav.submit"),
)


def entity_pages(release: InspireRelease, scores_dir: Path) -> list[PageSpec]:
    """The pages reached by links only: one per target, one per model."""
    return [*e.target_pages(release, scores_dir), *e.model_pages(release, scores_dir)]


SITE = SiteSpec(pages=PAGES, templates=str(TEMPLATES), catalogues=str(TEMPLATES), entity_pages=entity_pages, files=p.downloads,
                assets=ASSETS, nav=tuple((page.nav_key, page.path) for page in PAGES if page.nav_key),
                not_in_nav=("/targets/*.md", "/models/*.md"), name_key="inspire.site.name", card=p.card)
