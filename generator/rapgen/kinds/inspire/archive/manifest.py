"""search/manifest.jsonl: one shard per instance, every corpus paper dated before its
cutoff (INSPIRE.md §1; KINDS.md §7: group ``corpus``, no lower bound, date_to = cutoff)."""

from __future__ import annotations

import bisect
import hashlib
from datetime import date
from typing import Mapping, Sequence

import numpy as np

from rapgen.archive import Category, Finding, ProblemKind

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.fields import first_of_each, integer, invariant, iso_date, keys, parse_each, sha256_hex, text
from rapgen.kinds.inspire.archive.records import CorpusPaper, Instance, ManifestRow

MANIFEST_KEYS = ("instance_id", "date_to", "n_papers", "min_date", "max_date", "ids_sha256")


class CorpusDates:
    """The corpus in date order, so that 'every paper before D' is a prefix; each
    distinct cutoff's shard line is computed once."""

    def __init__(self, corpus: Mapping[str, CorpusPaper]):
        rows = sorted((p.first_submitted, p.arxiv_id) for p in corpus.values())
        self.days = [d for d, _ in rows]
        self.ids = [i for _, i in rows]
        by_bytes = sorted(corpus, key=lambda s: s.encode("utf-8"))
        self._bytes_order = np.array(by_bytes, dtype=object)
        self._bytes_days = np.array([corpus[i].first_submitted.toordinal() for i in by_bytes], dtype=np.int64)
        self._lines: dict[date, dict] = {}

    def before(self, cutoff: date) -> list[str]:
        """Ids of the papers dated < ``cutoff`` (the shard), in date order."""
        return self.ids[: bisect.bisect_left(self.days, cutoff)]

    def _digest(self, cutoff: date) -> str:
        """``shard_ids_sha256`` of the shard, from the ids already in byte order (no sort per shard)."""
        ids = self._bytes_order[self._bytes_days < cutoff.toordinal()]
        return hashlib.sha256("\n".join(ids.tolist()).encode("utf-8")).hexdigest()

    def shard_row(self, instance_id: str, cutoff: date) -> dict:
        """The manifest line an instance's shard must have."""
        if cutoff not in self._lines:
            n = bisect.bisect_left(self.days, cutoff)
            self._lines[cutoff] = {
                "date_to": cutoff.isoformat(),
                "n_papers": n,
                "min_date": self.days[0].isoformat() if n else None,
                "max_date": self.days[n - 1].isoformat() if n else None,
                "ids_sha256": self._digest(cutoff),
            }
        return {"instance_id": instance_id, **self._lines[cutoff]}


def build_manifest(instances: Sequence[Instance], corpus: Mapping[str, CorpusPaper]) -> list[dict]:
    """Every instance's manifest line, in instance-id order."""
    dates = CorpusDates(corpus)
    return [dates.shard_row(i.instance_id, i.cutoff) for i in sorted(instances, key=lambda i: i.instance_id)]


def _row(obj: dict, number: int) -> ManifestRow:
    keys(obj, MANIFEST_KEYS)
    return ManifestRow(
        text(obj, "instance_id"), iso_date(obj, "date_to"), integer(obj, "n_papers"),
        iso_date(obj, "min_date", nullable=True), iso_date(obj, "max_date", nullable=True), sha256_hex(obj, "ids_sha256"), number,
    )


def parse_manifest(data: bytes, path: str = layout.MANIFEST_JSONL) -> tuple[list[ManifestRow], list[Finding]]:
    findings: list[Finding] = []
    out = first_of_each(path, parse_each(path, data, findings, _row), lambda r: r.instance_id,
                        lambda r: f"shard for {r.instance_id}", findings)
    return out, findings


def check_manifest(rows: Sequence[ManifestRow], instances: Sequence[Instance], corpus: Mapping[str, CorpusPaper],
                   path: str = layout.MANIFEST_JSONL) -> list[Finding]:
    """Rebuild every instance's shard from the corpus and compare: one line per
    instance, ``date_to`` = cutoff, count, dates and hash."""
    out: list[Finding] = []
    dates = CorpusDates(corpus)
    by_id = {i.instance_id: i for i in instances}
    have = {r.instance_id: r for r in rows}
    for r in rows:
        inst = by_id.get(r.instance_id)
        if inst is None:
            out.append(invariant(path, r.line, f"shard of unknown instance {r.instance_id}"))
            continue
        want = dates.shard_row(inst.instance_id, inst.cutoff)
        found = {"instance_id": r.instance_id, "date_to": r.date_to.isoformat(), "n_papers": r.n_papers,
                 "min_date": r.min_date.isoformat() if r.min_date else None,
                 "max_date": r.max_date.isoformat() if r.max_date else None, "ids_sha256": r.ids_sha256}
        for key in MANIFEST_KEYS[1:]:
            if found[key] != want[key]:
                out.append(Finding(path, r.line, Category.INVARIANT,
                                   f"{r.instance_id}: {key} does not match the corpus before {inst.cutoff}",
                                   expected=str(want[key]), actual=str(found[key])))
                break
    for iid in sorted(set(by_id) - set(have)):
        out.append(invariant(path, None, f"instance {iid} has no shard line", ProblemKind.COVERAGE))
    return out

