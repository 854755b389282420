"""Stage 4 — the static site: score outputs + archive descriptions -> Markdown -> mkdocs-material.

Public surface: :func:`render_docs` (Markdown only), :func:`build_site` (mkdocs
build --strict), :func:`check_site_dir` (refuses to empty a folder rapgen did not build), :func:`check_url`
(``--site-url``/``--repo-url``), :func:`load_score_outputs`, :class:`RenderResult`, :class:`BuildResult`; for a kind's own pages,
:class:`SiteSpec`/:class:`PageSpec`, :func:`render_release` and :func:`t` (the current page language's labels);
for a site of several benchmarks, :func:`compose_portal` (with :class:`PortalPart`, :class:`NavPlan`) and
:func:`write_redirects`.
The site never recomputes a score; it reads ``rapgen score``'s output folder.
"""

from rapgen.site.build import BuildResult, MkdocsProcess, NavPlan, build_site, check_site_dir, check_url, start_mkdocs
from rapgen.site.i18n import LANGUAGES, t
from rapgen.site.inputs import ScoreOutputs, load_score_outputs, read_score_bytes
from rapgen.site.portal import PortalPart, compose_portal, write_redirects
from rapgen.site.render import RenderResult, render_docs, render_release
from rapgen.site.spec import PageSpec, SiteSpec, kind_site, nav_pages
# a kind's own figures: the one embedding, the palette, label escaping, rounding and the local plotly.js
from rapgen.site.escape import chart_text
from rapgen.site.filters import chart_value
from rapgen.site.plots import PALETTE, embed
from rapgen.site.render import plotly_js_path

__all__ = ["LANGUAGES", "BuildResult", "PageSpec", "RenderResult", "SiteSpec", "ScoreOutputs", "build_site", "check_site_dir", "check_url", "load_score_outputs",
           "render_docs", "render_release", "start_mkdocs", "MkdocsProcess", "t", "NavPlan", "PortalPart", "compose_portal", "write_redirects"]
__all__ += ["kind_site", "nav_pages", "read_score_bytes"]
__all__ += ["PALETTE", "chart_text", "chart_value", "embed", "plotly_js_path"]
