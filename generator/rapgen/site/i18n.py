"""The site's languages and its label catalogue (``templates/i18n/<lang>.yml``).

Every word the site writes itself — prose, headings, table headers, tab and
button labels, notes, plot titles, axis, legend and hover text, and the strings
the pages' scripts show — is a catalogue entry. English (``en``) is the default
edition at ``/``; Chinese (``zh``) is built under ``/zh/``. A catalogue is a YAML
mapping: nested keys become dotted ones (``lb.title``); values are text with
``{name}`` placeholders filled by :meth:`Catalogue.text`. The ``terms`` mapping is
keyed by the English text itself: it translates the vocabulary other stages
declare (the diagnostics layout's section, table and column titles), which the
site does not own but must show in both languages.

Both catalogues must hold the same keys with the same placeholders; anything
else is a :class:`SiteError` naming the file, line, label and language, and the
build stops. A key a template or builder asks for that is missing is an error too.

The site model is built once per language: :func:`speaking` makes a catalogue the
current one for the builders and filters that run inside it, so a builder calls
:func:`t` instead of passing the catalogue through every helper.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from rapgen.errors import SiteError
from rapgen.resources import catalogue_path

LANGUAGES: tuple[str, ...] = ("en", "zh")
DEFAULT_LANGUAGE = "en"
TERMS = "terms"


@dataclass(frozen=True)
class Catalogue:
    """One language's labels: dotted key -> text, with the line each was read from."""

    lang: str
    path: Path
    labels: Mapping[str, str]
    lines: Mapping[str, int]

    def text(self, key: str, **values: Any) -> str:
        """The label ``key`` with its ``{placeholders}`` filled from ``values``."""
        try:
            label = self.labels[key]
        except KeyError:
            raise SiteError(f"{self.path}: label {key!r} is not in the {self.lang} catalogue") from None
        unfilled = placeholders(label) - set(values)
        if unfilled:
            raise SiteError(f"{self.path}: line {self.lines.get(key, 1)}: label {key!r} ({self.lang}) needs "
                            f"{{{sorted(unfilled)[0]}}}, which the page did not give")
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), label)

    def has(self, key: str) -> bool:
        return key in self.labels

    def term(self, english: str) -> str:
        """The translation of a term another stage declared, keyed by its English text."""
        return self.text(f"{TERMS}.{english}")

    def js(self, prefix: str) -> dict[str, str]:
        """Every label under ``prefix.`` (without it): the strings a page's script shows."""
        cut = len(prefix) + 1
        return {k[cut:]: v for k, v in self.labels.items() if k.startswith(prefix + ".")}


def _flatten(node: yaml.Node, path: Path, prefix: str, out: dict[str, str], lines: dict[str, int]) -> None:
    if not isinstance(node, yaml.MappingNode):
        raise SiteError(f"{path}: line {node.start_mark.line + 1}: expected a mapping of labels")
    for key_node, value in node.value:
        key = str(key_node.value)
        # Keys under "terms" are English text and may hold dots: never split them.
        dotted = f"{prefix}{key}"
        if isinstance(value, yaml.MappingNode) and prefix != f"{TERMS}.":
            _flatten(value, path, dotted + ".", out, lines)
        elif isinstance(value, yaml.ScalarNode) and value.tag.endswith((":str", ":int", ":float")):
            if dotted in out:
                raise SiteError(f"{path}: line {key_node.start_mark.line + 1}: label {dotted!r} is defined twice")
            out[dotted] = str(value.value)
            lines[dotted] = key_node.start_mark.line + 1
        else:
            raise SiteError(f"{path}: line {value.start_mark.line + 1}: label {dotted!r} must be text")


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_catalogue(path: Path, lang: str) -> Catalogue:
    """Parse one catalogue file (a one-line SiteError for a missing or malformed file)."""
    try:
        text = path.read_text(encoding="utf-8")
        try:  # libyaml's parser where PyYAML has it (the same nodes, lines and tags, ten times faster)
            node = yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            node = yaml.compose(text)  # the pure-Python parser's error and line, as before
    except OSError as exc:
        raise SiteError(f"{path}: cannot read the {lang} label catalogue ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SiteError(f"{path}: line {mark.line + 1 if mark else 1}: not valid YAML") from None
    labels: dict[str, str] = {}
    lines: dict[str, int] = {}
    if node is not None:
        _flatten(node, path, "", labels, lines)
    return Catalogue(lang, path, labels, lines)


# "{name}" is a placeholder; plotly's own "%{x:.1%}" / "%{text}" in hover text is left alone.
_PLACEHOLDER = re.compile(r"(?<!%)\{(\w+)\}")


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a label."""
    return set(_PLACEHOLDER.findall(text))


def check_catalogues(catalogues: Mapping[str, Catalogue]) -> None:
    """Every language has every default-language key, no extra one, and the same placeholders."""
    base = catalogues[DEFAULT_LANGUAGE]
    for lang, cat in catalogues.items():
        if lang == DEFAULT_LANGUAGE:
            continue
        for key in base.labels:
            if key not in cat.labels:
                raise SiteError(f"{cat.path}: label {key!r} ({base.path.name} line {base.lines[key]}) "
                                f"has no {lang} translation")
            if placeholders(cat.labels[key]) != placeholders(base.labels[key]):
                raise SiteError(f"{cat.path}: line {cat.lines[key]}: label {key!r} ({lang}) has placeholders "
                                f"{sorted(placeholders(cat.labels[key]))}, the {DEFAULT_LANGUAGE} text has "
                                f"{sorted(placeholders(base.labels[key]))}")
            if not cat.labels[key].strip() and base.labels[key].strip():
                raise SiteError(f"{cat.path}: line {cat.lines[key]}: label {key!r} ({lang}) is empty")
        for key in cat.labels:
            if key not in base.labels:
                raise SiteError(f"{cat.path}: line {cat.lines[key]}: label {key!r} is not in {base.path.name}")


def load_catalogues(templates_dir: Path | None = None) -> dict[str, Catalogue]:
    """Every language's catalogue, checked for completeness against the default one."""
    catalogues = {lang: read_catalogue(catalogue_path(lang, templates_dir), lang) for lang in LANGUAGES}
    check_catalogues(catalogues)
    return catalogues


def merge_catalogues(base: Mapping[str, Catalogue], folder: Path) -> dict[str, Catalogue]:
    """The engine's catalogues with a kind's (``folder/i18n/<lang>.yml``) added: a kind may not
    redefine an engine label; both languages must then hold the same keys."""
    merged = {}
    for lang, cat in base.items():
        extra = read_catalogue(catalogue_path(lang, folder), lang)
        clash = sorted(set(extra.labels) & set(cat.labels))
        if clash:
            raise SiteError(f"{extra.path}: line {extra.lines[clash[0]]}: label {clash[0]!r} is the engine's already ({cat.path.name})")
        merged[lang] = Catalogue(lang, extra.path, {**cat.labels, **extra.labels}, {**cat.lines, **extra.lines})
    check_catalogues(merged)
    return merged


@lru_cache(maxsize=1)
def _default() -> Catalogue:
    return read_catalogue(catalogue_path(DEFAULT_LANGUAGE), DEFAULT_LANGUAGE)


_CURRENT: ContextVar[Catalogue | None] = ContextVar("rapgen_site_catalogue", default=None)


def current() -> Catalogue:
    """The catalogue builders and filters speak now: English outside :func:`speaking`."""
    return _CURRENT.get() or _default()


@contextmanager
def speaking(catalogue: Catalogue) -> Iterator[Catalogue]:
    token = _CURRENT.set(catalogue)
    try:
        yield catalogue
    finally:
        _CURRENT.reset(token)


def t(key: str, **values: Any) -> str:
    """The current language's label ``key``, placeholders filled."""
    return current().text(key, **values)


def term(english: str) -> str:
    return current().term(english)


def term_title(english: str) -> str:
    """A declared title, possibly with values appended after its last ": " (``Residual
    alignment: direct_cosine``): the declared part translated, the values as written."""
    cat = current()
    if cat.has(f"{TERMS}.{english}") or ": " not in english:
        return cat.term(english)
    head, tail = english.rsplit(": ", 1)
    # the values a layout appends are as written, except the one word it adds itself ("horizon 12")
    tail = re.sub(r"\bhorizon (?=\d)", lambda _: cat.term("horizon") + " ", tail)
    return f"{term_title(head)}: {tail}"


class Labels(Mapping):
    """A fixed set of ids whose labels live under one catalogue prefix
    (``CONDITION_LABEL["A3"]`` is ``t("condition.A3")`` in the current language)."""

    def __init__(self, prefix: str, ids: tuple[str, ...]) -> None:
        self.prefix, self.ids = prefix, tuple(ids)

    def __getitem__(self, key: str) -> str:
        if key not in self.ids:
            raise KeyError(key)
        return t(f"{self.prefix}.{key}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def page_translations(pages: Mapping[str, Any] | list[str]) -> None:
    """Every page exists in every language (``x.md`` and ``x.zh.md``); else a SiteError naming it."""
    names = set(pages)
    for lang in LANGUAGES:
        if lang == DEFAULT_LANGUAGE:
            continue
        suffix = f".{lang}.md"
        for name in sorted(names):
            if name.endswith(suffix):
                base = name[: -len(suffix)] + ".md"
                if base not in names:
                    raise SiteError(f"{name}: the {lang} page has no {DEFAULT_LANGUAGE} original ({base})")
            elif not any(name.endswith(f".{other}.md") for other in LANGUAGES):
                twin = localized(name, lang)
                if twin not in names:
                    raise SiteError(f"{name}: page has no {lang} translation ({twin} was not rendered)")


def localized(rel: str, lang: str) -> str:
    """A page's file name in ``lang`` (the plugin's suffix layout): ``fields/f1.md`` -> ``fields/f1.zh.md``."""
    return rel if lang == DEFAULT_LANGUAGE else f"{rel[:-3]}.{lang}.md"
