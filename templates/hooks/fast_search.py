"""mkdocs hook: the same search index and anchor checks with less work per page.

Two parts of every page's build parse HTML with Python's ``html.parser`` only to collect
things, never to report a position: Material's search plugin (``Parser``, the text of each
section of the rendered page) and mkdocs' scan of the Markdown's raw HTML for anchor ids
(``_HTMLHandler``). ``HTMLParser`` counts the lines and columns of every token it passes
(``updatepos``) for ``getpos()``, which neither of them calls: here they skip the count.
``HTMLParser`` itself never reads the position either, so each sees the same tokens.

The search plugin's ``Parser`` is also replaced (in the plugin's module, where each page
looks it up) by a subclass whose callbacks test the open tags as strings instead of
comparing ``Element`` objects in Python; it returns the same sections
(``tests/test_site_search_parser.py`` compares the two on every page of the sample build).

The search plugin segments every run of Chinese characters of every section with jieba,
the same runs on page after page (the labels, the column names): each distinct run is cut
once and its segmentation remembered (jieba's cut of a string depends on the string and the
dictionary alone), and a text with no character outside ASCII, which holds no Chinese, is
returned as it is, as the plugin's substitution would return it. The cuts are also kept
between builds (:class:`_Cuts`, a small JSON file keyed by jieba's version and the sha256 of
its dictionary), so that a build whose Chinese runs were all cut before never loads jieba's
dictionary (1.2-1.5 s, on the Chinese build's path).

Each page's sections for the index (those ``Parser`` returns and the index keeps: their id,
title and text) are a function of the page's HTML alone, so they are kept between builds too
(:class:`_Sections`, keyed by the sha256 of the HTML, in a file per language whose name carries
Material's version, Python's and the sha256 of this file): a page whose HTML is the same as in the
last build is not parsed again. Each build writes back the sections of its own pages only.

mkdocs' anchor scan reads the whole Markdown source of every page with ``html.parser`` to
collect the ids of its raw HTML, but the set is read only to check a link to an anchor of that
page (``Page.validate_anchor_links``), and few pages are the target of one: the scan is
deferred to the first question asked of the set (:class:`_LazyAnchors`), and a page nobody
links into by anchor is never scanned. The answers, and so the log, are the same.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Set
from pathlib import Path

from rapgen.io import CACHE_ENV, atomic_write_text


def _no_position(self, i, j):  # HTMLParser.updatepos without the line and column count
    return j


def _fast_parser(search):
    """A subclass of Material's ``Parser`` whose callbacks keep the tags of the open elements
    as strings beside its elements, so that each membership test the original makes by
    comparing ``Element`` objects (``__eq__`` and ``__hash__`` in Python, once per open element
    per token) is a comparison of strings in C. ``Element`` compares and hashes by its tag
    alone, so the original's ``skip`` set holds at most one entry per tag and behaves as a set
    of tags; every test below asks the same question of the tags that the original asks of
    the elements, in the same order, with the same effects on ``data``."""
    Parser, Element, Section, escape, void = search.Parser, search.Element, search.Section, search.escape, search.void
    headings = frozenset(f"h{x}" for x in range(1, 7))

    class FastParser(Parser):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.skip = {"object", "script", "style"}  # tags (see above)
            self.tags = []  # the tag of each element of self.context

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            el = Element(tag, attrs)
            if tag in void:
                return
            self.context.append(el)
            self.tags.append(tag)
            if tag in headings:
                depth = len(self.context)
                if "id" in attrs:
                    if tag != "h1" and not self.data:
                        self.section = Section(Element("hx"), depth)
                        self.data.append(self.section)
                    self.section = Section(el, depth)
                    if self.data:
                        self.section.id = attrs["id"]
                    self.data.append(self.section)
            if not self.section:
                self.section = Section(Element("hx"))
                self.data.append(self.section)
            if "data-search-exclude" in attrs or attrs.get("class", None) == "linenodiv":
                # the original's loop returns at the first of the two it meets; both add el
                self.skip.add(tag)
                return
            if tag in self.keep and self.skip.isdisjoint(self.tags):
                data = self.section.title if self.section.el.tag in self.tags else self.section.text
                data.append(f"<{tag}>")

        def handle_endtag(self, tag):
            tags = self.tags
            if not tags or tags[-1] != tag:
                return
            if self.section.depth > len(tags):
                for section in reversed(self.data):
                    if section.depth <= len(tags):
                        self.section.depth = float("inf")
                        self.section = section
                        break
            self.context.pop()
            tags.pop()
            if tag in self.skip:
                if tag not in ("script", "style", "object"):
                    self.skip.remove(tag)
                return
            if tag in self.keep and self.skip.isdisjoint(tags):
                data = self.section.title if self.section.el.tag in tags else self.section.text
                index = data.index(f"<{tag}>")
                for i in range(index + 1, len(data)):
                    if not data[i].isspace():
                        index = len(data)
                        break
                if len(data) > index:
                    del data[index:]
                else:
                    data.append(f"</{tag}>")

        def handle_data(self, data):
            tags = self.tags
            if not self.skip.isdisjoint(tags):
                return
            pre = "pre" in tags
            if not pre:
                if not data.isspace():
                    data = data.replace("\n", " ")
                else:
                    data = " "
            if not self.section:
                self.section = Section(Element("hx"))
                self.data.append(self.section)
            section = self.section
            if section.el.tag in tags:
                permalink = False
                for el in self.context:
                    if el.tag == "a" and el.attrs.get("class") == "headerlink":
                        permalink = True
                if not permalink:
                    section.title.append(escape(data, quote=False))
            elif data.isspace():
                text = section.text
                if not text or not text[-1].isspace():
                    text.append(data)
                elif pre:
                    text.append(data)
            else:
                section.text.append(escape(data, quote=False))

    FastParser.updatepos = _no_position
    return FastParser


class _LazyAnchors(Set):
    """The anchor ids of a page's raw HTML (mkdocs' ``_HTMLHandler`` over its Markdown source),
    scanned when first asked; ``ids | lazy`` (the ids of the page's headings with these, as
    ``Page.render`` writes it) is lazy too. A read-only set: membership, iteration and size."""

    __slots__ = ("_text", "_extra", "_ids")

    def __init__(self, text: str, extra=frozenset()):
        self._text, self._extra, self._ids = text, extra, None

    def _get(self) -> set:
        if self._ids is None:
            from mkdocs.structure.pages import _HTMLHandler

            parser = _HTMLHandler()
            parser.feed(self._text)
            parser.close()
            self._ids, self._text = set(self._extra) | parser.present_anchor_ids, None
        return self._ids

    def __contains__(self, item) -> bool:
        return item in self._extra or item in self._get()

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __ror__(self, other):  # set | lazy: the heading ids with these
        if isinstance(other, (set, frozenset)) and self._ids is None:
            return _LazyAnchors(self._text, frozenset(other) | self._extra)
        return set(other) | self._get()

    def __repr__(self) -> str:
        return f"_LazyAnchors({self._get()!r})"


def _deferred_scan(self, lines):  # _RawHTMLPreprocessor.run, the scan left for later
    self.present_anchor_ids = _LazyAnchors("\n".join(lines))
    return lines


class _Cuts(dict):
    """Han run -> its segmentation (the runs joined by U+200B and framed by it), read from the file
    of earlier builds when a run is first missed, the new ones written back after the build
    (:func:`on_post_build`). The file is ``$RAPGEN_CACHE/site/`` (else a folder of this user's in the
    temporary folder, where jieba keeps its own dictionary cache) ``jieba-cuts-<key>.json``, the key made of jieba's version
    and its dictionary's sha256, so another dictionary or version never reads these cuts. Nothing
    is kept when a user dictionary is configured (``search.jieba_dict_user``)."""

    def __init__(self, jieba):
        super().__init__()
        self.jieba, self.new, self.path, self.loaded, self.enabled = jieba, {}, None, False, True

    def cut(self, value: str) -> str:
        found = self.get(value)
        if found is None and not self.loaded:
            self._load()
            found = self.get(value)
        if found is None:
            found = self[value] = self.new[value] = "".join(
                ["\u200b", "\u200b".join(self.jieba.cut(value.encode("utf-8"))), "\u200b"])
        return found

    def _file(self) -> Path | None:
        if self.path is None and self.enabled:
            try:
                with self.jieba.dt.get_dict_file() as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                self.enabled = False
                return None
            key = hashlib.sha256(f"{self.jieba.__version__}\0cut HMM\0{digest}".encode()).hexdigest()[:20]
            self.path = _cache_folder() / f"jieba-cuts-{key}.json"
        return self.path if self.enabled else None

    def _read(self, path: Path) -> dict:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        # a cut is its run framed and split by U+200B: anything else (another run's, a damaged file) is not kept
        ok = isinstance(data, dict) and all(
            isinstance(k, str) and isinstance(v, str) and v.startswith("\u200b") and v.endswith("\u200b")
            and v.replace("\u200b", "") == k for k, v in data.items())
        return data if ok else {}

    def _load(self) -> None:
        self.loaded = True
        path = self._file()
        if path is not None:
            for value, cut in self._read(path).items():
                self.setdefault(value, cut)

    def save(self) -> None:
        path = self._file() if self.new else None
        if path is None:
            return
        merged = {**self._read(path), **self.new}
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(merged, ensure_ascii=False, sort_keys=True))
        except OSError:
            return
        self.new = {}


_CUTS: list = []  # the one _Cuts of this process, once jieba is there


def _cache_folder() -> Path:
    """``$RAPGEN_CACHE/site``, else a folder of this user's in the temporary folder (where jieba keeps its own)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / "site"
    return Path(tempfile.gettempdir()) / f"rapgen-site-{getattr(os, 'getuid', lambda: 0)()}"


class _Section:
    """A section as ``create_entry_for_section`` reads it: its id, title and text (lists of strings)."""

    __slots__ = ("id", "title", "text")

    def __init__(self, id, title, text):
        self.id, self.title, self.text = id, title, text


class _Sections:
    """sha256 of a page's HTML -> the kept sections of it, ``[id, title, text]`` each, read from the
    file of the last build of the same language at the first page, parsed where missing; the file is
    written again after the build (:func:`on_post_build`) when it does not hold exactly this build's
    pages. Only what the index reads of a section is kept, and each page gets new lists."""

    def __init__(self, search, key: str):
        self.search, self.key = search, key
        self.known: dict | None = None
        self.used: dict = {}
        self.part = ""  # the language built (on_env)

    def path(self) -> Path:
        return _cache_folder() / f"search-sections-{self.key}-{self.part or 'site'}.json"

    def of(self, html: str) -> list:
        digest = hashlib.sha256(html.encode("utf-8")).hexdigest()
        found = self.used.get(digest)
        if found is None:
            if self.known is None:
                self.known = self._read()
            found = self.known.get(digest)
            if found is None:
                parser = self.search.Parser()
                parser.feed(html)
                parser.close()
                found = [[s.id, s.title, s.text] for s in parser.data if not s.is_excluded()]
            self.used[digest] = found
        return [_Section(i, list(title), list(text)) for i, title, text in found]

    def _read(self) -> dict:
        try:
            data = json.loads(self.path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        def strings(v):
            return isinstance(v, list) and all(isinstance(x, str) for x in v)
        ok = isinstance(data, dict) and all(
            isinstance(k, str) and isinstance(v, list) and all(
                isinstance(e, list) and len(e) == 3 and (e[0] is None or isinstance(e[0], str)) and strings(e[1])
                and strings(e[2]) for e in v) for k, v in data.items())
        return data if ok else {}

    def save(self) -> None:
        if not self.used or self.used == self.known:
            return
        try:
            self.path().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write_text(self.path(), json.dumps(self.used, ensure_ascii=False, sort_keys=True))
        except OSError:
            return
        self.known = self.used


_SECTIONS: list = []  # the one _Sections of this process


def on_config(config):
    """No kept cuts with a user dictionary (Material loads it into jieba at its own ``on_config``)."""
    plugin = config.plugins.get("material/search") or config.plugins.get("search")
    if _CUTS and plugin is not None and getattr(plugin.config, "jieba_dict_user", None):
        _CUTS[0].enabled = False
    return config


def _event_priority(priority):
    try:
        from mkdocs.plugins import event_priority
    except ImportError:  # pragma: no cover - mkdocs is what loads this hook
        return lambda f: f
    return event_priority(priority)


def on_env(env, config, files):
    """The language this process builds, which names its file of kept sections."""
    plugin = config.plugins.get("i18n")
    if _SECTIONS and plugin is not None:
        _SECTIONS[0].part = str(getattr(plugin, "current_language", "") or "")
    return env


@_event_priority(-300)  # after parallel_languages.py's (-200), which waits for the other language's build
def on_post_build(config):
    if _CUTS:
        _CUTS[0].save()
    if _SECTIONS:
        _SECTIONS[0].save()


def _install() -> None:
    try:
        from material.plugins.search import plugin as search
    except ImportError:  # pragma: no cover - the theme is a dependency
        search = None
    if search is not None and not getattr(search.SearchIndex, "_rapgen_fast", False):
        search.Parser.updatepos = _no_position
        search.OriginalParser = search.Parser  # what tests/test_site_search_parser.py compares against
        search.Parser = _fast_parser(search)  # add_entry_from_context looks the name up per page
        version = getattr(importlib.import_module("material"), "__version__", "")
        code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
        sections = _Sections(search, hashlib.sha256(f"{version}\0{sys.version}\0{code}".encode()).hexdigest()[:20])
        _SECTIONS.append(sections)

        def add_entry_from_context(self, page):  # Material's, the sections kept or parsed by _Sections
            if (page.meta.get("search") or {}).get("exclude"):
                return
            for section in sections.of(page.content):
                self.create_entry_for_section(section, page.toc, page.url, page)

        search.SearchIndex.add_entry_from_context = add_entry_from_context
        jieba, bre = search.jieba, search.bre
        if jieba is not None:
            han = bre.compile(r"(\p{script: Han}+)", bre.UNICODE)
            cuts = _Cuts(jieba)
            _CUTS.append(cuts)

            def replace(match):
                value = match.group(0)
                return cuts.get(value) or cuts.cut(value)

            def _segment_chinese(self, data):
                if data.isascii():  # no Han character: the substitution changes nothing, strip("\u200b") neither
                    return data
                return han.sub(replace, data).strip("\u200b")

            search.SearchIndex._segment_chinese = _segment_chinese
        search.SearchIndex._rapgen_fast = True
    from mkdocs.structure import pages

    handler = getattr(pages, "_HTMLHandler", None)
    if handler is not None:
        handler.updatepos = _no_position
    raw = getattr(pages, "_RawHTMLPreprocessor", None)
    if raw is not None and handler is not None:
        raw.run = _deferred_scan


_install()  # when mkdocs loads the hooks, before any page is built
