"""Adapters from the submit check to the scoring, Search and site stages.

Each adapter calls one stage only through its package's public ``__init__``
surface, on an overlay repository root (see :func:`rapgen.submit.check.build_overlay`).
If the stage is not installed, :class:`StageUnavailable` says so and the check
reports the stage as unavailable instead of failing.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from rapgen.errors import SearchError
from rapgen.submit.check import StageUnavailable, _import_stage


def cache_dir_for(real_root: Path) -> Path:
    """The Search cache of the real repository, reused for the overlay (same parquet bytes, same index key)."""
    return Path(os.environ.get("RAPGEN_CACHE") or Path(real_root) / ".rapgen-cache")


def open_overlay(root: Path):
    """The overlay archive, verified once (``open_verified``) for every later stage."""
    (open_verified,) = _import_stage("rapgen.archive", "open_verified")
    return open_verified(root)


def score_overlay(archive, out: Path, resamples: int | None = None) -> list[dict]:
    """Score the overlay archive into ``out`` and return the rows of leaderboard.csv."""
    compute_scores, write_scores = _import_stage("rapgen.scores", "compute_scores", "write_scores")
    write_scores(compute_scores(archive, resamples=resamples), out)
    return read_leaderboard_csv(out / "leaderboard.csv")


def read_leaderboard_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def search_executor(archive, cache_dir: Path | None = None):
    """A function executing one Search call on the frozen shard of a unit (see session.Executor)."""
    try:
        (Backend,) = _import_stage("rapgen.search", "Backend")
    except StageUnavailable as exc:
        raise SearchError(f"the Search backend is not available: {exc}") from None
    backend = Backend(archive, cache_dir=cache_dir)

    def execute(field_id, origin, regime, query, sort, date_from, date_to):
        args = {"query": query, "sort": sort,
                "date_from": date_from.isoformat() if date_from else None,
                "date_to": date_to.isoformat() if date_to else None}
        result = backend.search(field_id, origin, regime, args)
        if result.error is not None:
            return 0, [], result.error
        papers = {p["arxiv_id"]: p for p in backend.papers(list(result.ids))}
        return result.total_hits, [papers[i] for i in result.ids], None

    return execute


def replay_overlay(archive, model_id: str, cache_dir: Path | None = None) -> dict:
    """Replay the model's traces; ``{"calls", "reproduced", "differences": [{path, line, detail}]}``."""
    (replay_archive,) = _import_stage("rapgen.search", "replay_archive")
    report = replay_archive(archive, cache_dir=cache_dir, jobs=1, models=[model_id])
    data = report.data
    model = next((m for m in data.get("models", []) if m.get("model_id") == model_id), {"calls": 0, "reproduced": 0, "conditions": []})
    differences = []
    for cond in model.get("conditions", []):
        for diff in cond.get("first_differences", []):
            rec, rep = diff.get("recorded", {}), diff.get("replayed", {})
            detail = (f"{cond['condition']} {diff.get('field_id')} {diff.get('origin')} call {diff.get('call_index')} does not reproduce: "
                      f"recorded total_hits {rec.get('total_hits')} and {len(rec.get('returned_ids') or [])} ids, "
                      f"replayed total_hits {rep.get('total_hits')} and {len(rep.get('returned_ids') or [])} ids")
            if rep.get("error"):
                detail += f" ({rep['error']})"
            differences.append({"path": f"archive/models/{model_id}/traces.jsonl", "line": diff.get("line"), "detail": detail})
        missing = cond.get("failed", 0) - len(cond.get("first_differences", []))
        if missing > 0:
            differences.append({"path": f"archive/models/{model_id}/traces.jsonl", "line": None,
                                "detail": f"{cond['condition']}: {missing} more calls do not reproduce"})
    return {"calls": model.get("calls", 0), "reproduced": model.get("reproduced", 0), "differences": differences}


def render_overlay(archive, scores_dir: Path, out: Path, model_id: str) -> list[str]:
    """Render the site's Markdown pages into ``out``; return their relative paths."""
    (render_docs,) = _import_stage("rapgen.site", "render_docs")
    result = render_docs(archive, scores_dir, out)
    return sorted(str(p) for p in result.pages)


__all__ = ["cache_dir_for", "open_overlay", "score_overlay", "search_executor", "replay_overlay", "render_overlay", "read_leaderboard_csv"]
