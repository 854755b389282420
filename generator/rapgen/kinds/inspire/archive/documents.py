"""ARCHIVE.json and LEDGER.json of an Inspire archive (INSPIRE.md §1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from rapgen.archive import Finding

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.fields import Bad, json_document, malformed, show

ARCHIVE_KEYS = ("format", "format_version", "name", "description", "created", "synthetic", "source", "license")


def parse_archive_json(data: bytes, path: str = layout.ARCHIVE_JSON) -> tuple[dict | None, list[Finding]]:
    """ARCHIVE.md's keys, with ``format`` ``inspire-archive`` and version 1 or 2."""
    findings: list[Finding] = []
    obj = json_document(path, data, findings)
    if obj is None:
        return None, findings
    missing = [k for k in ARCHIVE_KEYS if k not in obj]
    if missing:
        findings.append(malformed(path, None, f"missing key {missing[0]!r}"))
    if obj.get("format") != layout.FORMAT:
        findings.append(malformed(path, None, f"'format' must be {layout.FORMAT!r}, found {show(obj.get('format'))}"))
    version = obj.get("format_version")
    if isinstance(version, bool) or version not in layout.FORMAT_VERSIONS:
        findings.append(malformed(path, None, f"'format_version' must be 1 or 2, found {show(version)}"))
    if "synthetic" in obj and not isinstance(obj["synthetic"], bool):
        findings.append(malformed(path, None, f"'synthetic' must be true or false, found {show(obj['synthetic'])}"))
    return (None if findings else obj), findings


@dataclass(frozen=True)
class Ledger:
    """Every constant Inspire's scorer and search use, read from LEDGER.json."""

    K: int
    cutoff_months: int
    recency_months: int
    min_graded: int
    max_graded: int
    flag_confidence: float
    gains: Mapping[str, Mapping[str, float]]  # role -> tier -> gain
    gain_maps: tuple[str, ...]
    k1: float
    b: float
    top_k: int
    max_calls: int
    resamples: int
    seed: int
    level: float
    progress_steps: int
    exposure_prefix: int

    def gain(self, role: str, tier: str) -> float:
        return float(self.gains[role][tier])


_INT_KEYS = frozenset({"K", "cutoff_months", "recency_months", "min_graded", "max_graded", "top_k", "max_calls",
                       "resamples", "seed", "progress_steps", "exposure_prefix"})


def _shape(value: object, model: object, where: str) -> None:
    """``value`` has exactly the keys of ``model`` (recursively), numbers where it has numbers."""
    if isinstance(model, dict):
        if not isinstance(value, dict):
            raise Bad(f"{where} must be an object, found {show(value)}")
        for key in model:
            if key not in value:
                raise Bad(f"{where} lacks key {key!r}")
        for key in value:
            if key not in model:
                raise Bad(f"{where} has unknown key {key!r}")
        for key in model:
            _shape(value[key], model[key], f"{where}.{key}")
    elif isinstance(model, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Bad(f"{where} must be a list of names, found {show(value)}")
    elif where.rsplit(".", 1)[-1] in _INT_KEYS:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise Bad(f"{where} must be a non-negative integer, found {show(value)}")
    elif not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise Bad(f"{where} must be a non-negative number, found {show(value)}")


def parse_ledger(data: bytes, path: str = layout.LEDGER_JSON) -> tuple[Ledger | None, list[Finding]]:
    """LEDGER.json: exactly INSPIRE.md's keys and shapes, the gain maps known."""
    findings: list[Finding] = []
    obj = json_document(path, data, findings)
    if obj is None:
        return None, findings
    try:
        _shape(obj, layout.LEDGER, "LEDGER")
        unknown = [m for m in obj["gain_maps"] if m not in layout.GAIN_MAPS]
        if unknown or "declared" not in obj["gain_maps"]:
            raise Bad(f"gain_maps must be drawn from {', '.join(layout.GAIN_MAPS)} and include 'declared', found {show(obj['gain_maps'])}")
        if not obj["min_graded"] <= obj["max_graded"] or obj["K"] < 1 or obj["search"]["top_k"] < 1:
            raise Bad("expected 1 <= K, 1 <= search.top_k and min_graded <= max_graded")
        if not 0 < obj["bootstrap"]["level"] < 1 or obj["progress_steps"] < 1:
            raise Bad("expected 0 < bootstrap.level < 1 and progress_steps >= 1")
    except Bad as exc:
        findings.append(malformed(path, None, str(exc)))
        return None, findings
    ledger = Ledger(
        K=obj["K"], cutoff_months=obj["cutoff_months"], recency_months=obj["recency_months"],
        min_graded=obj["min_graded"], max_graded=obj["max_graded"], flag_confidence=float(obj["flag_confidence"]),
        gains={r: {t: float(g) for t, g in tiers.items()} for r, tiers in obj["gains"].items()},
        gain_maps=tuple(obj["gain_maps"]), k1=float(obj["bm25"]["k1"]), b=float(obj["bm25"]["b"]),
        top_k=obj["search"]["top_k"], max_calls=obj["search"]["max_calls"],
        resamples=obj["bootstrap"]["resamples"], seed=obj["bootstrap"]["seed"], level=float(obj["bootstrap"]["level"]),
        progress_steps=obj["progress_steps"], exposure_prefix=obj["exposure_prefix"],
    )
    return ledger, findings


def ledger_from(obj: Mapping) -> Ledger:
    """A :class:`Ledger` from an in-memory ledger object (e.g. :data:`layout.LEDGER`); raises ValueError."""
    import json

    ledger, findings = parse_ledger(json.dumps(obj).encode("utf-8"))
    if ledger is None:
        raise ValueError(findings[0].detail)
    return ledger
