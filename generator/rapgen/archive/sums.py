"""Parse and write ``SHA256SUMS`` and apply the path policy (VERIFY.md steps 1–2).

Parsing never touches the disk. Every line is classified; lines in an accepted
non-canonical form produce a warning (an error under ``strict``), lines that do
not parse produce a ``MALFORMED`` finding with their line number.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rapgen.archive.records import Category, Finding

SUMS = "SHA256SUMS"
ARCHIVE_PREFIX = "archive/"
_CANONICAL_COMPONENT = re.compile(r"^[A-Za-z0-9._-]+$")
_GNU_LINE = re.compile(rb"^([0-9A-Fa-f]+)( [ *])(.*)$", re.S)
_BSD_LINE = re.compile(rb"^SHA256 \((.*)\) = ([0-9A-Fa-f]+)$", re.S)
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


@dataclass(frozen=True)
class SumsEntry:
    line: int
    path: str
    digest: str  # lower-case hex


def escape(text: str, *, backslash: bool = True) -> str:
    """Printable form of a path: control characters and undecodable bytes as escapes."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape'd byte from a non-UTF-8 name
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif ch == "\\" and backslash:
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def _warn(findings: list[Finding], line: int, detail: str, strict: bool) -> None:
    category = Category.MALFORMED if strict else Category.WARNING
    findings.append(Finding(SUMS, line, category, detail + (" (not allowed with --strict)" if strict else "")))


def parse_sums(data: bytes, *, strict: bool = False) -> tuple[list[SumsEntry], list[Finding]]:
    """Step 1: parse every line of SHA256SUMS (given as bytes)."""
    findings: list[Finding] = []
    entries: list[SumsEntry] = []
    if data.startswith(b"\xef\xbb\xbf"):
        _warn(findings, 1, "leading byte-order mark", strict)
        data = data[3:]
    if data and not data.endswith(b"\n"):
        _warn(findings, data.count(b"\n") + 1, "last line has no newline", strict)
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    crlf_reported = False
    for number, raw in enumerate(raw_lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
            if not crlf_reported:
                _warn(findings, number, "CRLF line ending", strict)
                crlf_reported = True
        if raw.strip() == b"":
            _warn(findings, number, "blank line", strict)
            continue
        if raw.startswith(b"#"):
            _warn(findings, number, "comment line", strict)
            continue
        bsd = _BSD_LINE.match(raw)
        gnu = _GNU_LINE.match(raw)
        if bsd:
            raw_path, raw_hex = bsd.group(1), bsd.group(2)
            _warn(findings, number, "BSD-style 'SHA256 (path) = hex' line", strict)
        elif gnu:
            raw_hex, sep, raw_path = gnu.group(1), gnu.group(2), gnu.group(3)
            if sep == b" *":
                _warn(findings, number, "binary marker ' *'", strict)
        else:
            findings.append(Finding(SUMS, number, Category.MALFORMED, _diagnose(raw)))
            continue
        hex_text = raw_hex.decode("ascii")
        if not _HEX64.match(hex_text):
            findings.append(Finding(SUMS, number, Category.MALFORMED, f"digest must be 64 hex digits, found {len(hex_text)} characters"))
            continue
        if hex_text != hex_text.lower():
            _warn(findings, number, "upper-case hex digest", strict)
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            findings.append(Finding(SUMS, number, Category.MALFORMED, "path is not valid UTF-8"))
            continue
        if path == "":
            findings.append(Finding(SUMS, number, Category.MALFORMED, "empty file name"))
            continue
        if path.startswith("./"):
            _warn(findings, number, "leading './' on path", strict)
            path = path[2:]
        entries.append(SumsEntry(number, path, hex_text.lower()))
    if [e.path.encode("utf-8", "surrogateescape") for e in entries] != sorted(e.path.encode("utf-8", "surrogateescape") for e in entries):
        _warn(findings, None, "lines are not sorted by path (byte order)", strict)  # type: ignore[arg-type]
    return entries, findings


def _diagnose(raw: bytes) -> str:
    """Say why a line is not in any accepted grammar."""
    head = raw.split(b" ", 1)[0].split(b"\t", 1)[0]
    if b"\t" in raw and re.match(rb"^[0-9A-Fa-f]+\t", raw):
        return "tab between digest and path (expected two spaces)"
    if not re.match(rb"^[0-9A-Fa-f]+$", head):
        return "digest is not hexadecimal"
    if len(head) != 64:
        return f"digest must be 64 hex digits, found {len(head)}"
    rest = raw[len(head):]
    if rest.startswith(b" ") and not rest.startswith(b"  ") and not rest.startswith(b" *"):
        return "single space between digest and path (expected two spaces)"
    if rest.strip() == b"":
        return "empty file name"
    return "line is not '<sha256>  <path>'"


def check_paths(entries: list[SumsEntry], *, strict: bool = False) -> tuple[list[SumsEntry], list[Finding]]:
    """Step 2: the path policy, before any disk access. Returns the entries safe to touch."""
    findings: list[Finding] = []
    safe: list[SumsEntry] = []
    seen: dict[str, SumsEntry] = {}
    folded: dict[str, SumsEntry] = {}
    for entry in entries:
        problem = _unsafe_reason(entry.path)
        shown = escape(entry.path)
        if problem:
            findings.append(Finding(shown, entry.line, Category.UNSAFE, problem))
            continue
        if entry.path in seen:
            first = seen[entry.path]
            kind = "same digest" if first.digest == entry.digest else "different digest"
            findings.append(Finding(shown, entry.line, Category.DUPLICATE, f"listed again ({kind}; first on line {first.line})"))
            continue
        key = unicodedata.normalize("NFC", entry.path).casefold()
        if key in folded:
            other = folded[key]
            findings.append(
                Finding(shown, entry.line, Category.CONFLICT, f"collides with {escape(other.path)!s} (line {other.line}) by case or Unicode normalisation")
            )
            continue
        if any(not _CANONICAL_COMPONENT.match(c) for c in entry.path.split("/")):
            _warn(findings, entry.line, f"path {shown} has characters outside [A-Za-z0-9._-]", strict)
        seen[entry.path] = entry
        folded[key] = entry
        safe.append(entry)
    # A listed file cannot also be a folder of another listed file.
    prefixes: dict[str, SumsEntry] = {}
    for entry in safe:
        parts = entry.path.split("/")
        for i in range(1, len(parts)):
            prefixes.setdefault("/".join(parts[:i]), entry)
    conflicting = {e.path for e in safe if e.path in prefixes}
    for entry in safe:
        if entry.path in conflicting:
            other = prefixes[entry.path]
            findings.append(Finding(escape(entry.path), entry.line, Category.CONFLICT, f"listed as a file but is a folder of {escape(other.path)} (line {other.line})"))
    return [e for e in safe if e.path not in conflicting], findings


def _unsafe_reason(path: str) -> str:
    if "\x00" in path:
        return "NUL character in path"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "control character in path"
    if "\\" in path:
        return "backslash in path"
    if path.startswith("/"):
        return "absolute path"
    parts = path.split("/")
    if any(p == ".." for p in parts):
        return "'..' component"
    if any(p == "." for p in parts):
        return "'.' component"
    if any(p == "" for p in parts):
        return "empty path component"
    if path == SUMS:
        return "SHA256SUMS cannot list itself"
    if not path.startswith(ARCHIVE_PREFIX):
        return "outside archive/ (SHA256SUMS covers archive/ only)"
    return ""


def format_sums(entries: dict[str, str]) -> bytes:
    """Canonical SHA256SUMS: ``<hex>  <path>\\n`` sorted by path bytes."""
    lines = [f"{entries[p]}  {p}\n" for p in sorted(entries, key=lambda p: p.encode("utf-8"))]
    return "".join(lines).encode("utf-8")
