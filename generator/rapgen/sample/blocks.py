"""Dependency blocks from membership overlap, and the dev/test split by block.

Two fields are linked when, before the first origin, they share at least
``MIN_SHARED`` papers and their overlap coefficient |A ∩ B| / min(|A|, |B|)
is at least ``MIN_OVERLAP``; blocks are the connected components of that
graph. The split puts whole blocks into ``dev``, taking blocks in the order of
``sha256(salt + block_id)`` while the dev field count stays within a quarter of
all fields (rounded), so it is deterministic and does not depend on content.
"""

from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

from rapgen.archive import DEV_SPLIT, TEST_SPLIT

MIN_SHARED = 10
MIN_OVERLAP = 0.6
DEV_SHARE = 0.25


def overlap_links(members: Mapping[str, set[str]], min_shared: int = MIN_SHARED, min_overlap: float = MIN_OVERLAP) -> list[tuple[str, str, int, float]]:
    """Every linked pair ``(a, b, shared, overlap)`` with ``a < b``."""
    ids = sorted(members)
    links = []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            A, B = members[a], members[b]
            if not A or not B:
                continue
            shared = len(A & B)
            overlap = shared / min(len(A), len(B))
            if shared >= min_shared and overlap >= min_overlap:
                links.append((a, b, shared, overlap))
    return links


def connected_blocks(field_ids: Sequence[str], links: Sequence[tuple[str, str, int, float]]) -> list[list[str]]:
    """Connected components (union-find), each sorted, ordered by their first field."""
    parent = {f: f for f in field_ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, *_ in links:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for f in sorted(field_ids):
        groups.setdefault(find(f), []).append(f)
    return sorted(groups.values(), key=lambda g: g[0])


def block_id_for(fields: Sequence[str]) -> str:
    """A block is named after its alphabetically first field."""
    return f"block-{min(fields)}"


def split_blocks(blocks: Sequence[Sequence[str]], salt: str, dev_share: float = DEV_SHARE) -> dict[str, str]:
    """block_id -> ``dev`` or ``test``; about ``dev_share`` of the fields are dev."""
    n_fields = sum(len(b) for b in blocks)
    target = max(1, round(n_fields * dev_share)) if n_fields > 1 else 0
    ranked = sorted(blocks, key=lambda b: hashlib.sha256(f"{salt}:{block_id_for(b)}".encode()).hexdigest())
    split: dict[str, str] = {}
    dev = 0
    for b in ranked:
        if dev + len(b) <= target:
            split[block_id_for(b)] = DEV_SPLIT
            dev += len(b)
        else:
            split[block_id_for(b)] = TEST_SPLIT
    return split
