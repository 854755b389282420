"""Benchmark kinds: RAP and its siblings, each a plug-in on one engine (KINDS.md).

:func:`registry` imports every subpackage of this package in name order (``pkgutil``)
and collects its ``KIND``; :class:`Registry` refuses two kinds with one name or one
``format``. Only the orchestrating stages (``pipeline``, ``cli``, ``submit``) import this
package: they pass ``registry().formats`` to ``verify_archive`` and call the chosen
kind's ``score`` and ``site``. The contract is :mod:`rapgen.kinds.base`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from types import MappingProxyType

from rapgen.errors import RapgenError
from rapgen.kinds.base import BenchmarkKind

__all__ = ["BenchmarkKind", "Registry", "discover", "registry"]


class Registry(Mapping[str, BenchmarkKind]):
    """Kinds by name, in the order given; ``formats`` maps ARCHIVE.json's ``format`` to each
    kind's :class:`~rapgen.kinds.base.ArchiveKind` (what ``verify_archive`` takes)."""

    def __init__(self, kinds: Iterable[BenchmarkKind]) -> None:
        by_name: dict[str, BenchmarkKind] = {}
        by_format: dict[str, BenchmarkKind] = {}
        for kind in kinds:
            if kind.name in by_name:
                raise RapgenError(f"two benchmark kinds are named {kind.name!r}")
            if kind.format in by_format:
                raise RapgenError(f"kinds {by_format[kind.format].name!r} and {kind.name!r} both read format {kind.format!r}")
            by_name[kind.name] = kind
            by_format[kind.format] = kind
        self._by_name = by_name
        self._by_format = by_format

    def __getitem__(self, name: str) -> BenchmarkKind:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    @property
    def formats(self) -> Mapping[str, object]:
        return MappingProxyType({f: k.archive for f, k in self._by_format.items()})

    def for_format(self, fmt: str) -> BenchmarkKind:
        """The kind reading ``fmt``; a RapgenError naming the known formats otherwise."""
        try:
            return self._by_format[fmt]
        except KeyError:
            raise RapgenError(f"no benchmark kind reads format {fmt!r} (known: {', '.join(sorted(self._by_format))})") from None

    def plus(self, *kinds: BenchmarkKind) -> Registry:
        """This registry and ``kinds`` (a kind defined outside the package, e.g. in tests)."""
        return Registry([*self.values(), *kinds])


def discover(package: str = __name__) -> Registry:
    """Import each subpackage of ``package`` in name order and collect its ``KIND``."""
    module = importlib.import_module(package)
    found = []
    for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        sub = importlib.import_module(f"{package}.{info.name}")
        kind = getattr(sub, "KIND", None)
        if not isinstance(kind, BenchmarkKind):
            raise RapgenError(f"{package}.{info.name}: a kind package must define KIND, a BenchmarkKind")
        found.append(kind)
    return Registry(found)


@lru_cache(maxsize=1)
def registry() -> Registry:
    """Every kind shipped with rapgen (discovered once)."""
    return discover()
