"""Read the scoring stage's output folder (SCORING.md §7) — the site's only source of numbers.

Each CSV is checked for exactly the columns :data:`rapgen.scores.SCORE_FILES`
declares, and ``scores.json`` for the declared ``schema_version``; a missing
required file or column is a :class:`SiteError` naming the file. ``units.parquet``, ``diagnostics.json`` and
``replay.json`` are optional: pages say "not computed" where they are absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported where a frame is made (start-up stays light)
    import pandas as pd

from rapgen.errors import SiteError
from rapgen.scores import SCHEMA_VERSION, SCORE_FILES, OPTIONAL_SCORE_FILES

# The score files the site reads; their columns are the scorer's declaration.
SITE_CSVS = ("leaderboard.csv", "contrasts.csv", "ranks.csv", "field_scores.csv", "origin_scores.csv", "compositions.csv")
# Columns read as text whatever they look like (ids such as "2401" must stay strings).
_TEXT = {"track", "split", "policy", "entry", "kind", "condition", "metric", "contrast", "field_id", "origin",
         "window_start", "window_end", "date", "analysis", "subset", "cell", "readout", "regime", "side", "arm", "budget",
         "mask", "stratum", "entry_a", "entry_b", "kind_a", "kind_b", "origins"}
TEXT_COLUMNS = frozenset(_TEXT)
UNIT_COLUMNS = ("policy", "entry", "kind", "condition", "field_id", "origin")  # read as text


@dataclass
class ScoreOutputs:
    """Everything ``rapgen score --out DIR`` (and, optionally, replay) wrote."""

    folder: Path
    leaderboard: pd.DataFrame
    contrasts: pd.DataFrame
    ranks: pd.DataFrame
    field_scores: pd.DataFrame
    origin_scores: pd.DataFrame
    compositions: pd.DataFrame
    scores_json: dict
    units: pd.DataFrame | None = None
    diagnostics: dict | None = None
    replay: dict | None = None
    files: dict[str, Path] = field(default_factory=dict)
    releases: pd.DataFrame | None = None  # releases.csv (RELEASES.md): one block of headline rows per release
    interventions: dict[str, pd.DataFrame] = field(default_factory=dict)  # "interventions/<name>" -> its rows
    pairs: pd.DataFrame | None = None  # pairs.csv: every pair of entries' paired difference (the Compare page)
    live: pd.DataFrame | None = None  # live.csv: the scored release's Live track (the leaderboard's Live panel)
    field_clustered: pd.DataFrame | None = None  # field_clustered.csv: the field-clustered intervals (Table 15)


def _read_csv(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd
    if not path.is_file():
        raise SiteError(f"{path}: missing; run 'rapgen score --out {path.parent}' first")
    try:
        header = pd.read_csv(path, nrows=0).columns.tolist()
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SiteError(f"{path}: not a readable CSV file ({exc})") from None
    if tuple(header) != columns:
        missing = [c for c in columns if c not in header]
        what = f"missing column {missing[0]!r}" if missing else f"columns {header} differ from {list(columns)}"
        raise SiteError(f"{path}: line 1: {what}")
    try:
        frame = read_score_table(path, columns)
    except (ValueError, pd.errors.ParserError) as exc:
        raise SiteError(f"{path}: unreadable ({exc})") from None
    for c in columns:
        if c in _TEXT:
            frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    return frame


def read_score_table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """A score CSV as written: text columns as strings, and only an empty cell is missing.

    The scorer writes a missing value as an empty cell and nothing else, so pandas'
    missing-value words are switched off: a model id such as ``nan``, ``null`` or
    ``1e3`` stays that id."""
    import pandas as pd
    return pd.read_csv(path, dtype={c: "string" for c in columns if c in _TEXT}, keep_default_na=False, na_values=[""])


def read_score_bytes(path: Path, benchmark: str | None = None) -> bytes:
    """A score file's bytes, for a kind's own score reader: a missing file names the command that
    writes it (``rapgen score --benchmark <benchmark>``), an unreadable one says why."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        option = f"--benchmark {benchmark} " if benchmark else ""
        raise SiteError(f"{path}: missing from the score folder; run 'rapgen score {option}--out {path.parent}' first") from None
    except OSError as exc:
        raise SiteError(f"{path}: cannot be read ({exc.strerror})") from None


def _read_json(path: Path, required: bool) -> dict | None:
    if not path.is_file():
        if required:
            raise SiteError(f"{path}: missing; run 'rapgen score --out {path.parent}' first")
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise SiteError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise SiteError(f"{path}: line 1: expected a JSON object")
    return obj


def _optional_csvs(folder: Path) -> tuple[pd.DataFrame | None, dict[str, pd.DataFrame]]:
    """releases.csv and the interventions' files, each only when the scorer wrote it (same column check)."""
    releases = _read_csv(folder / "releases.csv", SCORE_FILES["releases.csv"]) if (folder / "releases.csv").is_file() else None
    extra = {name: _read_csv(folder / name, columns) for name, columns in OPTIONAL_SCORE_FILES.items() if (folder / name).is_file()}
    return releases, extra


def load_score_outputs(folder: str | Path, *, manifest_sha256: str | None = None) -> ScoreOutputs:
    """Load a score folder, checking every file's columns. With ``manifest_sha256``,
    refuse scores whose ``scores.json`` names a different archive."""
    import pandas as pd
    folder = Path(folder)
    if not folder.is_dir():
        raise SiteError(f"{folder}: score folder not found; run 'rapgen score --out {folder}' first")
    frames = {name: _read_csv(folder / name, SCORE_FILES[name]) for name in SITE_CSVS}
    units = None
    units_path = folder / "units.parquet"
    if units_path.is_file():
        try:
            units = pd.read_parquet(units_path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
            raise SiteError(f"{units_path}: unreadable parquet ({exc})") from None
        missing = [c for c in UNIT_COLUMNS if c not in units.columns]
        if missing:
            raise SiteError(f"{units_path}: missing column {missing[0]!r}")
        for c in UNIT_COLUMNS:
            units[c] = units[c].astype(str)
    scores_json = _read_json(folder / "scores.json", True) or {}
    if scores_json.get("schema_version") != SCHEMA_VERSION:
        raise SiteError(f"{folder / 'scores.json'}: schema_version {scores_json.get('schema_version')!r} is not "
                        f"{SCHEMA_VERSION}, the version this rapgen reads; run 'rapgen score' again")
    recorded = scores_json.get("manifest_sha256")
    if manifest_sha256 is not None and recorded != manifest_sha256:
        raise SiteError(f"{folder / 'scores.json'}: scores were computed from another archive (manifest_sha256 "
                        f"{str(recorded)[:12]}…, this archive {manifest_sha256[:12]}…); run 'rapgen score' again")
    releases, interventions = _optional_csvs(folder)
    pairs, live, clustered = (_read_csv(folder / name, SCORE_FILES[name]) if (folder / name).is_file() else None
                              for name in ("pairs.csv", "live.csv", "field_clustered.csv"))
    return ScoreOutputs(
        folder=folder,
        leaderboard=frames["leaderboard.csv"],
        contrasts=frames["contrasts.csv"],
        ranks=frames["ranks.csv"],
        field_scores=frames["field_scores.csv"],
        origin_scores=frames["origin_scores.csv"],
        compositions=frames["compositions.csv"],
        scores_json=scores_json,
        units=units,
        diagnostics=_read_json(folder / "diagnostics.json", False),
        replay=_read_json(folder / "replay.json", False),
        files={name: folder / name for name in SITE_CSVS},
        releases=releases,
        interventions=interventions,
        pairs=pairs,
        live=live,
        field_clustered=clustered,
    )
