"""The archive page: every file the release shown lists, with its size and SHA-256, and the parameter ledger.

The digests are the ones ``verify`` checked (``Release.files``); the site parses no manifest itself.
"""

from __future__ import annotations

import json
from typing import Any

from rapgen.archive import MODELS_PREFIX, Release


def build_artifacts(archive: Release) -> list[dict]:
    """One row per listed file, in SHA256SUMS order: path, digest, size, group."""
    return [{"path": rel, "sha256": digest, "size": archive.size(rel), "group": "models" if rel.startswith(MODELS_PREFIX) else "frozen"}
            for rel, digest in archive.files.items()]


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
