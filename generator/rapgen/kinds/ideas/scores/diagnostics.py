"""diagnostics.json of an Ideas release (IDEAS.md §6): judge agreement, gate sensitivity, evaluation counts.

- **Judge agreement**: for two judges and a gate, the candidate pairs both judged
  (same model, episode, strategy, idea rank and paper, both verdicts ``ok``):
  how many each passes, both pass, the share on which they agree and Cohen's
  kappa (undefined when chance agreement is 1).
- **Gate sensitivity**: per track, judge, entry and ranked metric, the default
  gate's estimate minus the strict one's, with a paired interval: the per-episode
  difference is a ``mean`` statistic on the release's one topic draw matrix.
- **Evaluation**: per entry and judge, episodes, empty episodes, emitted ideas,
  judged pairs and failed judgments; a model a judge has not evaluated is
  "awaiting evaluation".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rapgen.kinds.ideas.archive.check import IdeasArchive
from rapgen.kinds.ideas.archive.config import Gate
from rapgen.kinds.ideas.archive.eval_tables import JudgmentTable
from rapgen.kinds.ideas.scores.metrics import METRICS
from rapgen.kinds.ideas.scores.units import MODEL_KIND, SPLIT, CoverageMap, Track, UnitValues, entry_mask
from rapgen.scores import ScoredSet, SplitDraws, Statistic, score_statistics

DIAGNOSTICS_VERSION = 1
RANKED = tuple(m.name for m in METRICS if m.rank_direction is not None)
JOIN_KEYS = ("episode_id", "condition", "rank", "arxiv_id")


def passes(table: JudgmentTable, gate: Gate) -> np.ndarray:
    """Which judgments pass ``gate`` (a failed judgment passes none)."""
    return table.scored & (table.P + table.M >= gate.problem_method_min) & (table.S >= gate.realisation_min)


def _kappa(n: int, a: int, b: int, agree: int) -> float | None:
    if n == 0:
        return None
    pa, pb = a / n, b / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance >= 1 else (agree / n - chance) / (1 - chance)


def _shared(a: JudgmentTable, b: JudgmentTable) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of ``a`` and ``b`` judging the same candidate pair, both scored (in ``a``'s row order)."""
    import pyarrow as pa

    if len(a.rank) == len(b.rank) and np.array_equal(a.rank, b.rank) and all(
            getattr(a, k).equals(getattr(b, k)) for k in ("episode_id", "condition", "arxiv_id")):
        both = np.flatnonzero(a.scored & b.scored)  # the usual case: one retrieval, judged twice, rows aligned
        return both, both

    def side(t: JudgmentTable, tag: str) -> pa.Table:
        ok = np.flatnonzero(t.scored)
        cols = [t.episode_id.take(pa.array(ok)), t.condition.take(pa.array(ok)), pa.array(t.rank[ok]), t.arxiv_id.take(pa.array(ok))]
        return pa.table(cols + [pa.array(ok)], names=[*JOIN_KEYS, tag])

    joined = side(a, "row_a").join(side(b, "row_b"), keys=list(JOIN_KEYS), join_type="inner")
    joined = joined.sort_by([("row_a", "ascending")])
    return joined.column("row_a").to_numpy(), joined.column("row_b").to_numpy()


def judge_agreement(archive: IdeasArchive, judges: Sequence[str]) -> list[dict]:
    """One row per (judge a, judge b, gate), a before b in ``judges`` order, summed over every model."""
    assert archive.ledger is not None
    rows = []
    for i, ja in enumerate(judges):
        for jb in judges[i + 1:]:
            for gate in archive.ledger.gates:
                n = both = only_a = only_b = 0
                for mf in archive.models.values():
                    if ja not in mf.evals or jb not in mf.evals:
                        continue
                    ta, tb = mf.evals[ja][1], mf.evals[jb][1]
                    ra, rb = _shared(ta, tb)
                    pa_, pb_ = passes(ta, gate)[ra], passes(tb, gate)[rb]
                    n += len(ra)
                    both += int((pa_ & pb_).sum())
                    only_a += int((pa_ & ~pb_).sum())
                    only_b += int((~pa_ & pb_).sum())
                agree = n - only_a - only_b
                rows.append({"judge_a": ja, "judge_b": jb, "gate": gate.name, "n_pairs": n, "pass_a": both + only_a,
                             "pass_b": both + only_b, "both": both, "agreement": agree / n if n else None,
                             "kappa": _kappa(n, both + only_a, both + only_b, agree)})
    return rows


def gate_sensitivity(scored: ScoredSet, per_model: Mapping[str, Mapping[tuple[str, str], UnitValues]], tracks: Sequence[Track],
                     draws: Mapping[str, SplitDraws], level: float, judges: Sequence[str], coverage: CoverageMap | None = None) -> list[dict]:
    """default − strict of every ranked metric, per track, judge and entry taking part, with a paired interval."""
    estimates = {(r.stat.track, *r.stat.axes, r.stat.entry, r.stat.condition, r.stat.metric): r.estimate for r in scored.rows}
    stats: list[Statistic] = []
    for track in tracks:
        for judge in judges:
            for model in sorted(per_model):
                default, strict = per_model[model].get((judge, "default")), per_model[model].get((judge, "strict"))
                if track.mask(model) is None or default is None or strict is None:
                    continue
                for condition in default.values:
                    mask = entry_mask(track, model, judge, condition, coverage)
                    if mask is None:
                        continue
                    for metric in RANKED:
                        diff = np.where(mask, default.values[condition][metric] - strict.values[condition][metric], np.nan)
                        stats.append(Statistic(track.name, SPLIT, (judge,), model, MODEL_KIND, condition, metric, diff, None))
    result = score_statistics(stats, dict(draws), level, axes=("judge",), pairs=False)
    rows = []
    for r in result.rows:
        s = r.stat
        judge = s.axes[0]
        default, strict = (estimates.get((s.track, judge, gate, s.entry, s.condition, s.metric)) for gate in ("default", "strict"))
        rows.append({"track": s.track, "judge": judge, "entry": s.entry, "kind": s.kind, "condition": s.condition,
                     "metric": s.metric, "default": default, "strict": strict, "difference": r.estimate, "ci_low": r.ci_low,
                     "ci_high": r.ci_high, "n_items": r.n_items})
    return rows


def evaluation(archive: IdeasArchive, per_model: Mapping[str, Mapping[tuple[str, str], UnitValues]], judges: Sequence[str],
               coverage: CoverageMap | None = None) -> list[dict]:
    """Per (judge, model, strategy): episodes forecast, empty ones, ideas, judged pairs, failed judgments, status
    (``evaluated``, ``partly evaluated`` when the judge's files cover only some forecast cutoffs, ``awaiting evaluation``)."""
    rows = []
    for judge in judges:
        for model in sorted(per_model):
            uv = per_model[model].get((judge, "default"))
            if uv is None:
                continue
            evaluated = archive.models[model].evals.get(judge)
            judged, failed = _per_condition(evaluated[1] if evaluated else None)
            for condition, emitted in uv.n_ideas.items():
                cov = coverage.get((model, judge, condition)) if coverage is not None else None
                status = "evaluated" if evaluated else "awaiting evaluation"
                if cov is not None:
                    emitted = emitted[cov.forecast]
                    done = cov.evaluated[cov.forecast]
                    status = "evaluated" if done.all() else "partly evaluated" if done.any() else "awaiting evaluation"
                rows.append({"judge": judge, "entry": model, "kind": MODEL_KIND, "condition": condition, "status": status,
                             "n_episodes": int(len(emitted)), "n_empty": int((emitted == 0).sum()), "n_ideas": int(emitted.sum()),
                             "n_judged": judged.get(condition, 0), "n_failed": failed.get(condition, 0)})
    return rows


def _per_condition(table: JudgmentTable | None) -> tuple[dict[str, int], dict[str, int]]:
    """Judgments and failed judgments per strategy (none without a table)."""
    if table is None:
        return {}, {}
    import pyarrow.compute as pc

    coded = pc.dictionary_encode(table.condition)
    codes = coded.indices.to_numpy(zero_copy_only=False)
    names = coded.dictionary.to_pylist()
    failed = pc.equal(table.status, "failed").to_numpy(zero_copy_only=False)
    n = np.bincount(codes, minlength=len(names))
    f = np.bincount(codes, weights=failed, minlength=len(names))
    return {c: int(n[k]) for k, c in enumerate(names)}, {c: int(f[k]) for k, c in enumerate(names)}
