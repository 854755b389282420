"""The score folder as the Inspire pages read it: ``rapgen score``'s seven files (and
``replay.json`` when the build replayed), never recomputed.

:func:`read_folder` refuses a folder scored from another release (scores.json's
``manifest_sha256``) or of another kind, and a missing file, with one
:class:`~rapgen.errors.SiteError` naming the file.
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

from rapgen.kinds.inspire.scores.score import SCORE_FILES

REPLAY_JSON = "replay.json"
_NUMBERS = {"estimate": float, "ci_low": float, "ci_high": float, "p_first": float,
            "rank": int, "n_items": int, "n_valid": int, "n_invalid": int, "release": int}
# (track, split, gains, cluster, entry, condition, metric): one score row
Key = tuple[str, str, str, str, str, str, str]


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row with its numeric columns as numbers; an empty cell is None."""
    return {k: (None if v == "" else _NUMBERS[k](v)) if k in _NUMBERS else v for k, v in row.items()}


def _key(row: dict[str, Any]) -> Key:
    return (row["track"], row["split"], row["gains"], row["cluster"], row["entry"], row["condition"], row["metric"])


@dataclass
class ScoreFolder:
    folder: Path
    meta: dict[str, Any]
    histograms: list[dict[str, Any]]
    board: list[dict[str, Any]]  # leaderboard.csv
    funnel: list[dict[str, Any]]  # diagnostics.csv: retention, exposure recall and G(p)
    releases: list[dict[str, Any]]
    replay: dict[str, Any] | None

    @cached_property
    def cells(self) -> dict[Key, dict[str, Any]]:
        return {_key(r): r for r in (*self.board, *self.funnel)}

    def cell(self, track: str, split: str, gains: str, cluster: str, entry: str, condition: str, metric: str) -> dict | None:
        return self.cells.get((track, split, gains, cluster, entry, condition, metric))

    @cached_property
    def units(self) -> list[dict[str, Any]]:
        import pyarrow.parquet as pq

        return pq.read_table(self.folder / "units.parquet").to_pylist()

    @cached_property
    def units_by_target(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for u in self.units:
            out[u["instance_id"]].append(u)
        return out

    @property
    def headline(self) -> dict[str, str]:
        return self.meta["headline"]

    def entries(self) -> list[tuple[str, str, str]]:
        """(entry, kind, condition) of every scored unit set, entries by id, conditions as the kind orders them."""
        return [(e["entry"], e["kind"], c) for e in self.meta["entries"] for c in e["conditions"]]

    def splits(self) -> list[str]:
        """The splits with instances, the headline split first."""
        present = [s for s, n in self.meta["counts"]["instances"].items() if n]
        return sorted(present, key=lambda s: (s != self.headline["split"], s))


def _json(path: Path, data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise SiteError(f"{path}: not JSON ({exc})") from None


def read_folder(folder: str | Path, manifest_sha256: str) -> ScoreFolder:
    """Read and check the score folder of the release whose manifest digest is ``manifest_sha256``."""
    folder = Path(folder)
    meta = _json(folder / "scores.json", read_score_bytes(folder / "scores.json", "inspire"))  # first: whose scores they are
    if not isinstance(meta, dict) or meta.get("kind") != "inspire":
        raise SiteError(f"{folder / 'scores.json'}: not the scores of an Inspire archive")
    if meta.get("manifest_sha256") != manifest_sha256:
        raise SiteError(f"{folder / 'scores.json'}: scored from manifest {str(meta.get('manifest_sha256'))[:12]}, not the "
                        f"release shown ({manifest_sha256[:12]}); score again")
    data = {name: read_score_bytes(folder / name, "inspire") for name in SCORE_FILES}
    diagnostics = _json(folder / "diagnostics.json", data["diagnostics.json"])
    replay = None
    if (folder / REPLAY_JSON).is_file():
        replay = _json(folder / REPLAY_JSON, read_score_bytes(folder / REPLAY_JSON))
        if replay.get("manifest_sha256") != manifest_sha256:
            replay = None  # an earlier build's replay of another release: not shown

    def rows(name: str) -> list[dict[str, Any]]:
        return [_typed(r) for r in csv.DictReader(io.StringIO(data[name].decode("utf-8")))]

    return ScoreFolder(folder, meta, diagnostics.get("recovered_histogram", []), rows("leaderboard.csv"), rows("diagnostics.csv"),
                       rows("releases.csv"), replay)
