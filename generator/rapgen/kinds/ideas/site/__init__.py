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
from rapgen.site import PageSpec, kind_site, nav_pages

PAGES = nav_pages("ideas", (
    ("index.md", "home", p.home), ("leaderboard.md", "leaderboard", p.leaderboard), ("topics/index.md", "topics", p.topics),
    ("models.md", "models", p.models), ("diagnostics.md", "diagnostics", p.diagnostics), ("releases.md", "releases", p.releases),
    ("archive.md", "archive", p.archive), ("submit.md", "submit", p.submit),
))


def topic_pages(release: IdeasRelease, _scores_dir: Path) -> list[PageSpec]:
    return [PageSpec(f"topics/{t.topic_id}.md", "pages/topic.md.j2", p.topic_page(t.topic_id), in_nav=False)
            for t in release.archive.topics]


# rap.js marks a docs folder as the site's
SITE = kind_site("ideas", PAGES, scripts=("assets/javascripts/rap.js",), entity_pages=topic_pages, files=p.downloads,
                 not_in_nav=("/topics/*.md",), card=p.card)
