"""The Croissant (MLCommons, 1.1) JSON-LD document of one release, or of a format-1 archive.

The document is a pure function of the listed files (path -> SHA-256), the
archive's identity (ARCHIVE.json) and the release record, written in a fixed
layout (keys in a fixed order, one line per file and per table), so the same
release always gives the same bytes. Every file is a ``FileObject`` whose ``@id`` is its archive path
and whose ``contentUrl`` is that path relative to the Croissant file, so the
document resolves wherever the archive folder is placed or served.
"""

from __future__ import annotations

import json
import posixpath
from datetime import date
from pathlib import Path
from typing import Any, Mapping

from rapgen.archive.croissant.citation import ReleaseCitation, bibtex
from rapgen.archive.croissant.tables import Column, Table, tables
from rapgen.archive.history.records import ReleaseRecord, manifest_path
from rapgen.archive.layout import ARCHIVE_DIR, CROISSANT_JSON, CROISSANT_SUFFIX, RELEASES_DIR, SUMS_NAME
from rapgen.io import dumps_line

CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
FOLDER_ID = "archive"  # the FileObject standing for the archive folder, the container of every FileSet
FOLDER_ENCODING = "git+https"  # a repository checkout: what Croissant loaders read a folder of files from
# The JSON-LD context of Croissant 1.1, as its reference implementation (mlcroissant) writes it.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
_ENCODINGS = {".parquet": "application/x-parquet", ".jsonl": "application/jsonlines", ".json": "application/json"}


def croissant_path(number: int) -> str:
    """``archive/releases/NNNN.croissant.json``: release ``number``'s Croissant file."""
    return f"{RELEASES_DIR}/{number:04d}{CROISSANT_SUFFIX}"


def encoding_of(path: str) -> str:
    """The MIME type a file is described with: by suffix; manifests and anything else as plain text."""
    suffix = posixpath.splitext(path)[1]
    return _ENCODINGS.get(suffix, "text/plain")


def content_url(path: str, at: str) -> str:
    """``path`` (an archive path) relative to the folder of the Croissant file ``at``."""
    return posixpath.relpath(path, posixpath.dirname(at))


def croissant_document(files: Mapping[str, str], info: Mapping[str, Any], citation: ReleaseCitation, *,
                       at: str, summary: str = "", live: bool) -> dict:
    """The document describing exactly ``files`` (archive path -> SHA-256) from the Croissant file ``at``."""
    paths = sorted(files, key=lambda p: p.encode("utf-8"))
    parts = tables(paths)
    shared = [t for t in parts if len(t.files) > 1]
    distribution: list[dict] = []
    if shared:
        distribution.append({
            "@type": "cr:FileObject", "@id": FOLDER_ID, "name": ARCHIVE_DIR,
            "description": "The archive folder, as checked out from the repository; its files are listed one by one "
                           "with their SHA-256.",
            "contentUrl": content_url(ARCHIVE_DIR, at), "encodingFormat": FOLDER_ENCODING,
        })
    distribution += [{"@type": "cr:FileObject", "@id": p, "name": p, "contentUrl": content_url(p, at),
                      "encodingFormat": encoding_of(p), "sha256": files[p]} for p in paths]
    distribution += [{"@type": "cr:FileSet", "@id": f"{t.id}-files", "name": f"{t.id}-files",
                      "description": f"The files of the {t.id} table.", "containedIn": {"@id": FOLDER_ID},
                      "encodingFormat": t.encoding, "includes": [p[len(ARCHIVE_DIR) + 1:] for p in t.files]}
                     for t in shared]
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": str(info.get("name", "")),
        "description": " ".join(x for x in (str(info.get("description", "")), summary) if x),
        "license": str(info.get("license", "")),
        "version": str(citation.number),
        "datePublished": citation.date.isoformat(),
        "citeAs": bibtex(citation),
    }
    if live:
        doc["isLiveDataset"] = True
    doc["distribution"] = distribution
    doc["recordSet"] = [_record_set(t) for t in parts]
    return doc


def _record_set(t: Table) -> dict:
    source = {"fileSet": {"@id": f"{t.id}-files"}} if len(t.files) > 1 else {"fileObject": {"@id": t.files[0]}}
    return {"@type": "cr:RecordSet", "@id": t.id, "name": t.id, "description": t.description,
            "key": [{"@id": f"{t.id}/{k}"} for k in t.key],
            "field": [_field(c, t.id, source, c.name) for c in t.columns]}


def _field(c: Column, parent: str, source: dict, column: str) -> dict:
    out: dict[str, Any] = {"@type": "cr:Field", "@id": f"{parent}/{c.name}", "name": c.name, "description": c.description}
    if c.type is not None:
        out["dataType"] = c.type
    if c.repeated:
        out["isArray"] = True
    src: dict[str, Any] = {**source, "extract": {"column": column}}
    if c.json_path is not None:
        src["transform"] = {"jsonPath": c.json_path}
    out["source"] = src
    if c.sub:
        out["subField"] = [_field(s, out["@id"], source, column) for s in c.sub]
    return out


def format_croissant(doc: dict) -> bytes:
    """The document's canonical bytes: one line per top-level key, and one per entry of the
    ``distribution`` and ``recordSet`` lists, so a finding's line names one file or table."""
    lines = ["{"]
    for i, (key, value) in enumerate(doc.items()):
        end = "," if i < len(doc) - 1 else ""
        if isinstance(value, list):
            lines.append(f" {json.dumps(key)}: [")
            lines += [f"  {dumps_line(item)}{',' if j < len(value) - 1 else ''}" for j, item in enumerate(value)]
            lines.append(f" ]{end}")
        else:
            lines.append(f" {json.dumps(key)}: {dumps_line(value)}{end}")
    return ("\n".join(lines) + "\n}\n").encode("utf-8")


def release_summary(record: ReleaseRecord) -> str:
    """One sentence on what release ``record`` holds."""
    origins = ", ".join(o.isoformat() for o in record.resolved_origins)
    text = f"Release {record.release} ({record.kind.value}, {record.date.isoformat()})"
    text += f": origins {origins} resolved" if origins else ": no time key (no origins)"
    if record.open_origin is not None:
        text += f"; origin {record.open_origin.origin.isoformat()} open until {record.open_origin.closes.isoformat()}"
    text += "."
    if record.simulated:
        text += " Its dates were replayed after the fact (simulated)."
    return text


def release_croissant(record: ReleaseRecord, files: Mapping[str, str], info: Mapping[str, Any]) -> bytes:
    """Release ``record``'s Croissant file: ``files`` are the paths its manifest lists (the file itself aside)."""
    cite = ReleaseCitation(str(info.get("name", "")), record.release, record.date, record.kind.value,
                           manifest_path(record.release))
    doc = croissant_document(files, info, cite, at=croissant_path(record.release), summary=release_summary(record), live=True)
    return format_croissant(doc)


def format1_croissant(files: Mapping[str, str], info: Mapping[str, Any]) -> bytes:
    """``archive/croissant.json`` of a format-1 archive (one implicit release, dated by ARCHIVE.json's ``created``)."""
    try:
        created = date.fromisoformat(str(info.get("created", "")))
    except ValueError:
        created = date(1970, 1, 1)
    cite = ReleaseCitation(str(info.get("name", "")), 1, created, "format-1", SUMS_NAME)
    return format_croissant(croissant_document(files, info, cite, at=CROISSANT_JSON, live=False))


def missing_croissants(records: Mapping[int, ReleaseRecord], manifests: Mapping[int, Mapping[str, str]],
                       listed: Mapping[str, str], archive_json: Path) -> list[tuple[int, bytes]]:
    """(number, bytes) of the Croissant file of every release that has none listed yet, each
    describing the files that release's manifest lists (a later models or errata release adds them)."""
    missing = [k for k in sorted(manifests) if k in records and croissant_path(k) not in listed]
    if not missing:
        return []
    info = json.loads(archive_json.read_bytes())
    return [(k, release_croissant(records[k], manifests[k], info)) for k in missing]
