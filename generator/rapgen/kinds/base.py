"""The contract of a benchmark kind (KINDS.md §3): what a kind declares, as frozen data.

A **kind** is a plug-in: its files, units, metrics, tracks and pages. A **benchmark** is
one root (``SHA256SUMS`` + ``archive/``) of one kind, chosen by ``ARCHIVE.json``'s
``format``. Every stage takes one **release** of a benchmark: ``verify_archive`` builds
a :class:`~rapgen.archive.VerifiedRoot` from the bytes it hashed, and ``root.release(n)``
returns the kind's :class:`~rapgen.archive.Release` view of release n (the files it
listed, each parsed once, cached). Score, replay, render and the submission check take
that release.

A kind is a subpackage of :mod:`rapgen.kinds` whose ``__init__`` defines ``KIND``, a
:class:`BenchmarkKind`; :func:`rapgen.kinds.registry` finds them. Each declaration is read
by the engine stage that uses it, so it is defined there and re-exported here:

==================  =============================  ======================================
declaration         defined in                     read by
==================  =============================  ======================================
ArchiveKind         ``rapgen.archive.kind``        ``verify_archive``, ``root.release``
HistorySpec         ``rapgen.archive.history``     releases, rolls, ``--release N``
MetricSpec, …       ``rapgen.scores.spec``         the scorer (KINDS.md §4)
PageSpec, SiteSpec  ``rapgen.site.spec``           ``render``
SearchSpec          ``rapgen.search.spec``         Search and the kit
KitSpec, KitCommand ``rapgen.kit.spec``            ``rapgen prompt``, ``serve-search``, ``agent run``, ``reference-agents``
ReviewSpec          here                           ``submit check``
==================  =============================  ======================================

The unit of a kind is a tuple of key names (RAP: field_id, origin, condition); its
**item** is the key its metrics average over and its clusters group (RAP: field_id;
Ideas: episode_id; Inspire: instance_id).

What a kind writes, in the order the engine calls it:

1. ``archive.check(CheckInput) -> KindCheck`` — verify's structural stage, on the verified
   bytes only (``inp.documents``); its ``state`` is kept on the :class:`VerifiedRoot`.
2. ``archive.open(root, view) -> Release`` — the kind's view of one release (a subclass of
   :class:`Release` with the kind's documents; ``root.state`` holds what ``check`` parsed,
   ``release.parsed(path, parser)`` parses a file an errata release replaced).
3. ``score(release, *, resamples=None, malformed=None, **options)`` and
   ``write_scores(result, out_dir)``; ``malformed`` is the Search-call predicate (a kind
   without Search ignores it).
4. ``site`` — rendered by :func:`rapgen.site.render_release` (the kind's own ``render``, or its
   ``pages`` one by one); ``replay`` and ``summary`` when the kind has them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rapgen.archive import ArchiveKind, CheckInput, HistorySpec, KindCheck, Release, VerifiedRoot
from rapgen.scores import AxisSpec, ClusterSpec, MetricSpec, Primary, TrackSpec
from rapgen.kit import KitCommand, KitSpec
from rapgen.search import SearchSpec
from rapgen.site import PageSpec, SiteSpec

__all__ = [
    "ArchiveKind", "AxisSpec", "BenchmarkKind", "CheckInput", "ClusterSpec", "HistorySpec", "KindCheck", "KitCommand", "KitSpec", "MetricSpec",
    "PageSpec", "Primary", "Release", "ReviewSpec", "ReviewTable", "SearchSpec", "SiteSpec", "TrackSpec", "VerifiedRoot",
]


@dataclass(frozen=True)
class ReviewTable:
    """A table of the pull-request report: a title, column names, rows of plain values (each
    text escaped when rendered) and a note printed under it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class ReviewSpec:
    """What ``submit check`` reads of a kind (KINDS.md §6): the files a submission holds and
    their size limits, and the kind's parsing, coverage, accounting and preview steps.

    ``files`` are the names a model folder may hold, relative to it (``*`` stands for one
    path segment, e.g. ``eval/*/judgments.parquet``); ``required`` those it must hold;
    ``size_limits`` (pattern, bytes) pairs, the first match applying (a file no pattern
    matches holds at most 64 MiB). The steps, called by the engine in this order:

    - ``parse(release, files, model_id) -> (state, findings)``: the folder's files (name ->
      bytes; model.json is the engine's) read with the kind's own parsers and checked against
      ``release``, the verified base archive, exactly as verify checks a listed model; every
      finding's path is the archive path ``archive/models/<model_id>/<name>``;
    - ``coverage(release, state)``, ``accounting(release, state)`` and ``preview_row(release,
      state, limit)`` -> a :class:`ReviewTable` each (None: nothing to show); called only when
      ``parse`` found no problem, so they may assume a well-formed submission — except
      ``coverage``, which is also called when the only problems are ``COVERAGE`` findings of
      the folder as a whole (path ``archive/models/<model_id>``, no line: every file parsed,
      and the table shows the gap).
    """

    files: tuple[str, ...]
    required: tuple[str, ...] = ()
    size_limits: tuple[tuple[str, int], ...] = ()
    parse: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    coverage: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    accounting: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    preview_row: Callable[..., Any] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class BenchmarkKind:
    """One kind: its ``name`` (the registry's key and the site's slug prefix), its archive,
    its unit and item, what it scores and how, and its pages.

    ``score(release, *, resamples=None, **options) -> result`` computes every score of one
    release; ``write_scores(result, out_dir) -> list[Path]`` writes them; ``replay(release,
    scores_dir, *, beside=None) -> bool`` re-executes its recorded Search calls into the score
    folder (True if it ran; None for a kind without Search), running ``beside`` (the build's
    score step, which writes the score folder, and may return what the score made for the replay:
    RAP's counterfactual plan) exactly once, before or while the calls replay;
    ``summary(result) -> (fields, lines)`` is what ``rapgen score`` prints (``--json``: the
    fields); ``sample(out, **options)`` builds its sample archive; ``synth(out, *, scale,
    seed, force) -> dict`` writes an entirely synthetic archive (``rapgen synth --kind``; the
    summary's ``text`` is what the command prints);
    ``evaluate(release, **options) -> dict`` runs the kind's evaluator on one model (``rapgen
    evaluate``: a kind whose scores read evaluator files it produces). ``vocabulary``
    holds the kind's other words as data (RAP: conditions, splits, policies, labels), so
    no module spells them again."""

    name: str
    archive: ArchiveKind
    unit: tuple[str, ...]
    item: str
    metrics: tuple[MetricSpec, ...]
    primary: Primary
    tracks: tuple[TrackSpec, ...]
    score: Callable[..., Any] = field(repr=False, compare=False)
    write_scores: Callable[..., Any] = field(repr=False, compare=False)
    axes: tuple[AxisSpec, ...] = ()
    clusters: tuple[ClusterSpec, ...] = ()
    review: ReviewSpec | None = None
    search: SearchSpec | None = None
    kit: KitSpec | None = None  # the kit's commands for a root of the kind (KINDS.md §7)
    site: SiteSpec | None = None
    replay: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    summary: Callable[[Any], tuple[dict, list[str]]] | None = field(default=None, repr=False, compare=False)
    sample: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    synth: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    evaluate: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    vocabulary: Any = None

    def __post_init__(self) -> None:
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"kind {self.name!r}: a metric name appears twice ({', '.join(names)})")
        if self.primary.metric not in names:
            raise ValueError(f"kind {self.name!r}: the headline metric {self.primary.metric!r} is not one of its metrics")
        if self.primary.track not in {t.name for t in self.tracks}:
            raise ValueError(f"kind {self.name!r}: the headline track {self.primary.track!r} is not one of its tracks")
        chosen = dict(self.primary.axes)
        for axis in self.axes:
            if chosen.get(axis.name, axis.primary) != axis.primary:
                raise ValueError(f"kind {self.name!r}: the headline's {axis.name} {chosen[axis.name]!r} is not the axis's primary {axis.primary!r}")
        if self.item not in self.unit:
            raise ValueError(f"kind {self.name!r}: the item key {self.item!r} is not a key of its unit {self.unit}")

    @property
    def format(self) -> str:
        return self.archive.format

    def metric(self, name: str) -> MetricSpec:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"kind {self.name!r} has no metric {name!r} (metrics: {', '.join(m.name for m in self.metrics)})")
