"""Cross-file rules of the intervention records (INTERVENTIONS.md §1–§3).

Each check takes parsed records (from :mod:`rapgen.archive.interventions`,
:mod:`rapgen.archive.parse`) and returns findings; nothing here reads a file.
Every finding names the file and, where one line is at fault, its line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import date

from rapgen.archive.calendar import add_months
from rapgen.archive.evidence import EvidenceHasher, PaperText
from rapgen.archive.interventions import OracleUnit, Panel, Readout, Training
from rapgen.archive.records import SOURCE_CONDITIONS, Block, Category, Field, Finding, ProblemKind, TraceCall, Unit

BASE_COVERAGE = "BASE-COVERAGE"  # the problem keyword §3 names (also ProblemKind.BASE_COVERAGE)

Episode = tuple[str, date]


def _finding(
    path: str, line: int | None, detail: str, kind: ProblemKind, expected: str | None = None, actual: str | None = None
) -> Finding:
    return Finding(path, line, Category.MALFORMED, detail, expected, actual, kind=kind)


def calls_by_unit(traces: Iterable[TraceCall]) -> dict[tuple[str, date, str], list[TraceCall]]:
    """(field, origin, condition) -> the unit's calls in ``call_index`` order."""
    out: dict[tuple[str, date, str], list[TraceCall]] = defaultdict(list)
    for call in traces:
        out[(call.field_id, call.origin, call.condition)].append(call)
    for calls in out.values():
        calls.sort(key=lambda c: c.call_index)
    return dict(out)


def replay_pairs(units: Iterable[Unit]) -> set[Episode]:
    """Episodes with both an A3 and an A4 unit, valid or not (§1)."""
    have: dict[str, set[Episode]] = {c: set() for c in SOURCE_CONDITIONS}
    for unit in units:
        if unit.condition in have:
            have[unit.condition].add((unit.field_id, unit.origin))
    return set.intersection(*have.values())


def check_replays(
    path: str,
    readouts: Iterable[Readout],
    units: Iterable[Unit],
    traces: Iterable[TraceCall],
    papers: Mapping[str, PaperText],
    malformed: Callable[[TraceCall], bool],
    field_split: Mapping[str, str],
) -> list[Finding]:
    """Source unit and pair present, ``calls_used`` = n or k, evidence hash, cell coverage."""
    readouts = list(readouts)
    units = list(units)
    findings: list[Finding] = []
    sources = {(u.field_id, u.origin, u.condition) for u in units}
    pairs = replay_pairs(units)
    calls = calls_by_unit(traces)
    evidence = EvidenceHasher(papers, malformed)
    for r in readouts:
        episode = (r.field_id, r.origin)
        if (r.field_id, r.origin, r.source_condition) not in sources:
            findings.append(_finding(path, r.line, f"'source_condition': no {r.source_condition} unit for {r.field_id} {r.origin}", ProblemKind.EVIDENCE))
            continue
        if episode not in pairs:
            other = next(c for c in SOURCE_CONDITIONS if c != r.source_condition)
            findings.append(_finding(path, r.line, f"{r.field_id} {r.origin} is not a pair: no {other} unit", ProblemKind.EVIDENCE))
            continue
        n = {c: len(calls.get((r.field_id, r.origin, c), [])) for c in SOURCE_CONDITIONS}
        want = n[r.source_condition] if r.budget == "all" else min(n.values())
        if r.calls_used != want:
            rule = "the source's trace lines" if r.budget == "all" else "k = min(n_A3, n_A4)"
            findings.append(_finding(path, r.line, f"'calls_used' is {r.calls_used}, expected {want} ({rule}, budget {r.budget})",
                                     ProblemKind.EVIDENCE, str(want), str(r.calls_used)))
            continue
        source_calls = calls.get((r.field_id, r.origin, r.source_condition), [])
        try:
            digest = evidence.digest(source_calls, r.calls_used)
        except KeyError as exc:
            findings.append(_finding(path, r.line, f"evidence names paper {exc.args[0]!r}, which is not in papers.parquet", ProblemKind.EVIDENCE))
            continue
        if digest != r.evidence_sha256:
            findings.append(_finding(path, r.line, "'evidence_sha256' does not match the recorded evidence", ProblemKind.EVIDENCE, digest, r.evidence_sha256))
    findings.extend(_cell_coverage(path, readouts, pairs, field_split))
    return findings


def _cell_coverage(path: str, readouts: list[Readout], pairs: set[Episode], field_split: Mapping[str, str]) -> list[Finding]:
    """A cell claimed on a split (one readout there) must cover every pair of that split."""
    have: dict[tuple[str, str], set[Episode]] = defaultdict(set)
    for r in readouts:
        have[(r.cell, field_split.get(r.field_id, ""))].add((r.field_id, r.origin))
    out = []
    for (cell, split), episodes in sorted(have.items()):
        gaps = sorted(p for p in pairs if field_split.get(p[0]) == split and p not in episodes)
        if gaps:
            f, o = gaps[0]
            out.append(_finding(path, None, f"cell {cell} is claimed on {split} but misses {len(gaps)} of its pairs, first {f} {o}",
                                ProblemKind.COVERAGE))
    return out


def check_oracle(
    path: str,
    units: Iterable[OracleUnit],
    expected_input: Callable[[str, date, str], str],
    field_split: Mapping[str, str],
    origins: Iterable[date],
    cells: set[Episode] | None = None,
) -> list[Finding]:
    """``input_sha256`` = H(block) per line; a claimed (condition, split) covers the split
    (every field × origin), or for a panel model exactly its cells P."""
    units = list(units)
    origins = tuple(origins)
    findings: list[Finding] = []
    for u in units:
        if cells is not None and (u.field_id, u.origin) not in cells:
            findings.append(_finding(path, u.line, f"{u.field_id} {u.origin} is outside the panel's cells", ProblemKind.PANEL))
            continue
        want = expected_input(u.field_id, u.origin, u.condition)
        if want != u.input_sha256:
            findings.append(_finding(path, u.line, "'input_sha256' does not match the exact-history block", ProblemKind.INPUT,
                                     want, u.input_sha256))
    claimed = sorted({(u.condition, field_split.get(u.field_id, "")) for u in units})
    have = {(u.condition, u.field_id, u.origin) for u in units}
    for condition, split in claimed:
        if cells is not None:
            expected = sorted(c for c in cells if field_split.get(c[0]) == split)
        else:
            expected = sorted((f, o) for f, s in field_split.items() if s == split for o in origins)
        gaps = [(f, o) for f, o in expected if (condition, f, o) not in have]
        if gaps:
            f, o = gaps[0]
            findings.append(_finding(path, None, f"condition {condition} is claimed on {split} but misses {len(gaps)} episodes, first {f} {o}",
                                     ProblemKind.COVERAGE))
    return findings


def check_unit_traces(path: str, traces: Iterable[TraceCall], unit_keys: set[tuple[str, date, str]]) -> list[Finding]:
    """Every trace line belongs to a unit of the unit file (O3 calls to an O3 unit; a panel's traces to P)."""
    return [
        _finding(path, c.line, f"call for {c.field_id} {c.origin} {c.condition}, which has no unit", ProblemKind.TRACE)
        for c in traces if (c.field_id, c.origin, c.condition) not in unit_keys
    ]


def panel_cells(panel: Panel, fields: Iterable[Field], blocks: Iterable[Block], training: Training | None) -> set[Episode]:
    """Cells P: the listed splits' fields, minus every field of a block that holds a
    training or gate field, × the listed origins."""
    used = set(training.fields) | set(training.gate_fields) if training is not None else set()
    tainted = {f for b in blocks if used & set(b.fields) for f in b.fields}
    keep = [f.field_id for f in fields if f.split in panel.splits and f.field_id not in tainted]
    return {(f, o) for f in keep for o in panel.origins}


def check_panel_units(path: str, units: Iterable[Unit], panel: Panel, cells: set[Episode]) -> list[Finding]:
    """Each listed condition has one unit per cell of P; nothing outside P or of an unlisted condition."""
    findings: list[Finding] = []
    have: dict[str, set[Episode]] = defaultdict(set)
    for u in units:
        if u.condition not in panel.conditions:
            findings.append(_finding(path, u.line, f"'condition' {u.condition} is not listed in the model's panel.conditions", ProblemKind.PANEL))
        elif (u.field_id, u.origin) not in cells:
            findings.append(_finding(path, u.line, f"{u.field_id} {u.origin} is outside the panel's cells", ProblemKind.PANEL))
        else:
            have[u.condition].add((u.field_id, u.origin))
    for condition in panel.conditions:
        gaps = sorted(cells - have[condition])
        if gaps:
            f, o = gaps[0]
            findings.append(_finding(path, None, f"condition {condition} misses {len(gaps)} of the panel's cells, first {f} {o}",
                                     ProblemKind.COVERAGE))
    return findings


def check_base_coverage(path: str, base_model: str, base_units: Iterable[Unit], panel: Panel, cells: set[Episode]) -> list[Finding]:
    """``BASE-COVERAGE``: the base model has a unit for every cell × listed condition."""
    have = {(u.field_id, u.origin, u.condition) for u in base_units}
    gaps = sorted((f, o, c) for f, o in cells for c in panel.conditions if (f, o, c) not in have)
    if not gaps:
        return []
    f, o, c = gaps[0]
    return [_finding(path, None, f"{BASE_COVERAGE}: base model {base_model!r} misses {len(gaps)} panel cells × conditions, first {f} {o} {c}",
                     ProblemKind.BASE_COVERAGE)]


def check_training(path: str, training: Training, panel: Panel, window_months: int) -> list[Finding]:
    """The trajectory bound, and every training and gate target window ending by min(panel origins)."""
    findings: list[Finding] = []
    bound = len(training.fields) * len(training.origins) * len(training.conditions)
    if not 1 <= training.n_trajectories <= bound:
        findings.append(_finding(path, None, f"'n_trajectories' {training.n_trajectories} is not in [1, {bound}] (fields × origins × conditions)",
                                 ProblemKind.SCHEMA))
    first = min(panel.origins)
    for key, origins in (("origins", training.origins), ("gate.origins", training.gate_origins)):
        late = [o for o in origins if add_months(o, window_months) > first]
        if late:
            findings.append(_finding(path, None, f"{key!r}: the target window of {late[0]} ends after the panel's first origin {first}",
                                     ProblemKind.SCHEMA))
    return findings


def check_training_presence(path: str, base_model: str | None, has_training: bool) -> list[Finding]:
    """training.json exists if and only if model.json names a ``base_model``."""
    if base_model is not None and not has_training:
        return [_finding(path, None, f"'base_model' {base_model!r} requires a training.json", ProblemKind.SCHEMA)]
    if base_model is None and has_training:
        return [_finding(path, None, "training.json is present but model.json names no 'base_model'", ProblemKind.SCHEMA)]
    return []
