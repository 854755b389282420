"""The Jinja2 environment that turns page templates into Markdown.

StrictUndefined: a typo in a template is an error, never an empty string.
Autoescaping is off because the output is Markdown; templates escape archive
text explicitly with the ``md`` (prose) and ``h`` (inside HTML) filters.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from rapgen.site.filters import FILTERS

# The repository that holds templates/ and mkdocs.yml (generator/rapgen/site/env.py -> repo).
REPO_DIR = Path(__file__).resolve().parents[3]
TEMPLATES_DIR = REPO_DIR / "templates"
MKDOCS_YML = REPO_DIR / "mkdocs.yml"


def make_environment(templates_dir: str | Path = TEMPLATES_DIR) -> jinja2.Environment:
    """A deterministic environment over ``templates_dir`` with rapgen's filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    from rapgen.site.model import Cell

    env.tests["cell"] = lambda value: isinstance(value, Cell)
    return env
