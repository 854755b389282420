"""The Jinja2 environment that turns page templates into Markdown.

StrictUndefined: a typo in a template is an error, never an empty string.
Autoescaping is off because the output is Markdown; templates escape archive
text explicitly with the ``md`` (prose) and ``h`` (inside HTML) filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jinja2

from rapgen.resources import templates_dir as packaged_templates
from rapgen.site.cells import Cell
from rapgen.site import i18n
from rapgen.site.filters import FILTERS


def make_environment(templates_dir: str | Path | Sequence[str | Path] | None = None) -> jinja2.Environment:
    """A deterministic environment over ``templates_dir`` (default: the packaged
    templates, :func:`rapgen.resources.templates_dir`; several folders are searched in
    order) with rapgen's filters."""
    folders = [templates_dir or packaged_templates()] if isinstance(templates_dir, (str, Path)) or templates_dir is None \
        else list(templates_dir)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(f) for f in folders]),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    # The current language's labels (rapgen.site.i18n.speaking): globals, so imported macros see them too.
    env.globals.update(t=i18n.t, term=i18n.term)
    env.tests["cell"] = lambda value: isinstance(value, Cell)
    return env
