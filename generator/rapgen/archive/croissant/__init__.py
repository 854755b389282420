"""Croissant metadata (MLCommons) of an archive: one file per release, written by the command that cuts it.

:func:`release_croissant` writes ``archive/releases/NNNN.croissant.json``
(:func:`croissant_path`) from the files release N lists; :func:`format1_croissant`
writes ``archive/croissant.json`` for a format-1 archive. :mod:`.check` is what
``rapgen verify`` runs on every Croissant file; :mod:`.citation` is the BibTeX
entry of a release, shared with the site.
"""

from rapgen.archive.croissant.citation import ReleaseCitation, bibtex, bibtex_text
from rapgen.archive.croissant.document import CONFORMS_TO, CONTEXT, croissant_path, format1_croissant, release_croissant

__all__ = [
    "CONFORMS_TO", "CONTEXT", "ReleaseCitation", "bibtex", "bibtex_text", "croissant_path", "format1_croissant",
    "release_croissant",
]
