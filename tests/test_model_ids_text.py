"""Model ids that pandas or DuckDB would read as something else (``nan``, ``null``, ``true``, ``1e3``, …)
stay those ids through scoring, the site and the submission check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from factory import reseal
from rapgen.cli import cli
from rapgen.site.inputs import read_score_table

# Every one matches the model id pattern; pandas' default reader turns the first two into a missing
# value, and would read the others as a bool, a number or infinity were they not declared text.
TRICKY = ["nan", "null", "true", "1e3", "0", "inf", "none"]


def _rename_models(root: Path) -> None:
    """model-b becomes ``nan``; copies of it take the other tricky ids."""
    models = root / "archive" / "models"
    for i, new in enumerate(TRICKY):
        dest = models / new
        if i == 0:
            (models / "model-b").rename(dest)
        else:
            shutil.copytree(models / TRICKY[0], dest)
        path = dest / "model.json"
        obj = json.loads(path.read_text())
        obj.update(model_id=new, display_name=f"Model {new}")
        path.write_text(json.dumps(obj, indent=2) + "\n")
    reseal(root)


@pytest.fixture(scope="module")
def tricky_root(tmp_path_factory) -> Path:
    from factory import make_archive

    root = make_archive(tmp_path_factory.mktemp("tricky") / "repo").root
    _rename_models(root)
    return root


def test_build_keeps_every_tricky_id(tricky_root, tmp_path) -> None:
    result = CliRunner().invoke(cli, ["build", "--root", str(tricky_root), "--resamples", "20", "--no-replay",
                                      "--work-dir", str(tmp_path / "work"), "--site-dir", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    for model_id in TRICKY:
        assert (tmp_path / "site" / "models" / model_id / "index.html").is_file(), model_id
    leaderboard = pd.read_parquet(tmp_path / "work" / "docs" / "downloads" / "leaderboard.parquet")
    models = leaderboard[leaderboard["kind"] == "model"]
    assert models["entry"].notna().all() and set(TRICKY) <= set(models["entry"])


def test_submit_check_of_a_tricky_id_passes(tricky_root) -> None:
    result = CliRunner().invoke(cli, ["submit", "check", "--root", str(tricky_root), "--resamples", "20",
                                      str(tricky_root / "archive" / "models" / "nan")])
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output


def test_only_an_empty_cell_is_missing(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("entry,kind,estimate\nnan,model,0.5\nnull,model,\nNA,model,1\n,baseline,2\n")
    frame = read_score_table(path, ("entry", "kind", "estimate"))
    assert frame["entry"].tolist()[:3] == ["nan", "null", "NA"] and pd.isna(frame["entry"][3])
    assert pd.isna(frame["estimate"][1]) and frame["estimate"][2] == 1.0
