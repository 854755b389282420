"""What ``rapgen verify`` checks in a Croissant file: that it describes exactly the files of its release.

Release N's file (``archive/releases/NNNN.croissant.json``) must give every
path release N's manifest lists (itself aside) as a ``FileObject`` whose
``sha256`` is the manifest's, and nothing else; its ``version`` is N; every
``contentUrl`` points at its ``@id``; every ``FileSet`` and record-set source
names described files only. A format-1 ``archive/croissant.json`` is checked
against SHA256SUMS the same way, except that model folders and commitments
merged after it was written need not be in it. Every problem is an
``INVARIANT`` finding naming the file, the line of the entry and, for a
history, the release.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from rapgen.archive.croissant.document import FOLDER_ID, content_url, croissant_path
from rapgen.archive.jsonparse import loads_strict
from rapgen.archive.layout import ARCHIVE_DIR, COMMITMENTS_DIR, CROISSANT_JSON, MODELS_PREFIX
from rapgen.archive.records import Category, Finding

_CROISSANT = re.compile(r"^archive/releases/(\d{4})\.croissant\.json$")
LATER_ADDITIONS = (MODELS_PREFIX, COMMITMENTS_DIR + "/")  # a format-1 file predates what a submission adds


def croissant_number(path: str) -> int | None:
    """The release a ``releases/NNNN.croissant.json`` path belongs to; None for any other path."""
    m = _CROISSANT.match(path)
    return int(m.group(1)) if m else None


class _Out(list):
    def __init__(self, path: str, text: str, number: int | None) -> None:
        super().__init__()
        self.path, self.text, self.prefix = path, text, f"release {number}: " if number is not None else ""

    def add(self, detail: str, needle: str | None = None) -> None:
        self.append(Finding(self.path, _line_of(self.text, needle), Category.INVARIANT, self.prefix + detail))


def _line_of(text: str, needle: str | None) -> int | None:
    """The first line holding ``"@id": needle`` (or the key ``needle`` when it starts with a quote)."""
    if needle is None:
        return None
    target = needle if needle.startswith('"') else f'"@id": {json.dumps(needle, ensure_ascii=False)}'
    for number, line in enumerate(text.split("\n"), start=1):
        if target in line:
            return number
    return None


def check_croissant(path: str, data: bytes, expected: Mapping[str, str], number: int | None, *,
                    manifest: str, optional: tuple[str, ...] = ()) -> list[Finding]:
    """Findings for the Croissant file ``path`` against ``expected`` (archive path -> SHA-256, named ``manifest``).

    ``number`` is the release (None: a format-1 archive, version 1); an expected
    path under one of ``optional`` may be left out."""
    try:
        text = data.decode("utf-8")
        doc = loads_strict(text)
    except (UnicodeDecodeError, ValueError) as exc:
        out = _Out(path, "", number)
        out.add(f"not a JSON document ({str(exc).splitlines()[0]})")
        return out
    out = _Out(path, text, number)
    if not isinstance(doc, dict) or not isinstance(doc.get("distribution"), list):
        out.add("not a Croissant document: expected a JSON object with a 'distribution' list")
        return out
    version = str(number or 1)
    if doc.get("version") != version:
        out.add(f"'version' is {json.dumps(doc.get('version'))}, expected {json.dumps(version)} (the release number)", '"version"')
    described = _file_objects(doc["distribution"], path, out)
    for p, digest in sorted(expected.items()):
        if p not in described:
            if not p.startswith(optional):
                out.add(f"does not describe {p}, which {manifest} lists")
        elif described[p] != digest:
            out.add(f"distribution entry {p}: sha256 {described[p]} differs from {manifest}'s {digest}", p)
    for p in sorted(set(described) - set(expected)):
        out.add(f"describes {p}, which {manifest} does not list", p)
    _check_sources(doc, set(described), out)
    return out


def _file_objects(distribution: list, path: str, out: _Out) -> dict[str, str]:
    """``@id`` -> ``sha256`` of every FileObject with a digest; a wrong ``contentUrl`` or a repeat is a finding."""
    described: dict[str, str] = {}
    for i, item in enumerate(distribution):
        if not isinstance(item, dict) or item.get("@type") != "cr:FileObject" or item.get("@id") == FOLDER_ID:
            continue
        ident, digest = item.get("@id"), item.get("sha256")
        if not isinstance(ident, str) or not isinstance(digest, str):
            out.add(f"distribution[{i}]: a FileObject needs a string '@id' (its archive path) and 'sha256'")
            continue
        if ident in described:
            out.add(f"distribution[{i}]: {ident} is described twice", ident)
        if item.get("contentUrl") != content_url(ident, path):
            out.add(f"distribution entry {ident}: contentUrl {json.dumps(item.get('contentUrl'))} does not point at it "
                    f"(expected {json.dumps(content_url(ident, path))})", ident)
        described[ident] = digest
    return described


def _check_sources(doc: dict, described: set[str], out: _Out) -> None:
    """Every FileSet member and every field's fileObject is a described file."""
    for item in doc["distribution"]:
        if isinstance(item, dict) and item.get("@type") == "cr:FileSet":
            for include in item.get("includes") or []:
                if f"{ARCHIVE_DIR}/{include}" not in described:
                    out.add(f"FileSet {item.get('@id')} includes {include}, which the file does not describe", item.get("@id"))
    for ref in _file_object_refs(doc.get("recordSet") or []):
        if ref not in described:
            out.add(f"a record set reads {ref}, which the file does not describe", f'"@id": {json.dumps(ref)}')


def _file_object_refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("fileObject")
        if isinstance(ref, dict) and isinstance(ref.get("@id"), str):
            found.add(ref["@id"])
        for value in node.values():
            found |= _file_object_refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _file_object_refs(value)
    return found


def check_croissants(root: Mapping[str, str], manifests: Mapping[int, Mapping[str, str]], is_history: bool,
                     read: Callable[[str], bytes | None]) -> list[Finding]:
    """Every Croissant file SHA256SUMS lists, each against its release's manifest (format 1: SHA256SUMS)."""
    out: list[Finding] = []
    for path in sorted(root):
        number = croissant_number(path)
        if number is None or number not in manifests:
            continue  # a Croissant file of a release without a manifest: the history checks report it
        data = read(path)
        if data is not None:
            expected = {p: d for p, d in manifests[number].items() if p != path}
            out += check_croissant(path, data, expected, number, manifest=f"releases/{number:04d}.SHA256SUMS")
    if CROISSANT_JSON in root:
        if is_history:
            out.append(Finding(CROISSANT_JSON, None, Category.INVARIANT, "a history keeps one Croissant file per release "
                               f"({croissant_path(1)}, …); {CROISSANT_JSON} belongs to a format-1 archive"))
        elif (data := read(CROISSANT_JSON)) is not None:
            expected = {p: d for p, d in root.items() if p != CROISSANT_JSON}
            out += check_croissant(CROISSANT_JSON, data, expected, None, manifest="SHA256SUMS", optional=LATER_ADDITIONS)
    return out
