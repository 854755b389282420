"""mkdocs hook: the second language's build runs in a forked process beside the first.

mkdocs-static-i18n builds the languages one after the other in one process: the default
language (English, at the root), then, from its ``on_post_build``, each other language
(Chinese, under ``zh/``) into the same site folder, and finally one search index of both.
Each build is one CPU-bound Python process, so on two cores the two can run side by side.

When the English build has its files and navigation (``on_nav``, run after the plugin's own
and every other hook's: from there on the English build only converts, renders and writes
its own pages, nothing a later Chinese build reads), this hook forks, so the two languages'
Markdown is converted side by side too. The child builds
Chinese exactly as the plugin would (same plugin objects and configuration, the language
switched, the site folder not emptied), but into a folder of its own next to the site,
and sends back its search entries. The parent finishes English; after the plugin's own
``on_post_build`` (which, told the other languages are being built, only records the
English search entries) it waits for the child and lays its output over the site, as the
serial build's later writes would: ``zh/`` moved into place, every other file the Chinese
build wrote copied over the English one, except the Chinese ``404.html``, which goes to
``zh/404.html`` (what ``i18n_alternate.py`` does). Then the plugin writes the one search
index from both languages' entries, as it does after a serial build.

Both builds copy the same static files (the downloads, scripts and the theme's assets, some
70 MB) from the same sources to the same places outside ``zh/``. The child does not write
its copies: it sends back the (source, destination) of each, and the parent copies a file
only where its own build did not copy that same source to that destination, so the site
holds the same bytes as when the child's copies were laid over the parent's. What the child
did write is moved into place, not copied.

Only ``mkdocs build`` forks (not ``serve``), only where ``os.fork`` exists, and only with
exactly two languages built; otherwise the plugin builds serially as before. A failed
Chinese build fails the whole build with the child's message.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.exceptions import Abort
from mkdocs.plugins import event_priority

_STATE: dict = {}  # "command"; "child": (pid, read end, folder) while the other language builds
_COPIED: dict = {}  # destination -> source of each static file this process's build copied (or, in the child, left out)
_FORWARD: list = []  # in the child: True once its static copies are to be sent back instead of written


def on_startup(command, dirty):
    _STATE["command"] = command
    _watch_copies()


def _watch_copies() -> None:
    """Record each static file copied from its source (``File.copy_file`` without generated content);
    in the child, record it without writing it (the parent copies it where its own build did not)."""
    from mkdocs.structure.files import File

    if getattr(File.copy_file, "_rapgen_watch", False):
        return
    copy = File.copy_file

    def copy_file(self, dirty: bool = False) -> None:
        if self._content is None and self.abs_src_path is not None and not (dirty and not self.is_modified()):
            _COPIED[self.dest_uri] = self.abs_src_path
            if _FORWARD:
                return
        copy(self, dirty)

    copy_file._rapgen_watch = True
    File.copy_file = copy_file


def _i18n(config):
    plugin = config.plugins.get("i18n")
    if plugin is None or len(plugin.build_languages) != 2 or plugin.current_language != plugin.default_language:
        return None
    return plugin


@event_priority(-200)  # after the i18n plugin's on_nav (-100) and the other hooks'
def on_nav(nav, config, files):
    plugin = _i18n(config)
    if plugin is None or plugin.building or "child" in _STATE or _STATE.get("command") != "build" or not hasattr(os, "fork"):
        return nav
    other = next(lang for lang in plugin.build_languages if lang != plugin.default_language)
    site = Path(config.site_dir)
    folder = Path(tempfile.mkdtemp(prefix=".rapgen-lang-", dir=site.parent))
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: build the other language, report, and never return into this build
        os.close(read)
        status = 0
        try:
            _build_other(config, plugin, other, folder, write)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the build
            os.write(write, pickle.dumps(("error", f"{type(exc).__name__}: {exc}")))
            status = 1
        finally:
            os.close(write)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    os.close(write)
    plugin.building = True  # its on_post_build then only records this language's search entries
    _STATE["child"] = (pid, read, folder)
    return nav


def _build_other(config, plugin, language: str, folder: Path, write: int) -> None:
    from mkdocs import utils
    from mkdocs.commands.build import build

    plugin.current_language = language
    plugin.building = True
    plugin.search_entries = []
    config.site_dir = str(folder)
    utils.clean_directory = lambda path: path  # as the plugin does for its later builds
    _COPIED.clear()
    _FORWARD.append(True)
    build(config)
    os.write(write, pickle.dumps(("ok", plugin.search_entries, dict(_COPIED))))


def _receive(read: int) -> tuple:
    chunks = []
    while chunk := os.read(read, 1 << 20):
        chunks.append(chunk)
    os.close(read)
    return pickle.loads(b"".join(chunks)) if chunks else ("error", "the build of the other language ended without a word")


def _move_over(entry: Path, target: Path) -> None:
    """``entry`` in place of ``target``: a folder merged into one that exists, file by file."""
    if entry.is_dir() and target.is_dir():
        for child in sorted(entry.iterdir()):
            _move_over(child, target / child.name)
    else:
        os.replace(entry, target)


def _lay_over(folder: Path, site: Path, language: str, copies: dict[str, str]) -> None:
    """The other language's output over this one's, as its later writes in a serial build:
    ``copies`` (destination -> source) are its static files, copied here only where this build
    did not copy the same source to the same place."""
    for entry in sorted(folder.iterdir()):
        if entry.name == "404.html":
            (site / language).mkdir(parents=True, exist_ok=True)
            os.replace(entry, site / language / "404.html")
        else:
            _move_over(entry, site / entry.name)
    from mkdocs import utils

    for dest, source in sorted(copies.items()):
        if _COPIED.get(dest) != source:
            utils.copy_file(source, str(site / dest))


@event_priority(-200)  # after the i18n plugin's on_post_build (-100)
def on_post_build(config):
    child = _STATE.pop("child", None)
    if child is None:
        return
    pid, read, folder = child
    plugin = config.plugins["i18n"]
    try:
        outcome = _receive(read)
        _, status = os.waitpid(pid, 0)
        if outcome[0] != "ok" or status != 0:
            raise Abort(f"the build of the second language failed: {outcome[1] if outcome[0] != 'ok' else 'exit ' + str(status)}")
        language = next(lang for lang in plugin.build_languages if lang != plugin.default_language)
        _lay_over(folder, Path(config.site_dir), language, outcome[2])
        plugin.current_language = language
        plugin.search_entries.extend(outcome[1])
        plugin.reconfigure_search_index(config)
    finally:
        plugin.building = False
        shutil.rmtree(folder, ignore_errors=True)
