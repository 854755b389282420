"""What ``rapgen submit check`` reads of an Inspire model folder (KINDS.md §6, INSPIRE.md §2).

A pull request adds ``archive/models/<id>/`` with ``model.json``, ``predictions.jsonl`` and
``traces.jsonl``, all three required. :func:`parse` runs verify's checks of a model folder on
the verified base archive: the predictions and traces parsers (a malformed line, an unknown
key or instance, a duplicate unit, a claimed split × condition missing an instance) and the
trace checks (a gap in ``call_index``, a result that cannot come from the instance's shard),
each finding naming its line or call. What a well-formed file may still hold — malformed,
duplicate or versioned ids, ids after the cutoff or never returned by the unit's searches,
more than K ids, a failed unit — is scored as INSPIRE.md §2 says and counted in
:func:`accounting`, from the same cleaned lists the scorer builds. Replaying the calls is the
engine's ``replay`` section (the kind's ``replay``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rapgen.kinds.base import ReviewSpec, ReviewTable
from rapgen.kinds.inspire.archive import Call, Prediction, check_traces, layout, parse_predictions, parse_traces
from rapgen.kinds.inspire.scores import score_units

MiB = 1 << 20
FILES = layout.MODEL_FILES
SIZE_LIMITS = ((layout.MODEL_JSON, 1 * MiB), (layout.PREDICTIONS_JSONL, 64 * MiB), (layout.TRACES_JSONL, 128 * MiB))
PREVIEW_IDS = 3

# The accounting's columns: (heading, the unit counts summed); INSPIRE.md §2's outcomes of a slot.
COUNTS = (
    ("failed", "n_failed"), ("empty lists", "n_empty"), ("ids submitted", "n_submitted"), ("version suffixes", "n_versioned"),
    ("duplicates dropped", "n_duplicate"), ("over K dropped", "n_over_limit"), ("malformed", "n_malformed"),
    ("not in corpus", "n_unknown"), ("after cutoff", "n_post_cutoff"), ("unsurfaced", "n_unsurfaced"),
    ("unlabelled", "n_unlabelled"), ("scored", "n_scored"),
)


@dataclass(frozen=True)
class Reviewed:
    predictions: list[Prediction]
    calls: list[Call]


def parse(release, files: dict[str, bytes], model_id: str):
    """predictions.jsonl and traces.jsonl with the kind's parsers, then the traces whole and from the shard."""
    pred_path = layout.model_path(model_id, layout.PREDICTIONS_JSONL)
    trace_path = layout.model_path(model_id, layout.TRACES_JSONL)
    instances, ledger = release.instances, release.ledger
    findings = []
    predictions, calls = [], []
    if layout.PREDICTIONS_JSONL in files:
        predictions, found = parse_predictions(files[layout.PREDICTIONS_JSONL], instances, pred_path)
        findings += found
    if layout.TRACES_JSONL in files:
        calls, found = parse_traces(files[layout.TRACES_JSONL], instances, ledger.max_calls, trace_path)
        findings += found
        if layout.PREDICTIONS_JSONL in files:
            findings += check_traces(calls, predictions, instances, release.corpus, ledger.top_k, trace_path)
    return Reviewed(predictions, calls), findings


def _claimed(release, state: Reviewed) -> list[tuple[str, str, int, int]]:
    """(split, condition, instances of the split, units present) per claimed split × condition."""
    split_of = {i.instance_id: i.split for i in release.instances}
    size = Counter(i.split for i in release.instances)
    have = Counter((split_of[p.instance_id], p.condition) for p in state.predictions)
    order = {s: k for k, s in enumerate(layout.SPLITS)}
    return [(s, c, size[s], n) for (s, c), n in sorted(have.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1]))]


def coverage(release, state: Reviewed) -> ReviewTable | None:
    rows = tuple((s, c, expected, n, "complete" if n >= expected else "incomplete") for s, c, expected, n in _claimed(release, state))
    return ReviewTable("Coverage", ("split", "condition", "instances", "units present", "coverage"), rows,
                       "A claimed split × condition covers every instance of the split; eval × detailed is required.")


def accounting(release, state: Reviewed) -> ReviewTable | None:
    rows = []
    ledger = release.ledger
    for condition in sorted({p.condition for p in state.predictions}, key=layout.CONDITIONS.index):
        table = score_units("submission", condition, release.instances, release.judgements, state.predictions, state.calls,
                            release.corpus, K=ledger.K)
        totals = table.totals()
        calls = sum(1 for c in state.calls if c.condition == condition)
        rows.append((condition, len(table.units), calls, *(totals.get(key, 0) for _, key in COUNTS)))
    return ReviewTable("Accounting", ("condition", "units", "Search calls", *(h for h, _ in COUNTS)), tuple(rows),
                       f"Counted, never refused (INSPIRE.md §2): a version suffix is dropped and later copies of an id are removed, "
                       f"then the list is cut at K = {ledger.K}; a malformed id, one not in the corpus, one dated on or after the "
                       "cutoff, one the unit's own searches never returned (unsurfaced) and an unlabelled one keep their slot at "
                       "zero; a failed unit and an empty list score zero on every metric.")


def preview_row(release, state: Reviewed, limit: int = 3) -> ReviewTable | None:
    calls = Counter(c.unit for c in state.calls)
    rows = []
    for p in sorted(state.predictions, key=lambda p: (p.instance_id, layout.CONDITIONS.index(p.condition)))[:limit]:
        ids = p.submitted_ids
        shown = ", ".join(ids[:PREVIEW_IDS]) + (f", … ({len(ids)} in all)" if len(ids) > PREVIEW_IDS else "")
        rows.append((p.instance_id, p.condition, p.status, shown or "—", calls.get((p.instance_id, p.condition), 0)))
    return ReviewTable("Preview", ("instance", "condition", "status", "ranking", "Search calls"), tuple(rows),
                       f"The first {len(rows)} of {len(state.predictions):,} units.")


REVIEW = ReviewSpec(FILES, FILES, SIZE_LIMITS, parse=parse, coverage=coverage, accounting=accounting, preview_row=preview_row)
