"""The hand-written fields and codebooks of the sample archive, loaded from data.

The text lives in ``fields.yaml`` next to this module (shipped as package data):
each field has a name, a definition and ``terms`` (extra vocabulary used only by
the instrument when it scores membership), an optional ``breadth``, and eight
directions with the codebook text that is published (``name``, ``definition``,
``include``, ``exclude``) and ``terms``, the instrument's extra vocabulary for
that direction. Exemplars are not written there: the build picks them with the
instrument (the top-scoring pre-2023 papers of each direction).

:func:`load_fields` reads the file with :mod:`importlib.resources` and checks its
shape, so a content edit that breaks it fails with the field and key named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from rapgen.archive import FIELD_ID_PATTERN, SLOTS
from rapgen.errors import RapgenError

FIELDS_RESOURCE = "fields.yaml"
DEFAULT_BREADTH = 0.10  # share of calibration papers a field admits as members, unless it says otherwise
FIELD_KEYS = ("field_id", "name", "definition", "terms", "directions")
FIELD_OPTIONAL_KEYS = ("breadth",)
DIRECTION_KEYS = ("name", "definition", "include", "exclude", "terms")


@dataclass(frozen=True)
class DirectionText:
    name: str
    definition: str
    include: str
    exclude: str
    terms: str


@dataclass(frozen=True)
class FieldText:
    field_id: str
    name: str
    definition: str
    terms: str
    directions: tuple[DirectionText, ...]
    # Share of calibration papers (first submitted before the first origin) that
    # the instrument admits as members: 0.10 for broad fields, less for narrow ones.
    breadth: float = DEFAULT_BREADTH


class CodebookDataError(RapgenError):
    """fields.yaml does not have the shape the sample build needs."""


def _keys(where: str, obj: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(obj, dict):
        raise CodebookDataError(f"{where}: expected a mapping, found {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    unknown = sorted(set(obj) - set(required) - set(optional))
    if missing or unknown:
        what = f"missing key {missing[0]!r}" if missing else f"unknown key {unknown[0]!r}"
        raise CodebookDataError(f"{where}: {what}")
    for key in required:
        if key != "directions" and (not isinstance(obj[key], str) or not obj[key].strip()):
            raise CodebookDataError(f"{where}: {key!r} must be a non-empty string")
    return obj


def _direction(where: str, obj: Any) -> DirectionText:
    d = _keys(where, obj, DIRECTION_KEYS)
    return DirectionText(d["name"], d["definition"], d["include"], d["exclude"], d["terms"])


def _field(where: str, obj: Any) -> FieldText:
    f = _keys(where, obj, FIELD_KEYS, FIELD_OPTIONAL_KEYS)
    where = f"{where} ({f['field_id']})"
    if not re.match(FIELD_ID_PATTERN, f["field_id"]):
        raise CodebookDataError(f"{where}: 'field_id' does not match {FIELD_ID_PATTERN}")
    breadth = f.get("breadth", DEFAULT_BREADTH)
    if isinstance(breadth, bool) or not isinstance(breadth, (int, float)) or not 0 < breadth < 1:
        raise CodebookDataError(f"{where}: 'breadth' must be a number strictly between 0 and 1")
    directions = f["directions"]
    if not isinstance(directions, list) or len(directions) != len(SLOTS):
        raise CodebookDataError(f"{where}: 'directions' must list exactly {len(SLOTS)} directions ({SLOTS[0]}..{SLOTS[-1]})")
    parsed = tuple(_direction(f"{where} direction {SLOTS[i]}", d) for i, d in enumerate(directions))
    return FieldText(f["field_id"], f["name"], f["definition"], f["terms"], parsed, float(breadth))


def parse_fields_yaml(text: str, source: str = FIELDS_RESOURCE) -> tuple[FieldText, ...]:
    """The fields of a fields.yaml text, shape-checked; raises CodebookDataError naming the problem."""
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise CodebookDataError(f"{source}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(doc, dict) or set(doc) != {"fields"} or not isinstance(doc["fields"], list) or not doc["fields"]:
        raise CodebookDataError(f"{source}: expected one key 'fields' holding a non-empty list")
    fields = tuple(_field(f"{source}: field {i + 1}", f) for i, f in enumerate(doc["fields"]))
    seen: set[str] = set()
    for f in fields:
        if f.field_id in seen:
            raise CodebookDataError(f"{source}: field {f.field_id!r} appears twice")
        seen.add(f.field_id)
    return fields


@lru_cache(maxsize=1)
def load_fields() -> tuple[FieldText, ...]:
    """The sample's fields, from the package's fields.yaml."""
    text = resources.files("rapgen.sample").joinpath(FIELDS_RESOURCE).read_text(encoding="utf-8")
    return parse_fields_yaml(text)


def field_ids() -> list[str]:
    return [f.field_id for f in load_fields()]
