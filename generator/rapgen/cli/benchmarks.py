"""One site, several benchmarks (KINDS.md §8): ``rapgen.toml`` and the ``--benchmark SLUG`` option.

``rapgen.toml`` in the current folder lists the benchmarks::

    [site]
    title = "rapgen"
    default = "rap"

    [[benchmark]]
    slug = "rap"
    root = "."          # the folder holding SHA256SUMS and archive/, relative to rapgen.toml
    kind = "rap"        # optional: names the kind in errors and on the portal before anything is verified

A command given ``--benchmark SLUG`` works on that benchmark's root; given
``--root DIR``, on that folder; given neither, on the ``default`` benchmark (or,
without ``rapgen.toml``, on ``.``), so every command reads what it read before;
``rapgen build`` given neither builds the portal of every listed benchmark when the file
lists several (docs/site.md).
A benchmark whose kind is not installed, or whose root is missing, is an error
only when it is selected. Every problem of the file is one line naming the file,
the line and the problem (exit 2).
"""

from __future__ import annotations

import functools
import inspect
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click

from rapgen.cli.common import benchmark_kinds, fail
from rapgen.errors import RapgenError, UsageProblem

CONFIG_NAME = "rapgen.toml"
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
SITE_KEYS = {"title", "default"}
BENCHMARK_KEYS = {"slug", "root", "kind", "title", "label"}


@dataclass(frozen=True)
class Benchmark:
    slug: str
    root: Path  # resolved against the folder of rapgen.toml
    kind: str | None = None
    title: str | None = None
    label: str | None = None  # the benchmark's short name (a tab of the site); default its slug


@dataclass(frozen=True)
class SiteConfig:
    path: Path | None  # None: no rapgen.toml, one benchmark at "."
    title: str
    default: str | None
    benchmarks: tuple[Benchmark, ...]

    def benchmark(self, slug: str) -> Benchmark:
        for b in self.benchmarks:
            if b.slug == slug:
                return b
        known = ", ".join(b.slug for b in self.benchmarks) or "none"
        raise UsageProblem(f"--benchmark {slug!r}: {self._name()} lists no such benchmark (listed: {known})")

    def _name(self) -> str:
        return str(self.path) if self.path is not None else f"./{CONFIG_NAME} (absent)"


def _problem(path: Path, line: int | None, detail: str) -> UsageProblem:
    return UsageProblem(f"{path}{f':{line}' if line else ''}: {detail}")


def _header_lines(text: str, header: str) -> list[int]:
    """1-based line numbers of each ``header`` table line (``[[benchmark]]``), in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().split("#", 1)[0].strip() == header]


def _string(value: Any, what: str, path: Path, line: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _problem(path, line, f"{what} must be a non-empty string, found {value!r}")
    return value


def read_config(folder: str | Path = ".") -> SiteConfig:
    """``rapgen.toml`` of ``folder`` (without one: no benchmark list, the root is ``.``)."""
    path = Path(folder) / CONFIG_NAME
    if not path.is_file():
        return SiteConfig(None, "rapgen", None, ())
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise _problem(path, None, f"not valid UTF-8 at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        raise _problem(path, int(where.group(1)) if where else None, f"not TOML: {str(exc).split(' (at line')[0]}") from None
    except OSError as exc:
        raise _problem(path, None, f"cannot be read ({exc.strerror})") from None
    unknown = sorted(set(data) - {"site", "benchmark"})
    if unknown:
        raise _problem(path, None, f"unknown table {unknown[0]!r} (rapgen.toml has [site] and [[benchmark]])")
    site = data.get("site", {})
    site_line = (_header_lines(text, "[site]") or [None])[0]
    if not isinstance(site, dict) or sorted(set(site) - SITE_KEYS):
        raise _problem(path, site_line, f"[site] takes {', '.join(sorted(SITE_KEYS))}")
    entries = data.get("benchmark", [])
    lines = _header_lines(text, "[[benchmark]]")
    if not isinstance(entries, list) or not entries:
        raise _problem(path, None, "lists no [[benchmark]]")
    out: list[Benchmark] = []
    for n, entry in enumerate(entries):
        line = lines[n] if n < len(lines) else None
        extra = sorted(set(entry) - BENCHMARK_KEYS)
        if extra:
            raise _problem(path, line, f"benchmark {n + 1}: unknown key {extra[0]!r} (keys: {', '.join(sorted(BENCHMARK_KEYS))})")
        for key in ("slug", "root"):
            if key not in entry:
                raise _problem(path, line, f"benchmark {n + 1}: missing key {key!r}")
        slug = _string(entry["slug"], f"benchmark {n + 1}: 'slug'", path, line)
        if not SLUG.match(slug):
            raise _problem(path, line, f"benchmark {n + 1}: slug {slug!r} does not match {SLUG.pattern}")
        if any(b.slug == slug for b in out):
            raise _problem(path, line, f"benchmark {n + 1}: slug {slug!r} is listed twice")
        root = _string(entry["root"], f"benchmark {slug!r}: 'root'", path, line)
        if Path(root).is_absolute() or ".." in Path(root).parts:
            raise _problem(path, line, f"benchmark {slug!r}: root {root!r} must be a relative path inside the repository")
        kind = _string(entry["kind"], f"benchmark {slug!r}: 'kind'", path, line) if "kind" in entry else None
        title = _string(entry["title"], f"benchmark {slug!r}: 'title'", path, line) if "title" in entry else None
        label = _string(entry["label"], f"benchmark {slug!r}: 'label'", path, line) if "label" in entry else None
        out.append(Benchmark(slug, path.parent / root, kind, title, label))
    default = site.get("default", out[0].slug)
    if default not in {b.slug for b in out}:
        raise _problem(path, site_line, f"[site] default {default!r} is not a listed benchmark")
    title = _string(site.get("title", "rapgen"), "[site] title", path, site_line)
    return SiteConfig(path, title, default, tuple(out))


def select(root: Path | None, slug: str | None, kinds: Any = None) -> tuple[Path, Benchmark | None]:
    """The root a command works on: ``--root``, ``--benchmark`` (its kind installed, its root there), or the default."""
    if root is not None and slug is not None:
        raise UsageProblem("give --root or --benchmark, not both")
    if root is not None:
        return root, None
    config = read_config()
    if slug is None:
        if config.default is None:
            return Path("."), None
        chosen = config.benchmark(config.default)
        return chosen.root, chosen
    if config.path is None:
        raise UsageProblem(f"--benchmark {slug!r}: there is no {CONFIG_NAME} in the current folder to list benchmarks (use --root DIR)")
    chosen = config.benchmark(slug)
    if chosen.kind is not None and kinds is not None and chosen.kind not in kinds:
        raise UsageProblem(f"benchmark {slug!r} is of kind {chosen.kind!r}, which this rapgen does not have "
                           f"(installed kinds: {', '.join(kinds)})")
    if not chosen.root.is_dir():
        raise UsageProblem(f"benchmark {slug!r}: its root {chosen.root} is not a folder")
    return chosen.root, chosen


def site_benchmarks(kinds: Any, asked: str = "--all") -> tuple[SiteConfig, list[Benchmark], list[str]]:
    """Every benchmark of rapgen.toml that can be built (its kind installed, its root there), and a note
    for each one left out; ``asked`` names what asked for them in an error."""
    config = read_config()
    if config.path is None:
        raise UsageProblem(f"{asked}: there is no {CONFIG_NAME} in the current folder to list benchmarks")
    chosen, notes = [], []
    for b in config.benchmarks:
        if b.kind is not None and b.kind not in kinds:
            notes.append(f"skipped benchmark {b.slug!r}: its kind {b.kind!r} is not installed")
        elif not b.root.is_dir():
            notes.append(f"skipped benchmark {b.slug!r}: its root {b.root} is not a folder")
        else:
            chosen.append(b)
    if not chosen:
        raise UsageProblem(f"{asked}: no benchmark of {config.path} can be built ({'; '.join(notes)})")
    return config, chosen, notes


def rap_only(root: Path, what: str) -> None:
    """``what`` reads RAP archives only (its kind-neutral form is a later phase): the root of another
    installed kind is a usage error naming it. An unreadable ARCHIVE.json is left to the command's checks."""
    import json

    from rapgen.archive import RAP_ARCHIVE

    try:
        fmt = json.loads((Path(root) / "archive" / "ARCHIVE.json").read_bytes()).get("format")
    except (OSError, ValueError, AttributeError):
        return
    kind = next((k for k in benchmark_kinds().values() if k.format == fmt), None)
    if kind is not None and kind.format != RAP_ARCHIVE.format:
        raise UsageProblem(f"{root}: {what} reads RAP archives only in this rapgen; this root is of kind {kind.name!r}")


def benchmark_root_option(f: Callable) -> Callable:
    """``--root DIR`` or ``--benchmark SLUG`` (rapgen.toml); the command receives the chosen ``root``
    (and, if it takes a ``benchmark`` parameter, the chosen :class:`Benchmark` or None)."""
    wants = "benchmark" in inspect.signature(f).parameters

    @functools.wraps(f)
    def wrapper(*args: Any, benchmark: str | None = None, **kwargs: Any) -> Any:
        try:
            kwargs["root"], chosen = select(kwargs.get("root"), benchmark, benchmark_kinds() if benchmark else None)
        except RapgenError as exc:
            fail(str(exc), exc.exit_code)
        if wants:
            kwargs["benchmark"] = chosen if benchmark is not None else None
        return f(*args, **kwargs)

    wrapper = click.option("--benchmark", default=None, metavar="SLUG",
                           help=f"A benchmark listed in {CONFIG_NAME} (default: its [site] default; without the file, the root '.').")(wrapper)
    return click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Root folder that holds SHA256SUMS and archive/ (instead of --benchmark).")(wrapper)
