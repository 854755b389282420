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
"""

from __future__ import annotations

PREFIXES = {"en": "", "zh": "zh/"}  # the site's languages and where each is built (rapgen.site.i18n)


def _links(config, url: str) -> None:
    names = {alt["lang"]: alt["name"] for alt in config.extra.get("alternate") or []}
    page = url
    for prefix in PREFIXES.values():
        if prefix and page.startswith(prefix):
            page = page[len(prefix):]
    config.extra["alternate"] = [{"name": names.get(lang, lang), "lang": lang, "link": (prefix + page) or "./"}
                                 for lang, prefix in PREFIXES.items()]


def on_page_context(context, page, config, nav):
    _links(config, page.url)
    return context


def on_pre_template(template, template_name, config):
    _links(config, "")
    return template
