"""The Jinja2 environment that turns page templates into Markdown.

StrictUndefined: a typo in a template is an error, never an empty string.
Autoescaping is off because the output is Markdown; templates escape archive
text explicitly with the ``md`` (prose) and ``h`` (inside HTML) filters.

Compiled templates are kept between runs (Jinja's file bytecode cache, in
``$RAPGEN_CACHE/site/`` where that is set, else Jinja's own folder in the temporary
folder): each is found again by its file name and used only when its source is
unchanged, and the cache's name carries Jinja's version, these options and the
filter and test names, so a template compiled under others is never taken.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # jinja2 is imported where a template is made or read (start-up stays light)
    import jinja2

from rapgen.io import CACHE_ENV
from rapgen.resources import templates_dir as packaged_templates
from rapgen.site.cells import Cell
from rapgen.site import i18n
from rapgen.site.filters import FILTERS


def make_environment(templates_dir: str | Path | Sequence[str | Path] | None = None) -> jinja2.Environment:
    """A deterministic environment over ``templates_dir`` (default: the packaged
    templates, :func:`rapgen.resources.templates_dir`; several folders are searched in
    order) with rapgen's filters."""
    import jinja2
    folders = [templates_dir or packaged_templates()] if isinstance(templates_dir, (str, Path)) or templates_dir is None \
        else list(templates_dir)
    options = dict(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True, trim_blocks=True,
                   lstrip_blocks=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(f) for f in folders]),
                             bytecode_cache=_bytecode_cache(options), **options)
    env.filters.update(FILTERS)
    # The current language's labels (rapgen.site.i18n.speaking): globals, so imported macros see them too.
    env.globals.update(t=i18n.t, term=i18n.term)
    env.tests["cell"] = lambda value: isinstance(value, Cell)
    return env


def _bytecode_cache(options: dict) -> jinja2.BytecodeCache | None:
    """The compiled templates kept between runs; None where no folder can be had."""
    import jinja2
    # Jinja checks filter and test names when it compiles: the names are part of the key
    key = hashlib.sha256(repr((jinja2.__version__, sorted((k, repr(v)) for k, v in options.items()), sorted(FILTERS),
                               "cell")).encode()).hexdigest()[:16]
    try:
        if os.environ.get(CACHE_ENV):
            folder = Path(os.environ[CACHE_ENV]) / "site" / f"jinja-{key}"
            folder.mkdir(parents=True, exist_ok=True)
            return jinja2.FileSystemBytecodeCache(str(folder))
        return jinja2.FileSystemBytecodeCache(pattern=f"__rapgen_{key}_%s.cache")
    except (OSError, RuntimeError):
        return None
