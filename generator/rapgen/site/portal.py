"""One site, several benchmarks (KINDS.md §8): the portal at ``/``, each benchmark under ``/<slug>/``.

:func:`compose_portal` renders every benchmark's pages into ``docs/<slug>/`` (each by its
kind's site, unchanged), gathers the shared assets once at the docs root, writes the
portal page (one card per benchmark: its kind, unit, latest release and leader with its
interval; no number is averaged across benchmarks) in every language, and returns the
composed navigation: Home | one tab per benchmark with its pages | Submit (each
benchmark's Submit page). :func:`write_redirects` then gives every page of the default
benchmark's old single-benchmark site a stub at its old address (``<path>/index.html``
with a meta refresh), so links to the old addresses keep working.
"""

from __future__ import annotations

import filecmp
import html
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rapgen.errors import SiteError
from rapgen.io import DOCS_OUTPUT, guard_output_dir
from rapgen.resources import mkdocs_base_config, templates_dir as packaged_templates
from rapgen.site.build import NavPlan, base_nav
from rapgen.site.env import make_environment
from rapgen.site.i18n import LANGUAGES, load_catalogues, localized, merge_catalogues, page_translations, speaking
from rapgen.site.render import RenderResult, render_release, replace_folder
from rapgen.site.spec import SiteSpec

PORTAL_TEMPLATES = "portal"  # under the packaged templates folder: pages/portal.md.j2, i18n/<lang>.yml
SUBMIT = "submit.md"


@dataclass(frozen=True)
class PortalPart:
    """One benchmark of the site: its slug and label, its kind's name, unit and site, the release
    shown and its score folder."""

    slug: str
    label: str
    title: str
    kind: str
    unit: tuple[str, ...]
    spec: SiteSpec
    release: Any
    scores_dir: Path


@dataclass
class Portal:
    """The composed docs folder, its navigation (:class:`NavPlan`) and what each benchmark rendered."""

    docs_dir: Path
    plan: NavPlan
    rendered: dict[str, RenderResult] = field(default_factory=dict)


def _base_nav(docs: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """RAP's navigation and unlisted pages as its own site has them (the base config's)."""
    config = yaml.safe_load(mkdocs_base_config().read_text(encoding="utf-8"))
    hidden = [line.strip() for line in str(config.get("not_in_nav") or "").splitlines() if line.strip()]
    return base_nav(config.get("nav") or [], docs), hidden


def _merge_assets(part_docs: Path, docs: Path) -> None:
    """Move a benchmark's ``assets/`` to the docs root, where every page's scripts are loaded from."""
    src = part_docs / "assets"
    if not src.is_dir():
        return
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        target = docs / "assets" / path.relative_to(src)
        if target.exists():
            if not filecmp.cmp(path, target, shallow=False):
                raise SiteError(f"{path}: differs from the asset another benchmark ships at {target.relative_to(docs)}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    shutil.rmtree(src)


def _cards(parts: Sequence[PortalPart]) -> list[dict[str, Any]]:
    """One card per benchmark, in the current language."""
    out = []
    for p in parts:
        latest = p.release.record
        leader = p.spec.card(p.release, p.scores_dir) if p.spec.card else None
        out.append({"slug": p.slug, "label": p.label, "title": p.title, "kind": p.kind, "unit": " × ".join(p.unit),
                    "release": p.release.number, "date": latest.date.isoformat(), "synthetic": p.release.synthetic,
                    "manifest": p.release.manifest_sha256, "leader": leader, "url": f"{p.slug}/index.md",
                    "submit": f"{p.slug}/{SUBMIT}"})
    return out


def compose_portal(parts: Sequence[PortalPart], docs_dir: str | Path, *, title: str, repo_url: str | None = None) -> Portal:
    """Render every benchmark under ``docs_dir/<slug>/`` and the portal at its root (replaced whole)."""
    if not parts:
        raise SiteError("the site lists no benchmark to build")
    docs_dir = guard_output_dir(Path(docs_dir), DOCS_OUTPUT)  # before any work: the docs folder is replaced whole
    staging = docs_dir.with_name(f".{docs_dir.name}.parts")
    shutil.rmtree(staging, ignore_errors=True)
    nav: list[tuple[str, Any]] = [("portal.nav.home", "index.md")]
    hidden: list[str] = []
    submits: list[tuple[str, str]] = []
    rendered: dict[str, RenderResult] = {}
    catalogue_dirs = [packaged_templates() / PORTAL_TEMPLATES]
    try:
        for p in parts:
            rendered[p.slug] = render_release(p.spec, p.release, p.scores_dir, staging / p.slug, repo_url=repo_url)
            if p.spec.nav:
                entries, unlisted = list(p.spec.nav), list(p.spec.not_in_nav)
            else:
                entries, unlisted = _base_nav(staging / p.slug)
            if p.spec.catalogues:
                catalogue_dirs.append(Path(p.spec.catalogues))
            submits += [(p.label, f"{p.slug}/{f}") for _k, f in entries if f == SUBMIT]
            nav.append((p.label, [(k, f"{p.slug}/{f}") for k, f in entries if f != SUBMIT]))
            hidden += [f"/{p.slug}/{pattern.lstrip('/')}" for pattern in unlisted]
        if submits:
            nav.append(("portal.nav.submit", submits))

        def fill(tmp: Path) -> None:
            for p in parts:
                os.replace(staging / p.slug, tmp / p.slug)
                _merge_assets(tmp / p.slug, tmp)
            for rel, text in _portal_pages(parts, title, catalogue_dirs).items():
                (tmp / rel).write_text(text, encoding="utf-8")

        replace_folder(docs_dir, fill)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    plan = NavPlan(tuple(nav), tuple(hidden), tuple(catalogue_dirs), title)
    return Portal(docs_dir, plan, rendered)


def portal_catalogues(dirs: Sequence[Path]):
    """The engine's labels with the portal's and every benchmark kind's merged in."""
    catalogues = load_catalogues()
    for folder in dirs:
        catalogues = merge_catalogues(catalogues, folder)
    return catalogues


def _portal_pages(parts: Sequence[PortalPart], title: str, dirs: Sequence[Path]) -> dict[str, str]:
    catalogues = portal_catalogues(dirs)
    env = make_environment([packaged_templates() / PORTAL_TEMPLATES, packaged_templates()])
    pages = {}
    for lang in LANGUAGES:
        with speaking(catalogues[lang]):
            cards = _cards(parts)
            pages[localized("index.md", lang)] = env.get_template("pages/portal.md.j2").render(
                cards=cards, title=title, LANG=lang, synthetic=any(c["synthetic"] for c in cards))
    page_translations(pages)
    return pages


REDIRECT = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="refresh" content="0; url={target}"><link rel="canonical" href="{target}">
<meta name="robots" content="noindex"></head>
<body><p><a href="{target}">{title}</a></p></body></html>
"""


def write_redirects(site_dir: str | Path, slug: str, *, title: str) -> list[str]:
    """A stub at every old address of benchmark ``slug``'s pages (``x/index.html`` -> ``<slug>/x/``),
    in every language; an address the composed site uses itself keeps its page. Returns the stubs' paths."""
    site = Path(site_dir)
    moved = site / slug
    written = []
    for lang_prefix in ("", *(f"{lang}/" for lang in LANGUAGES[1:])):
        source = moved if not lang_prefix else site / lang_prefix.rstrip("/") / slug
        if not source.is_dir():
            continue
        for page in sorted(source.rglob("index.html")):
            rel = page.parent.relative_to(source).as_posix()
            if rel == ".":
                continue  # the benchmark's home: the portal holds the old address now
            old = site / lang_prefix / rel / "index.html"
            if old.exists():
                continue
            depth = len(Path(lang_prefix + rel).parts)
            target = "../" * depth + f"{lang_prefix}{slug}/{rel}/"
            old.parent.mkdir(parents=True, exist_ok=True)
            old.write_text(REDIRECT.format(lang=(lang_prefix.rstrip("/") or LANGUAGES[0]), title=html.escape(title),
                                           target=html.escape(target)), encoding="utf-8")
            written.append(old.relative_to(site).as_posix())
    return written
