"""How to cite one release of an archive: a BibTeX entry and the facts it names.

The Croissant file of release N carries the entry as ``citeAs`` (without the
manifest's digest, which cannot be known while the manifest that lists the
Croissant file is being written); the site's Releases page shows it with the
digest ``rapgen verify`` checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")  # BibTeX's month macros
# Characters with a meaning in BibTeX / LaTeX text, written so they print as themselves.
_BIBTEX_ESCAPES = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$",
    "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class ReleaseCitation:
    """What a citation of release ``number`` names."""

    title: str  # the archive's name (ARCHIVE.json)
    number: int
    date: date
    kind: str  # initial, roll, models, errata ("format-1" for an archive without releases)
    manifest: str  # the archive path of the release's manifest (root SHA256SUMS for format 1)
    digest: str | None = None  # the manifest's SHA-256, when known
    url: str | None = None

    @property
    def key(self) -> str:
        return f"rap-release-{self.number}"


def bibtex_text(text: str) -> str:
    """``text`` as a BibTeX field value: special characters escaped, whitespace collapsed."""
    return "".join(_BIBTEX_ESCAPES.get(ch, ch) for ch in " ".join(text.split()))


def bibtex(c: ReleaseCitation) -> str:
    """A ``@misc`` entry naming the release number, its date, its manifest and (when known) the digest."""
    note = f"Release {c.number} ({c.kind}) of {c.date.isoformat()}; manifest {c.manifest}"
    if c.digest:
        note += f", SHA-256 {c.digest}"
    fields = [
        ("title", "{" + bibtex_text(c.title) + f"}}, release {c.number}"),
        ("year", str(c.date.year)),
        ("month", MONTHS[c.date.month - 1]),
        ("version", str(c.number)),
        ("note", bibtex_text(note)),
    ]
    if c.url:
        fields.append(("url", c.url.replace("}", "%7D").replace("{", "%7B")))
    body = ",\n".join(f"  {name} = {value if name == 'month' else '{' + value + '}'}" for name, value in fields)
    return f"@misc{{{c.key},\n{body}\n}}\n"
