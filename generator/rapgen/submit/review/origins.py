"""A model's later origins (RELEASES.md, "Submissions across releases"): ``origins/<origin>/`` files.

Each later origin's predictions are parsed against that origin alone, with the
coverage rule per origin (all fields × every claimed condition; A0, A1 and A3
required); its traces are checked as the main traces are. :func:`coverage_rows`
summarises every origin the model claims, main file and later origins alike,
for the report.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from rapgen.archive import CONDITIONS, FORECAST_CONDITIONS, Archive, Unit, parse_predictions, parse_traces, names_panel
from rapgen.submit.review import traces
from rapgen.submit.review.files import ORIGINS_DIR, Submission, accounting, keyword_of
from rapgen.submit.review.result import CheckResult

STAGE = "submission"


def origin_of(name: str) -> str | None:
    """``origins/2026-01-01/predictions.jsonl`` -> ``2026-01-01``; None for a top-level file."""
    parts = name.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == ORIGINS_DIR else None


def check_origin_files(result: CheckResult, archive: Archive, sub: Submission, display: str) -> None:
    """Parse every ``origins/<origin>/`` file the check read, each problem with its file and line."""
    names = sorted(n for n in sub.data if origin_of(n))
    if not names:
        return
    fields = archive.field_map
    max_calls = int(archive.ledger["search"]["max_calls"])
    panel = names_panel(sub.data.get("model.json"))
    for name in names:
        origin_text, rel = origin_of(name), display + name
        origin = date.fromisoformat(origin_text)
        raw = sub.data[name]
        if name.endswith("/predictions.jsonl"):
            units, findings = parse_predictions(rel, raw, fields, [origin], coverage=not panel)
            for f in findings:
                result.add(STAGE, keyword_of(f), f.path, f.line, f.detail)
            claimed = {u.condition for u in units}
            if not units and not findings:
                result.add(STAGE, "COVERAGE", rel, None, f"origin {origin_text}: predictions.jsonl has no units")
            for condition in FORECAST_CONDITIONS:
                if units and condition not in claimed and not panel:
                    result.add(STAGE, "COVERAGE", rel, None,
                               f"origin {origin_text} lacks condition {condition}: every origin a model claims covers A0, A1 and A3")
            sub.origin_units[origin_text] = units
        else:
            calls, findings = parse_traces(rel, raw, fields, [origin], max_calls)
            for f in findings:
                result.add(STAGE, keyword_of(f), f.path, f.line, f.detail)
            sub.origin_calls[origin_text] = calls
    for origin_text, calls in sorted(sub.origin_calls.items()):
        if calls:
            rel = f"{display}{ORIGINS_DIR}/{origin_text}/traces.jsonl"
            traces.check_trace_semantics(result, archive, rel, calls, sub.origin_units.get(origin_text, []))
            result.n_trace_calls += len(calls)


def coverage_rows(sub: Submission, n_fields: int) -> list[dict]:
    """One row per origin the model claims: where its units are, per-condition counts, complete or not."""
    by_origin: dict[str, list[Unit]] = defaultdict(list)
    for unit in sub.units:
        by_origin[unit.origin.isoformat()].append(unit)
    sources = {origin: "predictions.jsonl" for origin in by_origin}
    for origin, units in sub.origin_units.items():
        by_origin[origin].extend(units)
        sources[origin] = f"{ORIGINS_DIR}/{origin}/predictions.jsonl"
    rows = []
    for origin in sorted(by_origin):
        counts = accounting(by_origin[origin], n_fields)
        claimed = {c.condition for c in counts}
        complete = all(c.present == c.expected for c in counts) and set(FORECAST_CONDITIONS) <= claimed
        rows.append({
            "origin": origin, "file": sources[origin], "listed": sources[origin] in sub.listed, "complete": complete,
            "conditions": {c.condition: {"present": c.present, "expected": c.expected, "valid": c.valid}
                           for c in sorted(counts, key=lambda c: CONDITIONS.index(c.condition))},
        })
    return rows
