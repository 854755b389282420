"""A third benchmark kind in a few lines: "toy", quiz items answered by models, scored by accuracy.

It exists to show that a kind is a plug-in: everything it needs is declared here, on the
contract of :mod:`rapgen.kinds.base`, and nothing outside ``tests/`` knows it. Files:
``archive/ARCHIVE.json`` (format ``toy-archive``), ``archive/benchmark/items.jsonl``
(``item_id``, ``answer``) and per model ``model.json`` and ``predictions.jsonl``
(``item_id``, ``answer``). Unit (item, model); item = item; one metric, accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rapgen.archive import ArchiveKind, Category, Finding, KindCheck, Release, loads_strict
from rapgen.io import atomic_write_bytes
from rapgen.kinds.base import BenchmarkKind, ClusterSpec, MetricSpec, PageSpec, Primary, SiteSpec, TrackSpec
from rapgen.scores import bootstrap_intervals, draw_counts

ITEMS = "archive/benchmark/items.jsonl"


def _lines(path: str, data: bytes, findings: list) -> list[dict]:
    out = []
    for n, raw in enumerate(data.decode("utf-8").splitlines(), 1):
        try:
            out.append(loads_strict(raw))
        except ValueError as exc:
            findings.append(Finding(path, n, Category.MALFORMED, f"not JSON: {exc}"))
    return out


def check(inp) -> KindCheck:
    """Items and models parse; every model answers every item, once."""
    findings: list[Finding] = []
    info = json.loads(inp.documents["archive/ARCHIVE.json"])
    items = {row["item_id"]: row["answer"] for row in _lines(ITEMS, inp.documents[ITEMS], findings)}
    models = {}
    for path in sorted(p for p in inp.documents if p.endswith("/predictions.jsonl")):
        rows = _lines(path, inp.documents[path], findings)
        answers = {row["item_id"]: row["answer"] for row in rows}
        if set(answers) != set(items) or len(rows) != len(answers):
            findings.append(Finding(path, None, Category.INVARIANT, "a model answers every item exactly once"))
        models[path.split("/")[2]] = answers
    return KindCheck(findings, None, info, {"items": items, "models": models})


class ToyRelease(Release):
    @property
    def items(self) -> dict[str, str]:
        return self.verified.state["items"]

    @property
    def answers(self) -> dict[str, dict[str, str]]:
        return self.verified.state["models"]


def accuracy(release: ToyRelease, model: str) -> np.ndarray:
    """1 per correct item, 0 per wrong one (in item order)."""
    return np.array([float(release.answers[model][i] == a) for i, a in sorted(release.items.items())])


def score(release: ToyRelease, *, resamples: int | None = None, **_options) -> list[dict]:
    """Each model's accuracy, with a 95 % percentile interval over resampled items."""
    R = resamples or 1000
    C = draw_counts(len(release.items), R, 0)
    rows = []
    for model in sorted(release.answers):
        values = accuracy(release, model)
        boot = bootstrap_intervals(C, values[None, :], np.ones((1, len(values))), 0.95)
        rows.append({"entry": model, "metric": "accuracy", "estimate": float(values.mean()),
                     "ci_low": float(boot.low[0]), "ci_high": float(boot.high[0])})
    return rows


def write_scores(rows: list[dict], out_dir) -> list[Path]:
    path = Path(out_dir) / "leaderboard.json"
    atomic_write_bytes(path, (json.dumps(rows, indent=1) + "\n").encode())
    return [path]


def board(release: ToyRelease, scores_dir: Path) -> dict:
    return {"name": release.info["name"], "rows": json.loads((scores_dir / "leaderboard.json").read_text())}


KIND = BenchmarkKind(
    name="toy",
    archive=ArchiveKind("toy-archive", (1,), ("archive/ARCHIVE.json", ITEMS), ("model.json", "predictions.jsonl"),
                        check, ToyRelease),
    unit=("item_id", "model_id"), item="item_id",
    metrics=(MetricSpec("accuracy", "Accuracy", True, "mean", "zero", "1 for the right answer", accuracy),),
    primary=Primary("accuracy", "all"), tracks=(TrackSpec("all", "All items"),),
    clusters=(ClusterSpec("item", lambda item: item, primary=True),),
    score=score, write_scores=write_scores,
    site=SiteSpec(pages=(PageSpec("index.md", "index.md.j2", board, "nav.home"),), templates=str(Path(__file__).parent / "templates")),
)
