"""The roll of the committed sample, exactly as docs/releases.md prints it, on a copy.

The block after ``<!-- roll-the-sample -->`` is run with bash from the repository root
(its copy goes under this test's temporary folder). The roll must go through, and
the rolled archive must verify with its release-9 intervention records intact: each
record file is judged against the origins of the release that added it, never against
an origin a later roll resolved.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MARK = "<!-- roll-the-sample -->"


def doc_block() -> str:
    text = (REPO / "docs" / "releases.md").read_text(encoding="utf-8")
    found = re.search(re.escape(MARK) + r"\n```bash\n(.*?)\n```", text, re.S)
    assert found, f"docs/releases.md has no bash block after {MARK}"
    return found.group(1)


@pytest.fixture(scope="module")
def rolled(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("roll")
    env = dict(os.environ, TMPDIR=str(tmp), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    script = doc_block() + '\necho "ROOT=$PWD"\n'
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=900)
    roots = re.findall(r"^ROOT=(.*)$", done.stdout, re.M)
    return (Path(roots[-1]) if roots else tmp), done


def test_the_documented_roll_goes_through(rolled):
    root, done = rolled
    assert done.returncode == 0, done.stdout + done.stderr
    assert "release 10 (roll, 2026-01-02): resolved 2023-01-01, 2023-07-01, 2024-01-01, 2024-07-01, 2025-01-01, 2025-07-01; " \
           "open 2026-01-01 until 2026-01-15" in done.stdout
    verdicts = re.findall(r"^OK: \d+ files verified; history of (\d+) releases holds\.$", done.stdout, re.M)
    assert verdicts == ["9", "10"], done.stdout  # before and after the roll
    assert re.search(r"^  10 2026-01-02 roll     resolved 2025-07-01 open 2026-01-01 until 2026-01-15 ", done.stdout, re.M)
    record = json.loads((root / "archive/releases/0010.json").read_text())
    assert record["kind"] == "roll" and record["resolved_origins"][-1] == "2025-07-01"
    assert (root / "archive/benchmark/windows/2025-07-01/papers.parquet").is_file()


def test_the_earlier_records_keep_their_release_origins(rolled):
    root, done = rolled
    assert done.returncode == 0, done.stderr
    # release 9 added the oracle records; the rolled archive verified (above) with them covering
    # exactly release 9's five origins, not the six release 10 resolves
    oracle = [json.loads(line) for line in (root / "archive/models/ref-history-trend/oracle.jsonl").read_text().splitlines()]
    assert {u["origin"] for u in oracle} == {"2023-01-01", "2023-07-01", "2024-01-01", "2024-07-01", "2025-01-01"}
    assert "archive/models/ref-history-trend/oracle.jsonl" in (root / "archive/releases/0009.SHA256SUMS").read_text()
