"""The score folder as the Ideas pages read it: the six files of ``rapgen score``, never recomputed.

:func:`read_scores` checks that the folder was scored from the release shown
(scores.json's ``manifest_sha256``) and that every file is there; a problem is
one :class:`~rapgen.errors.SiteError` naming the file.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from rapgen.errors import SiteError
from rapgen.site import read_score_bytes

SCORE_FILES = ("leaderboard.csv", "pairs.csv", "units.parquet", "scores.json", "diagnostics.json", "releases.csv")
FLOATS = ("estimate", "ci_low", "ci_high", "p_first")
INTS = ("rank", "n_items", "n_valid", "n_invalid", "release")


def _typed(row: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = dict(row)
    for k in FLOATS:
        if k in out:
            out[k] = float(out[k]) if out[k] != "" else None
    for k in INTS:
        if k in out:
            out[k] = int(out[k]) if out[k] != "" else None
    return out


@dataclass
class IdeasScores:
    folder: Path
    meta: dict[str, Any]
    diagnostics: dict[str, Any]
    leaderboard: list[dict[str, Any]]
    releases: list[dict[str, Any]]

    @cached_property
    def cells(self) -> dict[tuple[str, str, str, str, str, str], dict[str, Any]]:
        """(track, judge, gate, entry, condition, metric) -> its leaderboard row."""
        return {(r["track"], r["judge"], r["gate"], r["entry"], r["condition"], r["metric"]): r for r in self.leaderboard}

    @cached_property
    def units(self) -> list[dict[str, Any]]:
        import pyarrow.parquet as pq

        return pq.read_table(self.folder / "units.parquet").to_pylist()

    def entries(self, track: str, judge: str, gate: str) -> list[tuple[str, str]]:
        """(entry, condition) scored on one cell of the board, in file order."""
        seen = dict.fromkeys((r["entry"], r["condition"]) for r in self.leaderboard
                             if (r["track"], r["judge"], r["gate"]) == (track, judge, gate))
        return list(seen)

    def failed(self, judge: str) -> dict[tuple[str, str], int]:
        """(entry, condition) -> failed judgments under ``judge``."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for r in self.diagnostics.get("evaluation", []):
            if r["judge"] == judge:
                out[(r["entry"], r["condition"])] += r["n_failed"]
        return out


def read_scores(folder: str | Path, manifest_sha256: str) -> IdeasScores:
    folder = Path(folder)
    data = {name: read_score_bytes(folder / name, "ideas") for name in SCORE_FILES}
    try:
        meta = json.loads(data["scores.json"])
        diagnostics = json.loads(data["diagnostics.json"])
    except ValueError as exc:
        raise SiteError(f"{folder}: scores.json or diagnostics.json is not JSON ({exc})") from None
    if meta.get("kind") != "ideas":
        raise SiteError(f"{folder / 'scores.json'}: not the scores of an Ideas archive (kind {meta.get('kind')!r})")
    if meta.get("manifest_sha256") != manifest_sha256:
        raise SiteError(f"{folder / 'scores.json'}: scored from manifest {str(meta.get('manifest_sha256'))[:12]}, not the release shown "
                        f"({manifest_sha256[:12]}); score again")

    def rows(name: str) -> list[dict[str, Any]]:
        return [_typed(r) for r in csv.DictReader(io.StringIO(data[name].decode("utf-8")))]

    return IdeasScores(folder, meta, diagnostics, rows("leaderboard.csv"), rows("releases.csv"))
