"""With ``diagnostics=True`` (``--diagnostics``) the submit check's preview scores the overlay as
``rapgen score`` does, with the Search-call validator: a model carrying intervention records gets
the interventions' files, the reliability additions and the Diagnostics page's Figure 3 in its
preview."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factory import make_archive, reseal
from intervention_fixture import MODEL, add_records

import rapgen.submit.review.overlay as overlay
from rapgen.scores.schema import INTERVENTION_FILES
from rapgen.submit import check_submission


@pytest.fixture(scope="module")
def archive_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("preview") / "repo"
    make_archive(root)
    add_records(root, root.parent / "cache")
    reseal(root)
    return root


def test_the_preview_has_the_intervention_sections(archive_root, monkeypatch):
    monkeypatch.setenv("RAPGEN_CACHE", str(archive_root.parent / "cache"))
    seen: dict = {}
    real = overlay.render_docs

    def spy(archive, scores_dir, out, **kwargs):
        rendered = real(archive, scores_dir, out, **kwargs)
        folder = Path(scores_dir)
        seen["files"] = sorted(p.name for p in (folder / "interventions").glob("*.csv"))
        seen["reliability"] = json.loads((folder / "diagnostics.json").read_text(encoding="utf-8"))["reliability"]
        seen["diagnostics"] = (Path(rendered.docs_dir) / "diagnostics.md").read_text(encoding="utf-8")
        return rendered

    monkeypatch.setattr(overlay, "render_docs", spy)
    res = check_submission(archive_root, archive_root / "archive" / "models" / MODEL, resamples=20, diagnostics=True)
    assert res.ok, [p.one_line() for p in res.problems]
    assert res.stages["scores"].status == "passed" and res.stages["site"].status == "passed"
    assert seen["files"] == sorted(INTERVENTION_FILES)
    assert {"posterior", "revision", "ceiling_gap"} <= set(seen["reliability"])
    assert "## Figure 3: what asking for a Forecast changes" in seen["diagnostics"]
    assert "Gap to the posterior-predictive ceiling" in seen["diagnostics"]
