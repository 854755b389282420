"""The one home of ``SHA256SUMS``: read it safely, classify and parse its lines,
apply the path policy (VERIFY.md steps 1–2), write it, and hash files.

Parsing never touches the disk. Every line is classified (:func:`sums_lines`);
lines in an accepted non-canonical form produce a warning (an error under
``strict``), lines that do not parse produce a ``MALFORMED`` finding with their
line number.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rapgen.archive.layout import ARCHIVE_PREFIX, SUMS_NAME
from rapgen.archive.records import Category, Finding
from rapgen.archive.walk import hash_file
from rapgen.errors import ArchiveError
from rapgen.text import escape_terminal

SUMS = SUMS_NAME
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
    """Printable form of a path: control characters, bidi overrides and undecodable
    bytes as escapes (:func:`rapgen.text.escape_terminal`), backslashes doubled."""
    return escape_terminal(text, backslash=backslash)


def _warn(findings: list[Finding], line: int, detail: str, strict: bool) -> None:
    category = Category.MALFORMED if strict else Category.WARNING
    findings.append(Finding(SUMS, line, category, detail + (" (not allowed with --strict)" if strict else "")))


@dataclass(frozen=True)
class SumsLine:
    """One line of SHA256SUMS as written, classified without touching the disk.

    ``digest``/``path`` are set when the line parses (digest in lower case, a
    leading ``./`` dropped); ``error`` says why it does not; ``notes`` lists the
    accepted non-canonical forms on it (upper-case hex, `` *``, BSD style, CRLF,
    ``./``, a byte-order mark; blank and comment lines carry a note and no path).
    ``canonical`` is True only for ``<64 lower-case hex>  <path>`` with a path of
    ``[A-Za-z0-9._-]`` components — the form ``rapgen seal`` writes."""

    line: int
    raw: bytes
    digest: str | None = None
    path: str | None = None
    notes: tuple[str, ...] = ()
    error: str = ""

    @property
    def canonical(self) -> bool:
        return self.path is not None and not self.notes and all(_CANONICAL_COMPONENT.match(c) for c in self.path.split("/"))


def _classify(number: int, raw: bytes, notes: list[str]) -> SumsLine:
    """One line (without its newline); ``notes`` already holds line-level notes (BOM, CRLF)."""
    if raw.strip() == b"":
        return SumsLine(number, raw, notes=(*notes, "blank line"))
    if raw.startswith(b"#"):
        return SumsLine(number, raw, notes=(*notes, "comment line"))
    bsd = _BSD_LINE.match(raw)
    gnu = _GNU_LINE.match(raw)
    if bsd:
        raw_path, raw_hex = bsd.group(1), bsd.group(2)
        notes.append("BSD-style 'SHA256 (path) = hex' line")
    elif gnu:
        raw_hex, sep, raw_path = gnu.group(1), gnu.group(2), gnu.group(3)
        if sep == b" *":
            notes.append("binary marker ' *'")
    else:
        return SumsLine(number, raw, notes=tuple(notes), error=_diagnose(raw))
    hex_text = raw_hex.decode("ascii")
    if not _HEX64.match(hex_text):
        return SumsLine(number, raw, notes=tuple(notes), error=f"digest must be 64 hex digits, found {len(hex_text)} characters")
    if hex_text != hex_text.lower():
        notes.append("upper-case hex digest")
    try:
        path = raw_path.decode("utf-8")
    except UnicodeDecodeError:
        return SumsLine(number, raw, notes=tuple(notes), error="path is not valid UTF-8")
    if path == "":
        return SumsLine(number, raw, notes=tuple(notes), error="empty file name")
    if path.startswith("./"):
        notes.append("leading './' on path")
        path = path[2:]
    return SumsLine(number, raw, hex_text.lower(), path, tuple(notes))


def sums_lines(data: bytes) -> list[SumsLine]:
    """Classify every line of SHA256SUMS (bytes as read). A final newline ends the
    last line rather than starting another; a CR before the newline is a note."""
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    out = []
    for number, raw in enumerate(raw_lines, start=1):
        notes = ["leading byte-order mark"] if bom and number == 1 else []
        if raw.endswith(b"\r"):
            raw = raw[:-1]
            notes.append("CRLF line ending")
        out.append(_classify(number, raw, notes))
    return out


_FILE_NOTES = ("leading byte-order mark", "CRLF line ending")


def parse_sums(data: bytes, *, strict: bool = False) -> tuple[list[SumsEntry], list[Finding]]:
    """Step 1: parse every line of SHA256SUMS (given as bytes).

    Accepted non-canonical forms are warnings (errors with ``strict``); a CRLF
    ending is reported once, on the first line that has one."""
    findings: list[Finding] = []
    entries: list[SumsEntry] = []
    if data.startswith(b"\xef\xbb\xbf"):
        _warn(findings, 1, "leading byte-order mark", strict)
    if data and not data.endswith(b"\n"):
        _warn(findings, data.count(b"\n") + 1, "last line has no newline", strict)
    crlf_reported = False
    for line in sums_lines(data):
        if "CRLF line ending" in line.notes and not crlf_reported:
            _warn(findings, line.line, "CRLF line ending", strict)
            crlf_reported = True
        for note in line.notes:
            if note not in _FILE_NOTES:
                _warn(findings, line.line, note, strict)
        if line.error:
            findings.append(Finding(SUMS, line.line, Category.MALFORMED, line.error))
        elif line.path is not None:
            entries.append(SumsEntry(line.line, line.path, line.digest or ""))
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


# ---------------------------------------------------------------- reading and hashing
class SumsUnreadable(ArchiveError):
    """SHA256SUMS is absent (``missing``) or is not a regular file one may read."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


_SAFE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_sums(path: str | Path) -> bytes:
    """The bytes of a SHA256SUMS file, opened so that a symbolic link is never
    followed and a FIFO never blocks. Raises :class:`SumsUnreadable`."""
    try:
        fd = os.open(path, _SAFE_FLAGS)
    except FileNotFoundError:
        raise SumsUnreadable(f"{SUMS}: missing; run 'rapgen seal' to create it", missing=True) from None
    except OSError as exc:
        raise SumsUnreadable(f"{SUMS}: cannot be read ({exc.strerror}); it must be a regular file, not a link") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SumsUnreadable(f"{SUMS}: is not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise SumsUnreadable(f"{SUMS}: cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Lower-case hex SHA-256 of a regular file, streamed in 1 MiB chunks; never
    follows a symbolic link or blocks on a FIFO. Raises :class:`ArchiveError`."""
    result = hash_file("", os.fspath(path))
    if result.digest is None:
        what = f"is a {result.error}, not a regular file" if result.not_regular else f"cannot be read ({result.error})"
        raise ArchiveError(f"{escape(os.fspath(path))}: {what}")
    return result.digest
