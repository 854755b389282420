"""RAP's site: every page is built from one presentation model (:mod:`rapgen.site`), so the kind
hands the engine its whole renderer rather than a list of pages."""

from __future__ import annotations

from rapgen.site import SiteSpec, render_docs

SITE = SiteSpec(render=render_docs)
