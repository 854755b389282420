"""Findable and citable, in the built site: the Archive page's schema.org Dataset JSON-LD (parsed from
the HTML, both editions), its Croissant file and loading snippets (run as printed), and a citation
per release on the Releases page (BibTeX and plain text, both editions)."""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from factory import make_archive
from history_factory import make_history
from rapgen.archive import open_verified
from rapgen.archive.croissant import croissant_path
from rapgen.archive.history.ops import cut_release
from rapgen.archive.seal import seal_archive
from rapgen.pipeline import run_build
from rapgen.site.i18n import load_catalogues, speaking
from rapgen.site.pages.dataset import build_dataset, script_json

RESAMPLES = 40
_JSONLD = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)
_CODE = re.compile(r"<pre>.*?<code[^>]*>(.*?)</code></pre>", re.S)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-dataset")
    h = make_history(tmp)
    cut_release(h.root, "models", release_date=date(2026, 1, 12))
    run_build(h.root, tmp / "site", resamples=RESAMPLES, work_dir=tmp / "work")
    return h.root, tmp / "site"


def jsonld(page: Path) -> dict:
    found = _JSONLD.findall(page.read_text(encoding="utf-8"))
    assert len(found) == 1, page
    return json.loads(found[0])


def resolve(site: Path, page: str, url: str) -> Path:
    """The file a relative URL on ``page`` (a folder URL such as ``zh/archive/``) points at."""
    return site / posixpath.normpath(posixpath.join(page, url))


@pytest.mark.parametrize("page", ["archive/", "zh/archive/"])
def test_the_archive_page_carries_a_schema_org_dataset(built, page):
    root, site = built
    doc = jsonld(site / page / "index.html")
    archive = open_verified(root)
    assert doc["@context"] == "https://schema.org" and doc["@type"] == "Dataset"
    assert doc["name"] == archive.info["name"] and doc["license"] == archive.info["license"]
    assert doc["description"] == archive.info["description"]
    assert doc["version"] == "4" and doc["datePublished"] == archive.releases[4].date.isoformat()
    sums, croissant = doc["distribution"]
    manifest = resolve(site, page, sums["contentUrl"])
    assert manifest.read_bytes() == (root / "SHA256SUMS").read_bytes()
    assert sums["sha256"] == hashlib.sha256(manifest.read_bytes()).hexdigest() == archive.manifest_sha256
    assert doc["identifier"] == f"sha256:{archive.manifest_sha256}"
    data = resolve(site, page, croissant["contentUrl"]).read_bytes()
    assert data == (root / croissant_path(4)).read_bytes()
    assert croissant["sha256"] == hashlib.sha256(data).hexdigest() == archive.digests[croissant_path(4)]
    assert croissant["encodingFormat"] == "application/ld+json"


def _snippets(page: Path) -> list[str]:
    blocks = [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in _CODE.findall(page.read_text(encoding="utf-8"))]
    return [b for b in blocks if b.startswith("import ")]


def test_the_archive_page_loads_the_ledger_in_three_lines_each(built):
    root, site = built
    snippets = _snippets(site / "archive/index.html")
    assert [s.split()[1] for s in snippets] == ["duckdb", "pandas", "mlcroissant"]
    assert all(len(s.strip().splitlines()) == 3 for s in snippets)
    assert _snippets(site / "zh/archive/index.html") == snippets
    import duckdb

    _, files = open_verified(root).release(4).ledger_files()  # benchmark/ and the rolled-in window
    assert len(files) == 2
    rows = duckdb.read_parquet([str(root / p) for p in files]).fetchall()
    for code in snippets:
        name = "rows" if "mlcroissant" in code else "assignments"
        done = subprocess.run([sys.executable, "-c", f"{code}\nprint(len({name}))"], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[-1] == str(len(rows)), code


def test_the_archive_page_offers_the_croissant_file(built):
    root, site = built
    text = (site / "archive/index.html").read_text(encoding="utf-8")
    assert f"<code>{croissant_path(4)}</code>" in text and 'href="../downloads/0004.croissant.json"' in text
    assert hashlib.sha256((root / croissant_path(4)).read_bytes()).hexdigest() in text
    zh = (site / "zh/archive/index.html").read_text(encoding="utf-8")
    assert "加载数据" in zh and 'href="../../downloads/0004.croissant.json"' in zh


@pytest.mark.parametrize("page, label, text", [
    ("releases/", "Cite this release", "{name}, release {n} ({kind}), {date}. Manifest {manifest}, SHA-256 {digest}."),
    ("zh/releases/", "引用本次发布", "{name}，第 {n} 次发布（{kind}），{date}。清单 {manifest}，SHA-256 {digest}。"),
])
def test_each_release_has_a_bibtex_entry_and_a_plain_text_citation(built, page, label, text):
    root, site = built
    archive = open_verified(root)
    doc = (site / page / "index.html").read_text(encoding="utf-8")
    for n, record in archive.releases.items():
        block = re.search(rf'<details class="quote rap-cite" id="cite-{n}"><summary>(.*?)</summary>(.*?)</details>', doc, re.S)
        assert block and block.group(1) == label, n
        entry = html.unescape(_CODE.search(block.group(2)).group(1))
        digest = archive.digests[f"archive/releases/{n:04d}.SHA256SUMS"]
        assert entry.startswith(f"@misc{{rap-release-{n},\n  title = {{{{tiny test archive}}, release {n}}},\n")
        assert f"  year = {{{record.date.year}}},\n" in entry and f"  version = {{{n}}},\n" in entry
        assert (f"  note = {{Release {n} ({record.kind.value}) of {record.date.isoformat()}; manifest "
                f"archive/releases/{n:04d}.SHA256SUMS, SHA-256 {digest}}}\n}}") in entry
        line = text.format(name="tiny test archive", n=n, kind=record.kind.value, date=record.date.isoformat(),
                           manifest=f"archive/releases/{n:04d}.SHA256SUMS", digest=digest)
        assert f"<p>{line}</p>" in block.group(2), n


# ---------------------------------------------------------------- without a site build
def _card(root: Path):
    with speaking(load_catalogues()["en"]):
        return build_dataset(open_verified(root).release())


def test_a_format1_archive_offers_archive_croissant_json(tmp_path):
    root = make_archive(tmp_path / "repo").root
    card = _card(root)
    assert card.croissant == "" and card.mlcroissant == "" and card.version == 1
    assert [d["name"] for d in json.loads(card.jsonld)["distribution"]] == ["SHA256SUMS"]
    (root / "SHA256SUMS").unlink()
    seal_archive(root, croissant=True)
    card = _card(root)
    assert card.croissant == "archive/croissant.json" and card.downloads["downloads/croissant.json"] == (root / card.croissant).read_bytes()
    assert 'mlc.Dataset("archive/croissant.json")' in card.mlcroissant
    assert json.loads(card.jsonld)["datePublished"] == "2026-01-01"  # ARCHIVE.json's created: the implicit release


def test_script_json_cannot_close_its_element_or_break_a_line():
    name = "a</script><script>alert(1)</script> & b \u2028 \x85 \u2029 档案"
    text = script_json({"name": name})
    assert "<" not in text and ">" not in text and text.isascii() and json.loads(text)["name"] == name
    assert len("".join(text.splitlines())) == len(text.replace("\n", ""))  # no line break but the indent's
