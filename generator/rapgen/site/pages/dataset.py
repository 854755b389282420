"""The Archive page's dataset card: schema.org ``Dataset`` JSON-LD, the Croissant file, loading snippets.

The JSON-LD names the archive (ARCHIVE.json), the release the site shows
(its number and date) and, as its ``distribution``, the manifest the site was
built from (``downloads/SHA256SUMS``, whose SHA-256 identifies the archive) and
the release's Croissant file, each with its digest. The snippets load the
membership ledger of that release (every file it lists for the table) with
DuckDB, pandas and mlcroissant, three lines each, from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from dataclasses import dataclass
from typing import Any

from rapgen.archive import CROISSANT_JSON, SUMS_NAME, Release, croissant_path, croissant_tables, manifest_path
from rapgen.errors import ArchiveError
from rapgen.site.i18n import DEFAULT_LANGUAGE, current, t

SNIPPET_TABLE = "assignments"  # the table the snippets load: the ledger, a union of files in a history


@dataclass
class DatasetCard:
    version: int
    date: str
    croissant: str  # archive path of the release's Croissant file, "" when it has none
    croissant_sha256: str
    croissant_download: str  # downloads/<name>
    manifest_download: str
    jsonld: str  # the <script type="application/ld+json"> body
    duckdb: str  # three lines of Python each
    pandas: str
    mlcroissant: str
    downloads: dict[str, bytes]  # site path -> bytes, written by render


def _release(archive: Release) -> tuple[int, str]:
    """(number, date) of the release shown; a format-1 archive is release 1 of ARCHIVE.json's date."""
    if not archive.is_history:
        return 1, str(archive.info.get("created", ""))[:10]
    return archive.number, archive.releases[archive.number].date.isoformat()


def _manifest_bytes(archive: Release) -> bytes:
    """The manifest the site was built from: root SHA256SUMS, or release N's (``--release N``),
    read where verify hashed it and checked against the digest it recorded."""
    path = SUMS_NAME if archive.current or archive.implicit else manifest_path(archive.number)
    data = (archive.root / path).read_bytes()
    if hashlib.sha256(data).hexdigest() != archive.manifest_sha256:
        raise ArchiveError(f"{path}: changed since it was verified")
    return data


def _url(download: str) -> str:
    """A download's URL relative to the Archive page of the language being rendered."""
    page = "archive" if current().lang == DEFAULT_LANGUAGE else f"{current().lang}/archive"
    return posixpath.relpath(download, page)


def script_json(obj: Any) -> str:
    """JSON safe inside ``<script>``: ASCII only (Markdown would turn a raw U+2028 or U+0085 into a
    line break), and ``<``, ``>`` and ``&`` as escapes, so no text can close the element."""
    text = json.dumps(obj, ensure_ascii=True, indent=1)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_dataset(archive: Release) -> DatasetCard:
    """The dataset card of the release the site shows."""
    digests = dict(archive.files)
    number, when = _release(archive)
    name = croissant_path(number) if archive.is_history else CROISSANT_JSON
    croissant = name if name in digests else ""
    manifest = _manifest_bytes(archive)
    downloads = {"downloads/SHA256SUMS": manifest}
    info = archive.info
    distribution = [{
        "@type": "DataDownload", "name": "SHA256SUMS", "encodingFormat": "text/plain",
        "description": t("ar.ld_manifest"),
        "contentUrl": _url("downloads/SHA256SUMS"), "sha256": hashlib.sha256(manifest).hexdigest(),
    }]
    download = ""
    if croissant:
        download = f"downloads/{posixpath.basename(croissant)}"
        downloads[download] = archive.read(croissant)
        distribution.append({
            "@type": "DataDownload", "name": posixpath.basename(croissant), "encodingFormat": "application/ld+json",
            "description": t("ar.ld_croissant", n=number),
            "contentUrl": _url(download), "sha256": digests[croissant],
        })
    card = {
        "@context": "https://schema.org", "@type": "Dataset",
        "name": str(info.get("name", "")), "description": str(info.get("description", "")),
        "license": str(info.get("license", "")), "version": str(number), "datePublished": when,
        "identifier": f"sha256:{archive.manifest_sha256}", "isAccessibleForFree": True,
        "distribution": distribution,
    }
    files = next((t.files for t in croissant_tables(digests) if t.id == SNIPPET_TABLE), ())
    listed = "[" + ", ".join(json.dumps(f) for f in files) + "]"
    return DatasetCard(
        number, when, croissant, digests.get(croissant, ""), download, "downloads/SHA256SUMS", script_json(card),
        duckdb=f"import duckdb\nfiles = {listed}\n{SNIPPET_TABLE} = duckdb.read_parquet(files).df()",
        pandas=f"import pandas as pd\nfiles = {listed}\n{SNIPPET_TABLE} = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)",
        mlcroissant=(f"import mlcroissant as mlc\ndataset = mlc.Dataset({json.dumps(croissant)})\n"
                     f"rows = list(dataset.records({json.dumps(SNIPPET_TABLE)}))") if croissant else "",
        downloads=downloads,
    )
