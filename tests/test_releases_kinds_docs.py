"""The documented release commands of Ideas (a roll) and Inspire (a release cut), run as printed.

Each bash block after its marker in docs/ideas.md and docs/inspire.md runs from the
repository root on a copy of the committed sample; the roll's month of papers
(``NEW_PAPERS``) is made up here, since the committed papers end in June 2025.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from rapgen.kinds.ideas.archive.papers import Paper
from rapgen.kinds.ideas.archive.writers import papers_bytes

REPO = Path(__file__).resolve().parent.parent
TITLES = ("Retrieval-augmented generation with long contexts", "Large language model agents for tool use",
          "Chain-of-thought reasoning in small models", "Machine translation of low-resource languages")


def doc_block(doc: str, mark: str) -> str:
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    found = re.search(re.escape(f"<!-- {mark} -->") + r"\n```bash\n(.*?)\n```", text, re.S)
    assert found, f"docs/{doc} has no bash block after <!-- {mark} -->"
    return found.group(1)


def run_block(block: str, tmp: Path, **env: str) -> tuple[Path, subprocess.CompletedProcess]:
    environ = dict(os.environ, TMPDIR=str(tmp), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                   PYTHONPATH=os.pathsep.join(sys.path), **env)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block + '\necho "WORK=$PWD"\n'], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=900)
    work = re.findall(r"^WORK=(.*)$", done.stdout, re.M)
    return (Path(work[-1]) if work else tmp), done


@pytest.fixture(scope="module")
def ideas_roll(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ideas-doc")
    papers = [Paper(f"2507.{i:05d}", t, "An abstract.", (), date(2025, 7, 1 + i)) for i, t in enumerate(TITLES * 3)]
    (tmp / "july.parquet").write_bytes(papers_bytes(papers))
    return run_block(doc_block("ideas.md", "roll-the-ideas-sample"), tmp, NEW_PAPERS=str(tmp / "july.parquet"))


def test_the_documented_ideas_roll_goes_through(ideas_roll):
    work, done = ideas_roll
    assert done.returncode == 0, done.stdout + done.stderr
    assert "release 15 (roll, 2025-08-01): resolved 2024-07-01" in done.stdout
    assert "2025-04-01; open 2025-08-01 until 2025-08-15" in done.stdout
    verdicts = re.findall(r"^OK: \d+ files verified; history of (.+) holds\.$", done.stdout, re.M)
    assert verdicts == ["14 releases", "15 releases"], done.stdout
    assert re.search(r"^  15 2025-08-01 roll     resolved 2025-04-01 open 2025-08-01 until 2025-08-15 ", done.stdout, re.M)
    assert re.search(r"^2025-03-01 rising-terms +sealed release 6 \(2025-03-15\); on time \(closes 2025-03-15\); revealed$", done.stdout, re.M)
    meta = json.loads((work / "scores-1/scores.json").read_text())
    assert meta["release"]["number"] == 1 and meta["counts"]["resolved_cutoffs"][-1] == "2024-09-01"


def test_the_documented_inspire_cut_goes_through(tmp_path):
    work, done = run_block(doc_block("inspire.md", "cut-the-inspire-sample"), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "release 2 (errata, 2025-08-01): no time key" in done.stdout
    assert "OK: " in done.stdout and "history of 2 releases holds." in done.stdout
    assert re.search(r"^   2 2025-08-01 errata   no time key ", done.stdout, re.M), done.stdout
    assert (work / "inspire/archive/releases/0002/superseded/models/bm25-brief/model.json").is_file()
