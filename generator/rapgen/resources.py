"""Files rapgen ships beside its code: page and prompt templates, the site's assets
and the base mkdocs configuration.

In a wheel they are package data under ``rapgen/templates/`` (pyproject maps the
repository's top-level ``templates/`` folder there at build time) and are found
through :mod:`importlib.resources`. In a checkout — an editable install, or
``PYTHONPATH=generator`` — the package has no such folder and the repository's
own ``templates/`` is used, so an edit to a template shows without reinstalling.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from rapgen.errors import RapgenError

MKDOCS_BASE = "mkdocs.base.yml"


def templates_dir() -> Path:
    """The folder holding ``pages/``, ``partials/``, ``prompts/``, ``overrides/``,
    ``assets/`` and the base mkdocs configuration."""
    packaged = resources.files("rapgen") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if checkout.is_dir():
        return checkout
    raise RapgenError(f"{packaged}: the templates are missing from the installed rapgen package; reinstall rapgen")


def catalogue_path(lang: str, folder: Path | None = None) -> Path:
    """The site's label catalogue for ``lang`` (``i18n/<lang>.yml`` beside the page templates)."""
    return (folder or templates_dir()) / "i18n" / f"{lang}.yml"


def mkdocs_base_config() -> Path:
    """The packaged mkdocs configuration every ``rapgen build`` starts from."""
    return templates_dir() / MKDOCS_BASE
