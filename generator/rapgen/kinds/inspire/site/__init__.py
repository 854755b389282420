"""The Inspire pages (INSPIRE.md §4): Home, Leaderboard (split, view and gain-map tabs, one table
per condition), Funnel, Targets (and a page per target), Models (and a page per model),
Diagnostics, Releases, Archive and Submit, in every language of the site.

The templates and labels live in ``templates/kinds/inspire/`` (labels under ``inspire.``);
the engine renders them (:func:`rapgen.site.render_release`) and builds the site with this
navigation. The figures are drawn by the local plotly.js the pages ship (no CDN).
"""

from __future__ import annotations

from pathlib import Path

from rapgen.site import PageSpec, kind_site, nav_pages

from rapgen.kinds.inspire.archive.kind import InspireRelease
from rapgen.kinds.inspire.site import entities as e
from rapgen.kinds.inspire.site import pages as p

PAGES = nav_pages("inspire", (
    ("index.md", "home", p.home), ("leaderboard.md", "leaderboard", p.leaderboard), ("funnel.md", "funnel", p.funnel),
    ("targets/index.md", "targets", e.targets), ("models/index.md", "models", e.models),
    ("diagnostics.md", "diagnostics", p.diagnostics), ("releases.md", "releases", p.releases),
    ("archive.md", "archive", p.archive), ("submit.md", "submit", p.submit),
))


def entity_pages(release: InspireRelease, scores_dir: Path) -> list[PageSpec]:
    """The pages reached by links only: one per target, one per model."""
    return [*e.target_pages(release, scores_dir), *e.model_pages(release, scores_dir)]


SITE = kind_site("inspire", PAGES, scripts=("assets/javascripts/charts.js",), entity_pages=entity_pages, files=p.downloads,
                 not_in_nav=("/targets/*.md", "/models/*.md"), card=p.card)
