"""``rapgen verify`` stays lean: the libraries only the score and site stages use are not imported.

Each check runs a fresh interpreter (``sys.modules`` of this test process already holds
everything) and looks at what that interpreter imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GENERATOR = Path(__file__).resolve().parent.parent / "generator"
# Imported by the scores and site stages only: verify, --help and the kinds registry need none of them.
HEAVY = ("pandas", "jinja2", "plotly", "scipy")


def _imported_after(code: str, cwd: Path) -> set[str]:
    """The top-level modules imported by a fresh interpreter that runs ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = dict(os.environ, PYTHONPATH=str(GENERATOR) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_cli_and_registry_import_no_heavy_library(tmp_path: Path) -> None:
    found = _imported_after("import rapgen.cli\nfrom rapgen.cli.common import benchmark_kinds\nbenchmark_kinds()", tmp_path)
    assert not found & set(HEAVY), sorted(found & set(HEAVY))
    assert "rapgen" in found and "click" in found


def test_verify_imports_no_heavy_library(tiny_archive, tmp_path: Path) -> None:
    """The whole verify run, in-process through the CLI as ``rapgen verify`` runs it: it verifies the
    archive, and neither start-up nor the checks themselves import pandas, jinja2, plotly or scipy."""
    code = ("import sys\nfrom rapgen.cli import cli\n"
            f"try:\n    cli(['verify', '--root', {str(tiny_archive.root)!r}, '--quiet'], prog_name='rapgen')\n"
            "except SystemExit as exc:\n    assert exc.code == 0, exc.code")
    found = _imported_after(code, tmp_path)
    assert not found & set(HEAVY), sorted(found & set(HEAVY))
    assert "duckdb" in found  # the checks did run


def test_site_still_reads_score_tables_after_lazy_import(tmp_path: Path) -> None:
    """pandas is imported where a frame is made: the site's score reader still returns frames."""
    import pandas as pd

    from rapgen.site.inputs import read_score_table

    path = tmp_path / "t.csv"
    path.write_text("model_id,value\nnan,1\n", encoding="utf-8")
    frame = read_score_table(path, ("model_id",))
    assert isinstance(frame, pd.DataFrame) and frame["model_id"].tolist() == ["nan"]


def test_verify_freezes_the_collector_at_exit_once(tiny_archive) -> None:
    """Every verify asks for the collector to be frozen at interpreter exit (skipping its last full
    pass over what the checks left), registered once however often verify runs in a process."""
    from click.testing import CliRunner

    from rapgen.cli import archive_cmds, cli

    for _ in range(2):
        result = CliRunner().invoke(cli, ["verify", "--root", str(tiny_archive.root), "--quiet"])
        assert result.exit_code == 0, result.output
    assert archive_cmds._FREEZE_AT_EXIT == [True]
