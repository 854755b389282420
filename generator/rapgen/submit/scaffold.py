"""``rapgen submit init``: scaffold a submission folder.

Writes a ``model.json`` with every key of ARCHIVE.md in order, valid types and
``TODO`` placeholders that ``rapgen submit check`` refuses until they are
filled, and a README of next steps (which is not part of the submission).
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

from rapgen.archive.writer import atomic_write_bytes
from rapgen.errors import UsageProblem

MODEL_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

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


def init_submission(model_dir: str | Path, *, today: date | None = None) -> list[Path]:
    """Create ``model_dir`` with model.json and README.md; refuse to overwrite anything."""
    model_dir = Path(model_dir)
    model_id = model_dir.resolve().name
    if not MODEL_ID_RE.match(model_id):
        raise UsageProblem(f"{model_dir}: the folder name {model_id!r} is not a valid model id (lower-case letters, digits, '.', '_', '-'; up to 64 characters)")
    if model_dir.exists() and not model_dir.is_dir():
        raise UsageProblem(f"{model_dir}: exists and is not a folder")
    targets = [model_dir / "model.json", model_dir / "README.md"]
    existing = [p for p in targets if p.exists() or p.is_symlink()]
    if existing:
        raise UsageProblem(f"{existing[0]}: already exists; rapgen submit init never overwrites a file")
    model_dir.mkdir(parents=True, exist_ok=True)
    body = json.dumps(model_template(model_id, today), ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(targets[0], body.encode("utf-8"))
    atomic_write_bytes(targets[1], README.format(model_id=model_id, folder=str(model_dir)).encode("utf-8"))
    return targets
