"""instances.jsonl and the evaluator tables: parsing and per-file rules (INSPIRE.md §1).

Each ``parse_*`` takes a file's bytes and returns its records with findings;
cross-file rules live in :mod:`.invariants`.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

from rapgen.archive import Finding, ProblemKind

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.fields import (
    Bad, first_of_each, iso_date, keys, malformed, one_of, parse_each, read_table, sha256_hex, text,
)
from rapgen.kinds.inspire.archive.ids import is_canonical
from rapgen.kinds.inspire.archive.records import CorpusPaper, Instance, Judgement, Reference, Target

INSTANCE_KEYS = ("instance_id", "split", "cutoff", "brief", "brief_terse", "brief_sha256")
TARGET_COLUMNS = {
    "instance_id": "string", "arxiv_id": "string", "title": "string", "abstract": "string", "first_submitted": "date",
    "topic": "string", "audit_named": "bool", "audit_confidence": "double", "title_overlap": "double", "view": "string",
}
JUDGEMENT_COLUMNS = {
    "instance_id": "string", "arxiv_id": "string", "tier": "string", "role": "string", "gain": "double",
    "n_votes": "int", "agreement": "int", "rationale": "string",
}
REFERENCE_COLUMNS = {
    "instance_id": "string", "arxiv_id": "string", "first_submitted": "date", "status": "string", "tier": "string",
    "role": "string",
}
CORPUS_COLUMNS = {"arxiv_id": "string", "title": "string", "abstract": "string", "first_submitted": "date", "categories": "string"}


def brief_digest(brief: str) -> str:
    """``brief_sha256``: SHA-256 of the brief's UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(brief.encode("utf-8")).hexdigest()


def _instance(obj: dict, number: int) -> Instance:
    keys(obj, INSTANCE_KEYS)
    iid = text(obj, "instance_id")
    if layout.INSTANCE_ID_RE.fullmatch(iid) is None:
        raise Bad(f"'instance_id' {iid!r} does not match {layout.INSTANCE_ID_PATTERN}")
    split = one_of(obj, "split", layout.SPLITS)
    cutoff = iso_date(obj, "cutoff")
    brief, terse = text(obj, "brief", nonempty=True), text(obj, "brief_terse", nonempty=True)
    digest = sha256_hex(obj, "brief_sha256")
    if digest != brief_digest(brief):
        raise Bad(f"'brief_sha256' is not the SHA-256 of 'brief' (expected {brief_digest(brief)[:12]}…)")
    return Instance(iid, split, cutoff, brief, terse, digest, number)


def parse_instances(data: bytes, path: str = layout.INSTANCES_JSONL) -> tuple[list[Instance], list[Finding]]:
    """instances.jsonl: ids unique and well-formed, texts non-empty, digests right."""
    findings: list[Finding] = []
    out = first_of_each(path, parse_each(path, data, findings, _instance), lambda i: i.instance_id,
                        lambda i: f"instance {i.instance_id}", findings)
    return out, findings


def _rows(path: str, data: bytes, columns: dict, nullable: frozenset[str], findings: list[Finding]) -> Iterable[tuple[int, dict]]:
    rows = read_table(path, data, columns, nullable, findings)
    return enumerate(rows or [], start=1)


def _canonical_id(path: str, row: int, value: str, findings: list[Finding]) -> bool:
    if is_canonical(value):
        return True
    findings.append(malformed(path, None, f"row {row}: arxiv_id {value!r} is not a canonical arXiv id (no version suffix)"))
    return False


def _known(path: str, row: int, column: str, value: object, choices: tuple[str, ...], findings: list[Finding]) -> bool:
    if value in choices:
        return True
    findings.append(malformed(path, None, f"row {row}: {column} must be one of {', '.join(choices)}, found {value!r}"))
    return False


def _key(record: Judgement | Reference) -> tuple[str, str]:
    return (record.instance_id, record.arxiv_id)


def parse_targets(data: bytes, path: str = layout.TARGETS_PARQUET) -> tuple[list[Target], list[Finding]]:
    """targets.parquet: the columns, canonical ids, known views, confidences in [0, 1]."""
    findings: list[Finding] = []
    out: list[Target] = []
    for row, r in _rows(path, data, TARGET_COLUMNS, frozenset(), findings):
        ok = _canonical_id(path, row, r["arxiv_id"], findings) & _known(path, row, "view", r["view"], layout.TARGET_VIEWS, findings)
        for column in ("audit_confidence", "title_overlap"):
            if not 0.0 <= r[column] <= 1.0:
                findings.append(malformed(path, None, f"row {row}: {column} must lie in [0, 1], found {r[column]!r}"))
                ok = False
        if ok:
            out.append(Target(**r))
    return out, findings


def parse_judgements(data: bytes, path: str = layout.JUDGEMENTS_PARQUET) -> tuple[list[Judgement], list[Finding]]:
    """judgements.parquet: the columns, known tiers and roles, vote counts in range, keys unique."""
    findings: list[Finding] = []
    out: list[tuple[int, Judgement]] = []
    for row, r in _rows(path, data, JUDGEMENT_COLUMNS, frozenset(), findings):
        ok = _canonical_id(path, row, r["arxiv_id"], findings)
        ok &= _known(path, row, "tier", r["tier"], layout.TIERS, findings) & _known(path, row, "role", r["role"], layout.ROLES, findings)
        if not (0 <= r["n_votes"] <= 3 and 0 <= r["agreement"] <= r["n_votes"]):
            findings.append(malformed(path, None, f"row {row}: expected 0 <= agreement <= n_votes <= 3, found "
                                                  f"n_votes {r['n_votes']}, agreement {r['agreement']}"))
            ok = False
        if ok:
            out.append((row, Judgement(**r)))
    return first_of_each(path, out, _key, lambda j: f"judgement {j.instance_id} {j.arxiv_id}", findings, rows=True), findings


def parse_references(data: bytes, path: str = layout.REFERENCES_PARQUET) -> tuple[list[Reference], list[Finding]]:
    """references.parquet: the columns, known statuses, tiers and roles, role set iff tier set."""
    findings: list[Finding] = []
    out: list[tuple[int, Reference]] = []
    for row, r in _rows(path, data, REFERENCE_COLUMNS, frozenset({"tier", "role"}), findings):
        ok = _canonical_id(path, row, r["arxiv_id"], findings)
        ok &= _known(path, row, "status", r["status"], layout.REFERENCE_STATUSES, findings)
        if r["tier"] is not None:
            ok &= _known(path, row, "tier", r["tier"], layout.REFERENCE_TIERS, findings)
        if r["role"] is not None:
            ok &= _known(path, row, "role", r["role"], layout.ROLES, findings)
        if (r["tier"] is None) != (r["role"] is None):
            findings.append(malformed(path, None, f"row {row}: tier and role must both be set (judged) or both null"))
            ok = False
        if ok:
            out.append((row, Reference(**r)))
    return first_of_each(path, out, _key, lambda r: f"reference {r.instance_id} {r.arxiv_id}", findings, rows=True), findings


def parse_corpus(data: bytes, path: str = layout.CORPUS_PARQUET) -> tuple[dict[str, CorpusPaper], list[Finding]]:
    """corpus/papers.parquet: ARCHIVE.md's papers columns, canonical ids, ``arxiv_id`` unique."""
    findings: list[Finding] = []
    out: dict[str, CorpusPaper] = {}
    for row, r in _rows(path, data, CORPUS_COLUMNS, frozenset({"title", "abstract", "categories"}), findings):
        if not _canonical_id(path, row, r["arxiv_id"], findings):
            continue
        if r["arxiv_id"] in out:
            findings.append(malformed(path, None, f"row {row}: duplicate arxiv_id {r['arxiv_id']}", ProblemKind.DUPLICATE_RECORD))
            continue
        out[r["arxiv_id"]] = CorpusPaper(r["arxiv_id"], r["title"] or "", r["abstract"] or "", r["first_submitted"], r["categories"] or "")
    return out, findings
