"""The one ``model.json`` writer, and ``rapgen submit init``.

:func:`model_record` builds a model.json object with every key of ARCHIVE.md
in the archive's order (then any optional keys), :func:`write_model_json`
writes it atomically. ``rapgen submit init``, ``rapgen agent run`` and the
reference agents all go through them. The template has valid types and
``TODO`` placeholders that ``rapgen submit check`` refuses until they are
filled; ``init`` also writes a README of next steps (not part of the submission).
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

from typing import Any

from rapgen.archive import MODEL_ID_PATTERN, MODEL_KEYS, MODEL_OPTIONAL_KEYS
from rapgen.io import atomic_write_bytes
from rapgen.errors import UsageProblem

MODEL_ID_RE = re.compile(MODEL_ID_PATTERN)
OPTIONAL_KEYS = MODEL_OPTIONAL_KEYS  # written after the required keys, in this order

README = """\
# Submission folder for `{model_id}`

This folder was written by `rapgen submit init`. This README is not part of the
submission: only `model.json`, `predictions.jsonl` and `traces.jsonl` are.

Next steps (docs/submitting.md has the details):

1. Fill in every `TODO` in `model.json`. `knowledge_cutoff` and `release_date`
   are dates (`YYYY-MM-DD`) or `null`; set `"diagnostic": true` only if you also
   run the State conditions A2 and A4.
2. Produce the predictions with the kit, for example against a local
   OpenAI-compatible server:

       rapgen agent run --base-url http://127.0.0.1:8000/v1 --model NAME --out {folder}

   or run your own harness with `rapgen prompt` (the exact system prompt and
   tool schemas) and `rapgen serve-search` (the frozen Search tool, which
   records `traces.jsonl`).
3. Check the folder before copying it: `rapgen submit check {folder}`.
4. Copy the three files to `archive/models/{model_id}/` in your fork, run
   `rapgen seal`, check again with
   `rapgen submit check archive/models/{model_id}`, and open a pull request
   that touches nothing else.
"""


def model_template(model_id: str, today: date | None = None) -> dict:
    """The model.json template: every key, valid types, placeholders to fill."""
    return {
        "model_id": model_id,
        "display_name": "TODO: the name shown on the leaderboard",
        "provider": "TODO: who trained or serves the model",
        "proprietary": False,
        "knowledge_cutoff": None,
        "release_date": None,
        "cutoff_source": "TODO: where the cut-off date comes from (model card URL), or say it is unknown",
        "diagnostic": False,
        "submitted": (today or date.today()).isoformat(),
        "contact": "TODO: an e-mail address or GitHub handle",
        "notes": "",
    }


def model_record(model_id: str, *, today: date | None = None, **values: Any) -> dict:
    """A model.json object: the template overlaid with ``values`` (None leaves a
    key as in the template), required keys in order, then optional keys."""
    unknown = sorted(k for k in values if k not in MODEL_KEYS and k not in OPTIONAL_KEYS)
    if unknown:
        raise ValueError(f"model.json has no key {unknown[0]!r}")
    record = model_template(model_id, today)
    for key in MODEL_KEYS:
        if values.get(key) is not None and key != "model_id":
            record[key] = values[key]
    for key in OPTIONAL_KEYS:
        if values.get(key) is not None:
            record[key] = values[key]
    return record


def model_json_bytes(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")


def write_model_json(path: str | Path, record: dict) -> None:
    """Write ``record`` (from :func:`model_record`) to ``path`` atomically."""
    atomic_write_bytes(path, model_json_bytes(record))


def check_model_id(folder: str | Path, option: str = "") -> str:
    """The model id a folder's name gives, or a usage error."""
    model_id = Path(folder).resolve().name
    if not MODEL_ID_RE.match(model_id):
        where = f"{option} {folder}" if option else str(folder)
        raise UsageProblem(f"{where}: the folder name {model_id!r} is not a valid model id (lower-case letters, digits, '.', '_', '-'; up to 64 characters)")
    return model_id


def init_submission(model_dir: str | Path, *, today: date | None = None) -> list[Path]:
    """Create ``model_dir`` with model.json and README.md; refuse to overwrite anything."""
    model_dir = Path(model_dir)
    model_id = check_model_id(model_dir)
    if model_dir.exists() and not model_dir.is_dir():
        raise UsageProblem(f"{model_dir}: exists and is not a folder")
    targets = [model_dir / "model.json", model_dir / "README.md"]
    existing = [p for p in targets if p.exists() or p.is_symlink()]
    if existing:
        raise UsageProblem(f"{existing[0]}: already exists; rapgen submit init never overwrites a file")
    model_dir.mkdir(parents=True, exist_ok=True)
    write_model_json(targets[0], model_record(model_id, today=today))
    atomic_write_bytes(targets[1], README.format(model_id=model_id, folder=str(model_dir)).encode("utf-8"))
    return targets
