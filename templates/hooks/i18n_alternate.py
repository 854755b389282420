"""mkdocs hook for the bilingual site: the language menu links to the same page in the
other language, as a relative address.

mkdocs-static-i18n runs one mkdocs build per language (English at the root, Chinese
under ``zh/``). Its own language-switcher reconfiguration is off (``reconfigure_material:
false``) because it links the home pages with absolute ``/`` and ``/zh/`` addresses and
warns under ``--strict`` that it cannot follow Material's instant navigation. Instead,
before each page is rendered, ``extra.alternate`` is set to the page's two addresses
relative to the site root (``leaderboard/`` and ``zh/leaderboard/``); Material's ``url``
filter makes them relative to the page, so the site works from any folder. Static
templates (the 404 page) get the two home pages.

Each language's build writes the theme's ``404.html`` to the site root, the last one
winning; the English one is put back at the root and the others moved under their
language's folder (``zh/404.html``).
"""

from __future__ import annotations

import os
from pathlib import Path

PREFIXES = {"en": "", "zh": "zh/"}  # the site's languages and where each is built (rapgen.site.i18n)
_ROOT_404: dict[str, bytes] = {}


def _links(config, url: str) -> None:
    names = {alt["lang"]: alt["name"] for alt in config.extra.get("alternate") or []}
    page = url
    for prefix in PREFIXES.values():
        if prefix and page.startswith(prefix):
            page = page[len(prefix):]
    config.extra["alternate"] = [{"name": names.get(lang, lang), "lang": lang, "link": (prefix + page) or "./"}
                                 for lang, prefix in PREFIXES.items()]


def on_nav(nav, config, files):
    """The headings' permalink tooltip (the toc extension's ``permalink_title``) in the language
    being built: the i18n plugin has applied that language's ``extra`` by now."""
    title = (config.extra.get("rap") or {}).get("permalink_title")
    if title and isinstance(config.mdx_configs.get("toc"), dict):
        config.mdx_configs["toc"]["permalink_title"] = title
    return nav


def on_page_context(context, page, config, nav):
    _links(config, page.url)
    return context


def on_pre_template(template, template_name, config):
    _links(config, "")
    return template


def on_post_build(config):
    site = Path(config.site_dir)
    page, lang = site / "404.html", config.theme.get("language", "en")
    if not page.is_file():
        return
    if not PREFIXES.get(lang):
        _ROOT_404[str(site)] = page.read_bytes()
    elif str(site) in _ROOT_404:
        (site / PREFIXES[lang]).mkdir(parents=True, exist_ok=True)
        os.replace(page, site / PREFIXES[lang] / "404.html")
        page.write_bytes(_ROOT_404[str(site)])
