"""Cross-file rules of an Inspire benchmark (INSPIRE.md §1, the invariants column).

:func:`check_benchmark` takes the parsed records and returns every broken rule as
an ``INVARIANT`` finding; :func:`expected_statuses` is the references' status
rule on its own, so the sample builder writes exactly what the checker expects.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Mapping, Sequence

from rapgen.archive import Finding, ProblemKind

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.calendar import cutoff_of, recency_floor
from rapgen.kinds.inspire.archive.documents import Ledger
from rapgen.kinds.inspire.archive.fields import invariant
from rapgen.kinds.inspire.archive.records import CorpusPaper, Instance, Judgement, Reference, Target


def expected_view(target: Target, flag_confidence: float) -> str:
    """``flagged`` iff the auditor named the target with confidence >= ``flag_confidence``."""
    return "flagged" if target.audit_named and target.audit_confidence >= flag_confidence else "clean"


def expected_statuses(refs: Sequence[Reference], t_p: date, ledger: Ledger) -> tuple[dict[str, str], list[str]]:
    """The status every reference of one instance must have, and problems that leave
    a status undecidable (an in-window reference nobody judged).

    Date rules first: ``concurrent`` iff dated on or after the cutoff, ``older`` iff
    before shift(t_P, -recency_months); then ``t0`` iff judged T0; the rest are
    eligible, and the first ``max_graded`` of them by (gain desc, arxiv_id asc) are
    ``graded``, the others ``overflow``."""
    cutoff, floor = cutoff_of(t_p, ledger.cutoff_months), recency_floor(t_p, ledger.recency_months)
    out: dict[str, str] = {}
    problems: list[str] = []
    eligible: list[tuple[float, str]] = []
    for ref in refs:
        if ref.first_submitted is None:
            problems.append(f"reference {ref.arxiv_id} has no first_submitted date")
        elif ref.first_submitted >= cutoff:
            out[ref.arxiv_id] = "concurrent"
        elif ref.first_submitted < floor:
            out[ref.arxiv_id] = "older"
        elif ref.tier == "T0":
            out[ref.arxiv_id] = "t0"
        elif ref.tier is None or ref.role is None:
            problems.append(f"reference {ref.arxiv_id} lies in [{floor}, {cutoff}) but is not judged (tier null)")
        else:
            eligible.append((-ledger.gain(ref.role, ref.tier), ref.arxiv_id))
    for rank, (_, arxiv_id) in enumerate(sorted(eligible)):
        out[arxiv_id] = "graded" if rank < ledger.max_graded else "overflow"
    return out, problems


def check_benchmark(
    instances: Sequence[Instance],
    targets: Sequence[Target],
    judgements: Sequence[Judgement],
    references: Sequence[Reference],
    corpus: Mapping[str, CorpusPaper],
    ledger: Ledger,
) -> list[Finding]:
    """Every cross-file rule of instances, targets, judgements and references."""
    out: list[Finding] = []
    by_id = {i.instance_id: i for i in instances}
    target_of = _check_targets(instances, targets, ledger, out)
    Y: dict[str, dict[str, Judgement]] = defaultdict(dict)
    for j in judgements:
        Y[j.instance_id][j.arxiv_id] = j
    _check_judgements(by_id, target_of, Y, corpus, ledger, out)
    _check_references(target_of, Y, references, corpus, ledger, out)
    return out


def _check_targets(instances: Sequence[Instance], targets: Sequence[Target], ledger: Ledger, out: list[Finding]) -> dict[str, Target]:
    path = layout.TARGETS_PARQUET
    by_id = {i.instance_id: i for i in instances}
    target_of: dict[str, Target] = {}
    for t in targets:
        if t.instance_id not in by_id:
            out.append(invariant(path, None, f"target of unknown instance {t.instance_id}"))
            continue
        if t.instance_id in target_of:
            out.append(invariant(path, None, f"instance {t.instance_id} has more than one target row", ProblemKind.DUPLICATE_RECORD))
            continue
        target_of[t.instance_id] = t
        want = cutoff_of(t.first_submitted, ledger.cutoff_months)
        if by_id[t.instance_id].cutoff != want:
            out.append(invariant(layout.INSTANCES_JSONL, by_id[t.instance_id].line,
                                 f"{t.instance_id}: cutoff {by_id[t.instance_id].cutoff} is not shift({t.first_submitted}, "
                                 f"-{ledger.cutoff_months}) = {want}"))
        view = expected_view(t, ledger.flag_confidence)
        if t.view != view:
            out.append(invariant(path, None, f"{t.instance_id}: view {t.view!r} should be {view!r} (audit_named "
                                             f"{t.audit_named}, audit_confidence {t.audit_confidence:g}, flag at {ledger.flag_confidence:g})"))
    for iid in sorted(set(by_id) - set(target_of)):
        out.append(invariant(path, None, f"instance {iid} has no target row", ProblemKind.COVERAGE))
    return target_of


def _check_judgements(by_id: Mapping[str, Instance], target_of: Mapping[str, Target], Y: Mapping[str, Mapping[str, Judgement]],
                      corpus: Mapping[str, CorpusPaper], ledger: Ledger, out: list[Finding]) -> None:
    path = layout.JUDGEMENTS_PARQUET
    for iid in sorted(Y):
        if iid not in by_id:
            out.append(invariant(path, None, f"judgements of unknown instance {iid}"))
            continue
        target, cutoff = target_of.get(iid), by_id[iid].cutoff
        floor = recency_floor(target.first_submitted, ledger.recency_months) if target else None
        for arxiv_id, j in sorted(Y[iid].items()):
            if j.gain != ledger.gain(j.role, j.tier):
                out.append(invariant(path, None, f"{iid} {arxiv_id}: gain {j.gain:g} is not gains[{j.role}][{j.tier}] = "
                                                 f"{ledger.gain(j.role, j.tier):g}"))
            paper = corpus.get(arxiv_id)
            if paper is None:
                out.append(invariant(path, None, f"{iid} {arxiv_id}: a graded paper must be in the corpus"))
            elif paper.first_submitted >= cutoff or (floor is not None and paper.first_submitted < floor):
                out.append(invariant(path, None, f"{iid} {arxiv_id}: dated {paper.first_submitted}, outside [{floor}, {cutoff})"))
    for iid in sorted(by_id):
        n = len(Y.get(iid, {}))
        if not ledger.min_graded <= n <= ledger.max_graded:
            out.append(invariant(path, None, f"instance {iid} has {n} graded antecedents; expected {ledger.min_graded} to "
                                             f"{ledger.max_graded}", ProblemKind.COVERAGE))


def _check_references(target_of: Mapping[str, Target], Y: Mapping[str, Mapping[str, Judgement]], references: Sequence[Reference],
                      corpus: Mapping[str, CorpusPaper], ledger: Ledger, out: list[Finding]) -> None:
    path = layout.REFERENCES_PARQUET
    refs_of: dict[str, list[Reference]] = defaultdict(list)
    for r in references:
        if r.instance_id not in target_of:
            out.append(invariant(path, None, f"reference of unknown instance {r.instance_id}"))
            continue
        refs_of[r.instance_id].append(r)
        paper = corpus.get(r.arxiv_id)
        if paper is not None and r.first_submitted is not None and paper.first_submitted != r.first_submitted:
            out.append(invariant(path, None, f"{r.instance_id} {r.arxiv_id}: first_submitted {r.first_submitted} differs from the "
                                             f"corpus's {paper.first_submitted}"))
    for iid in sorted(set(refs_of) | set(Y)):
        if iid not in target_of:
            continue
        refs = refs_of.get(iid, [])
        want, problems = expected_statuses(refs, target_of[iid].first_submitted, ledger)
        out.extend(invariant(path, None, f"{iid}: {p}") for p in problems)
        for r in refs:
            if r.arxiv_id in want and r.status != want[r.arxiv_id]:
                out.append(invariant(path, None, f"{iid} {r.arxiv_id}: status {r.status!r} should be {want[r.arxiv_id]!r}"))
        graded = {r.arxiv_id: r for r in refs if r.status == "graded"}
        judged = Y.get(iid, {})
        for arxiv_id in sorted(set(judged) - set(graded)):
            out.append(invariant(path, None, f"{iid} {arxiv_id}: judged in judgements.parquet but not a graded reference"))
        for arxiv_id in sorted(set(graded) - set(judged)):
            out.append(invariant(path, None, f"{iid} {arxiv_id}: a graded reference missing from judgements.parquet"))
        for arxiv_id in sorted(set(graded) & set(judged)):
            r, j = graded[arxiv_id], judged[arxiv_id]
            if (r.tier, r.role) != (j.tier, j.role):
                out.append(invariant(path, None, f"{iid} {arxiv_id}: tier/role {r.tier}/{r.role} differ from the judgement's "
                                                 f"{j.tier}/{j.role}"))
