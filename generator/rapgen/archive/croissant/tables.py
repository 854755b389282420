"""The archive's tables as typed Croissant record sets (columns of ARCHIVE.md and SUBMISSION.md).

A table is read from the files a release lists for it: ``papers`` and
``assignments`` from ``benchmark/`` and every window, a model's predictions
from ``predictions.jsonl`` and every ``origins/<origin>/predictions.jsonl``.
A table of one file is sourced from that file's ``FileObject`` (a loader checks
its digest); a table of several files from a ``FileSet`` naming each of them
exactly (no wildcard, so a later release's files never join an earlier
release's table), contained in the archive folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from rapgen.archive.layout import (
    ASSIGNMENTS_PARQUET,
    BLOCKS_JSONL,
    CODEBOOKS_JSONL,
    FIELDS_JSONL,
    MODELS_PREFIX,
    ORIGIN_FILE_PATTERN,
    PAPERS_PARQUET,
    PREDICTIONS_JSONL,
    WINDOW_FILE_PATTERN,
)
from rapgen.archive.parse import PREDICTION_REQUIRED
from rapgen.archive.records import SLOTS

TEXT, DATE, BOOL, FLOAT = "sc:Text", "sc:Date", "sc:Boolean", "sc:Float"
PARQUET, JSONL = "application/x-parquet", "application/jsonlines"
_WINDOW = re.compile(WINDOW_FILE_PATTERN)
_ORIGIN = re.compile(ORIGIN_FILE_PATTERN)


@dataclass(frozen=True)
class Column:
    name: str
    type: str | None  # None for a column made of sub-columns
    description: str
    repeated: bool = False
    sub: tuple["Column", ...] = ()
    json_path: str | None = None  # read from the parent column's value at this path


@dataclass(frozen=True)
class Table:
    id: str  # the record set's @id (what ``mlcroissant load --record_set`` names)
    description: str
    encoding: str
    files: tuple[str, ...]  # archive paths, sorted
    columns: tuple[Column, ...]
    key: tuple[str, ...]


PAPER_COLUMNS = (
    Column("arxiv_id", TEXT, "arXiv identifier, unique across the snapshot."),
    Column("title", TEXT, "Title of the paper."),
    Column("abstract", TEXT, "Abstract of the paper."),
    Column("first_submitted", DATE, "Date of the paper's first arXiv version."),
    Column("categories", TEXT, "arXiv categories, space-separated."),
)
ASSIGNMENT_COLUMNS = (
    Column("arxiv_id", TEXT, "arXiv identifier of the member paper."),
    Column("field_id", TEXT, "The field the paper belongs to."),
    Column("first_submitted", DATE, "The paper's first-submission date."),
    Column("primary", TEXT, "Primary direction: D0 to D7, or other."),
    Column("secondary", TEXT, "Secondary direction of a boundary or bridge row, else null."),
    Column("assignment_type", TEXT, "single, boundary, bridge, other or low_evidence."),
)
FIELD_COLUMNS = (
    Column("field_id", TEXT, "Field identifier."),
    Column("name", TEXT, "Name of the field."),
    Column("definition", TEXT, "What the field covers."),
    Column("split", TEXT, "dev or test."),
    Column("block_id", TEXT, "The dependency block the field belongs to."),
    Column("eligible_pre2024", BOOL, "Whether the field is eligible at origins before 2024."),
)
DIRECTION_COLUMNS = (
    Column("slot", TEXT, "D0 to D7, in slot order.", json_path="slot"),
    Column("name", TEXT, "Name of the direction.", json_path="name"),
    Column("definition", TEXT, "What the direction covers.", json_path="definition"),
    Column("include", TEXT, "What belongs to the direction.", json_path="include"),
    Column("exclude", TEXT, "What does not.", json_path="exclude"),
    Column("exemplars", TEXT, "arXiv identifiers of exemplar papers.", repeated=True, json_path="exemplars"),
)
CODEBOOK_COLUMNS = (
    Column("field_id", TEXT, "Field identifier."),
    Column("directions", None, "The field's eight frozen directions.", repeated=True, sub=DIRECTION_COLUMNS),
)
BLOCK_COLUMNS = (
    Column("block_id", TEXT, "Dependency block identifier."),
    Column("split", TEXT, "dev or test, shared by every field of the block."),
    Column("fields", TEXT, "The block's field identifiers.", repeated=True),
)
_PREDICTION_TEXT = {"field_id": "The field of the unit.", "origin": "The forecast origin of the unit.",
                    "condition": "The condition of the unit (SUBMISSION.md)."}
PREDICTION_COLUMNS = tuple(
    Column(k, DATE if k == "origin" else TEXT, _PREDICTION_TEXT[k]) for k in PREDICTION_REQUIRED if k != "weights"
) + (Column("weights", None, "The forecast weights per direction (null for an invalid unit).",
            sub=tuple(Column(s, FLOAT, f"Weight of direction {s}.", json_path=s) for s in SLOTS)),)


def _one(paths: Iterable[str], path: str) -> tuple[str, ...]:
    return (path,) if path in paths else ()


def tables(paths: Iterable[str]) -> list[Table]:
    """Every table that can be read from the listed ``paths``, in a fixed order."""
    paths = sorted(set(paths))
    windows = {name: sorted(p for p in paths if (m := _WINDOW.match(p)) and m.group(2) == name) for name in ("papers", "assignments")}
    out = [
        Table("papers", "The source-paper snapshot: every paper of the release's ledger.", PARQUET,
              _one(paths, PAPERS_PARQUET) + tuple(windows["papers"]), PAPER_COLUMNS, ("arxiv_id",)),
        Table("assignments", "The membership ledger: one row per (paper, field), with its direction labels.", PARQUET,
              _one(paths, ASSIGNMENTS_PARQUET) + tuple(windows["assignments"]), ASSIGNMENT_COLUMNS, ("arxiv_id", "field_id")),
        Table("fields", "One row per field.", JSONL, _one(paths, FIELDS_JSONL), FIELD_COLUMNS, ("field_id",)),
        Table("codebooks", "One row per field: its eight frozen directions.", JSONL, _one(paths, CODEBOOKS_JSONL),
              CODEBOOK_COLUMNS, ("field_id",)),
        Table("blocks", "One row per dependency block.", JSONL, _one(paths, BLOCKS_JSONL), BLOCK_COLUMNS, ("block_id",)),
    ]
    models = sorted({p[len(MODELS_PREFIX):].split("/", 1)[0] for p in paths if p.startswith(MODELS_PREFIX)})
    for model_id in models:
        files = [p for p in paths if p == f"{MODELS_PREFIX}{model_id}/{PREDICTIONS_JSONL}"
                 or ((m := _ORIGIN.match(p)) and m.group(1) == model_id and m.group(3) == "predictions")]
        if files:
            out.append(Table(f"predictions-{model_id}", f"Model {model_id}'s predictions: one row per unit "
                             "(field, origin, condition).", JSONL, tuple(files), PREDICTION_COLUMNS,
                             ("field_id", "origin", "condition")))
    return [t for t in out if t.files]
