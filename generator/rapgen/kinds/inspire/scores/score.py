"""Score one release of an Inspire benchmark and write its score folder (KINDS.md §4).

:func:`score` takes the release view (``InspireRelease``: the parsed documents and
the models it lists) and scores every entry with :func:`~.board.score_board`;
:func:`write_scores` writes the folder the site and ``submit check`` read:

=====================  ==================================================================
``leaderboard.csv``    the fifteen metrics: ``track`` (the view), ``split``, ``gains``,
                       ``cluster``, ``entry``, ``kind``, ``condition``, ``metric``, estimate,
                       interval, ``rank``, ``p_first``, ``n_items``, ``n_valid``, ``n_invalid``
``pairs.csv``          a − b for every two entries of a rank group (target clusters)
``diagnostics.csv``    the funnel diagnostics and G(p) rows, in the leaderboard's columns
``diagnostics.json``   the recovered-count histograms and the sections' layout
``units.parquet``      one row per (entry, condition, target): the declared-gain values
``releases.csv``       the headline cell as each release up to this one scored it
``scores.json``        what was scored: release, constants, counts, accounting, files
=====================  ==================================================================
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rapgen.scores import ScoredSet, leaderboard_csv, pairs_csv, rows_csv

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.scores.board import AXES, GROUP_BY, Board, Entry, score_board, statistic_names
from rapgen.kinds.inspire.scores.metrics import METRICS, PRIMARY

METRIC_NAMES = frozenset(m.name for m in METRICS)
HEADLINE = {"metric": PRIMARY, "track": layout.VIEWS[0], "split": layout.PRIMARY_SPLIT,
            "condition": layout.PRIMARY_CONDITION, "gains": layout.GAIN_MAPS[0], "cluster": layout.CLUSTERS[0]}
RELEASES_COLUMNS = ("release", "date", "release_kind", "manifest_sha256", "entry", "kind", "condition", "metric", "estimate",
                    "ci_low", "ci_high", "rank", "p_first", "n_items")
SCORE_FILES = ("leaderboard.csv", "pairs.csv", "diagnostics.csv", "diagnostics.json", "units.parquet", "releases.csv",
               "scores.json")


@dataclass
class InspireScores:
    """Everything :func:`write_scores` writes, computed by :func:`score`."""

    board: Board
    meta: dict
    units: bytes  # units.parquet
    histograms: list[dict]
    releases: list[tuple] = field(default_factory=list)


def entries_of(release) -> list[Entry]:
    """The release's models and reference agents (``reference_agent: true`` in model.json), by id."""
    return [Entry(m.model_id, "reference" if m.is_reference else "model", m.predictions, m.calls)
            for _, m in sorted(release.models.items())]


def _board(release, resamples: int | None, **kwargs) -> Board:
    return score_board(release.instances, release.targets, release.judgements, release.corpus, release.ledger,
                       entries_of(release), resamples=resamples, **kwargs)


def score(release, *, resamples: int | None = None, malformed: Callable | None = None, releases: bool = True,
          **_options: Any) -> InspireScores:
    """Every score of one Inspire release (``rapgen score``). ``malformed`` (the engine's Search-call
    judge) is not needed: a malformed recorded call still counts in ``total_calls`` and returns nothing.
    ``releases``: also score the headline of every earlier release (releases.csv)."""
    if release.ledger is None:
        raise ValueError("the release has no readable LEDGER.json")
    board = _board(release, resamples)
    result = InspireScores(board, _meta(release, board, resamples), _units_parquet(release, board),
                           _histograms(release, board))
    result.releases = _release_rows(release, board, resamples) if releases else []
    return result


def headline_rows(board: Board) -> list[tuple]:
    """The leaderboard's headline cell, one row per entry answering the primary condition."""
    at = {c: i for i, c in enumerate(("track", "split", *AXES, "entry", "kind", "condition", "metric"))}
    return [r for r in board.rows if all(r[at[k]] == v for k, v in HEADLINE.items())]


def _release_rows(release, board: Board, resamples: int | None) -> list[tuple]:
    out = []
    for number, record in sorted(release.releases.items()):
        if number > release.number:
            break
        shown = board if number == release.number else _board(release.verified.release(number), resamples,
                                                                  gain_maps=(HEADLINE["gains"],), clusters=(HEADLINE["cluster"],))
        digest = release.manifest_sha256 if number == release.number else release.verified.release(number).manifest_sha256
        for r in headline_rows(shown):
            out.append((number, record.date.isoformat(), record.kind.value, digest, r[4], r[5], r[6], r[7], *r[8:13], r[13]))
    return out


# ---------------------------------------------------------------- per-unit values and histograms
def _split_view(release) -> tuple[list[str], list[str], list[str], list[str]]:
    items = sorted(i.instance_id for i in release.instances)
    split = {i.instance_id: i.split for i in release.instances}
    target = {t.instance_id: t for t in release.targets}
    return items, [split[i] for i in items], [target[i].view for i in items], [target[i].topic for i in items]


def _units_parquet(release, board: Board) -> bytes:
    """One row per (entry, condition, target) under the declared gains: the metrics' item values
    (NaN where undefined; the two ratios are not item values), the label counts and the accounting."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    items, splits, views, topics = _split_view(release)
    names = statistic_names(release.ledger.progress_steps)
    means = [m.name for m in METRICS if m.form == "mean"]
    columns: dict[str, list] = {c: [] for c in ("entry", "kind", "condition", "instance_id", "split", "view", "topic", "status")}
    numbers: dict[str, list] = {c: [] for c in (*means, "idcg", "n_labels", "n_exposed_labels", "hits")}
    counts: dict[str, list] = {c: [] for c in board.totals[next(iter(board.totals))]} if board.totals else {}
    for b in (b for b in board.blocks if b.gain_map == HEADLINE["gains"]):
        status = {p.instance_id: p.status for p in b.entry.predictions if p.condition == b.condition}
        n = len(items)
        columns["entry"] += [b.entry.entry_id] * n
        columns["kind"] += [b.entry.kind] * n
        columns["condition"] += [b.condition] * n
        columns["instance_id"] += items
        columns["split"] += splits
        columns["view"] += views
        columns["topic"] += topics
        columns["status"] += [status.get(i, "absent") for i in items]
        for name in means:
            s = names.index(name)
            numbers[name] += np.where(b.B[s] > 0, b.A[s], np.nan).tolist()
        numbers["idcg"] += b.arrays.idcg.tolist()
        for name in ("n_labels", "n_exposed_labels", "hits"):
            numbers[name] += np.asarray(getattr(b.arrays, name)).tolist()
        for name in counts:
            counts[name] += board.counts[(b.entry.entry_id, b.condition)][name].tolist()
    table = pa.table({**{k: pa.array(v, pa.string()) for k, v in columns.items()},
                      **{k: pa.array(v, pa.float64() if k in (*means, "idcg") else pa.int64()) for k, v in numbers.items()},
                      **{k: pa.array(v, pa.int64()) for k, v in counts.items()}})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _histograms(release, board: Board) -> list[dict]:
    """Targets per recovered count h = 0 … K, per (entry, condition, split, view), declared gains."""
    _items, splits, views, _topics = _split_view(release)
    splits, views = np.array(splits, dtype=object), np.array(views, dtype=object)
    K = release.ledger.K
    out = []
    for b in (b for b in board.blocks if b.gain_map == HEADLINE["gains"]):
        answered = {p.instance_id for p in b.entry.predictions if p.condition == b.condition}
        for split in layout.SPLITS:
            if not any(i in answered for i, s in zip(_items, splits) if s == split):
                continue
            for view in layout.VIEWS:
                mask = (splits == split) & (views == view if view != "all" else True) & b.arrays.defined
                hits = np.asarray(b.arrays.hits)[mask]
                out.append({"entry": b.entry.entry_id, "kind": b.entry.kind, "condition": b.condition, "split": split,
                            "track": view, "counts": np.bincount(hits, minlength=K + 1)[:K + 1].tolist()})
    return out


# ---------------------------------------------------------------- scores.json
def _meta(release, board: Board, resamples: int | None) -> dict:
    ledger = release.ledger
    record = release.record
    entries = entries_of(release)
    return {
        "kind": "inspire",
        "format": layout.FORMAT,
        "manifest_sha256": release.manifest_sha256,
        "synthetic": release.synthetic,
        "release": {"number": release.number, "date": record.date.isoformat(), "kind": record.kind.value,
                    "includes_unreleased": bool(release.unreleased)},
        "resamples": ledger.resamples if resamples is None else resamples,
        "seed": ledger.seed,
        "level": ledger.level,
        "K": ledger.K,
        "progress_steps": ledger.progress_steps,
        "headline": dict(HEADLINE),
        "axes": list(AXES),
        "rank_group": list(GROUP_BY),
        "counts": {"instances": {s: sum(1 for i in release.instances if i.split == s) for s in layout.SPLITS},
                   "models": sum(1 for e in entries if e.kind == "model"),
                   "references": sum(1 for e in entries if e.kind == "reference"),
                   "calls": sum(len(e.calls) for e in entries)},
        "entries": [{"entry": e.entry_id, "kind": e.kind,
                     "conditions": [c for c in layout.CONDITIONS if any(p.condition == c for p in e.predictions)]} for e in entries],
        "accounting": [{"entry": entry, "condition": condition, **totals} for (entry, condition), totals in board.totals.items()],
        "excluded": {b.gain_map: int((~b.arrays.defined).sum()) for b in board.blocks},
        "files": list(SCORE_FILES),
    }


# ---------------------------------------------------------------- writing
def _subset(scored: ScoredSet, keep: Callable[[str], bool]) -> ScoredSet:
    return ScoredSet(scored.axes, scored.group_by, [r for r in scored.rows if keep(r.stat.metric)])


def _joined(board: Board, keep: Callable[[str], bool]) -> ScoredSet:
    parts = [_subset(s, keep) for s in board.scored.values()]
    return ScoredSet(AXES, GROUP_BY, [r for p in parts for r in p.rows])


def score_files(result: InspireScores) -> dict[str, bytes]:
    """The score folder's files, name -> bytes."""
    board = result.board
    target = board.scored.get(layout.CLUSTERS[0])
    diagnostics = {"kind": "inspire", "manifest_sha256": result.meta["manifest_sha256"], "K": result.meta["K"],
                   "recovered_histogram": result.histograms,
                   "rows": {"file": "diagnostics.csv", "metrics": [n for n in statistic_names(result.meta["progress_steps"])
                                                                   if n not in METRIC_NAMES]}}
    return {
        "leaderboard.csv": leaderboard_csv(_joined(board, lambda m: m in METRIC_NAMES)),
        "pairs.csv": pairs_csv(target) if target is not None else b"",
        "diagnostics.csv": leaderboard_csv(_joined(board, lambda m: m not in METRIC_NAMES)),
        "diagnostics.json": _json(diagnostics),
        "units.parquet": result.units,
        "releases.csv": rows_csv(RELEASES_COLUMNS, result.releases),
        "scores.json": _json(result.meta),
    }


def _json(obj: object) -> bytes:
    return (json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def write_scores(result: InspireScores, out_dir: str | Path) -> list[Path]:
    """Write the score folder: every file staged in full, then renamed into place."""
    from rapgen.io import write_folder

    return write_folder(out_dir, score_files(result), prefix=".rapgen-score-")


def summary(result: InspireScores) -> tuple[dict, list[str]]:
    """What ``rapgen score`` prints: scores.json's fields (``--json``) and a few lines."""
    meta = result.meta
    counts = meta["counts"]
    split = ", ".join(f"{n} {s}" for s, n in counts["instances"].items() if n)
    lines = [f"Scored {counts['models']} model{'s' * (counts['models'] != 1)} and {counts['references']} reference "
             f"agent{'s' * (counts['references'] != 1)} on {split} instances ({meta['resamples']} resamples, seed {meta['seed']})."]
    rows = sorted(headline_rows(result.board), key=lambda r: (r[11] if r[11] is not None else 10**9, r[4]))
    for r in rows[:3]:
        interval = "" if r[9] is None else f" [{r[9]:.3f}, {r[10]:.3f}]"
        estimate = "—" if r[8] is None else f"{r[8]:.3f}"
        lines.append(f"  {r[4]}: nDCG@10 {estimate}{interval} (eval, clean, detailed), rank {r[11]}")
    return meta, lines
