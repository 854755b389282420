"""The Ideas pages (IDEAS.md §6): Home, Leaderboard, Topics (one page per topic), Models, Diagnostics,
Releases, Archive and Submit, in every language of the site.

The templates and labels live in ``templates/kinds/ideas/`` (labels under ``ideas.``);
the engine renders them (:func:`rapgen.site.render_release`) and builds the site
with this navigation.
"""

from __future__ import annotations

from pathlib import Path

from rapgen.kinds.ideas.archive.kind import IdeasRelease
from rapgen.kinds.ideas.site import pages as p
from rapgen.resources import templates_dir
from rapgen.site import PageSpec, SiteSpec

TEMPLATES = templates_dir() / "kinds" / "ideas"
ASSETS = ("assets/javascripts/tablesort.min.js", "assets/javascripts/tablesort.number.min.js", "assets/javascripts/tables.js",
          "assets/javascripts/rap.js", "assets/javascripts/alternate.js", "assets/stylesheets/rap.css")  # rap.js marks a docs folder
PAGES = (
    PageSpec("index.md", "pages/home.md.j2", p.home, "ideas.nav.home"),
    PageSpec("leaderboard.md", "pages/leaderboard.md.j2", p.leaderboard, "ideas.nav.leaderboard"),
    PageSpec("topics/index.md", "pages/topics.md.j2", p.topics, "ideas.nav.topics"),
    PageSpec("models.md", "pages/models.md.j2", p.models, "ideas.nav.models"),
    PageSpec("diagnostics.md", "pages/diagnostics.md.j2", p.diagnostics, "ideas.nav.diagnostics"),
    PageSpec("releases.md", "pages/releases.md.j2", p.releases, "ideas.nav.releases"),
    PageSpec("archive.md", "pages/archive.md.j2", p.archive, "ideas.nav.archive"),
    PageSpec("submit.md", "pages/submit.md.j2", p.submit, "ideas.nav.submit"),
)


def topic_pages(release: IdeasRelease, _scores_dir: Path) -> list[PageSpec]:
    return [PageSpec(f"topics/{t.topic_id}.md", "pages/topic.md.j2", p.topic_page(t.topic_id), in_nav=False)
            for t in release.archive.topics]


SITE = SiteSpec(pages=PAGES, templates=str(TEMPLATES), catalogues=str(TEMPLATES), entity_pages=topic_pages, files=p.downloads,
                assets=ASSETS, nav=tuple((page.nav_key, page.path) for page in PAGES if page.nav_key), not_in_nav=("/topics/*.md",),
                name_key="ideas.site.name", card=p.card)
