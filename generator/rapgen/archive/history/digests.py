"""A Live entry's digests are its own: no commitment may carry another model's digests.

A sealed entry proves what a model forecast without showing it; a commitment that
copies another model's digests would reveal, later, another model's files as its
own (free-riding). :func:`digest_copies` finds, for one commitment, every other
model's commitment or listed file whose SHA-256 equals one of its digests. The
verifier (``check.py``) and the submission check (``submit/review/live.py``) both
use it, so the rule is written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from rapgen.archive.history.records import REVEAL_FILES, Commitment

_MODEL_FILE = re.compile(r"^archive/models/([^/]+)/(?:.+/)?[^/]+\.jsonl$")


@dataclass(frozen=True)
class DigestCopy:
    file: str  # which of the commitment's files: predictions.jsonl or traces.jsonl
    digest: str
    source: str  # the other model's commitment or file with that digest
    source_model: str

    def describe(self) -> str:
        return (f"its {self.file} digest {self.digest[:12]}… is that of {self.source_model}'s {self.source}: "
                "a commitment carries the digests of the model's own files, never another model's")


def digest_copies(commitment: Commitment, commitments: Mapping[str, Commitment], files: Mapping[str, str]) -> list[DigestCopy]:
    """Every other model's commitment (``commitments``: path → commitment) or file (``files``: path → SHA-256,
    e.g. the root SHA256SUMS) that has one of ``commitment``'s digests."""
    wanted = {d: name for name in REVEAL_FILES if (d := commitment.digest_of(name)) is not None}
    out: list[DigestCopy] = []
    for path, other in sorted(commitments.items()):
        if other.model_id == commitment.model_id:
            continue
        for name in REVEAL_FILES:
            digest = other.digest_of(name)
            if digest in wanted:
                out.append(DigestCopy(wanted[digest], digest, path, other.model_id))
    for path, digest in sorted(files.items()):
        m = _MODEL_FILE.match(path)
        if m and digest in wanted and m.group(1) != commitment.model_id:
            out.append(DigestCopy(wanted[digest], digest, path, m.group(1)))
    return out
