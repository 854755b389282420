"""The archive page: every listed file with its size and SHA-256, and the parameter ledger.

The digests are the ones ``verify`` checked (``VerifiedArchive.digests``); for an
unverified archive (``rapgen render``) SHA256SUMS is read with the archive's own
parser, :func:`rapgen.archive.parse_sums`. The site parses no manifest itself.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from rapgen.archive import MODELS_PREFIX, SUMS_NAME, Archive, parse_sums


def listed_digests(archive: Archive) -> Mapping[str, str]:
    digests = getattr(archive, "digests", None)
    if digests is not None:
        return digests
    entries, _ = parse_sums(archive.read_bytes(SUMS_NAME))
    return {e.path: e.digest for e in entries}


def build_artifacts(archive: Archive) -> list[dict]:
    """One row per listed file, in SHA256SUMS order: path, digest, size, group."""
    rows = []
    for rel, digest in listed_digests(archive).items():
        p = archive.path(rel)
        rows.append({"path": rel, "sha256": digest, "size": p.stat().st_size if p.is_file() else None,
                     "group": "models" if rel.startswith(MODELS_PREFIX) else "frozen"})
    return rows


def ledger_rows(prefix: str, obj: Any) -> list[tuple[str, str]]:
    """The ledger flattened to (dotted key, JSON value) pairs, in file order."""
    if isinstance(obj, dict):
        out = []
        for k in obj:
            out += ledger_rows(f"{prefix}.{k}" if prefix else str(k), obj[k])
        return out
    return [(prefix, json.dumps(obj))]


def ledger_json(ledger: dict) -> str:
    return json.dumps(ledger, indent=2, sort_keys=True)
