"""pairs.csv: the paired difference of every two entries, with its interval from the split's draws.

Pairs are formed inside a condition: every two models that have condition
Ak, and each of them with each baseline; the baselines among themselves once,
under condition ``BASE``. Entry a comes before entry b in output order
(models before baselines, then by name), and the estimate is a - b.

The difference is *paired* as SCORING.md §4 pairs contrasts: within a field,
only the origins of the track where both sides have a defined unit value
count, the field's difference is the mean of the per-origin differences, and
the headline is the field-macro mean over the split. The interval resamples
the split's dependency blocks with the very count matrix of every other
statistic (common random numbers), so a pair (model Ak, ewma) equals the
``Ak-ewma`` row of contrasts.csv. Both sides must take part in the track;
the metrics are those both sides are scored on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rapgen.scores import schema
from rapgen.scores.bootstrap import split_block_intervals
from rapgen.scores.counts import POLICIES
from rapgen.scores.kernels import mean_over, single_threaded_blas
from rapgen.scores.metrics import METRIC_NAMES
from rapgen.scores.outputs import Table
from rapgen.scores.schema import BASELINE_CONDITION
from rapgen.scores.units import BASELINE, MODEL, Entry

PAIR_CHUNK = 32


@dataclass(frozen=True)
class Pair:
    condition: str
    a: int  # entry index
    b: int
    metrics: tuple[int, ...]  # metric indices both sides are scored on


def _output_order(entries: list[Entry], idx: list[int]) -> list[int]:
    return sorted(idx, key=lambda e: (entries[e].kind != MODEL, entries[e].entry))


def build_pairs(entries: list[Entry]) -> list[Pair]:
    """Every pair, by condition (model conditions ascending, then BASE), then a, then b."""
    baselines = _output_order(entries, [e for e, x in enumerate(entries) if x.kind == BASELINE])
    conditions = sorted({x.condition for x in entries if x.kind == MODEL})
    groups = [(c, _output_order(entries, [e for e, x in enumerate(entries) if x.kind == MODEL and x.condition == c]), baselines)
              for c in conditions]
    out: list[Pair] = []

    def common(a: int, b: int) -> tuple[int, ...]:
        shared = set(entries[a].metrics()) & set(entries[b].metrics())
        return tuple(i for i, m in enumerate(METRIC_NAMES) if m in shared)

    for condition, models, base in groups:
        for i, a in enumerate(models):
            for b in models[i + 1:] + base:
                if metrics := common(a, b):
                    out.append(Pair(condition, a, b, metrics))
    for i, a in enumerate(baselines):
        for b in baselines[i + 1:]:
            out.append(Pair(BASELINE_CONDITION, a, b, common(a, b)))
    return out


def pair_field_scores(values: np.ndarray, pairs: list[Pair], origin_mask: np.ndarray) -> np.ndarray:
    """(n_pairs, P, M, F) paired field differences over the origins ``origin_mask`` allows
    ((E, O) bool: the origins each entry takes part in; a pair uses those both allow)."""
    if not pairs:
        return np.zeros((0,) + values.shape[1:4])
    out = np.empty((len(pairs),) + values.shape[1:4])
    for start in range(0, len(pairs), PAIR_CHUNK):  # bounds the (chunk, P, M, F, O) difference array
        chunk = pairs[start:start + PAIR_CHUNK]
        a = np.array([p.a for p in chunk], dtype=np.int64)
        b = np.array([p.b for p in chunk], dtype=np.int64)
        both = origin_mask[a] & origin_mask[b]  # (n, O)
        diff = values[a] - values[b]  # NaN wherever either side is undefined
        diff[~np.broadcast_to(both[:, None, None, None, :], diff.shape)] = np.nan
        out[start:start + len(chunk)] = mean_over(diff, axis=-1)[0]
    return out


@dataclass(frozen=True)
class PairTrack:
    """One track as pairs see it: its name, the participants and each entry's origins."""

    name: str
    participates: np.ndarray  # (E,) bool
    origin_mask: np.ndarray  # (E, O) bool


def pairs_table(entries: list[Entry], values: np.ndarray, tracks: list[PairTrack], field_split: np.ndarray,
                splits: list[str], units_of, draws, level: float) -> Table:
    """pairs.csv for every track, split, policy, condition, metric and pair."""
    pairs = build_pairs(entries)
    P = values.shape[1]
    keys: list[tuple[int, int, int, int]] = []  # (track, pair, policy, metric)
    rows: list[np.ndarray] = []
    for t, track in enumerate(tracks):
        kept = [i for i, p in enumerate(pairs) if track.participates[p.a] and track.participates[p.b]]
        if not kept:
            continue
        scores = pair_field_scores(values, [pairs[i] for i in kept], track.origin_mask)  # (n, P, M, F)
        for j, i in enumerate(kept):
            for p in range(P):
                for m in pairs[i].metrics:
                    keys.append((t, i, p, m))
                    rows.append(scores[j, p, m])
    F = values.shape[3]
    matrix = np.stack(rows) if rows else np.zeros((0, F))
    out = []
    with single_threaded_blas():
        for split in splits:
            estimate, n_fields, result = split_block_intervals(matrix, field_split, split, units_of, draws, level)
            for r, (t, i, p, m) in enumerate(keys):
                pair = pairs[i]
                ea, eb = entries[pair.a], entries[pair.b]
                out.append(((t, split, p, i, m), (
                    tracks[t].name, split, POLICIES[p], pair.condition, METRIC_NAMES[m], ea.entry, ea.kind, eb.entry, eb.kind,
                    _none(estimate[r]), _none(result.low[r]), _none(result.high[r]), int(n_fields[r]),
                )))
    out.sort(key=lambda r: r[0])
    body = [r[1] for r in out]
    columns = list(zip(*body)) if body else [() for _ in schema.PAIRS_COLUMNS]
    return Table(schema.PAIRS_COLUMNS, {c: list(v) for c, v in zip(schema.PAIRS_COLUMNS, columns)})


def _none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)
