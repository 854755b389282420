"""``verify_history``: the verifier's report on an archive, plus every history finding.

Until ``rapgen verify`` calls the history checks itself, this wraps
:func:`verify_archive`: it runs it, keeps its findings, and adds those of
:func:`load_history` on the files whose bytes verified. Files of later
origins (``models/<id>/origins/<origin>/``), which a format-1 model folder
does not allow, are validated here against their own origin instead, and a
new model may arrive with only ``model.json`` and a commitment. (This shim
goes once ``verify_archive`` knows format 2; it matches the format-1 model
folder findings by their text because those carry no ``ProblemKind``.)
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from rapgen.archive import parse
from rapgen.archive.history.check import first_release
from rapgen.archive.history.load import LoadedHistory, load_history
from rapgen.archive.layout import FIELDS_JSONL, LEDGER_JSON
from rapgen.archive.records import FORECAST_CONDITIONS, Category, Finding

# Categories whose path did not verify byte for byte (the verifier already reported them).
UNVERIFIED = {
    Category.FAILED, Category.MISSING, Category.SYMLINK, Category.NOT_REGULAR, Category.UNREADABLE,
    Category.UNSAFE, Category.DUPLICATE, Category.CONFLICT,
}
_ORIGIN_FILE = re.compile(r"^archive/models/([^/]+)/origins/(\d{4}-\d{2}-01)/(predictions|traces)\.jsonl$")
_FORMAT1_MODEL_FILE = "unexpected file in a model folder"
_FORMAT1_MISSING = "required model file is missing"
_MAIN_PREDICTIONS = re.compile(r"^archive/models/([^/]+)/predictions\.jsonl$")


def verify_history(root: str | Path, **options):
    """``verify_archive(root, **options)`` with the history findings merged in; returns its report."""
    from rapgen.archive.verify import verify_archive

    report = verify_archive(root, **options)
    loaded = history_of_report(root, report)
    kept = [f for f in report.findings if not _format1_only(f, loaded)]
    extra = loaded.findings + _origin_files(Path(root), loaded, _verified(root, report))
    report.findings = sorted(set(kept + extra), key=Finding.sort_key)
    report.history = loaded  # type: ignore[attr-defined]
    return report


def _format1_only(f: Finding, loaded: LoadedHistory) -> bool:
    """A format-1 model-folder finding that format 2 allows: later-origin files, and a model that
    arrives with only model.json and a commitment or later-origin files (no main predictions)."""
    if _ORIGIN_FILE.match(f.path) and f.detail.startswith(_FORMAT1_MODEL_FILE):
        return True
    m = _MAIN_PREDICTIONS.match(f.path)
    if m and f.detail == _FORMAT1_MISSING:
        model_id = m.group(1)
        return any(p.startswith(f"archive/models/{model_id}/origins/") or re.match(rf"^archive/commitments/[^/]+/{re.escape(model_id)}\.json$", p)
                   for p in loaded.input.root)
    return False


def _verified(root: str | Path, report) -> set[str]:
    from rapgen.archive.history.load import read_root_sums

    bad = {f.path for f in report.findings if f.category in UNVERIFIED}
    return {p for p in read_root_sums(Path(root)) if p not in bad}


def history_of_report(root: str | Path, report) -> LoadedHistory:
    return load_history(root, _verified(root, report))


def _origin_files(root: Path, loaded: LoadedHistory, verified: set[str]) -> list[Finding]:
    """Predictions and traces of a later origin: parsed against that origin alone."""
    out: list[Finding] = []
    paths = sorted(p for p in loaded.input.root if _ORIGIN_FILE.match(p))
    if not paths or FIELDS_JSONL not in verified or LEDGER_JSON not in verified:
        return out
    fields, problems = parse.parse_fields(FIELDS_JSONL, (root / FIELDS_JSONL).read_bytes())
    ledger, ledger_problems = parse.parse_ledger(LEDGER_JSON, (root / LEDGER_JSON).read_bytes())
    if problems or ledger_problems or ledger is None:
        return out
    field_ids = [f.field_id for f in fields]
    known = _all_origins(loaded)
    for path in paths:
        model_id, origin_text, kind = _ORIGIN_FILE.match(path).groups()
        origin = date.fromisoformat(origin_text)
        k = first_release(loaded.input, path)
        tag = f"release {k}: " if k else ""
        if origin not in known:
            out.append(Finding(path, None, Category.INVARIANT, f"{tag}{origin} is not an origin of this history"))
            continue
        if f"archive/models/{model_id}/model.json" not in loaded.input.root:
            out.append(Finding(path, None, Category.INVARIANT, f"{tag}model {model_id} has no model.json"))
        if path not in verified:
            continue
        data = (root / path).read_bytes()
        if kind == "predictions":
            units, found = parse.parse_predictions(path, data, field_ids, [origin])
            claimed = {u.condition for u in units}
            found += [Finding(path, None, Category.MALFORMED, f"origin {origin} lacks condition {c}: every origin a model "
                              "claims covers A0, A1 and A3") for c in FORECAST_CONDITIONS if units and c not in claimed]
        else:
            _, found = parse.parse_traces(path, data, field_ids, [origin], int(ledger["search"]["max_calls"]))
        out.extend(Finding(f.path, f.line, Category.INVARIANT, tag + f.detail) for f in found)
    return out


def _all_origins(loaded: LoadedHistory) -> set[date]:
    out: set[date] = set()
    for record in loaded.input.records.values():
        out.update(record.resolved_origins)
        if record.open_origin is not None:
            out.add(record.open_origin.origin)
    return out
