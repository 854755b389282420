"""The one error hierarchy of rapgen. ``str(e)`` is a sentence for a human;
the CLI turns every :class:`RapgenError` into a one-line message and exit 1."""

from __future__ import annotations


class RapgenError(Exception):
    """Base class: a problem with the user's data or request, not a bug."""

    exit_code = 1


class UsageProblem(RapgenError):
    """The request itself is wrong (bad root, bad option combination): exit 2."""

    exit_code = 2


class ArchiveError(RapgenError):
    """The archive is unreadable, malformed or fails verification."""


class ScoringError(RapgenError):
    """Scoring could not be computed from the archive."""


class SearchError(RapgenError):
    """The Search backend or replay failed."""


class SiteError(RapgenError):
    """Rendering or building the site failed."""


class SubmissionError(RapgenError):
    """A submission folder is malformed."""


class OutputError(RapgenError):
    """An output file or folder could not be written where asked."""
